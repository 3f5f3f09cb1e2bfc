// Gates that made no real check prove nothing: a gate whose body never decides blocks, probes
// that all passed by waiver are no-evidence, and the change's `not_wanted` is the only way a
// gate without checks is set aside (skipped, with the change's reason), never a silent pass.

#include <gtest/gtest.h>

#include <atomic>

#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

// Steps and rollback steps succeed unless `steps_fail`; every probe fails.
class FailingRemote final : public Remote {
 public:
  explicit FailingRemote(bool steps_fail, bool probes_fail)
      : steps_fail_(steps_fail), probes_fail_(probes_fail) {}
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string&, Duration,
                   std::string_view purpose) override {
    ssh::CommandResult result;
    result.started_at = now_utc();
    result.exit_status = 0;
    if (purpose == "step") {
      ++steps;
      if (steps_fail_) result.exit_status = 1;
    }
    if (purpose == "probe" && probes_fail_) result.exit_status = 1;
    return result;
  }
  std::atomic<int> steps{0};

 private:
  bool steps_fail_, probes_fail_;
};

RunOutcome run_with(ScriptedRun& run, Remote& remote) {
  for (const auto& device : run.repository.inventory.devices) {
    run.snapshotter.identities[device.name] = {{"hostname", device.name}};
    run.snapshotter.categories[device.name] = {
        {"interfaces", {{"eth0", {{"oper", "up"}, {"addresses", {"192.0.2.1/24"}}}}}}};
  }
  auto bundle = EvidenceBundle::create(run.evidence_root.path(), run.change.id, now_utc(), "run1",
                                       Redactor{});
  EXPECT_TRUE(bundle.ok());
  if (!bundle.ok()) return RunOutcome{};
  GateObserver observer;
  PipelineOptions options;
  options.operator_name = "real-checks-test";
  Pipeline pipeline(run.repository, run.change,
                    {remote, run.snapshotter, *bundle.value(), observer}, options);
  return pipeline.run();
}

TEST(RealChecks, AGateThatNeverDecidesBlocks) {
  // Given a gate record nobody set a verdict on, then it blocks like no-evidence: a gate body
  // that returns without deciding has proven nothing.
  GateRecord record;
  EXPECT_EQ(record.verdict, Verdict::no_evidence);
  EXPECT_TRUE(blocks(record.verdict));
}

TEST(RealChecks, ProbesThatAllPassedByWaiverAreNoEvidence) {
  // Given leaf1's only probe failing and an unexpired exception waiving it, then
  // baseline-probes passed nothing by itself: no-evidence, its summary says every probe was
  // waived, the run is refused (exit 3) and no step is sent.
  ScriptedRun run({"leaf1"});
  run.repository.policy_files.push_back("policies/exceptions.yaml");
  run.repository.policy_texts["policies/exceptions.yaml"] =
      "exceptions:\n"
      "  - id: EXC-9\n"
      "    scope: {device: leaf1, rule: 'probe:reachable-leaf1'}\n"
      "    reason: host in RMA\n"
      "    owner: netops@example.net\n"
      "    expiry: 2099-01-01T00:00:00Z\n";
  FailingRemote remote(false, true);
  auto outcome = run_with(run, remote);
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* baseline = gate_named(outcome, "baseline-probes");
  ASSERT_NE(baseline, nullptr);
  EXPECT_EQ(baseline->verdict, Verdict::no_evidence) << all_details(*baseline);
  EXPECT_EQ(baseline->summary,
            "1/1 probes passed (1 waived, 0 real): every probe was waived, so no real check "
            "passed");
  EXPECT_EQ(remote.steps, 0);
}

TEST(RealChecks, WithoutProbesAndWithoutSayingSoTheRunIsRefused) {
  // Given a change without probes that does not say it wants none, then baseline-probes is
  // no-evidence with how to fix it, and no step is sent.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.probes.clear();
  FailingRemote remote(false, false);
  auto outcome = run_with(run, remote);
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* baseline = gate_named(outcome, "baseline-probes");
  ASSERT_NE(baseline, nullptr);
  EXPECT_EQ(baseline->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*baseline).find("not_wanted: {probes:"), std::string::npos)
      << all_details(*baseline);
  EXPECT_EQ(remote.steps, 0);
}

TEST(RealChecks, AChangeThatWantsNoProbesSkipsThemWithItsReasonAndIsAccepted) {
  // Given a change without probes saying not_wanted: {probes: ...}, then baseline-probes and
  // acceptance are skipped with the reason, the step is sent and the change is accepted.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.probes.clear();
  run.change.not_wanted["probes"] = "a management-plane change with no service";
  FailingRemote remote(false, false);
  auto outcome = run_with(run, remote);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.device_state;
  for (const char* name : {"baseline-probes", "acceptance"}) {
    const auto* gate = gate_named(outcome, name);
    ASSERT_NE(gate, nullptr) << name;
    EXPECT_EQ(gate->verdict, Verdict::skipped) << name;
    EXPECT_EQ(gate->summary,
              "not wanted by the change: a management-plane change with no service (0 probes run)");
  }
  EXPECT_EQ(remote.steps, 1);
}

TEST(RealChecks, RestoredProbesNotWantedDoNotLeaveTheRestoreUnverified) {
  // Given the same change whose step fails, then it is rolled back, restored-probes is skipped
  // as not wanted, and the restore is verified by the snapshot and comparison: exit 4.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.probes.clear();
  run.change.not_wanted["probes"] = "a management-plane change with no service";
  FailingRemote remote(true, false);
  auto outcome = run_with(run, remote);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back) << outcome.device_state;
  const auto* restored = gate_named(outcome, "restored-probes");
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->verdict, Verdict::skipped);
  EXPECT_EQ(gate_named(outcome, "compare-restored")->verdict, Verdict::pass);
}

}  // namespace
}  // namespace fabgate::pipeline
