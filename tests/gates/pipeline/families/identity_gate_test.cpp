// The identity check of the snapshot gates inside a real Pipeline with scripted collaborators
// (docs/monitoring.md "Identity"): a device that answers as another one, or whose identity
// cannot be read, blocks the change before any step; the same check runs on later snapshots.

#include <gtest/gtest.h>

#include <fstream>

#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

void declare_hostname(ScriptedRun& run, const std::string& device, const std::string& hostname) {
  for (auto& entry : run.repository.inventory.devices)
    if (entry.name == device) {
      intent::ExpectedIdentity identity;
      identity.hostname = hostname;
      identity.where = {"inventory.yaml", 9, 15};
      entry.identity = identity;
      entry.ssh.host = "10.255.0.22";
    }
}

TEST(IdentityGate, ADeviceAnsweringAsAnotherOneFailsSnapshotPreAndNothingIsSent) {
  // Given the inventory saying 10.255.0.22 is leaf2 and the device there answering as leaf1,
  // then snapshot-pre fails with "10.255.0.22 answered as leaf1, inventory says leaf2", the run
  // is refused (exit 3) and no step is sent.
  ScriptedRun run({"leaf1"});
  declare_hostname(run, "leaf1", "leaf2");
  run.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"}};
  run.snapshotter.identities["host1"] = {{"hostname", "host1"}};
  auto outcome = run.run();

  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  EXPECT_EQ(run.remote.sent("step"), 0u);
  const GateRecord* pre = gate_named(outcome, "snapshot-pre");
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->verdict, Verdict::fail);
  ASSERT_FALSE(pre->details.empty());
  EXPECT_EQ(pre->details.front(),
            "leaf1: 10.255.0.22 answered as leaf1, inventory says leaf2 (inventory.yaml:9:15)");
  EXPECT_NE(outcome.first_disproven.find("answered as leaf1"), std::string::npos);
}

TEST(IdentityGate, AnIdentityThatCannotBeReadIsNoEvidence) {
  // Given leaf1 declaring its hostname but no identity source answering for it, then
  // snapshot-pre is no-evidence (never a pass) and the run is refused.
  ScriptedRun run({"leaf1"});
  declare_hostname(run, "leaf1", "leaf1");
  auto outcome = run.run();

  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const GateRecord* pre = gate_named(outcome, "snapshot-pre");
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*pre).find("identity could not be read from 10.255.0.22"),
            std::string::npos)
      << all_details(*pre);
}

TEST(IdentityGate, AMatchingIdentityPassesAndADeclaredFieldNobodyCollectsIsNoEvidence) {
  // Given leaf1 answering as LEAF1.dc1 (case and domain differ) where the inventory says leaf1,
  // then the hostname matches; given a serial declared too that no source collects, then the
  // snapshot is no-evidence naming the serial.
  ScriptedRun run({"leaf1"});
  declare_hostname(run, "leaf1", "leaf1");
  run.snapshotter.identities["leaf1"] = {{"hostname", "LEAF1.dc1"}};
  {
    auto outcome = run.run();
    const GateRecord* pre = gate_named(outcome, "snapshot-pre");
    ASSERT_NE(pre, nullptr);
    EXPECT_EQ(pre->verdict, Verdict::pass) << all_details(*pre);
    EXPECT_NE(pre->summary.find("1 declared identity field match"), std::string::npos);
  }
  // A second run in its own evidence root: two bundles of one run id in one second collide.
  ScriptedRun second({"leaf1"});
  declare_hostname(second, "leaf1", "leaf1");
  second.snapshotter.identities["leaf1"] = {{"hostname", "LEAF1.dc1"}};
  second.repository.inventory.devices[0].identity->serial = "SN1";
  auto outcome = second.run();
  const GateRecord* pre = gate_named(outcome, "snapshot-pre");
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*pre).find("collected serial"), std::string::npos) << all_details(*pre);
}

TEST(IdentityGate, ASystemMacIsCheckedAndAMissingSerialIsNoEvidenceWithItsReason) {
  // Given leaf1 declaring system_mac 0C:42:A1:00:00:01 and its identity source collecting
  // 0c:42:a1:00:00:01, then the MAC matches (without case); given another MAC, the snapshot
  // fails naming both; given a declared serial where the source says why it has none, then it
  // is no-evidence with that reason.
  ScriptedRun run({"leaf1"});
  declare_hostname(run, "leaf1", "leaf1");
  run.repository.inventory.devices[0].identity->system_mac = "0C:42:A1:00:00:01";
  run.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"},
                                         {"system_mac", "0c:42:a1:00:00:01"}};
  {
    auto outcome = run.run();
    const GateRecord* pre = gate_named(outcome, "snapshot-pre");
    ASSERT_NE(pre, nullptr);
    EXPECT_EQ(pre->verdict, Verdict::pass) << all_details(*pre);
  }
  ScriptedRun other({"leaf1"});
  declare_hostname(other, "leaf1", "leaf1");
  other.repository.inventory.devices[0].identity->system_mac = "0c:42:a1:00:00:01";
  other.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"},
                                           {"system_mac", "0c:42:a1:00:00:02"}};
  {
    auto outcome = other.run();
    const GateRecord* pre = gate_named(outcome, "snapshot-pre");
    ASSERT_NE(pre, nullptr);
    EXPECT_EQ(pre->verdict, Verdict::fail);
    EXPECT_NE(all_details(*pre).find("answered as system_mac 0c:42:a1:00:00:02"), std::string::npos)
        << all_details(*pre);
  }
  ScriptedRun serial({"leaf1"});
  declare_hostname(serial, "leaf1", "leaf1");
  serial.repository.inventory.devices[0].identity->serial = "SN1";
  serial.snapshotter.identities["leaf1"] = {
      {"hostname", "leaf1"},
      {"serial_unavailable", "/sys/class/dmi/id/product_serial is absent, empty or unreadable"}};
  auto outcome = serial.run();
  const GateRecord* pre = gate_named(outcome, "snapshot-pre");
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*pre).find("collected serial (/sys/class/dmi/id/product_serial is absent"),
            std::string::npos)
      << all_details(*pre);
}

TEST(IdentityGate, ADeviceThatAnswersAsAnotherAfterTheChangeFailsSnapshotPostAndIsRolledBack) {
  // Given leaf1 answering as leaf1 for the baseline and as spine9 once the step ran, then
  // snapshot-post fails on identity, the change is rolled back, and snapshot-restored (still
  // spine9) fails too: exit 5, a human must look.
  ScriptedRun run({"leaf1"});
  declare_hostname(run, "leaf1", "leaf1");
  run.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"}};
  int taken = 0;
  run.snapshotter.before_returning = [&] {
    if (++taken == 1) run.snapshotter.identities["leaf1"] = {{"hostname", "spine9"}};
  };
  auto outcome = run.run();

  EXPECT_EQ(run.remote.sent("step"), 1u);
  const GateRecord* post = gate_named(outcome, "snapshot-post");
  ASSERT_NE(post, nullptr);
  EXPECT_EQ(post->verdict, Verdict::fail);
  EXPECT_NE(all_details(*post).find("answered as spine9, inventory says leaf1"), std::string::npos);
  const GateRecord* restored = gate_named(outcome, "snapshot-restored");
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->verdict, Verdict::fail);
  EXPECT_EQ(outcome.exit_code, ExitCode::not_restored);
}

}  // namespace
}  // namespace fabgate::pipeline
