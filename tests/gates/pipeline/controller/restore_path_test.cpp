// The recovery path inside a real Pipeline with scripted collaborators: settle-restored verifies
// the restore in rounds (restored snapshot compared with the baseline, and the probes, taken
// together) until one holds or the last, started at the settle bound, was taken; and the post
// snapshot taken after a failure covers every device in scope.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

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

// The scripted snapshotter whose snapshots after the rollback show leaf1's eth0 still down for
// the first `lagging` of them: a control plane that comes back after forwarding does.
class LaggingSnapshotter final : public Snapshotter {
 public:
  LaggingSnapshotter(ScriptedSnapshotter& inner, int lagging) : inner_(inner), lagging_(lagging) {}
  TakenSnapshot take(const std::vector<const intent::Device*>& devices, const std::string& commit,
                     ProgressSink* progress) override {
    auto taken = inner_.take(devices, commit, progress);
    // pre and post come first; every later snapshot is a restore round.
    if (++taken_ > 2 && lagging_-- > 0)
      taken.document["devices"]["leaf1"]["interfaces"]["eth0"]["oper"] = "down";
    return taken;
  }
  int taken() const { return taken_; }

 private:
  ScriptedSnapshotter& inner_;
  std::atomic<int> lagging_;
  std::atomic<int> taken_{0};
};

// A snapshotter whose restore rounds (every snapshot after pre and post) take `delay` each:
// a fabric whose snapshot lasts longer than the change's settle bound.
class SlowSnapshotter final : public Snapshotter {
 public:
  SlowSnapshotter(Snapshotter& inner, Duration delay) : inner_(inner), delay_(delay) {}
  TakenSnapshot take(const std::vector<const intent::Device*>& devices, const std::string& commit,
                     ProgressSink* progress) override {
    if (++taken_ > 2) std::this_thread::sleep_for(delay_);
    return inner_.take(devices, commit, progress);
  }

 private:
  Snapshotter& inner_;
  Duration delay_;
  std::atomic<int> taken_{0};
};

// The scripted snapshotter for a fault on leaf1's eth0: the post snapshot (the second) shows it
// down; partial snapshots (settle-restored's watch) show it down for the first `lagging` of
// them; every full snapshot after the post shows it up again.
class FaultSnapshotter final : public Snapshotter {
 public:
  FaultSnapshotter(ScriptedSnapshotter& inner, int lagging) : inner_(inner), lagging_(lagging) {}
  TakenSnapshot take(const std::vector<const intent::Device*>& devices, const std::string& commit,
                     ProgressSink* progress) override {
    auto taken = inner_.take(devices, commit, progress);
    if (++full_ == 2) taken.document["devices"]["leaf1"]["interfaces"]["eth0"]["oper"] = "down";
    return taken;
  }
  TakenSnapshot take_categories(const std::vector<const intent::Device*>& devices,
                                const std::set<std::string>& categories,
                                const std::string& commit) override {
    std::lock_guard lock(mutex_);
    ++partial_;
    for (const auto* device : devices) partial_devices.insert(device->name);
    partial_categories.insert(categories.begin(), categories.end());
    auto taken = inner_.take(devices, commit, nullptr);
    if (lagging_-- > 0) taken.document["devices"]["leaf1"]["interfaces"]["eth0"]["oper"] = "down";
    if (derived_interfaces) taken.document["devices"]["leaf1"]["sources"].erase("interfaces");
    return taken;
  }
  // With `rereads_counters`, a snapshotter that re-reads counters as the real one does (a
  // partial snapshot), counting the calls.
  std::optional<TakenSnapshot> take_counters(const std::vector<const intent::Device*>& devices,
                                             const std::set<std::string>& categories,
                                             const std::string& commit) override {
    if (!rereads_counters) return std::nullopt;
    ++counter_rereads;
    counter_categories.insert(categories.begin(), categories.end());
    return take_categories(devices, categories, commit);
  }
  int full() const { return full_; }
  int partial() const { return partial_; }
  std::set<std::string> partial_devices, partial_categories;
  bool rereads_counters = false;
  int counter_rereads = 0;
  std::set<std::string> counter_categories;
  // `interfaces` as a part derived from another source's output: no source of its own.
  bool derived_interfaces = false;

 private:
  ScriptedSnapshotter& inner_;
  int lagging_;
  std::atomic<int> full_{0};
  int partial_ = 0;
  std::mutex mutex_;
};

TEST(RestorePath, WhatTheFaultChangedIsWatchedAloneBeforeTheFirstRound) {
  // Given a failed change whose post snapshot shows leaf1's eth0 down, and a restore in which
  // that interface comes back on the third look, then settle-restored first re-collects only
  // leaf1's interfaces (three partial snapshots), and the first full round, taken after they
  // matched the baseline, holds: one full snapshot for the whole verification, and the record
  // says what was watched and for how long.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{2'000};
  RecoveringRemote remote(0);
  FaultSnapshotter snapshotter(run.snapshotter, 2);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_NE(settle->summary.find("the restore held in round 1"), std::string::npos)
      << settle->summary;
  EXPECT_NE(all_details(*settle).find(
                "watched what the fault changed (leaf1 interfaces): 3 partial snapshots"),
            std::string::npos)
      << all_details(*settle);
  EXPECT_NE(all_details(*settle).find("until it matched the baseline"), std::string::npos);
  EXPECT_EQ(snapshotter.partial(), 3);
  EXPECT_EQ(snapshotter.partial_devices, std::set<std::string>{"leaf1"});
  EXPECT_EQ(snapshotter.partial_categories, std::set<std::string>{"interfaces"});
  EXPECT_EQ(snapshotter.full(), 3);  // pre, post, round 1
  EXPECT_EQ(gate_named(outcome, "compare-restored")->verdict, Verdict::pass);
}

TEST(RestorePath, TheWatchsFirstLookReReadsTheCountersInTheSameSnapshot) {
  // Given the same fault and a snapshotter that re-reads counters, then the counters the
  // `increase` rules judge are re-read in the watch's first look (one partial snapshot holding
  // them and leaf1's interfaces), not in a partial snapshot of their own before it: still three
  // looks in all, and compare-restored counts from that re-read.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{2'000};
  RecoveringRemote remote(0);
  FaultSnapshotter snapshotter(run.snapshotter, 2);
  snapshotter.rereads_counters = true;
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_EQ(snapshotter.counter_rereads, 1);
  EXPECT_EQ(snapshotter.partial(), 3);
  EXPECT_TRUE(snapshotter.counter_categories.contains("interfaces"));
  EXPECT_TRUE(snapshotter.counter_categories.contains("bfd"));
  EXPECT_NE(all_details(*settle).find("re-read when the rollback ended"), std::string::npos)
      << all_details(*settle);
  EXPECT_NE(all_details(*settle).find("3 partial snapshots"), std::string::npos)
      << all_details(*settle);
  EXPECT_EQ(gate_named(outcome, "compare-restored")->verdict, Verdict::pass);
}

TEST(RestorePath, AWatchThatNeverSeesTheFaultGoRunsToTheBoundAndOneRoundDecides) {
  // Given the same fault, still there in every partial snapshot, then the watch runs until the
  // settle bound (500 ms) and says so, and the one round after it is the last and decides: its
  // full snapshot shows eth0 up, so the restore is verified (exit 4), not assumed from the
  // watch.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{500};
  RecoveringRemote remote(0);
  FaultSnapshotter snapshotter(run.snapshotter, 1'000'000);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_GE(settle->duration, Duration{500});
  EXPECT_NE(all_details(*settle).find("without a match within the settle bound"), std::string::npos)
      << all_details(*settle);
  EXPECT_EQ(snapshotter.full(), 3);  // pre, post, the last round
}

TEST(RestorePath, APartWithoutASourceOfItsOwnIsNotWatchedAndTheRoundsStartAtOnce) {
  // Given the fault on leaf1's interfaces, but a profile in which no source of its own collects
  // them, then one partial snapshot shows that, the watch stops instead of waiting for the
  // bound, the record says why, and the rounds verify the restore as before.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{2'000};
  RecoveringRemote remote(0);
  FaultSnapshotter snapshotter(run.snapshotter, 1'000'000);
  snapshotter.derived_interfaces = true;
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_NE(all_details(*settle).find("leaf1 interfaces has no source of its own"),
            std::string::npos)
      << all_details(*settle);
  EXPECT_EQ(snapshotter.partial(), 1);
  // Did not wait for the 2 s settle bound.
  EXPECT_LT(settle->duration, run.change.acceptance.settle);
}

TEST(RestorePath, WithoutASettleTimeNothingIsWatchedAndTheOneRoundStartsAtOnce) {
  // Given the fault on leaf1's interfaces and no settle time, then no partial snapshot is
  // taken, the record mentions no watch, and the single round decides.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{0};
  RecoveringRemote remote(0);
  FaultSnapshotter snapshotter(run.snapshotter, 0);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_EQ(all_details(*settle).find("watched"), std::string::npos) << all_details(*settle);
  EXPECT_EQ(snapshotter.partial(), 0);
  EXPECT_EQ(snapshotter.full(), 3);  // pre, post, the one round
}

TEST(RestorePath, TheRestoreIsVerifiedAsSoonAsARoundHolds) {
  // Given a 2 s settle and probes that pass on the third round after the rollback, then
  // settle-restored ends with that round instead of waiting the settle time, says which round
  // held and when, and its evidence is what the restored gates record: rolled back, baseline
  // verified, one snapshot per round.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{2'000};
  RecoveringRemote remote(2);
  CountingSnapshotter snapshotter(run.snapshotter);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_EQ(settle->verdict, Verdict::pass);
  EXPECT_NE(settle->summary.find("the restore held in round 3"), std::string::npos)
      << settle->summary;
  EXPECT_NE(all_details(*settle).find("round 1 at +"), std::string::npos) << all_details(*settle);
  EXPECT_NE(all_details(*settle).find("probe reachable-leaf1 on leaf1: fail"), std::string::npos)
      << all_details(*settle);
  EXPECT_LT(duration_of(outcome, "settle-restored"), Duration{2'000});
  ASSERT_TRUE(outcome.settle_restored.has_value());
  EXPECT_LT(*outcome.settle_restored, Duration{2'000});
  EXPECT_EQ(snapshotter.taken.size(), 2u + 3u);  // pre, post, three rounds
  EXPECT_EQ(gate_named(outcome, "snapshot-restored")->verdict, Verdict::pass);
  EXPECT_EQ(gate_named(outcome, "compare-restored")->verdict, Verdict::pass);
  EXPECT_EQ(gate_named(outcome, "restored-probes")->verdict, Verdict::pass);
}

TEST(RestorePath, ProbesThatPassDoNotEndTheSettleWhileTheSnapshotDiffersFromTheBaseline) {
  // Given probes that pass at once after the rollback, but a restored state that still differs
  // from the baseline in the first two rounds (leaf1's eth0 down), then no round holds until the
  // snapshot matches too: the third round is the verification, and the rounds before it are
  // named with the difference that kept them from holding.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{2'000};
  RecoveringRemote remote(0);
  LaggingSnapshotter snapshotter(run.snapshotter, 2);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_NE(settle->summary.find("the restore held in round 3"), std::string::npos)
      << settle->summary;
  EXPECT_NE(all_details(*settle).find("compare: "), std::string::npos) << all_details(*settle);
  EXPECT_NE(all_details(*settle).find("eth0"), std::string::npos) << all_details(*settle);
  EXPECT_EQ(snapshotter.taken(), 2 + 3);
  EXPECT_EQ(gate_named(outcome, "compare-restored")->verdict, Verdict::pass);
}

TEST(RestorePath, ARestoreThatNeverHoldsGetsTheWholeSettleBoundAndIsNotVerified) {
  // Given probes that keep failing after the rollback, then rounds run until the settle bound
  // of 1 s, the last one starting at the bound or later, the summary says no round held, and
  // the restored probes (the last round's) fail: exit 5, as after a fixed wait.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{1'000};
  RecoveringRemote remote(1'000'000);
  auto outcome = run_with(run, remote, run.snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::not_restored);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_GE(settle->duration, Duration{1'000});
  EXPECT_NE(settle->summary.find("no round held within the settle bound of 1s"), std::string::npos)
      << settle->summary;
  EXPECT_NE(all_details(*settle).find("probe reachable-leaf1 on leaf1: fail"), std::string::npos)
      << all_details(*settle);
  EXPECT_FALSE(outcome.settle_restored.has_value());
  EXPECT_EQ(gate_named(outcome, "restored-probes")->verdict, Verdict::fail);
}

TEST(RestorePath, ARoundThatStartedBeforeTheBoundAndEndedAfterItIsFollowedByOneAtTheBound) {
  // Given a settle bound of 300 ms, restored snapshots that take 500 ms each and leaf1's eth0
  // still down in the first round after the rollback, then the first round (started at once,
  // ended past the bound) is not the last: a second round starts after it, holds, and the
  // restore is verified (exit 4), not judged by a round that began before the bound.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{300};
  run.change.acceptance.restore_dwell = Duration::zero();
  RecoveringRemote remote(0);
  LaggingSnapshotter lagging(run.snapshotter, 1);
  SlowSnapshotter snapshotter(lagging, Duration{500});
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_NE(settle->summary.find("the restore held in round 2"), std::string::npos)
      << settle->summary;
  EXPECT_EQ(gate_named(outcome, "compare-restored")->verdict, Verdict::pass);
}

TEST(RestorePath, ASnapshotThatNeverMatchesIsJudgedByCompareRestored) {
  // Given probes that pass but a restored state that never matches the baseline, then the last
  // round (at the bound) is what compare-restored judges: it fails on leaf1's eth0, exit 5.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{500};
  RecoveringRemote remote(0);
  LaggingSnapshotter snapshotter(run.snapshotter, 1'000'000);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::not_restored);
  const auto* compared = gate_named(outcome, "compare-restored");
  ASSERT_NE(compared, nullptr);
  EXPECT_EQ(compared->verdict, Verdict::fail);
  EXPECT_NE(all_details(*compared).find("eth0"), std::string::npos) << all_details(*compared);
  EXPECT_GE(duration_of(outcome, "settle-restored"), Duration{500});
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
  ASSERT_EQ(snapshotter.taken.size(), 3u);  // pre, post, one restore round that held
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

// The scripted snapshotter whose restore rounds (every full snapshot after pre and post) show
// leaf1's eth0 down in the rounds numbered in `down_in_rounds` (1 = the first round): a link
// that comes back and drops again.
class RelapsingSnapshotter final : public Snapshotter {
 public:
  RelapsingSnapshotter(ScriptedSnapshotter& inner, std::set<int> down_in_rounds)
      : inner_(inner), down_(std::move(down_in_rounds)) {}
  TakenSnapshot take(const std::vector<const intent::Device*>& devices, const std::string& commit,
                     ProgressSink* progress) override {
    auto taken = inner_.take(devices, commit, progress);
    const int round = ++taken_ - 2;
    if (round >= 1 && (down_.contains(round) || (relapse_from > 0 && round >= relapse_from)))
      taken.document["devices"]["leaf1"]["interfaces"]["eth0"]["oper"] = "down";
    return taken;
  }
  int rounds() const { return taken_ - 2; }
  int relapse_from = 0;  // from this round on, down for good (0: never)

 private:
  ScriptedSnapshotter& inner_;
  std::set<int> down_;
  std::atomic<int> taken_{0};
};

TEST(RestorePath, OneMatchingRoundIsNotEnoughTheRestoreMustHoldForTheDwell) {
  // Given a restore that matches the baseline in round 1 and a dwell of 300 ms, then a second
  // round at least 300 ms later must match too before the restore is verified: exit 4, the
  // summary names both rounds and the dwell, and the manifest figure is recorded.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{2'000};
  run.change.acceptance.restore_dwell = Duration{300};
  RecoveringRemote remote(0);
  RelapsingSnapshotter snapshotter(run.snapshotter, {});
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_NE(settle->summary.find("the restore held in round 1"), std::string::npos)
      << settle->summary;
  EXPECT_NE(settle->summary.find("and again in round 2"), std::string::npos) << settle->summary;
  EXPECT_NE(settle->summary.find("(dwell 300ms)"), std::string::npos) << settle->summary;
  EXPECT_EQ(snapshotter.rounds(), 2);
  EXPECT_GE(settle->duration, Duration{300});
  ASSERT_TRUE(outcome.restore_dwell.has_value());
  EXPECT_EQ(*outcome.restore_dwell, Duration{300});
}

TEST(RestorePath, ALinkThatDropsAgainDuringTheDwellStartsTheRoundsAgain) {
  // Given a restore that matches in round 1, shows leaf1's eth0 down again in round 2 (taken
  // after the dwell), and matches from round 3 on, then round 1 does not verify the restore:
  // the details name the relapse, and rounds 3 and 4 (a dwell apart) are the verification.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{3'000};
  run.change.acceptance.restore_dwell = Duration{200};
  RecoveringRemote remote(0);
  RelapsingSnapshotter snapshotter(run.snapshotter, {2});
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_NE(settle->summary.find("the restore held in round 3"), std::string::npos)
      << settle->summary;
  EXPECT_NE(settle->summary.find("and again in round 4"), std::string::npos) << settle->summary;
  EXPECT_NE(all_details(*settle).find("round 1 at +"), std::string::npos) << all_details(*settle);
  EXPECT_NE(all_details(*settle).find("held; the round 200ms later did not"), std::string::npos)
      << all_details(*settle);
  EXPECT_EQ(snapshotter.rounds(), 4);
}

TEST(RestorePath, AStateThatMatchesOnceAndThenDropsForGoodIsNotRestored) {
  // Given a restore that matches in round 1 and shows leaf1's eth0 down for good from round 2
  // (after the dwell), with a settle bound already passed, then the restore is not verified:
  // compare-restored judges the round after the dwell and fails on eth0, exit 5, though one
  // coincident round matched the baseline.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{0};
  run.change.acceptance.restore_dwell = Duration{300};
  RecoveringRemote remote(0);
  RelapsingSnapshotter snapshotter(run.snapshotter, {});
  snapshotter.relapse_from = 2;
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::not_restored);
  const auto* compared = gate_named(outcome, "compare-restored");
  ASSERT_NE(compared, nullptr);
  EXPECT_EQ(compared->verdict, Verdict::fail);
  EXPECT_NE(all_details(*compared).find("eth0"), std::string::npos) << all_details(*compared);
  EXPECT_FALSE(outcome.settle_restored.has_value());
  EXPECT_EQ(snapshotter.rounds(), 2);
  // The rollback was sent, so its first part is known; nothing was verified, so no second.
  EXPECT_TRUE(outcome.detection_to_rollback_sent.has_value());
  EXPECT_FALSE(outcome.rollback_sent_to_verified.has_value());
}

// RecoveringRemote whose rollback commands take `delay` on the device (a slow SSH session).
class SlowRollbackRemote final : public Remote {
 public:
  SlowRollbackRemote(Remote& inner, Duration delay) : inner_(inner), delay_(delay) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                   const std::string& command, Duration timeout,
                   std::string_view purpose) override {
    if (purpose == "rollback") std::this_thread::sleep_for(delay_);
    return inner_.run(device, role, command, timeout, purpose);
  }

 private:
  Remote& inner_;
  Duration delay_;
};

TEST(RestorePath, TheRestoreIsMeasuredInPartsAndTheDwellIsInNeither) {
  // Given a rollback command that takes 200 ms on the device and a dwell of 300 ms, then the
  // restore is reported in parts: failure detected -> rollback sent, and rollback sent -> the
  // first round that held, which holds the rollback's own 200 ms; the dwell is in neither, so
  // the parts and the dwell together are at most the whole; the manifest carries both parts.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{2'000};
  run.change.acceptance.restore_dwell = Duration{300};
  RecoveringRemote recovering(0);
  SlowRollbackRemote remote(recovering, Duration{200});
  RelapsingSnapshotter snapshotter(run.snapshotter, {});
  auto outcome = run_with(run, remote, snapshotter);
  ASSERT_EQ(outcome.exit_code, ExitCode::rolled_back);
  ASSERT_TRUE(outcome.detection_to_restore.has_value());
  ASSERT_TRUE(outcome.detection_to_rollback_sent.has_value());
  ASSERT_TRUE(outcome.rollback_sent_to_verified.has_value());
  EXPECT_GE(*outcome.rollback_sent_to_verified, Duration{200});
  EXPECT_GE(*outcome.detection_to_rollback_sent, Duration{0});
  EXPECT_LE(*outcome.detection_to_rollback_sent + *outcome.rollback_sent_to_verified +
                Duration{300},
            *outcome.detection_to_restore);
  std::optional<nlohmann::json> manifest;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(run.evidence_root.path()))
    if (entry.path().filename() == "manifest.json")
      manifest = nlohmann::json::parse(std::ifstream(entry.path()));
  ASSERT_TRUE(manifest.has_value());
  EXPECT_EQ((*manifest)["detection_to_rollback_sent_ms"].get<long long>(),
            outcome.detection_to_rollback_sent->count());
  EXPECT_EQ((*manifest)["rollback_sent_to_verified_ms"].get<long long>(),
            outcome.rollback_sent_to_verified->count());
  EXPECT_EQ((*manifest)["restore_dwell_ms"].get<long long>(), 300);
}

TEST(RestorePath, WithoutADwellOneMatchingRoundVerifiesTheRestore) {
  // Given acceptance.restore_dwell 0s, then the first matching round is the verification and
  // the summary says there was no dwell.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{1'000};
  run.change.acceptance.restore_dwell = Duration{0};
  RecoveringRemote remote(0);
  RelapsingSnapshotter snapshotter(run.snapshotter, {});
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  EXPECT_EQ(snapshotter.rounds(), 1);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_NE(settle->summary.find("no dwell"), std::string::npos) << settle->summary;
}

// The scripted snapshotter for leaf1's BFD session to 10.0.0.2: the fault bounced it once (the
// post snapshot, the second full one, counts 1 down event) and the rollback bounced it once more
// on its way back (the counters re-read when the rollback ended count 2); every later snapshot
// counts `after_rollback`.
class BouncingBfdSnapshotter final : public Snapshotter {
 public:
  BouncingBfdSnapshotter(ScriptedSnapshotter& inner, int after_rollback)
      : inner_(inner), after_rollback_(after_rollback) {}
  TakenSnapshot take(const std::vector<const intent::Device*>& devices, const std::string& commit,
                     ProgressSink* progress) override {
    auto taken = inner_.take(devices, commit, progress);
    const int n = ++full_;
    with_down_events(taken, n == 1 ? 0 : n == 2 ? 1 : after_rollback_);
    return taken;
  }
  std::optional<TakenSnapshot> take_counters(const std::vector<const intent::Device*>& devices,
                                             const std::set<std::string>&,
                                             const std::string& commit) override {
    auto taken = inner_.take(devices, commit, nullptr);
    with_down_events(taken, 2);
    return taken;
  }

 private:
  static void with_down_events(TakenSnapshot& taken, int events) {
    auto& leaf1 = taken.document["devices"]["leaf1"];
    leaf1["bfd"] = {{"peers", {{"10.0.0.2", {{"status", "up"}, {"session_down_events", events}}}}}};
    leaf1["sources"]["bfd"] = {{"status", "ok"}, {"commands", nlohmann::json::array()}};
  }
  ScriptedSnapshotter& inner_;
  int after_rollback_;
  std::atomic<int> full_{0};
};

TEST(RestorePath, ASessionTheRollbackBouncedOnItsWayBackIsNotARelapse) {
  // Given a BFD session that went down with the fault (post: 1 down event) and once more while
  // the rollback took the fault away (2 when the rollback ended), and stays up after, then the
  // restore is verified (exit 4): counters count from the end of the rollback, not from post.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{500};
  RecoveringRemote remote(0);
  BouncingBfdSnapshotter snapshotter(run.snapshotter, 2);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
  const auto* settle = gate_named(outcome, "settle-restored");
  ASSERT_NE(settle, nullptr);
  EXPECT_NE(all_details(*settle).find("re-read when the rollback ended"),
            std::string::npos)
      << all_details(*settle);
  const auto* compared = gate_named(outcome, "compare-restored");
  ASSERT_NE(compared, nullptr);
  EXPECT_EQ(compared->verdict, Verdict::pass) << all_details(*compared);
}

TEST(RestorePath, ASessionThatDropsAfterTheRollbackEndedIsNotRestored) {
  // Given the same session, down once more after the rollback ended (3 in every round), then
  // the restore is not verified (exit 5), and the reason says where the count started.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{500};
  RecoveringRemote remote(0);
  BouncingBfdSnapshotter snapshotter(run.snapshotter, 3);
  auto outcome = run_with(run, remote, snapshotter);
  EXPECT_EQ(outcome.exit_code, ExitCode::not_restored);
  const auto* compared = gate_named(outcome, "compare-restored");
  ASSERT_NE(compared, nullptr);
  EXPECT_EQ(compared->verdict, Verdict::fail);
  EXPECT_NE(all_details(*compared).find("since the end of the rollback "
                                        "(snapshots/rollback-end.json)"),
            std::string::npos)
      << all_details(*compared);
}

}  // namespace
}  // namespace fabgate::pipeline
