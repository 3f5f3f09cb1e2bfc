// The recovery path inside a real Pipeline with scripted collaborators: settle-restored polls the
// probes through the whole settle time and records when they passed again, and the post
// snapshot taken after a failure covers every device in scope.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

// Steps and rollback steps succeed. Probes pass until a step was sent (the baseline), fail
// from then until the rollback was sent, then fail `failing_after_rollback` more times, then
// pass.
class RecoveringRemote final : public Remote {
 public:
  explicit RecoveringRemote(int failing_after_rollback)
      : failing_after_rollback_(failing_after_rollback) {}

  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string&, Duration,
                   std::string_view purpose) override {
    ssh::CommandResult result;
    result.started_at = now_utc();
    result.exit_status = 0;
    if (purpose == "step") changed_ = true;
    if (purpose == "rollback") rolled_back_ = true;
    if (purpose == "probe") {
      ++probes_;
      bool passes = !changed_ || (rolled_back_ && failing_after_rollback_-- <= 0);
      result.exit_status = passes ? 0 : 1;
    }
    return result;
  }
  int probes() const { return probes_; }

 private:
  std::atomic<bool> changed_{false};
  std::atomic<bool> rolled_back_{false};
  std::atomic<int> failing_after_rollback_;
  std::atomic<int> probes_{0};
};

// The scripted snapshotter, remembering which devices each snapshot covered.
class CountingSnapshotter final : public Snapshotter {
 public:
  explicit CountingSnapshotter(ScriptedSnapshotter& inner) : inner_(inner) {}
  TakenSnapshot take(const std::vector<const intent::Device*>& devices, const std::string& commit,
                     ProgressSink* progress) override {
    std::vector<std::string> names;
    for (const auto* device : devices) names.push_back(device->name);
    {
      std::lock_guard lock(mutex_);
      taken.push_back(names);
    }
    return inner_.take(devices, commit, progress);
  }
  std::vector<std::vector<std::string>> taken;  // pre, post, restored

 private:
  ScriptedSnapshotter& inner_;
  std::mutex mutex_;
};

RunOutcome run_with(ScriptedRun& run, Remote& remote, Snapshotter& snapshotter) {
  // Every device answers with an identity (the compat gate needs the targets') and, unless the
  // test gave it some, one interface (a comparison that evaluates no check is no-evidence).
  for (const auto& device : run.repository.inventory.devices) {
    run.snapshotter.identities[device.name] = {{"hostname", device.name}};
    if (!run.snapshotter.categories.contains(device.name))
      run.snapshotter.categories[device.name] = {
          {"interfaces", {{"eth0", {{"oper", "up"}, {"addresses", {"192.0.2.1/24"}}}}}}};
  }
  auto bundle = EvidenceBundle::create(run.evidence_root.path(), run.change.id, now_utc(), "run1",
                                       Redactor{});
  EXPECT_TRUE(bundle.ok());
  if (!bundle.ok()) return RunOutcome{};
  GateObserver observer;
  PipelineOptions options;
  options.operator_name = "restore-test";
  Pipeline pipeline(run.repository, run.change, {remote, snapshotter, *bundle.value(), observer},
                    options);
  return pipeline.run();
}

Duration duration_of(const RunOutcome& outcome, const std::string& gate) {
  const auto* record = gate_named(outcome, gate);
  return record ? record->duration : Duration{-1};
}

TEST(RestorePath, SettleRestoredRecordsWhenTheProbesPassedButWaitsTheWholeSettleTime) {
  // Given a 1.5 s settle and probes that pass on the third round after the rollback, then
  // settle-restored says when they passed and how many rounds ran, yet still waits the whole
  // settle time (probes over a redundant path prove nothing about the control plane), and the
  // change is rolled back with the baseline verified.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{1'500};
  RecoveringRemote remote(2);
  auto outcome = run_with(run, remote, run.snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_EQ(settle->verdict, Verdict::pass);
  EXPECT_NE(settle->summary.find("probes passed"), std::string::npos) << all_details(*settle);
  EXPECT_NE(all_details(*settle).find("polled the probes 3 times"), std::string::npos)
      << all_details(*settle);
  EXPECT_GE(duration_of(outcome, "settle-restored"), Duration{1'500});
  ASSERT_TRUE(outcome.settle_restored.has_value());
  EXPECT_LT(*outcome.settle_restored, Duration{1'500});
  EXPECT_EQ(gate_named(outcome, "restored-probes")->verdict, Verdict::pass);
}

TEST(RestorePath, ProbesThatNeverPassWaitTheWholeBoundAndTheBaselineIsNotVerified) {
  // Given probes that keep failing after the rollback, then settle-restored waits its whole
  // 1 s bound (its own verdict proves nothing), names the last failures, and the restored
  // probes fail: exit 5, exactly as the fixed wait ended.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{1'000};
  RecoveringRemote remote(1'000'000);
  auto outcome = run_with(run, remote, run.snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::not_restored);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_GE(settle->duration, Duration{1'000});
  EXPECT_NE(settle->summary.find("waited the settle time of 1s; the probes had not passed"),
            std::string::npos)
      << all_details(*settle);
  EXPECT_NE(all_details(*settle).find("last poll: reachable-leaf1 on leaf1: fail"),
            std::string::npos)
      << all_details(*settle);
  EXPECT_EQ(gate_named(outcome, "restored-probes")->verdict, Verdict::fail);
}

TEST(RestorePath, TheFaultCaptureCoversEveryDeviceInScope) {
  // Given a leaf1 change that fails its probe, then the post snapshot that captures the fault
  // covers the same devices as the pre and restored snapshots: a fault shows on devices that
  // share nothing with the target (a VNI withdrawn on one leaf is missed on the other).
  ScriptedRun run({"leaf1"});
  RecoveringRemote remote(0);
  CountingSnapshotter snapshotter(run.snapshotter);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  ASSERT_EQ(snapshotter.taken.size(), 3u);
  EXPECT_EQ(snapshotter.taken[1], snapshotter.taken[0]);
  EXPECT_EQ(snapshotter.taken[2], snapshotter.taken[0]);
}

TEST(RestorePath, AnAcceptedChangeIsProvenOnTheWholeInventory) {
  // Given a change whose probes pass, then the post snapshot covers every device.
  ScriptedRun run({"leaf1"});
  RecoveringRemote remote(0);
  CountingSnapshotter snapshotter(run.snapshotter);
  // Marked as rolled back already, so the probes pass after the step too.
  (void)remote.run(run.repository.inventory.devices[0], ssh::CredentialRole::change, "",
                   Duration{0}, "rollback");
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted);
  ASSERT_EQ(snapshotter.taken.size(), 2u);
  EXPECT_EQ(snapshotter.taken[1], (std::vector<std::string>{"leaf1", "host1"}));
}

}  // namespace
}  // namespace fabgate::pipeline
