#include "adapters/ssh/fan_out.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace fabgate::ssh {
namespace {

TEST(FanOut, NeverRunsMoreItemsAtOnceThanTheLimitAndRunsEveryItemOnce) {
  // Given 40 slow items and a limit of 8, then at most 8 run at once and each runs exactly once.
  std::atomic<int> running{0};
  std::atomic<int> peak{0};
  std::vector<std::atomic<int>> runs(40);
  for_each_bounded(runs.size(), 8, [&](std::size_t index) {
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
  for_each_bounded(steps.size(), 4, [&](std::size_t index) {
    for (int step = 0; step < 3; ++step) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      std::lock_guard lock(mutex);
      steps[index].push_back(step);
    }
  });
  for (const auto& item : steps) EXPECT_EQ(item, (std::vector<int>{0, 1, 2}));
}

TEST(FanOut, ReportsAnEscapedExceptionAfterAllItemsFinished) {
  // Given one item that throws, then the others still run and the exception reaches the caller.
  std::atomic<int> finished{0};
  EXPECT_THROW(for_each_bounded(10, 3,
                                [&](std::size_t index) {
                                  if (index == 2) throw std::runtime_error("boom");
                                  ++finished;
                                }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 9);
}

}  // namespace
}  // namespace fabgate::ssh
