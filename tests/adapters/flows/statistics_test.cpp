#include "adapters/flows/statistics.h"

#include <gtest/gtest.h>

namespace fabgate::flows {
namespace {

using std::chrono::milliseconds;

TimePoint at(int ms) {
  return TimePoint(milliseconds(1'800'000'000'000LL + ms));
}

std::vector<Sample> samples_every_100ms(const std::string& pattern) {
  std::vector<Sample> samples;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    samples.push_back(Sample{at(static_cast<int>(i) * 100), pattern[i] == '+'});
  }
  return samples;
}

TEST(LatencySummary, MedianOfOddAndEvenCounts) {
  // Given unsorted round-trip times, then min, median and max are those of the sorted samples.
  auto odd = summarize_latency({3.0, 1.0, 2.0});
  ASSERT_TRUE(odd);
  EXPECT_DOUBLE_EQ(odd->min_ms, 1.0);
  EXPECT_DOUBLE_EQ(odd->median_ms, 2.0);
  EXPECT_DOUBLE_EQ(odd->max_ms, 3.0);
  auto even = summarize_latency({4.0, 1.0, 2.0, 3.0});
  ASSERT_TRUE(even);
  EXPECT_DOUBLE_EQ(even->median_ms, 2.5);
}

TEST(LatencySummary, NoSamplesIsNoLatencyNotZero) {
  // Given a flow that received nothing, then it has no latency at all (never a healthy 0 ms).
  EXPECT_FALSE(summarize_latency({}));
}

TEST(Interruptions, NoLossHasNoInterruption) {
  // Given every sample answered, then there is no interruption to report.
  auto summary = find_interruptions(samples_every_100ms("++++++"), at(600));
  EXPECT_FALSE(summary.longest);
  EXPECT_EQ(summary.interruptions, 0);
}

TEST(Interruptions, LongestRunIsMeasuredFromFirstLostToNextReceivedSendTime) {
  // Given two outages, 1 and 3 samples long at 100 ms sampling, then the longest is the second:
  // 300 ms, starting when its first lost sample was sent.
  auto summary = find_interruptions(samples_every_100ms("++-++---++"), at(1000));
  ASSERT_TRUE(summary.longest);
  EXPECT_EQ(summary.interruptions, 2);
  EXPECT_EQ(summary.longest->length, milliseconds(300));
  EXPECT_EQ(summary.longest->started_at, at(500));
  EXPECT_EQ(summary.longest->lost_samples, 3);
  EXPECT_FALSE(summary.longest->ongoing);
}

TEST(Interruptions, OutageStillRunningAtTheEndLastsUntilTheProbeStopped) {
  // Given the last samples lost, then the interruption is ongoing and runs to the stop time.
  auto summary = find_interruptions(samples_every_100ms("+++--"), at(650));
  ASSERT_TRUE(summary.longest);
  EXPECT_TRUE(summary.longest->ongoing);
  EXPECT_EQ(summary.longest->length, milliseconds(350));
}

}  // namespace
}  // namespace fabgate::flows
