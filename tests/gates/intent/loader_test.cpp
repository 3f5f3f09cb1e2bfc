#include "gates/intent/loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "tests/support/memory_tree.h"

namespace fabgate::intent {
namespace {

using testing::MemoryTree;

const char* kSettings = "version: 1\n";
const char* kInventory = R"(credentials:
  read:   {user: ro, identity_file: ~/.ssh/ro}
  change: {user: rw, identity_file: ~/.ssh/rw}
devices:
  spine1: {platform: frr, role: spine, ssh: {host: 192.0.2.1}}
  leaf1:  {platform: frr, role: leaf, ssh: {host: 192.0.2.11}}
  leaf2:  {platform: frr, role: leaf, ssh: {host: 192.0.2.12}}
  host1:  {platform: linux, role: host, ssh: {host: 192.0.2.21}}
)";
const char* kChange = R"(id: drain
title: Drain spine1
targets: [spine1]
bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}
steps:
  - device: spine1
    run: echo drain
rollback:
  - device: spine1
    run: echo undrain
acceptance:
  settle: 1s
  probes:
    - {name: ping, host: host1, run: ping -c1 192.0.2.12}
)";

MemoryTree valid_tree() {
  MemoryTree tree;
  tree.files["fabgate.yaml"] = kSettings;
  tree.files["inventory.yaml"] = kInventory;
  tree.files["changes/drain.yaml"] = kChange;
  return tree;
}

LoadOutcome load(const MemoryTree& tree) {
  CommitInfo commit;
  commit.id = "0123456789abcdef0123456789abcdef01234567";
  return load_intent_repository(tree, commit, "");
}

// Loads the valid tree with `probe_lines` appended to its change's acceptance probes (the
// first appended line is line 15).
LoadOutcome load_with_probes(const std::string& probe_lines) {
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = std::string(kChange) + probe_lines;
  return load(tree);
}

// Finds the one diagnostic whose message contains `text`; fails the test otherwise.
const Diagnostic* find(const LoadOutcome& outcome, const std::string& text) {
  for (const auto& item : outcome.diagnostics.items())
    if (item.message.find(text) != std::string::npos) return &item;
  ADD_FAILURE() << "no diagnostic containing '" << text << "'; got:\n"
                << [&] {
                     std::string all;
                     for (const auto& line : outcome.diagnostics.lines()) all += line + "\n";
                     return all;
                   }();
  return nullptr;
}

TEST(LoadIntent, AValidRepositoryLoadsWithEveryField) {
  // Given a small valid repository, then it loads with no problems and the model is filled.
  auto outcome = load(valid_tree());
  ASSERT_TRUE(outcome.diagnostics.empty()) << outcome.diagnostics.lines()[0];
  ASSERT_TRUE(outcome.repository);
  const auto& repository = *outcome.repository;
  EXPECT_EQ(repository.inventory.devices.size(), 4u);
  const auto* spine = repository.inventory.find("spine1");
  ASSERT_TRUE(spine);
  EXPECT_EQ(spine->read.user, "ro");
  EXPECT_EQ(spine->change.user, "rw");
  ASSERT_EQ(repository.changes.size(), 1u);
  const auto& change = repository.changes[0];
  EXPECT_EQ(change.bounds.step_timeout, std::chrono::seconds(10));
  EXPECT_EQ(change.bounds.deadline, std::chrono::minutes(2));
  EXPECT_EQ(change.acceptance.probes.at(0).layer, "forwarding");
  EXPECT_EQ(repository.find_change("changes/drain.yaml"), &change);
}

TEST(LoadIntent, ARollbackStepGetsMorePatienceThanAChangeStepByDefault) {
  // Given a change with a 10 s step timeout and no rollback_timeout, then its rollback steps
  // get a minute (max(3 x step timeout, 1m)); with step_timeout 30s they get 90 s.
  auto outcome = load(valid_tree());
  ASSERT_TRUE(outcome.repository);
  const auto& bounds = outcome.repository->changes.at(0).bounds;
  EXPECT_FALSE(bounds.rollback_timeout);
  EXPECT_EQ(bounds.effective_rollback_timeout(), std::chrono::minutes(1));
  EXPECT_EQ(default_rollback_timeout(std::chrono::seconds(30)), std::chrono::seconds(90));
}

TEST(LoadIntent, ADeclaredRollbackTimeoutIsKeptAndMayNotBeShorterThanTheStepTimeout) {
  // Given rollback_timeout: 5m, then it is the rollback steps' bound; given 5s against a 10 s
  // step timeout, then the loader names the line and column and says why.
  auto tree = valid_tree();
  std::string change = kChange;
  auto at = change.find("deadline: 2m}");
  tree.files["changes/drain.yaml"] =
      change.substr(0, at) + "rollback_timeout: 5m, " + change.substr(at);
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.repository) << outcome.diagnostics.lines()[0];
  EXPECT_EQ(outcome.repository->changes.at(0).bounds.effective_rollback_timeout(),
            std::chrono::minutes(5));

  tree.files["changes/drain.yaml"] =
      change.substr(0, at) + "rollback_timeout: 5s, " + change.substr(at);
  auto refused = load(tree);
  EXPECT_FALSE(refused.repository);
  const auto* problem = find(refused, "rollback_timeout (5s) is shorter than step_timeout (10s)");
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->where.file, "changes/drain.yaml");
  EXPECT_EQ(problem->where.line, 4);
  EXPECT_EQ(problem->where.column, 63);
}

TEST(LoadIntent, UnknownKeySuggestsTheNearestAndNamesTheLine) {
  // Given 'step_timout' on line 4 of a change, then the error names 4:col and suggests the key.
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] =
      "id: drain\ntitle: t\ntargets: [spine1]\nbounds:\n  max_targets: 1\n  step_timout: 5s\n"
      "  step_timeout: 5s\n  deadline: 1m\nsteps: []\n";
  auto outcome = load(tree);
  const auto* problem = find(outcome, "unknown key 'step_timout'");
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->where.file, "changes/drain.yaml");
  EXPECT_EQ(problem->where.line, 6);
  EXPECT_EQ(problem->where.column, 3);
  EXPECT_EQ(problem->hint, "did you mean 'step_timeout'?");
}

TEST(LoadIntent, EveryProblemIsReportedNotJustTheFirst) {
  // Given a change with a bad duration, a bad window time and an unknown device, then all three
  // are reported in one run.
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = R"(id: drain
title: t
targets: [spine1]
window: {start: tomorrow, end: 2026-12-01T03:00:00Z}
bounds: {max_targets: 1, step_timeout: 10 seconds, deadline: 2m}
steps:
  - {device: spine9, run: x}
rollback:
  - {device: spine1, run: y}
)";
  auto outcome = load(tree);
  EXPECT_FALSE(outcome.repository);
  EXPECT_TRUE(find(outcome, "is not an ISO 8601 time"));
  EXPECT_TRUE(find(outcome, "is not a duration: '10 seconds'"));
  const auto* unknown = find(outcome, "names device 'spine9'");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->hint, "did you mean 'spine1'?");
  EXPECT_EQ(unknown->where.line, 7);
}

TEST(LoadIntent, MissingRequiredFieldsAreNamed) {
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = "id: drain\nsteps: []\n";
  auto outcome = load(tree);
  EXPECT_TRUE(find(outcome, "missing required key 'title'"));
  EXPECT_TRUE(find(outcome, "missing required key 'targets'"));
  EXPECT_TRUE(find(outcome, "missing required key 'bounds'"));
}

TEST(LoadIntent, WindowMustEndAfterItStartsAndCarryAZone) {
  auto tree = valid_tree();
  std::string change = kChange;
  tree.files["changes/drain.yaml"] =
      change + "window: {start: 2026-12-01T03:00:00Z, end: 2026-12-01T01:00:00Z}\n";
  EXPECT_TRUE(find(load(tree), "window ends before it starts"));
  tree.files["changes/drain.yaml"] =
      change + "window: {start: 2026-12-01T01:00:00, end: 2026-12-01T03:00:00Z}\n";
  auto zone_outcome = load(tree);
  const auto* zone = find(zone_outcome, "is not an ISO 8601 time");
  ASSERT_TRUE(zone);
  EXPECT_NE(zone->hint.find("zone is required"), std::string::npos);
}

TEST(LoadIntent, DeviceWithStepsButNoRollbackIsNamed) {
  // Given steps on spine1 and no rollback at all, then spine1 is named as lacking a rollback
  // (validate reports it; the rollback-plan gate refuses the change).
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] =
      "id: drain\ntitle: t\ntargets: [spine1]\n"
      "bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}\n"
      "steps:\n  - {device: spine1, run: x}\n";
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.repository);
  EXPECT_EQ(devices_without_rollback(outcome.repository->changes[0]),
            std::vector<std::string>{"spine1"});
  EXPECT_TRUE(devices_without_rollback(load(valid_tree()).repository->changes[0]).empty());
}

TEST(LoadIntent, StepOnADeviceThatIsNotATargetIsRefused) {
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] =
      "id: drain\ntitle: t\ntargets: [spine1]\n"
      "bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}\n"
      "steps:\n  - {device: leaf1, run: x}\nrollback:\n  - {device: leaf1, run: y}\n";
  EXPECT_TRUE(find(load(tree), "acts on 'leaf1', which is not a target"));
}

TEST(LoadIntent, TargetsBeyondMaxTargetsAreRefused) {
  // Given role:leaf (two devices) and max_targets 1, then the bound is enforced.
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] =
      "id: drain\ntitle: t\ntargets: [role:leaf]\n"
      "bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}\nsteps: []\n";
  EXPECT_TRUE(find(load(tree), "targets 2 devices but bounds.max_targets is 1"));
}

TEST(LoadIntent, WavesMustCoverEveryTargetExactlyOnce) {
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] =
      "id: drain\ntitle: t\ntargets: [leaf1, leaf2, spine1]\n"
      "bounds: {max_targets: 3, step_timeout: 10s, deadline: 2m, waves: [[leaf1], [leaf1]]}\n"
      "steps: []\n";
  auto outcome = load(tree);
  EXPECT_TRUE(find(outcome, "'leaf1' is in wave 1 and wave 2"));
  EXPECT_TRUE(find(outcome, "target 'leaf2' is in no wave"));
  EXPECT_TRUE(find(outcome, "target 'spine1' is in no wave"));
}

TEST(LoadIntent, DuplicateChangeIdsNameBothFiles) {
  auto tree = valid_tree();
  tree.files["changes/drain-again.yaml"] = kChange;
  auto duplicate_outcome = load(tree);
  const auto* duplicate = find(duplicate_outcome, "duplicate change id 'drain'");
  ASSERT_TRUE(duplicate);
  EXPECT_NE(duplicate->hint.find("changes/drain-again.yaml"), std::string::npos) << duplicate->hint;
}

TEST(LoadIntent, DuplicateDeviceNamesAreReported) {
  auto tree = valid_tree();
  tree.files["inventory.yaml"] =
      std::string(kInventory) + "  leaf1:  {platform: frr, role: leaf, ssh: {host: 192.0.2.99}}\n";
  auto duplicate_outcome = load(tree);
  const auto* duplicate = find(duplicate_outcome, "duplicate key 'leaf1'");
  ASSERT_TRUE(duplicate);
  EXPECT_EQ(duplicate->where.line, 9);
}

TEST(LoadIntent, PasswordsAndSharedCredentialsAreRefused) {
  // Given a password in the inventory and a device whose read and change logins are the same,
  // then both are refused: fabgate uses keys only, and reads must never hold change rights.
  auto tree = valid_tree();
  tree.files["inventory.yaml"] = R"(credentials:
  read:   {user: ro, identity_file: k, password: hunter2}
  change: {user: rw, identity_file: k2}
devices:
  spine1:
    platform: frr
    role: spine
    ssh: {host: 192.0.2.1}
    credentials:
      read: {user: admin, identity_file: k}
      change: {user: admin, identity_file: k}
)";
  auto outcome = load(tree);
  EXPECT_TRUE(find(outcome, "passwords are not accepted"));
  EXPECT_TRUE(find(outcome, "uses the same login for reading and changing"));
}

TEST(LoadIntent, GnmiStepNeedsAGnmiEndpoint) {
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] =
      "id: drain\ntitle: t\ntargets: [spine1]\n"
      "bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}\n"
      "steps:\n  - device: spine1\n    gnmi:\n      - {op: update, path: "
      "\"/interfaces/interface[name=eth1]/config/mtu\", value: 9000}\n"
      "rollback:\n  - {device: spine1, run: y}\n";
  EXPECT_TRUE(find(load(tree), "has no gnmi endpoint"));
}

TEST(LoadIntent, GnmiSetValuesBecomeJson) {
  auto tree = valid_tree();
  tree.files["inventory.yaml"] =
      std::string(kInventory)
          .replace(std::string(kInventory).find("ssh: {host: 192.0.2.1}}"), 23,
                   "ssh: {host: 192.0.2.1}, gnmi: {host: 192.0.2.1, tls: false}}");
  tree.files["changes/drain.yaml"] =
      "id: drain\ntitle: t\ntargets: [spine1]\n"
      "bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}\n"
      "steps:\n  - device: spine1\n    gnmi:\n"
      "      - {op: update, path: \"/interfaces/interface[name=eth1]/config/mtu\", value: 9000}\n"
      "      - {op: update, path: \"/interfaces/interface[name=eth1]/config/description\", value: "
      "up}\n"
      "rollback:\n  - device: spine1\n    gnmi:\n"
      "      - {op: delete, path: \"/interfaces/interface[name=eth1]/config/description\"}\n";
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.repository) << outcome.diagnostics.lines().at(0);
  const auto& ops = outcome.repository->changes[0].steps[0].gnmi_set;
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].value, "9000");
  EXPECT_EQ(ops[1].value, "\"up\"");
}

TEST(LoadIntent, GnmiCredentialsOverPlaintextAreRefusedUnlessTheLabSettingSaysSo) {
  // Given gNMI endpoints with credentials_env and tls: false (one without, one with the lab
  // setting), the lab setting on a TLS endpoint and tls_server_name on a plaintext one, then
  // the first, third and fourth are errors at their own line and column naming the device and
  // the setting to use, and the lab endpoint loads with the setting kept for the warning.
  auto tree = valid_tree();
  tree.files["inventory.yaml"] = R"(credentials:
  read:   {user: ro, identity_file: ~/.ssh/ro}
  change: {user: rw, identity_file: ~/.ssh/rw}
devices:
  spine1: {platform: frr, role: spine, ssh: {host: a}, gnmi: {host: a, tls: false, credentials_env: SPINE}}
  leaf1:  {platform: frr, role: leaf, ssh: {host: b}, gnmi: {host: b, tls: false, credentials_env: LEAF, lab_insecure_plaintext_credentials: true}}
  leaf2:  {platform: frr, role: leaf, ssh: {host: c}, gnmi: {host: c, credentials_env: LEAF, lab_insecure_plaintext_credentials: true}}
  host1:  {platform: linux, role: host, ssh: {host: d}, gnmi: {host: d, tls: false, tls_server_name: d.example}}
)";
  auto outcome = load(tree);
  ASSERT_EQ(outcome.diagnostics.size(), 3u) << outcome.diagnostics.lines().at(0);
  const auto* clear = find(outcome,
                           "device 'spine1' gnmi would send the username and password "
                           "of credentials_env in clear text (tls: false)");
  ASSERT_TRUE(clear);
  EXPECT_EQ(clear->to_string().rfind("inventory.yaml:5:101:", 0), 0u) << clear->to_string();
  EXPECT_NE(clear->hint.find("lab_insecure_plaintext_credentials: true"), std::string::npos);
  const auto* pointless =
      find(outcome, "device 'leaf2' gnmi sets lab_insecure_plaintext_credentials");
  ASSERT_TRUE(pointless);
  EXPECT_EQ(pointless->where.line, 7);
  const auto* name = find(outcome, "device 'host1' gnmi sets tls_server_name but tls is false");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->where.line, 8);

  auto& text = tree.files["inventory.yaml"];
  auto edit = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  edit("tls: false, credentials_env: SPINE", "credentials_env: SPINE");
  edit("credentials_env: LEAF, lab_insecure_plaintext_credentials: true}}\n  host1",
       "credentials_env: LEAF}}\n  host1");
  edit(", tls_server_name: d.example", "");
  outcome = load(tree);
  ASSERT_TRUE(outcome.repository) << outcome.diagnostics.lines().at(0);
  const auto& leaf1 = outcome.repository->inventory.devices[1];
  ASSERT_EQ(leaf1.name, "leaf1");
  EXPECT_TRUE(leaf1.gnmi->lab_insecure_plaintext_credentials);
  EXPECT_FALSE(leaf1.gnmi->tls);
}

TEST(LoadIntent, GnmiTlsWithoutCaFileUsesTheSystemStoreAndTakesAServerName) {
  // Given a TLS gNMI endpoint with no ca_file and a tls_server_name, then it loads (the system
  // trust store) with the name kept for the certificate check.
  auto tree = valid_tree();
  tree.files["inventory.yaml"] =
      std::string(kInventory)
          .replace(std::string(kInventory).find("ssh: {host: 192.0.2.1}}"), 23,
                   "ssh: {host: 192.0.2.1}, gnmi: {host: 192.0.2.1, credentials_env: SPINE, "
                   "tls_server_name: spine1.fabric.example}}");
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.repository) << outcome.diagnostics.lines().at(0);
  const auto& gnmi = outcome.repository->inventory.devices[0].gnmi;
  ASSERT_TRUE(gnmi);
  EXPECT_TRUE(gnmi->tls);
  EXPECT_EQ(gnmi->ca_file, "");
  EXPECT_EQ(gnmi->tls_server_name, "spine1.fabric.example");
}

TEST(LoadIntent, GnmiReceiveLimitIsASizeWithinWhatGrpcTakes) {
  // Given gnmi endpoints whose max_receive_message_size is in MiB, in bytes, unset, below
  // 1 MiB, above what gRPC takes and not a size, then the first two load as bytes, the unset
  // one as none (the client's default), and each of the others is an error at its own line
  // naming the device, with a hint saying what to write; corrected, they load as bytes.
  auto tree = valid_tree();
  tree.files["inventory.yaml"] = R"(credentials:
  read:   {user: ro, identity_file: ~/.ssh/ro}
  change: {user: rw, identity_file: ~/.ssh/rw}
devices:
  spine1: {platform: frr, role: spine, ssh: {host: a}, gnmi: {host: a, tls: false, max_receive_message_size: 512MiB}}
  leaf1:  {platform: frr, role: leaf, ssh: {host: b}, gnmi: {host: b, tls: false, max_receive_message_size: 300000000}}
  leaf2:  {platform: frr, role: leaf, ssh: {host: c}, gnmi: {host: c, tls: false}}
  host1:  {platform: linux, role: host, ssh: {host: d}, gnmi: {host: d, tls: false, max_receive_message_size: 64KiB}}
  host2:  {platform: linux, role: host, ssh: {host: e}, gnmi: {host: e, tls: false, max_receive_message_size: 2GiB}}
  host3:  {platform: linux, role: host, ssh: {host: f}, gnmi: {host: f, tls: false, max_receive_message_size: lots}}
)";
  auto outcome = load(tree);
  ASSERT_EQ(outcome.diagnostics.size(), 3u) << outcome.diagnostics.lines().at(0);
  const auto* small =
      find(outcome, "device 'host1' gnmi: max_receive_message_size 64KiB is below 1MiB");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->to_string().rfind("inventory.yaml:8:", 0), 0u) << small->to_string();
  const auto* large =
      find(outcome, "device 'host2' gnmi: max_receive_message_size 2GiB is more than gRPC accepts");
  ASSERT_TRUE(large);
  EXPECT_EQ(large->where.line, 9);
  EXPECT_EQ(large->hint, "at most 2147483647 bytes (2047MiB)");
  const auto* word =
      find(outcome, "device 'host3' gnmi: max_receive_message_size 'lots' is not a size");
  ASSERT_TRUE(word);
  EXPECT_EQ(word->where.line, 10);

  for (auto [bad, good] : {std::pair{"64KiB", "1MiB"}, {"2GiB", "2047MiB"}, {"lots", "'1 GiB'"}}) {
    auto& text = tree.files["inventory.yaml"];
    text.replace(text.find(bad), std::string(bad).size(), good);
  }
  outcome = load(tree);
  ASSERT_TRUE(outcome.repository) << outcome.diagnostics.lines().at(0);
  const auto& devices = outcome.repository->inventory.devices;
  auto limit = [&](const std::string& name) {
    auto found = std::find_if(devices.begin(), devices.end(),
                              [&](const Device& device) { return device.name == name; });
    return found->gnmi->max_receive_message_size;
  };
  EXPECT_EQ(limit("spine1"), std::int64_t{512} << 20);
  EXPECT_EQ(limit("leaf1"), 300000000);
  EXPECT_EQ(limit("leaf2"), std::nullopt);
  EXPECT_EQ(limit("host1"), std::int64_t{1} << 20);
  EXPECT_EQ(limit("host2"), std::int64_t{2047} << 20);
  EXPECT_EQ(limit("host3"), std::int64_t{1} << 30);
}

TEST(LoadIntent, ConfirmTimeoutShorterThanDeadlineIsRefused) {
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = std::string(kChange) + "confirm_timeout: 1m\n";
  EXPECT_TRUE(find(load(tree), "confirm_timeout (1m) is shorter than the deadline (2m)"));
}

TEST(LoadIntent, UnknownRuleSetAndAbsoluteExpectedPathAreRefused) {
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = std::string(kChange) +
                                     "compare:\n  rule_sets: [fabric-defualt]\n  expected:\n"
                                     "    - {device: spine1, path: devices.spine1.bgp}\n";
  auto outcome = load(tree);
  const auto* rule_set = find(outcome, "unknown rule set 'fabric-defualt'");
  ASSERT_TRUE(rule_set);
  EXPECT_EQ(rule_set->hint, "did you mean 'fabric-default'?");
  EXPECT_TRUE(find(outcome, "expected path must be relative to the device"));
}

TEST(LoadIntent, RdmaHostPlatformAndRdmaDefaultRuleSetAreAccepted) {
  // Given a RoCE/GPU host on platform rdma-host and fabgate.yaml naming the shipped
  // rdma-default rule set, then the repository loads without problems.
  auto tree = valid_tree();
  tree.files["fabgate.yaml"] =
      "version: 1\ncompare:\n  rule_sets: [fabric-default, rdma-default]\n";
  tree.files["inventory.yaml"] = std::string(kInventory) +
                                 "  gpu1:   {platform: rdma-host, role: host, "
                                 "ssh: {host: 192.0.2.31}}\n";
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.diagnostics.empty()) << outcome.diagnostics.lines()[0];
  ASSERT_TRUE(outcome.repository);
  EXPECT_EQ(outcome.repository->inventory.find("gpu1")->platform, "rdma-host");
  EXPECT_EQ(outcome.repository->settings.rule_sets,
            (std::vector<std::string>{"fabric-default", "rdma-default"}));
}

TEST(LoadIntent, SecretEnvironmentVariablesAreReadAndBadNamesPointAtTheLine) {
  // Given fabgate.yaml naming two secret variables, one of them not a variable name, then the
  // good one is kept and the bad one is reported at its line and column.
  auto tree = valid_tree();
  tree.files["fabgate.yaml"] = "version: 1\nsecrets:\n  env: [BGP_MD5_KEY, 9-bad]\n";
  auto outcome = load(tree);
  const auto* problem = find(outcome, "'9-bad' is not an environment variable name");
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->where.line, 3);
  EXPECT_EQ(problem->where.column, 22);

  tree.files["fabgate.yaml"] = "version: 1\nsecrets:\n  env: [BGP_MD5_KEY]\n";
  auto good = load(tree);
  ASSERT_TRUE(good.diagnostics.empty()) << good.diagnostics.lines()[0];
  EXPECT_EQ(good.repository->settings.secret_env, std::vector<std::string>{"BGP_MD5_KEY"});
}

TEST(LoadIntent, ApprovalMaxAgeIsADurationLongerThanZero) {
  // Given approval.max_age as a word and as 0s, then each is refused at the value's line and
  // column; given 24h, then approvals expire after a day; left out, they never expire.
  auto tree = valid_tree();
  for (const auto& [value, message] :
       {std::pair<std::string, std::string>{"soon",
                                            "'max_age' in approval is not a duration: 'soon'"},
        {"0s", "max_age in approval must be longer than 0"}}) {
    tree.files["fabgate.yaml"] = "version: 1\napproval:\n  max_age: " + value + "\n";
    auto outcome = load(tree);
    const auto* problem = find(outcome, message);
    ASSERT_TRUE(problem) << value;
    EXPECT_EQ(problem->where.file, "fabgate.yaml");
    EXPECT_EQ(problem->where.line, 3) << value;
    EXPECT_EQ(problem->where.column, 12) << value;
  }
  tree.files["fabgate.yaml"] = "version: 1\napproval: {min_approvals: 1, max_age: 24h}\n";
  auto good = load(tree);
  ASSERT_TRUE(good.diagnostics.empty()) << good.diagnostics.lines()[0];
  EXPECT_EQ(good.repository->settings.approval.max_age, Duration{24 * 3'600'000});
  EXPECT_FALSE(load(valid_tree()).repository->settings.approval.max_age);
}

TEST(LoadIntent, SafeguardFoldersAreAbsolutePathsOnTheDevice) {
  // Given a relative lock folder, then it is refused at its line; given absolute folders, then
  // they replace the defaults.
  auto tree = valid_tree();
  tree.files["fabgate.yaml"] = "version: 1\nsafeguards:\n  lock_dir: locks\n";
  auto outcome = load(tree);
  const auto* problem = find(outcome, "lock_dir must be an absolute path");
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->where.line, 3);

  tree.files["fabgate.yaml"] =
      "version: 1\nsafeguards:\n  lock_dir: /run/fg/locks\n  timer_dir: /run/fg/timers\n";
  auto good = load(tree);
  ASSERT_TRUE(good.diagnostics.empty()) << good.diagnostics.lines()[0];
  EXPECT_EQ(good.repository->settings.safeguards.lock_dir, "/run/fg/locks");
  EXPECT_EQ(good.repository->settings.safeguards.timer_dir, "/run/fg/timers");
}

TEST(LoadIntent, CommandProbeWithoutRunIsRefused) {
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = std::string(kChange) + "";
  std::string change = kChange;
  change.replace(change.find("run: ping -c1 192.0.2.12"), 24, "layer: forwardng");
  tree.files["changes/drain.yaml"] = change;
  auto outcome = load(tree);
  EXPECT_TRUE(find(outcome, "is a command probe without 'run'"));
  const auto* layer = find(outcome, "unknown layer 'forwardng'");
  ASSERT_TRUE(layer);
  EXPECT_NE(layer->hint.find("did you mean 'forwarding'?"), std::string::npos);
}

TEST(LoadIntent, CollectiveProbeTakesItsRanksFromHostsOrARole) {
  // Given a collective probe over role 'leaf' with thresholds, then its ranks are the leaves in
  // inventory order, its thresholds are read, and its layer defaults to workload.
  auto tree = valid_tree();
  std::string change = kChange;
  change +=
      "    - {name: allreduce, kind: collective, role: leaf, pattern: all-to-all, size: 65536,"
      " iterations: 50, max_tail_ratio: 4, max_p99: 20ms}\n";
  tree.files["changes/drain.yaml"] = change;
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.diagnostics.empty()) << outcome.diagnostics.lines()[0];
  const auto& probe = outcome.repository->changes[0].acceptance.probes[1];
  EXPECT_EQ(probe.kind, "collective");
  EXPECT_EQ(probe.hosts, (std::vector<std::string>{"leaf1", "leaf2"}));
  EXPECT_EQ(probe.host, "leaf1");
  EXPECT_EQ(probe.pattern, "all-to-all");
  EXPECT_EQ(probe.collective_size, 65536);
  EXPECT_EQ(probe.iterations, 50);
  EXPECT_DOUBLE_EQ(probe.max_tail_ratio, 4.0);
  ASSERT_TRUE(probe.max_p99);
  EXPECT_EQ(*probe.max_p99, std::chrono::milliseconds(20));
  EXPECT_EQ(probe.layer, "workload");
}

TEST(LoadIntent, CollectiveProbeProblemsAreEachNamedAtTheirLine) {
  // Given a collective probe with both hosts and a target, a host named twice, an unknown host,
  // a bad pattern and a tail ratio below 1, then each problem is reported on line 15.
  auto tree = valid_tree();
  std::string change = kChange;
  change +=
      "    - {name: c, kind: collective, hosts: [host1, host1, gpu9], target: host1,"
      " pattern: tree, max_tail_ratio: 0.5}\n";
  tree.files["changes/drain.yaml"] = change;
  auto outcome = load(tree);
  for (const char* text : {"does not take 'target'", "names host 'host1' twice", "gpu9",
                           "max_tail_ratio must be greater than 1", "pattern"}) {
    const auto* problem = find(outcome, text);
    ASSERT_TRUE(problem) << text;
    EXPECT_EQ(problem->where.line, 15) << text;
  }
}

TEST(LoadIntent, ATailBoundOfOneIsRefusedAtItsLineAndColumn) {
  // Given a collective probe with max_tail_ratio 1, then it is refused at the value's line and
  // column: half the ranks sit at or above the reference, so any noise would fail them.
  auto outcome = load_with_probes(
      "    - {name: c, kind: collective, hosts: [leaf1, leaf2], max_tail_ratio: 1}\n");
  const auto* problem = find(outcome, "max_tail_ratio must be greater than 1");
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->where.line, 15);
  EXPECT_EQ(problem->where.column, 74);
}

TEST(LoadIntent, ACollectiveOfOneRankIsRefusedForHavingNoTailToCompare) {
  // Given a collective probe over one host, and one over a role only one device has, then both
  // are refused at their line: one rank has no peer to be slower than.
  auto outcome = load_with_probes(
      "    - {name: one, kind: collective, hosts: [leaf1]}\n"
      "    - {name: role, kind: collective, role: spine}\n");
  for (const char* text : {"probe 'one' (collective) needs at least 2 ranks",
                           "probe 'role' (collective) needs at least 2 ranks"}) {
    const auto* problem = find(outcome, text);
    ASSERT_TRUE(problem) << text;
    EXPECT_NE(problem->hint.find("no tail to compare"), std::string::npos) << text;
  }
}

TEST(LoadIntent, KeysOfAnotherProbeKindAreRefusedNotIgnored) {
  // Given a flows probe carrying a collective tail bound and a collective probe carrying a
  // promql comparison, then each key is refused at its line, naming the kind that reads it:
  // a bound nothing checks must not read as checked.
  auto tree = valid_tree();
  std::string change = kChange;
  change += "    - {name: f, kind: flows, host: host1, target: leaf2, max_tail_ratio: 3}\n";
  change += "    - {name: c, kind: collective, hosts: [host1, leaf2], expect: '< 1'}\n";
  tree.files["changes/drain.yaml"] = change;
  auto outcome = load(tree);
  const auto* tail = find(outcome, "(flows) does not take 'max_tail_ratio'");
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->where.line, 15);
  const auto* expect = find(outcome, "(collective) does not take 'expect'");
  ASSERT_TRUE(expect);
  EXPECT_EQ(expect->where.line, 16);
}

TEST(LoadIntent, DuringIntervalIsTheWatchResolutionWithinTenToAHundredMs) {
  // Given acceptance.during without an interval, then it is 20 ms; given 250ms, then the error
  // says the allowed range.
  auto tree = valid_tree();
  std::string change = kChange;
  change += "  during: {host: host1, target: leaf2, max_disruption: 1s}\n";
  tree.files["changes/drain.yaml"] = change;
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.diagnostics.empty()) << outcome.diagnostics.lines()[0];
  EXPECT_EQ(outcome.repository->changes[0].acceptance.during->interval,
            std::chrono::milliseconds(20));
  change.replace(change.find("max_disruption: 1s"), 18, "max_disruption: 1s, interval: 250ms");
  tree.files["changes/drain.yaml"] = change;
  EXPECT_TRUE(find(load(tree), "interval must be 10ms-100ms"));
}

TEST(LoadIntent, OverlayFlowsProbeTakesSizeAndASourceOfItsHost) {
  // Given a flows probe on the overlay layer with a size and one of host2's data addresses as
  // source, then it loads with both; a source host2 does not own and a size on a command probe
  // are each refused at their line.
  auto tree = valid_tree();
  tree.files["inventory.yaml"] = std::string(kInventory) +
                                 "  host2:  {platform: linux, role: host, ssh: {host: 192.0.2.22},"
                                 " data_addresses: [10.1.2.11, 10.100.0.13]}\n";
  std::string change = kChange;
  change.replace(change.find("    - {name: ping"), std::string::npos,
                 "    - {name: full-size, layer: overlay, host: host2, kind: flows, "
                 "source: 10.100.0.13, target: 10.100.0.13, size: 1472}\n");
  tree.files["changes/drain.yaml"] = change;
  auto good = load(tree);
  ASSERT_TRUE(good.diagnostics.empty()) << good.diagnostics.lines()[0];
  const auto& probe = good.repository->changes.at(0).acceptance.probes.at(0);
  EXPECT_EQ(probe.layer, "overlay");
  EXPECT_EQ(probe.size, 1472);
  EXPECT_EQ(probe.source, "10.100.0.13");

  change.replace(change.find("source: 10.100.0.13"), 19, "source: 10.100.0.99");
  change += "    - {name: ping, host: host1, run: ping -c1 192.0.2.12, size: 100}\n";
  tree.files["changes/drain.yaml"] = change;
  auto bad = load(tree);
  const auto* source = find(bad, "sends from 10.100.0.99, which is not a data address of host2");
  ASSERT_TRUE(source);
  EXPECT_EQ(source->where.line, 14);
  EXPECT_TRUE(find(bad, "size and source apply to flows probes only"));
}

TEST(LoadIntent, FlowsProbesSpeakTheProtocolTheirWorkloadsUse) {
  // Given flows probes with proto tcp and icmp, then they load with it and a probe without one
  // is udp; proto on a command probe, an unknown proto and a size on a tcp probe are each
  // refused at their line.
  auto tree = valid_tree();
  std::string change = kChange;
  change.replace(change.find("    - {name: ping"), std::string::npos,
                 "    - {name: tcp, host: host1, kind: flows, target: leaf2, proto: tcp}\n"
                 "    - {name: icmp, host: host1, kind: flows, target: leaf2, proto: icmp, "
                 "size: 1400}\n"
                 "    - {name: udp, host: host1, kind: flows, target: leaf2}\n");
  tree.files["changes/drain.yaml"] = change;
  auto good = load(tree);
  ASSERT_TRUE(good.diagnostics.empty()) << good.diagnostics.lines()[0];
  const auto& probes = good.repository->changes.at(0).acceptance.probes;
  ASSERT_EQ(probes.size(), 3u);
  EXPECT_EQ(probes[0].protocol, "tcp");
  EXPECT_EQ(probes[1].protocol, "icmp");
  EXPECT_EQ(probes[1].size, 1400);
  EXPECT_EQ(probes[2].protocol, "udp");

  change += "    - {name: cmd, host: host1, run: 'true', proto: tcp}\n"
            "    - {name: sctp, host: host1, kind: flows, target: leaf2, proto: sctp}\n"
            "    - {name: big-tcp, host: host1, kind: flows, target: leaf2, proto: tcp, "
            "size: 1472}\n";
  tree.files["changes/drain.yaml"] = change;
  auto bad = load(tree);
  const auto* on_command = find(bad, "probe 'cmd': proto applies to flows probes only");
  ASSERT_TRUE(on_command);
  EXPECT_EQ(on_command->where.line, 17);
  EXPECT_TRUE(find(bad, "sctp"));
  const auto* sized = find(bad, "probe 'big-tcp': size applies to udp and icmp flows, not tcp");
  ASSERT_TRUE(sized);
  EXPECT_EQ(sized->where.line, 19);
}

TEST(LoadIntent, YamlSyntaxErrorsPointAtTheLine) {
  auto tree = valid_tree();
  tree.files["inventory.yaml"] = "devices:\n  spine1: {platform: frr\n";
  auto outcome = load(tree);
  ASSERT_FALSE(outcome.diagnostics.empty());
  // Sorted by file like every other problem (changes that name devices of the unreadable
  // inventory come first), and printed as file:line:column.
  auto lines = outcome.diagnostics.lines();
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
    return line.rfind("inventory.yaml:3:", 0) == 0 && line.find("YAML syntax") != std::string::npos;
  })) << ::testing::PrintToString(lines);
  // The location is kept as fields, not only inside the message (validate --json prints them).
  const auto& where = outcome.diagnostics.items()[0].where;
  EXPECT_EQ(where.file, "inventory.yaml");
  EXPECT_EQ(where.line, 3);
  EXPECT_GT(where.column, 0);
}

TEST(LoadIntent, MissingFabgateYamlSaysWhatAnIntentRootIs) {
  MemoryTree tree;
  tree.files["inventory.yaml"] = kInventory;
  auto outcome = load(tree);
  EXPECT_TRUE(find(outcome, "not an intent repository"));
}

TEST(LoadIntent, DisplayRootPrefixesFileNames) {
  // Given an intent root inside a monorepo, then locations can be opened from the repo top.
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = "id: drain\n";
  CommitInfo commit;
  commit.id = "0123456789abcdef";
  auto outcome = load_intent_repository(tree, commit, "net/intent");
  ASSERT_FALSE(outcome.diagnostics.empty());
  EXPECT_EQ(outcome.diagnostics.items()[0].where.file, "net/intent/changes/drain.yaml");
}

}  // namespace
}  // namespace fabgate::intent

namespace fabgate::intent {
namespace {

TEST(LoadIntent, UnquotedBangInACommandIsCaught) {
  // Given `run: ! grep -q broken f` (YAML eats the '!' as a tag and inverts the test), then
  // validation refuses it and says to quote the command.
  auto tree = valid_tree();
  std::string change = kChange;
  change.replace(change.find("run: ping -c1 192.0.2.12"), 24, "run: ! grep -q broken f");
  tree.files["changes/drain.yaml"] = change;
  auto outcome = load(tree);
  const auto* problem = find(outcome, "starts with a YAML tag");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->hint.find("quote the command"), std::string::npos);
}

TEST(LoadIntent, NotWantedGatesAreReadWithTheirReasons) {
  // Given a change without probes that says it wants neither compat nor probes, then both
  // reasons are in the model as written.
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = R"(id: drain
title: Drain spine1
targets: [spine1]
bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}
steps:
  - device: spine1
    run: echo drain
rollback:
  - device: spine1
    run: echo undrain
not_wanted:
  compat: lab images are not qualified
  probes: no service on a management change
)";
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.diagnostics.empty()) << outcome.diagnostics.lines()[0];
  const auto& not_wanted = outcome.repository->changes.at(0).not_wanted;
  EXPECT_EQ(not_wanted.at("compat"), "lab images are not qualified");
  EXPECT_EQ(not_wanted.at("probes"), "no service on a management change");
}

TEST(LoadIntent, NotWantedRefusesUnknownGatesEmptyReasonsAndProbesNextToProbes) {
  // Given not_wanted naming compare (a gate no change may set aside), an empty compat reason
  // and probes while the change declares one, then each is an error at its line and column.
  auto outcome = load_with_probes(
      "not_wanted:\n"
      "  compare: trust me\n"
      "  compat: \"  \"\n"
      "  probes: none needed\n");
  const auto* unknown = find(outcome, "compare");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->where.line, 16);
  const auto* empty = find(outcome, "not_wanted.compat needs a reason");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->where.line, 17);
  EXPECT_EQ(empty->where.column, 11);
  const auto* both = find(outcome, "not_wanted.probes, but the change declares acceptance.probes");
  ASSERT_NE(both, nullptr);
  EXPECT_EQ(both->where.line, 18);
}

TEST(LoadIntent, OutOfServiceAndBackInServiceNameTargetsOfTheChange) {
  // Given a drain that leaves spine1 out of service, then the model has it; given lists that
  // name a device outside the inventory, one that is not a target, one twice, and one in both
  // lists, then each is an error at its line and column.
  auto tree = valid_tree();
  tree.files["changes/drain.yaml"] = std::string(kChange) + "out_of_service: [spine1]\n";
  auto outcome = load(tree);
  ASSERT_TRUE(outcome.diagnostics.empty()) << outcome.diagnostics.lines()[0];
  EXPECT_EQ(outcome.repository->changes.at(0).out_of_service, std::vector<std::string>{"spine1"});
  EXPECT_TRUE(outcome.repository->changes.at(0).back_in_service.empty());

  tree.files["changes/drain.yaml"] =
      std::string(kChange) +
      "out_of_service: [spine1, spine9, leaf1, spine1]\nback_in_service: [spine1]\n";
  outcome = load(tree);
  const auto* unknown = find(outcome, "out_of_service names device 'spine9', which is not in");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->where.line, 15);
  EXPECT_EQ(unknown->where.column, 26);
  const auto* not_target =
      find(outcome, "out_of_service names 'leaf1', which is not a target of this change");
  ASSERT_NE(not_target, nullptr);
  EXPECT_EQ(not_target->where.column, 34);
  ASSERT_NE(find(outcome, "out_of_service names 'spine1' twice"), nullptr);
  const auto* both = find(outcome, "'spine1' is in both out_of_service and back_in_service");
  ASSERT_NE(both, nullptr);
  EXPECT_EQ(both->where.line, 16);
  EXPECT_EQ(both->where.column, 19);
}

}  // namespace
}  // namespace fabgate::intent
