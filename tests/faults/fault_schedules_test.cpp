// Seeded fault schedules against the real fabgate binary, a real three-member etcd 3.4 and four
// devices behind a real sshd, judged by the checker from the devices' own logs
// (docs/reliability.md "Fault schedules"). Without FABGATE_FAULTS_COUNT it runs CI's fixed
// subset; scripts/bench-faults sets FABGATE_FAULTS_COUNT=N and FABGATE_FAULTS_SEED=S to run the
// schedules of seeds S, S+1, ... S+N-1 and print every violation with its schedule and evidence.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "tests/faults/fault_fabric.h"

namespace fabgate::faults {
namespace {

// CI's subset: seeds whose schedules together draw every kind of fault (checked below).
const std::vector<std::uint64_t> kCiSeeds = {1, 4, 5, 11, 12, 13, 15, 16, 22, 38};

std::uint64_t from_environment(const char* name, std::uint64_t otherwise) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 10) : otherwise;
}

TEST(FaultSchedules, EverySeededScheduleKeepsTheCoordinationInvariants) {
  // Given seeded schedules of two or three runs from two controllers and one or two faults
  // each (a controller stopped past its lease, cut from etcd, or killed and recovered from the
  // other; the etcd leader killed; a step's SSH session killed after it ran; a slow step), when
  // each has run and its epilogue recovered every run that handed its devices over, then the
  // devices' own logs and states keep every invariant: no pod over its budget, every accepted
  // command under the device's newest token, every change left on a device accepted by a run
  // that exited 0, and no run exited 0 whose change was rolled back.
  if (auto why = fault_fabric_unavailable()) GTEST_SKIP() << *why;
  std::vector<std::uint64_t> seeds = kCiSeeds;
  const std::uint64_t count = from_environment("FABGATE_FAULTS_COUNT", 0);
  if (count > 0) {
    const std::uint64_t first = from_environment("FABGATE_FAULTS_SEED", 1);
    seeds.clear();
    for (std::uint64_t i = 0; i < count; ++i) seeds.push_back(first + i);
  } else {
    std::set<FaultKind> kinds;
    for (auto seed : seeds)
      for (const auto& fault : make_schedule(seed).faults) kinds.insert(fault.kind);
    ASSERT_EQ(kinds.size(), 6u) << "CI's seeds no longer draw every kind of fault";
  }

  const auto began = std::chrono::steady_clock::now();
  int run = 0, without_verdict = 0, violations = 0, violating = 0;
  std::string reports;
  for (auto seed : seeds) {
    const auto result = run_schedule(make_schedule(seed));
    ++run;
    const std::string text = report(result);
    std::printf("%s", text.c_str());
    std::fflush(stdout);
    if (!result.failure.empty()) ++without_verdict;
    if (!result.violations.empty()) {
      violations += static_cast<int>(result.violations.size());
      ++violating;
      reports += text;
    }
    if (!result.failure.empty()) reports += text;
  }
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf(
      "fault schedules: %d run (%d without a verdict), %d invariant violations in %d schedules, "
      "%.0f s\n",
      run, without_verdict, violations, violating, took);
  EXPECT_EQ(without_verdict, 0) << reports;
  EXPECT_EQ(violations, 0) << reports;
}

}  // namespace
}  // namespace fabgate::faults
