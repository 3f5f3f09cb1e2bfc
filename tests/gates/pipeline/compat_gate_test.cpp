// The compat gate inside a real Pipeline, with a scripted Remote and Snapshotter: what the
// matrix at the intent commit makes of the identity the pre-change snapshot collected, and
// whether anything was sent to a device.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <mutex>

#include "gates/pipeline/evidence.h"
#include "gates/pipeline/pipeline.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

// Answers every command with exit 0 and records it, so a test can tell whether a step was
// sent. Probes are plain commands here, so they pass.
class ScriptedRemote final : public Remote {
 public:
  struct Call {
    std::string device;
    std::string command;
    std::string purpose;
  };

  RemoteResult run(const intent::Device& device, ssh::CredentialRole, const std::string& command,
                   Duration, std::string_view purpose) override {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back({device.name, command, std::string(purpose)});
    ssh::CommandResult result;
    result.exit_status = 0;
    result.started_at = now_utc();
    return result;
  }

  std::size_t sent(std::string_view purpose) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<std::size_t>(std::count_if(
        calls_.begin(), calls_.end(), [&](const Call& call) { return call.purpose == purpose; }));
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
};

// Returns the same document every time: the identity the test set, and no other facts.
class ScriptedSnapshotter final : public Snapshotter {
 public:
  json identities = json::object();  // device name -> identity object

  TakenSnapshot take(const std::vector<const intent::Device*>& devices,
                     const std::string& intent_commit) override {
    TakenSnapshot taken;
    taken.document = {{"format", "fabgate.snapshot/1"},
                      {"taken_at", format_utc(now_utc())},
                      {"intent_commit", intent_commit},
                      {"devices", json::object()}};
    for (const auto* device : devices) {
      json entry = {{"sources", json::object()}};
      if (identities.contains(device->name)) entry["identity"] = identities[device->name];
      taken.document["devices"][device->name] = std::move(entry);
    }
    return taken;
  }
};

const std::string kMatrix = R"(version: 1
platforms:
  frr:
    frr: ">=8.4 <9"
    kernel: ">=5.10"
)";

json leaf1_identity(const std::string& frr_version) {
  json identity = {{"hostname", "leaf1"},
                   {"os", "Debian GNU/Linux 12 (bookworm)"},
                   {"kernel", "6.1.0-28-amd64"}};
  if (!frr_version.empty()) identity["frr_version"] = frr_version;
  return identity;
}

intent::Device device(const std::string& name, const std::string& platform) {
  intent::Device result;
  result.name = name;
  result.platform = platform;
  result.ssh = {"127.0.0.1", 22};
  return result;
}

// An intent repository at one commit, held in memory: leaf1 (frr) and host1 (linux), and a
// change on the targets given with one step, its rollback and one probe per target.
struct Fixture {
  intent::IntentRepository repository;
  intent::Change change;
  ScriptedRemote remote;
  ScriptedSnapshotter snapshotter;
  testing::TempDir evidence_root{"fabgate-compat-gate"};

  explicit Fixture(std::vector<std::string> targets) {
    repository.commit.id = "0123456789abcdef0123456789abcdef01234567";
    repository.inventory.devices = {device("leaf1", "frr"), device("host1", "linux")};
    change.id = "compat-gate-test";
    change.targets = targets;
    change.bounds.max_targets = static_cast<int>(targets.size());
    for (const auto& target : targets) {
      intent::Step step;
      step.device = target;
      step.run = "echo change " + target;
      change.steps.push_back(step);
      step.run = "echo undo " + target;
      change.rollback.push_back(step);
      intent::Probe probe;
      probe.name = "reachable-" + target;
      probe.host = target;
      probe.run = "true";
      change.acceptance.probes.push_back(probe);
    }
  }

  void with_matrix(const std::string& text) {
    repository.policy_files.push_back("policies/compat.yaml");
    repository.policy_texts["policies/compat.yaml"] = text;
  }

  RunOutcome run() {
    auto bundle =
        EvidenceBundle::create(evidence_root.path(), change.id, now_utc(), "run1", Redactor{});
    EXPECT_TRUE(bundle.ok());
    if (!bundle.ok()) return RunOutcome{};
    GateObserver observer;
    PipelineOptions options;
    options.mode = Mode::apply;
    options.operator_name = "compat-test";
    Pipeline pipeline(repository, change, {remote, snapshotter, *bundle.value(), observer},
                      options);
    return pipeline.run();
  }
};

const GateRecord* gate_named(const RunOutcome& outcome, const std::string& name) {
  for (const auto& record : outcome.gates)
    if (record.name == name) return &record;
  return nullptr;
}

std::string all_details(const GateRecord& record) {
  std::string text = record.summary + "\n";
  for (const auto& detail : record.details) text += detail + "\n";
  return text;
}

TEST(CompatGate, AVersionOutsideTheMatrixRefusesBeforeAnyStep) {
  // Given leaf1 running FRR 7.5.1 and a matrix allowing >=8.4 <9, then the compat gate fails
  // naming device, component, found, allowed and the matrix line; the run exits 3 and no step
  // reaches a device.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  auto outcome = fixture.run();
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::fail);
  EXPECT_NE(std::find(compat->details.begin(), compat->details.end(),
                      "leaf1: frr 7.5.1 not in >=8.4 <9 (policies/compat.yaml:4:10)"),
            compat->details.end())
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);
  EXPECT_EQ(gate_named(outcome, "execute"), nullptr);
  EXPECT_FALSE(outcome.change_started);
  EXPECT_NE(outcome.first_disproven.find("leaf1: frr 7.5.1 not in >=8.4 <9"), std::string::npos)
      << outcome.first_disproven;
}

TEST(CompatGate, AComponentTheMatrixRequiresButIdentityLacksIsNoEvidence) {
  // Given leaf1's identity without an FRR version, then compat is no-evidence (not pass), the
  // run exits 3 and nothing is sent.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("");
  auto outcome = fixture.run();
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*compat).find("leaf1: frr: no evidence: identity has no frr_version "
                                      "(required by policies/compat.yaml:4:10)"),
            std::string::npos)
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);
}

TEST(CompatGate, ATargetWithoutIdentityIsNoEvidenceWithOrWithoutAMatrix) {
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  auto outcome = fixture.run();  // the snapshotter collected no identity for leaf1
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*compat).find("leaf1: no identity collected"), std::string::npos)
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);

  Fixture without_matrix({"leaf1"});
  auto unmatrixed = without_matrix.run();
  EXPECT_EQ(unmatrixed.exit_code, ExitCode::refused);
  const auto* plain = gate_named(unmatrixed, "compat");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->verdict, Verdict::no_evidence);
  EXPECT_NE(plain->summary.find("identity missing on 1 target"), std::string::npos)
      << plain->summary;
  EXPECT_EQ(without_matrix.remote.sent("step"), 0u);
}

TEST(CompatGate, VersionsInsideTheMatrixLetTheChangeProceedToExecute) {
  // Given leaf1 on FRR 8.4.4 and kernel 6.1, then compat passes and the step is sent.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("8.4.4");
  auto outcome = fixture.run();
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::pass) << all_details(*compat);
  EXPECT_NE(compat->summary.find("policies/compat.yaml"), std::string::npos) << compat->summary;
  const auto* execute = gate_named(outcome, "execute");
  ASSERT_NE(execute, nullptr);
  EXPECT_EQ(execute->verdict, Verdict::pass) << all_details(*execute);
  EXPECT_EQ(fixture.remote.sent("step"), 1u);
  EXPECT_TRUE(outcome.change_started);
}

TEST(CompatGate, APlatformTheMatrixDoesNotListPassesAndTheSummarySaysSo) {
  // Given a change on host1, whose platform (linux) the matrix does not list, then nothing is
  // required of it and the summary says so rather than implying it was checked.
  Fixture fixture({"host1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["host1"] = {{"hostname", "host1"}, {"kernel", "2.6.32"}};
  auto outcome = fixture.run();
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::pass) << all_details(*compat);
  EXPECT_NE(compat->summary.find("platform linux is not in policies/compat.yaml"),
            std::string::npos)
      << compat->summary;
  EXPECT_EQ(fixture.remote.sent("step"), 1u);
}

TEST(CompatGate, WithoutAMatrixCollectedIdentityPassesAndTheSummarySaysThereIsNoMatrix) {
  // Given no policies/compat.yaml at the commit, then compat keeps its old rule (identity
  // collected means pass) and says that no matrix was checked.
  Fixture fixture({"leaf1"});
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  auto outcome = fixture.run();
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::pass) << all_details(*compat);
  EXPECT_NE(compat->summary.find("no compatibility matrix"), std::string::npos) << compat->summary;
  EXPECT_EQ(fixture.remote.sent("step"), 1u);
}

TEST(CompatGate, TheFindingsLandInTheEvidence) {
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  (void)fixture.run();
  // <root>/<change-id>/<time>-<run-id>/compat.json
  std::string found;
  for (const auto& change_dir : std::filesystem::directory_iterator(fixture.evidence_root.path()))
    for (const auto& run_dir : std::filesystem::directory_iterator(change_dir.path()))
      if (testing::file_exists(run_dir.path().string() + "/compat.json"))
        found = testing::read_file(run_dir.path().string() + "/compat.json");
  ASSERT_FALSE(found.empty());
  auto document = json::parse(found);
  EXPECT_EQ(document["matrix"], "policies/compat.yaml");
  ASSERT_EQ(document["findings"].size(), 2u);
  EXPECT_EQ(document["findings"][0]["verdict"], "fail");
  EXPECT_EQ(document["findings"][0]["found"], "7.5.1");
}

}  // namespace
}  // namespace fabgate::pipeline
