#include "adapters/flows/statistics.h"

#include <gtest/gtest.h>

namespace fabgate::flows {
namespace {

using std::chrono::milliseconds;

TimePoint at(int ms) {
  return TimePoint(milliseconds(1'800'000'000'000LL + ms));
}

// '+' answered on time (echo 1 ms after sending), '-' not: lost, refused or late.
std::vector<Sample> samples_every_100ms(const std::string& pattern) {
  std::vector<Sample> samples;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const int sent = static_cast<int>(i) * 100;
    samples.push_back(Sample{at(sent), pattern[i] == '+', at(sent + 1)});
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

TEST(Interruptions, LongestIsBracketedByTheLastAnswerBeforeAndTheFirstArrivalAfter) {
  // Given two outages, 1 and 3 samples long at 100 ms sampling, then the longest is the second,
  // measured from the send of the last sample answered before it (400 ms) to the arrival of the
  // first echo after it (801 ms): never less than the outage, which lies somewhere inside.
  auto summary = find_interruptions(samples_every_100ms("++-++---++"), at(1000));
  ASSERT_TRUE(summary.longest);
  EXPECT_EQ(summary.interruptions, 2);
  EXPECT_EQ(summary.longest->length, milliseconds(401));
  EXPECT_EQ(summary.longest->started_at, at(400));
  EXPECT_EQ(summary.longest->lost_samples, 3);
  EXPECT_FALSE(summary.longest->ongoing);
}

TEST(Interruptions, OutageStillRunningAtTheEndLastsUntilTheProbeStopped) {
  // Given the last samples lost, then the interruption is ongoing and runs from the last answer
  // to the stop time.
  auto summary = find_interruptions(samples_every_100ms("+++--"), at(650));
  ASSERT_TRUE(summary.longest);
  EXPECT_TRUE(summary.longest->ongoing);
  EXPECT_EQ(summary.longest->length, milliseconds(450));
}

TEST(Interruptions, EchoesHeldInAQueueAndDeliveredInOneBurstDoNotHideTheOutage) {
  // Given a path that parked every packet for 900 ms (a neighbour queue waiting for ARP while
  // the far side had no carrier) and then delivered them all at once at 1000 ms, with only the
  // echoes slower than the late bound marked as not on time, then the interruption runs from
  // the last prompt answer (sent at 0) to the burst (1000 ms): the old rule, which counted
  // every echo back within 1 s as an answer, reported no interruption at all here.
  std::vector<Sample> samples;
  samples.push_back(Sample{at(0), true, at(1)});
  for (int sent = 100; sent < 1000; sent += 100) samples.push_back(Sample{at(sent), false, {}});
  samples.push_back(Sample{at(1000), true, at(1000)});
  samples.push_back(Sample{at(1100), true, at(1101)});
  auto summary = find_interruptions(samples, at(1200));
  ASSERT_TRUE(summary.longest);
  EXPECT_EQ(summary.interruptions, 1);
  EXPECT_EQ(summary.longest->length, milliseconds(1000));
  EXPECT_EQ(summary.longest->lost_samples, 9);
}

TEST(Interruptions, NoAnswerEverStartsTheInterruptionAtTheFirstSample) {
  // Given a flow never answered before its first echo at 300 ms, then its interruption starts
  // with its first sample: there was never a working path to measure from.
  auto summary = find_interruptions(samples_every_100ms("---++"), at(500));
  ASSERT_TRUE(summary.longest);
  EXPECT_EQ(summary.longest->started_at, at(0));
  EXPECT_EQ(summary.longest->length, milliseconds(301));
}

}  // namespace
}  // namespace fabgate::flows
