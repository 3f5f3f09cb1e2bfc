#include "adapters/ssh/fan_out.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fabgate::ssh {
namespace {

TEST(FanOut, NeverRunsMoreItemsAtOnceThanTheLimitAndRunsEveryItemOnce) {
  // Given 40 slow items and a limit of 8, then at most 8 run at once and each runs exactly once.
  std::atomic<int> running{0};
  std::atomic<int> peak{0};
  std::vector<std::atomic<int>> runs(40);
  (void)for_each_bounded(runs.size(), 8, [&](std::size_t index) {
    int now = ++running;
    int seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ++runs[index];
    --running;
  });
  EXPECT_LE(peak.load(), 8);
  EXPECT_GE(peak.load(), 2);
  for (const auto& count : runs) EXPECT_EQ(count.load(), 1);
}

TEST(FanOut, KeepsTheStepsOfOneItemInOrder) {
  // Given items that each record three steps, then every item's steps appear in order.
  std::mutex mutex;
  std::vector<std::vector<int>> steps(20);
  (void)for_each_bounded(steps.size(), 4, [&](std::size_t index) {
    for (int step = 0; step < 3; ++step) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      std::lock_guard lock(mutex);
      steps[index].push_back(step);
    }
  });
  for (const auto& item : steps) EXPECT_EQ(item, (std::vector<int>{0, 1, 2}));
}

TEST(FanOut, AnItemThatThrowsIsReturnedAsItsFailureAndTheOthersResultsArrive) {
  // Given 10 items on 3 threads where items 2 and 7 throw (one a std::exception, one not),
  // then the process is not terminated, the 8 others deliver their results, and the two
  // throwers come back in index order with what each threw.
  std::vector<int> results(10, -1);
  auto failures = for_each_bounded(results.size(), 3, [&](std::size_t index) {
    if (index == 2) throw std::runtime_error("collector crashed on d2");
    if (index == 7) throw 42;
    results[index] = static_cast<int>(index) * 10;
  });
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].index, 2u);
  EXPECT_EQ(failures[0].what, "collector crashed on d2");
  EXPECT_EQ(failures[1].index, 7u);
  EXPECT_EQ(failures[1].what, "an exception of unknown type");
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i != 2 && i != 7) {
      EXPECT_EQ(results[i], static_cast<int>(i) * 10) << i;
    }
  }
}

}  // namespace
}  // namespace fabgate::ssh
