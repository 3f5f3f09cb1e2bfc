#include "adapters/rdma/latency_summary.h"

#include <gtest/gtest.h>

namespace fabgate::rdma {
namespace {

TEST(LatencySummary, NearestRankPercentilesOfObservedSamples) {
  // Given 100 samples 1..100 us in random order, then median is 50, p99 is 99 and max 100 —
  // each an observed value, none interpolated.
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  auto summary = summarize_latencies(samples);
  ASSERT_TRUE(summary.has_value());
  EXPECT_DOUBLE_EQ(summary->median_us, 50);
  EXPECT_DOUBLE_EQ(summary->p99_us, 99);
  EXPECT_DOUBLE_EQ(summary->max_us, 100);
  EXPECT_EQ(summary->samples, 100u);
}

TEST(LatencySummary, OneSampleIsEveryPercentile) {
  // Given a single completion, then median, p99 and max are that sample.
  auto summary = summarize_latencies({7.5});
  ASSERT_TRUE(summary.has_value());
  EXPECT_DOUBLE_EQ(summary->median_us, 7.5);
  EXPECT_DOUBLE_EQ(summary->p99_us, 7.5);
}

TEST(LatencySummary, NoSamplesIsNoLatencyNotZero) {
  // Given no completions, then there is no summary at all (JSON null), never 0 us.
  EXPECT_FALSE(summarize_latencies({}).has_value());
}

}  // namespace
}  // namespace fabgate::rdma
