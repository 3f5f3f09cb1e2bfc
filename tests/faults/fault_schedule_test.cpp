// Fault schedules are drawn from their seed alone, so a schedule printed with a violation can be
// run again exactly (scripts/bench-faults 1 --seed S).

#include "tests/faults/fault_schedule.h"

#include <gtest/gtest.h>

#include <set>

namespace fabgate::faults {
namespace {

TEST(FaultSchedule, ASeedGivesTheSameScheduleEveryTime) {
  // Given the same seed twice, then the same schedule; given another seed, another one.
  EXPECT_EQ(describe(make_schedule(17)), describe(make_schedule(17)));
  EXPECT_NE(describe(make_schedule(17)), describe(make_schedule(18)));
  EXPECT_EQ(describe(make_schedule(17)).rfind("seed 17: run0=ctl-a apply ", 0), 0u)
      << describe(make_schedule(17));
}

TEST(FaultSchedule, SchedulesStayInsideTheFabric) {
  // Given 1000 seeds, then every schedule has two or three runs of changes the intent holds, no
  // controller applies a change twice, each fault strikes one of its runs, and every kind of
  // fault is drawn.
  std::set<FaultKind> kinds;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    const auto schedule = make_schedule(seed);
    ASSERT_GE(schedule.runs.size(), 2u);
    ASSERT_LE(schedule.runs.size(), 3u);
    std::set<std::pair<int, std::string>> applied;
    for (const auto& run : schedule.runs) {
      EXPECT_NO_THROW(change_named(run.change));
      EXPECT_TRUE(applied.insert({run.controller, run.change}).second) << describe(schedule);
    }
    ASSERT_FALSE(schedule.faults.empty());
    for (const auto& fault : schedule.faults) {
      EXPECT_LT(fault.run, static_cast<int>(schedule.runs.size()));
      kinds.insert(fault.kind);
    }
  }
  EXPECT_EQ(kinds.size(), 6u);
}

}  // namespace
}  // namespace fabgate::faults
