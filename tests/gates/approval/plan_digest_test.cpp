// The plan digest from the parsed model: stable under layout (comments, key order, flow or
// block style) at the same commit, and changed by every input that changes what runs.

#include "gates/pipeline/reporting/plan_digest.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "gates/intent/loader.h"
#include "tests/support/memory_tree.h"

namespace fabgate::pipeline {
namespace {

using testing::MemoryTree;

const char* kInventory = R"(credentials:
  read:   {user: ro, identity_file: ~/.ssh/ro}
  change: {user: rw, identity_file: ~/.ssh/rw}
devices:
  spine1: {platform: frr, role: spine, ssh: {host: 192.0.2.1}}
  leaf1:  {platform: frr, role: leaf, ssh: {host: 192.0.2.11}}
  host1:  {platform: linux, role: host, ssh: {host: 192.0.2.21}, data_addresses: [10.0.0.21]}
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
    - {name: ping, host: host1, run: ping -c1 192.0.2.11}
compare:
  rule_sets: [local]
  expected:
    - {device: spine1, path: "bgp.peers.*.state", values: [Idle]}
)";

// The same change laid out differently: keys reordered, block style, comments.
const char* kChangeRelaidOut = R"(# reviewed in PR 42
title: Drain spine1   # why: maintenance
id: drain
acceptance:
  probes:
    - name: ping
      run: ping -c1 192.0.2.11
      host: host1
  settle: 1s
steps:
  - run: echo drain
    device: spine1
rollback:
  - run: echo undrain
    device: spine1
targets:
  - spine1
compare:
  expected:
    - path: "bgp.peers.*.state"
      device: spine1
      values: [Idle]
  rule_sets: [local]
bounds:
  deadline: 2m
  step_timeout: 10s
  max_targets: 1
)";

const char* kRuleSet = R"(name: local
rules:
  - {name: peers-up, path: "devices.*.bgp.peers.*.state", operator: no-change, layer: control-plane}
)";

MemoryTree base_tree() {
  MemoryTree tree;
  tree.files["fabgate.yaml"] = "version: 1\napproval: {min_approvals: 1}\n";
  tree.files["inventory.yaml"] = kInventory;
  tree.files["changes/drain.yaml"] = kChange;
  tree.files["policies/compare/local.yaml"] = kRuleSet;
  tree.files["policies/exceptions.yaml"] = "exceptions: []\n";
  tree.files["policies/allowed_signers"] = "alice@example.net ssh-ed25519 AAAA\n";
  return tree;
}

std::string digest_of(const MemoryTree& tree,
                      const std::string& commit = "0123456789abcdef0123456789abcdef01234567") {
  intent::CommitInfo info;
  info.id = commit;
  auto outcome = intent::load_intent_repository(tree, info, "");
  if (!outcome.repository) {
    std::string all;
    for (const auto& line : outcome.diagnostics.lines()) all += line + "\n";
    ADD_FAILURE() << "intent does not load:\n" << all;
    return "";
  }
  return plan_digest(*outcome.repository, outcome.repository->changes.at(0));
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in the fixture";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(PlanDigest, IsSha256OfTheCanonicalInputAndSurvivesAJsonRoundTrip) {
  // Given a loaded intent, then the digest reads sha256:<64 hex>, and plan.json's stored
  // digest_input (written and read back as JSON) gives the same digest, which is what
  // `fabgate approve` checks.
  auto tree = base_tree();
  intent::CommitInfo info;
  info.id = "0123456789abcdef0123456789abcdef01234567";
  auto outcome = intent::load_intent_repository(tree, info, "");
  ASSERT_TRUE(outcome.repository);
  const auto& repository = *outcome.repository;
  std::string digest = plan_digest(repository, repository.changes.at(0));
  EXPECT_EQ(digest.size(), 7u + 64u);
  EXPECT_EQ(digest.rfind("sha256:", 0), 0u);
  auto input = plan_digest_input(repository, repository.changes.at(0));
  auto reread = nlohmann::json::parse(input.dump(2));
  EXPECT_EQ(digest_of_input(reread), digest);
  EXPECT_EQ(input["rule_sets"][0]["name"], "fabric-default");
  EXPECT_EQ(input["rule_sets"][0]["source"], "built-in");
  EXPECT_EQ(input["rule_sets"][1]["source"], "policies/compare/local.yaml");
}

TEST(PlanDigest, LayoutAndCommentsDoNotChangeItAtTheSameCommit) {
  auto tree = base_tree();
  auto relaid = base_tree();
  relaid.files["changes/drain.yaml"] = kChangeRelaidOut;
  relaid.files["inventory.yaml"] = std::string("# the lab\n") + kInventory;
  EXPECT_EQ(digest_of(tree), digest_of(relaid));
}

TEST(PlanDigest, EveryInputThatChangesWhatRunsChangesIt) {
  // Given one edit at a time to the fixture, then each gives a digest different from the base
  // and from every other edit.
  const std::string base = digest_of(base_tree());
  std::map<std::string, std::function<void(MemoryTree&)>> edits = {
      {"step command",
       [](MemoryTree& t) {
         t.files["changes/drain.yaml"] = replaced(kChange, "run: echo drain", "run: echo DRAIN");
       }},
      {"rollback command",
       [](MemoryTree& t) {
         t.files["changes/drain.yaml"] = replaced(kChange, "echo undrain", "echo undrain2");
       }},
      {"step timeout",
       [](MemoryTree& t) {
         t.files["changes/drain.yaml"] =
             replaced(kChange, "step_timeout: 10s", "step_timeout: 11s");
       }},
      {"waves",
       [](MemoryTree& t) {
         t.files["changes/drain.yaml"] =
             replaced(kChange, "deadline: 2m}", "deadline: 2m, waves: [[spine1]]}");
       }},
      {"probe",
       [](MemoryTree& t) {
         t.files["changes/drain.yaml"] = replaced(kChange, "ping -c1", "ping -c2");
       }},
      {"expected difference",
       [](MemoryTree& t) {
         t.files["changes/drain.yaml"] = replaced(kChange, "values: [Idle]", "values: [Active]");
       }},
      {"out of service",
       [](MemoryTree& t) {
         t.files["changes/drain.yaml"] = std::string(kChange) + "out_of_service: [spine1]\n";
       }},
      {"back in service",
       [](MemoryTree& t) {
         t.files["changes/drain.yaml"] = std::string(kChange) + "back_in_service: [spine1]\n";
       }},
      {"target endpoint",
       [](MemoryTree& t) {
         t.files["inventory.yaml"] = replaced(kInventory, "192.0.2.1}", "192.0.2.2}");
       }},
      {"change credential key",
       [](MemoryTree& t) {
         t.files["inventory.yaml"] = replaced(kInventory, "~/.ssh/rw", "~/.ssh/other");
       }},
      {"data address",
       [](MemoryTree& t) {
         t.files["inventory.yaml"] = replaced(kInventory, "10.0.0.21", "10.0.0.22");
       }},
      {"rule set text",
       [](MemoryTree& t) {
         t.files["policies/compare/local.yaml"] =
             replaced(kRuleSet, "operator: no-change", "operator: exists");
       }},
      {"exceptions text",
       [](MemoryTree& t) {
         t.files["policies/exceptions.yaml"] =
             "exceptions:\n  - {id: EXC-1, scope: {device: leaf1, rule: x}, reason: r, owner: o, "
             "expiry: 2099-01-01T00:00:00Z}\n";
       }},
      {"allowed signers",
       [](MemoryTree& t) {
         t.files["policies/allowed_signers"] += "mallory@example.net ssh-ed25519 BBBB\n";
       }},
      {"approval policy",
       [](MemoryTree& t) {
         t.files["fabgate.yaml"] = "version: 1\napproval: {min_approvals: 2}\n";
       }},
      {"approval max age",
       [](MemoryTree& t) {
         t.files["fabgate.yaml"] = "version: 1\napproval: {min_approvals: 1, max_age: 24h}\n";
       }},
  };
  std::map<std::string, std::string> seen = {{base, "base"}};
  for (const auto& [name, edit] : edits) {
    auto tree = base_tree();
    edit(tree);
    std::string digest = digest_of(tree);
    ASSERT_FALSE(digest.empty()) << name;
    auto [it, fresh] = seen.emplace(digest, name);
    EXPECT_TRUE(fresh) << name << " gives the same digest as " << it->second;
  }
  EXPECT_NE(digest_of(base_tree(), std::string(40, 'f')), base) << "the intent commit";
}

}  // namespace
}  // namespace fabgate::pipeline
