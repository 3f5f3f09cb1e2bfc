// acceptance.expected_flaps, acceptance.telemetry_max_gap and acceptance.restore_dwell: read into
// the model, and every malformed entry named where it stands.

#include <gtest/gtest.h>

#include "gates/intent/loader.h"
#include "tests/support/memory_tree.h"

namespace fabgate::intent {
namespace {

using testing::MemoryTree;

const char* kInventory = R"(credentials:
  read:   {user: ro, identity_file: ~/.ssh/ro}
  change: {user: rw, identity_file: ~/.ssh/rw}
devices:
  spine1: {platform: frr, role: spine, ssh: {host: 192.0.2.1}}
  leaf1:  {platform: frr, role: leaf, ssh: {host: 192.0.2.11}}
)";

LoadOutcome load_with_acceptance(const std::string& acceptance) {
  MemoryTree tree;
  tree.files["fabgate.yaml"] = "version: 1\n";
  tree.files["inventory.yaml"] = kInventory;
  tree.files["changes/flap.yaml"] = R"(id: flap
title: Flap a port
targets: [leaf1]
bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}
steps:
  - device: leaf1
    run: echo flap
rollback:
  - device: leaf1
    run: echo restore
acceptance:
)" + acceptance;
  CommitInfo commit;
  commit.id = "0123456789abcdef0123456789abcdef01234567";
  return load_intent_repository(tree, commit, "");
}

TEST(TelemetryAcceptance, ExpectedFlapsAndTheMaxGapAreRead) {
  // Given a change expecting a flap of leaf1's to-host2 and of spine1's session to 10.0.1.1,
  // with a 6 s telemetry gap, then both are in the model as written.
  auto outcome = load_with_acceptance(
      "  expected_flaps: [\"leaf1:to-host2\", \"spine1:bgp 10.0.1.1\"]\n"
      "  telemetry_max_gap: 6s\n");
  ASSERT_TRUE(outcome.diagnostics.empty()) << outcome.diagnostics.lines()[0];
  const auto& acceptance = outcome.repository->changes.at(0).acceptance;
  EXPECT_EQ(acceptance.expected_flaps,
            (std::vector<std::string>{"leaf1:to-host2", "spine1:bgp 10.0.1.1"}));
  EXPECT_EQ(acceptance.telemetry_max_gap, Duration{6'000});
}

TEST(TelemetryAcceptance, MalformedExpectedFlapsAreEachNamedAtTheirLine) {
  // Given an entry without a device, one naming a device not in the inventory (a typo) and a
  // bare "bgp", then each is an error at its own line and column, with a hint.
  auto outcome = load_with_acceptance(
      "  expected_flaps:\n"
      "    - to-host2\n"
      "    - leaf9:to-host2\n"
      "    - \"spine1:bgp\"\n");
  auto lines = outcome.diagnostics.lines();
  ASSERT_EQ(outcome.diagnostics.items().size(), 3u) << ::testing::PrintToString(lines);
  const auto& items = outcome.diagnostics.items();
  EXPECT_EQ(items[0].where.file, "changes/flap.yaml");
  EXPECT_EQ(items[0].where.line, 13);
  EXPECT_EQ(items[0].where.column, 7);
  EXPECT_NE(items[0].message.find("'to-host2' is not DEVICE:INTERFACE or DEVICE:bgp ADDRESS"),
            std::string::npos)
      << items[0].message;
  EXPECT_EQ(items[1].where.line, 14);
  EXPECT_NE(items[1].message.find("names device 'leaf9', which is not in the inventory"),
            std::string::npos)
      << items[1].message;
  EXPECT_EQ(items[1].hint, "did you mean 'leaf1'?");
  EXPECT_EQ(items[2].where.line, 15);
}

TEST(TelemetryAcceptance, TheRestoreDwellIsReadAndDefaultsToFiveSeconds) {
  // Given a change with restore_dwell 20s and one without, then the first holds 20 s and the
  // second the default 5 s.
  auto outcome = load_with_acceptance("  restore_dwell: 20s\n");
  ASSERT_TRUE(outcome.diagnostics.empty()) << outcome.diagnostics.lines()[0];
  EXPECT_EQ(outcome.repository->changes.at(0).acceptance.restore_dwell, Duration{20'000});
  auto defaulted = load_with_acceptance("  settle: 1s\n");
  ASSERT_TRUE(defaulted.diagnostics.empty()) << defaulted.diagnostics.lines()[0];
  EXPECT_EQ(defaulted.repository->changes.at(0).acceptance.restore_dwell, Duration{5'000});
}

TEST(TelemetryAcceptance, ARestoreDwellOverTenMinutesIsNamedAtItsLine) {
  // Given restore_dwell 1h, then it is an error at its line and column: the devices would stay
  // locked and unverified that long.
  auto outcome = load_with_acceptance("  restore_dwell: 1h\n");
  ASSERT_EQ(outcome.diagnostics.items().size(), 1u);
  const auto& item = outcome.diagnostics.items()[0];
  EXPECT_EQ(item.where.file, "changes/flap.yaml");
  EXPECT_EQ(item.where.line, 12);
  EXPECT_EQ(item.where.column, 18);
  EXPECT_NE(item.message.find("acceptance.restore_dwell is longer than 10 minutes"),
            std::string::npos)
      << item.message;
}

}  // namespace
}  // namespace fabgate::intent
