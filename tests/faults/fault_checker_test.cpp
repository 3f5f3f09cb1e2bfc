// The fault-schedule checker on hand-written evidence: a history that keeps every invariant
// passes, and each kind of violation the schedules look for is reported, with the device lines
// that show it. A checker that cannot fail would make every schedule pass.

#include "tests/faults/fault_checker.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fabgate::faults {
namespace {

const std::vector<std::string> kBaseline = {"mtu 9000"};

// Two pods of two devices, one device per pod in change at once.
Observation fabric() {
  Observation observed;
  for (const auto& [name, group] : std::vector<std::pair<std::string, std::string>>{
           {"d1", "pod=p1"}, {"d2", "pod=p1"}, {"d3", "pod=p2"}, {"d4", "pod=p2"}})
    observed.devices.push_back({name, group, kBaseline, {}, kBaseline});
  observed.budget_of_group = {{"pod=p1", 1}, {"pod=p2", 1}};
  return observed;
}

DeviceObservation& device(Observation& observed, const std::string& name) {
  return *std::find_if(observed.devices.begin(), observed.devices.end(),
                       [&](const DeviceObservation& d) { return d.name == name; });
}

RunObservation run(const std::string& id, const std::string& change,
                   std::vector<std::string> targets, int exit_code, std::int64_t ended_ns) {
  RunObservation r;
  r.run = id;
  r.controller = "ctl-a";
  r.change = change;
  r.targets = std::move(targets);
  r.exit_code = exit_code;
  r.ended_ns = ended_ns;
  return r;
}

bool reports(const std::vector<Violation>& found, int invariant, const std::string& fragment) {
  return std::any_of(found.begin(), found.end(), [&](const Violation& v) {
    return v.invariant == invariant && v.what.find(fragment) != std::string::npos;
  });
}

std::string all(const std::vector<Violation>& found) {
  std::string text;
  for (const auto& v : found) text += describe(v);
  return text;
}

// A history that keeps every invariant: run A (token 10) changes d1 and is accepted; run B
// (token 20) changes d3 and d1 after it, fails and rolls both back; run K's step on d2 (token
// 30) is followed by its recover's rollback (token 31, same run) after K was SIGKILLed.
Observation kept() {
  Observation observed = fabric();
  device(observed, "d1").log = {"100 step 10 runa 1 ca sent=10", "300 step 20 runb 2 cb sent=20",
                                "400 rollback 20 runb 2 cb sent=20"};
  device(observed, "d1").final_config = {"mtu 9000", "ca runa"};
  device(observed, "d3").log = {"290 step 20 runb 1 cb sent=20",
                                "410 rollback 20 runb 1 cb sent=20"};
  device(observed, "d2").log = {"600 step 30 runk 1 ck sent=30",
                                "900 rollback 31 runk 2 ck sent=31"};
  observed.runs = {run("runa", "ca", {"d1"}, 0, 200), run("runb", "cb", {"d1", "d3"}, 4, 450),
                   run("runk", "ck", {"d2"}, 137, 650)};
  observed.runs.back().recover_exit = 4;
  observed.runs.back().recover_ended_ns = 950;
  return observed;
}

TEST(FaultChecker, AHistoryThatKeepsEveryInvariantPasses) {
  // Given an accepted run, a rolled-back run and a killed run restored by its recover with a
  // newer token, then the checker reports nothing.
  auto found = check(kept());
  EXPECT_TRUE(found.empty()) << all(found);
}

TEST(FaultChecker, TwoTokensInterleavedOnADeviceAreReported) {
  // Given d2 accepting a command with token 30 after the recover's newer token 31 (the stale run
  // woken after the take-over), then invariant 2 is reported with both lines.
  Observation observed = kept();
  device(observed, "d2").log.push_back("950 step 30 runk 1 ck sent=30");
  device(observed, "d2").final_config = {"mtu 9000", "ck runk"};
  auto found = check(observed);
  ASSERT_TRUE(reports(found, 2, "d2 accepted a command with token 30 after one with the newer "
                                "token 31"))
      << all(found);
  auto v = std::find_if(found.begin(), found.end(), [](const Violation& x) {
    return x.invariant == 2;
  });
  EXPECT_EQ(v->evidence, (std::vector<std::string>{"d2: 900 rollback 31 runk 2 ck sent=31",
                                                   "d2: 950 step 30 runk 1 ck sent=30"}));
  // The killed run's change is back on d2 after its recover: invariant 3 too.
  EXPECT_TRUE(reports(found, 3, "d2 still holds the change of run runk")) << all(found);
}

TEST(FaultChecker, OneTokenForTwoRunsAndACommandSentWithAnotherTokenAreReported) {
  // Given d4 logging token 40 for run x and then for run y, and a command sent with token 39
  // while the fence held 40, then both are invariant 2.
  Observation observed = kept();
  device(observed, "d4").log = {"1000 step 40 runx 1 cx sent=40", "1100 rollback 40 runx 1 cx sent=40",
                                "1200 step 40 runy 1 cy sent=39", "1300 rollback 40 runy 1 cy sent=40"};
  observed.runs.push_back(run("runx", "cx", {"d4"}, 4, 1150));
  observed.runs.push_back(run("runy", "cy", {"d4"}, 4, 1350));
  auto found = check(observed);
  EXPECT_TRUE(reports(found, 2, "d4: token 40 held by two runs, runx and runy")) << all(found);
  EXPECT_TRUE(reports(found, 2, "d4 ran a command sent with token 39 while its fence held 40"))
      << all(found);
}

TEST(FaultChecker, TwoDevicesOfAPodInChangeAtOnceAreReported) {
  // Given run C changing d4 (pod p2) while run B still holds d3 of the same pod (budget 1),
  // then invariant 1 names the pod and both devices' lines.
  Observation observed = kept();
  device(observed, "d4").log = {"350 step 50 runc 1 cc sent=50", "360 rollback 50 runc 1 cc sent=50"};
  observed.runs.push_back(run("runc", "cc", {"d4"}, 4, 370));
  auto found = check(observed);
  ASSERT_TRUE(reports(found, 1, "pod=p2: 2 devices in change at once, budget 1")) << all(found);
  auto v = std::find_if(found.begin(), found.end(), [](const Violation& x) {
    return x.invariant == 1;
  });
  const std::string evidence = v->evidence[0] + v->evidence[1];
  EXPECT_NE(evidence.find("d3: 290 step 20 runb"), std::string::npos) << describe(*v);
  EXPECT_NE(evidence.find("d4: 350 step 50 runc"), std::string::npos) << describe(*v);
}

TEST(FaultChecker, ADeadRunNeverRecoveredKeepsItsDevicesInChange) {
  // Given run K SIGKILLed on d2 and never recovered, and run D changing d1 (pod p1) later, then
  // invariant 1 (K never let go of d2) and invariant 3 (K's change is still on d2).
  Observation observed = kept();
  device(observed, "d2").log = {"600 step 30 runk 1 ck sent=30"};
  device(observed, "d2").final_config = {"mtu 9000", "ck runk"};
  observed.runs[2].recover_exit.reset();
  device(observed, "d1").log.push_back("2000 step 60 rund 3 cd sent=60");
  device(observed, "d1").final_config.push_back("cd rund");
  observed.runs.push_back(run("rund", "cd", {"d1"}, 0, 2100));
  auto found = check(observed);
  EXPECT_TRUE(reports(found, 1, "pod=p1: 2 devices in change at once")) << all(found);
  EXPECT_TRUE(reports(found, 3, "d2 still holds the change of run runk, which was not accepted"))
      << all(found);
}

TEST(FaultChecker, AChangeLeftByARunThatExitedFourIsReported) {
  // Given run B's change still on d3 although B exited 4 "rolled back" (its step's session
  // dropped after the command ran and no rollback reached d3), then invariant 3.
  Observation observed = kept();
  device(observed, "d3").log = {"290 step 20 runb 1 cb sent=20"};
  device(observed, "d3").final_config = {"mtu 9000", "cb runb"};
  auto found = check(observed);
  EXPECT_TRUE(reports(found, 3, "d3 still holds the change of run runb")) << all(found);
}

TEST(FaultChecker, AnExitFiveHandOffThatRecoverDidNotRestoreIsReported) {
  // Given run E exit 5 naming d4 and its recover exit 5 with d4 still changed, then invariant 3
  // says the hand-off was not restored.
  Observation observed = kept();
  device(observed, "d4").log = {"700 step 70 rune 1 ce sent=70"};
  device(observed, "d4").final_config = {"mtu 9000", "ce rune"};
  observed.runs.push_back(run("rune", "ce", {"d4"}, 5, 800));
  observed.runs.back().exit_5_devices = {"d4"};
  observed.runs.back().recover_exit = 5;
  observed.runs.back().recover_ended_ns = 900;
  auto found = check(observed);
  EXPECT_TRUE(reports(found, 3, "named in its exit-5 hand-off and not restored")) << all(found);
}

TEST(FaultChecker, AnExitZeroWhoseChangeWasRolledBackBySomeoneElseIsReported) {
  // Given run A exit 0 on d1 and then a recover of A (newer token, same run) rolling d1 back,
  // then invariant 4, twice: the rollback line, and A's change missing from d1.
  Observation observed = kept();
  device(observed, "d1").log = {"100 step 10 runa 1 ca sent=10", "250 rollback 11 runa 2 ca sent=11"};
  device(observed, "d1").final_config = {"mtu 9000"};
  observed.runs[1].targets = {"d3"};
  observed.runs[0].recover_exit = 4;
  observed.runs[0].recover_ended_ns = 260;
  auto found = check(observed);
  EXPECT_TRUE(reports(found, 4, "run runa exited 0 but d1 accepted a rollback of it")) << all(found);
  EXPECT_TRUE(reports(found, 4, "run runa exited 0 but its change is not on d1")) << all(found);
  EXPECT_TRUE(reports(found, 4, "run runa exited 0 and a recover rolled it back")) << all(found);
}

TEST(FaultChecker, AChangeNoLineExplainsIsReported) {
  // Given d4 holding a line no command it logged wrote (a command that ran without its log
  // line), then the device's state is reported as not what its log made it.
  Observation observed = kept();
  device(observed, "d4").final_config = {"mtu 9000", "cz runz"};
  auto found = check(observed);
  EXPECT_TRUE(reports(found, 3, "d4's configuration is not what the commands it logged made it"))
      << all(found);
}

TEST(FaultChecker, AnUnreadableLineIsReportedNotSkipped) {
  Observation observed = kept();
  device(observed, "d4").log = {"garbage"};
  auto found = check(observed);
  EXPECT_TRUE(reports(found, 0, "d4: a log line the checker cannot read")) << all(found);
}

}  // namespace
}  // namespace fabgate::faults
