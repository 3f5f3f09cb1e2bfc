// The collective probe's verdict, computed by fabgate from every rank's per-iteration timings:
// synthetic timing sets for one slow rank, all ranks slow, a rank that never reported and a
// rank that errored.

#include "gates/pipeline/families/collective_verdict.h"

#include <gtest/gtest.h>

namespace fabgate::pipeline {
namespace {

// `iterations` timings of about `typical_ms`, with every `spike_every`-th one at `spike_ms`.
RankTimings rank(int index, double typical_ms, int iterations = 100, int spike_every = 0,
                 double spike_ms = 0) {
  RankTimings timings;
  timings.rank = index;
  timings.host = "host" + std::to_string(index + 1);
  timings.reported = true;
  timings.iterations_planned = iterations;
  for (int i = 0; i < iterations; ++i) {
    const bool spike = spike_every > 0 && i % spike_every == spike_every - 1;
    timings.iteration_ms.push_back(spike ? spike_ms : typical_ms + 0.01 * (i % 7));
  }
  return timings;
}

CollectiveThresholds thresholds() {
  CollectiveThresholds limits;
  limits.max_tail_ratio = 3.0;
  limits.max_p99 = Duration(50);
  return limits;
}

TEST(CollectiveVerdict, HealthyRanksPass) {
  // Given four ranks with the same timings, then the probe passes with a tail ratio near 1.
  auto judgement =
      judge_collective({rank(0, 10), rank(1, 10), rank(2, 10), rank(3, 10)}, thresholds());
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.reason;
  EXPECT_NEAR(judgement.tail_ratio, 1.0, 0.05);
  EXPECT_EQ(judgement.ranks.size(), 4u);
}

TEST(CollectiveVerdict, OneSlowRankFailsAndIsNamedWhileTheAverageWouldHavePassed) {
  // Given rank 2 whose tail (5 of 100 iterations at 100 ms) is ten times the others' while its
  // median is the same 10 ms, then the probe fails naming rank 2 and its p99 against the
  // reference, and the fleet average (about 11 ms per iteration against max_p99 50 ms) alone would
  // have passed.
  auto judgement = judge_collective(
      {rank(0, 10), rank(1, 10), rank(2, 10, 100, 20, 100), rank(3, 10)}, thresholds());
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  ASSERT_TRUE(judgement.slowest_rank);
  EXPECT_EQ(*judgement.slowest_rank, 2);
  EXPECT_NE(judgement.reason.find("rank 2 (host3) p99 100.0 ms (ratio 9.9)"), std::string::npos)
      << judgement.reason;
  EXPECT_GT(judgement.tail_ratio, 9.0);
  EXPECT_EQ(judgement.average_verdict, Verdict::pass) << judgement.average_reason;
  EXPECT_NE(judgement.average_reason.find("would have passed"), std::string::npos);
}

TEST(CollectiveVerdict, AllRanksSlowPassesTheRatioButFailsTheAbsoluteBound) {
  // Given every rank equally slow (80 ms), then the tail ratio stays near 1 but every p99 is
  // over max_p99 50 ms: fail, and the average would have failed too.
  auto judgement =
      judge_collective({rank(0, 80), rank(1, 80), rank(2, 80), rank(3, 80)}, thresholds());
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_NEAR(judgement.tail_ratio, 1.0, 0.05);
  EXPECT_NE(judgement.reason.find("max_p99"), std::string::npos) << judgement.reason;
  EXPECT_EQ(judgement.average_verdict, Verdict::fail);
}

TEST(CollectiveVerdict, AllRanksSlowWithoutAnAbsoluteBoundPasses) {
  // Given every rank equally slow and only a tail ratio bound, then the probe passes: the ratio
  // alone cannot see a uniformly slow fabric, which is why max_p99 exists.
  CollectiveThresholds limits;
  limits.max_tail_ratio = 3.0;
  auto judgement = judge_collective({rank(0, 80), rank(1, 80), rank(2, 80)}, limits);
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.reason;
}

TEST(CollectiveVerdict, ARankThatNeverReportedIsNoEvidenceForTheWholeProbe) {
  // Given three healthy ranks and one whose report never came back, then the probe has no
  // evidence (never "3 of 4 ranks passed"), naming the missing rank.
  RankTimings missing;
  missing.rank = 3;
  missing.host = "host4";
  missing.missing_reason = "fabgate-probe is not installed on host4";
  auto judgement = judge_collective({rank(0, 2), rank(1, 2), rank(2, 2), missing}, thresholds());
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_NE(judgement.reason.find("rank 3 (host4)"), std::string::npos) << judgement.reason;
  EXPECT_NE(judgement.reason.find("never reported"), std::string::npos);
}

TEST(CollectiveVerdict, ARankWithErrorsFailsEvenWhenItsTimingsLookFine) {
  // Given a rank that completed its iterations fast but recorded a timeout, then the probe fails
  // naming that rank and its error.
  auto errored = rank(1, 2);
  errored.errors.push_back("iteration 37: recv from rank 0 timed out after 2000 ms");
  auto judgement = judge_collective({rank(0, 2), errored, rank(2, 2)}, thresholds());
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_NE(judgement.reason.find("rank 1 (host2): iteration 37"), std::string::npos)
      << judgement.reason;
}

TEST(CollectiveVerdict, CorruptedDataLeadsTheReasonWithTheSendersHost) {
  // Given rank 0 timing out on rank 1, and rank 2, fast, receiving chunks with a wrong byte from
  // rank 1, then the probe fails and the reason leads with the damaged data, naming the
  // receiving rank's host, the sender's host and the probe's own words; the total is counted.
  auto timed_out = rank(0, 2);
  timed_out.errors.push_back("iteration 37: recv from rank 1 timed out after 2000 ms");
  auto damaged = rank(2, 2);
  damaged.corrupted_chunks = 3;
  damaged.corrupted_from = 1;
  damaged.errors.push_back(
      "rank 2 received 3 of 200 chunks corrupted from rank 1, first at byte 812");
  auto judgement = judge_collective({timed_out, rank(1, 2), damaged}, thresholds());
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_EQ(judgement.reason,
            "1 of 3 ranks received corrupted data (rank 2 (host3) received 3 corrupted chunks "
            "(the first from rank 1 (host2)): rank 2 received 3 of 200 chunks corrupted from "
            "rank 1, first at byte 812)");
  EXPECT_EQ(judgement.corrupted_chunks, 3);
}

TEST(CollectiveVerdict, ARankThatStoppedEarlyFails) {
  // Given a rank that completed 40 of 100 iterations without recording an error, then the probe
  // fails: missing iterations are never a pass.
  auto short_rank = rank(1, 2, 100);
  short_rank.iteration_ms.resize(40);
  auto judgement = judge_collective({rank(0, 2), short_rank}, thresholds());
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_NE(judgement.reason.find("completed 40 of 100"), std::string::npos) << judgement.reason;
}

TEST(CollectiveVerdict, SubMillisecondTailsAreNoiseBelowTheFloor) {
  // Given a healthy lab where one rank's p99 is 1.4 ms against a median of 0.4 ms (seen after a
  // rollback on a loaded host: raw ratio 3.5), then the probe passes: the median is taken as at
  // least the 5 ms floor, so the ratio is 0.3; with the floor at 0 the same set fails.
  auto judgement =
      judge_collective({rank(0, 0.4), rank(1, 0.4, 100, 20, 1.4), rank(2, 0.4)}, thresholds());
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.reason;
  auto no_floor = thresholds();
  no_floor.tail_floor = Duration(0);
  EXPECT_EQ(
      judge_collective({rank(0, 0.4), rank(1, 0.4, 100, 20, 1.4), rank(2, 0.4)}, no_floor).verdict,
      Verdict::fail);
}

// The tail bound without an absolute one, so that only the comparison between ranks judges.
CollectiveThresholds ratio_only() {
  CollectiveThresholds limits;
  limits.max_tail_ratio = 3.0;
  return limits;
}

std::vector<int> slow_rank_numbers(const CollectiveJudgement& judgement) {
  std::vector<int> numbers;
  for (const auto& slow : judgement.slow_ranks) numbers.push_back(slow.rank);
  return numbers;
}

TEST(CollectiveVerdict, TwoRanksOneAHundredTimesSlowerFailsNamingTheSlowOne) {
  // Given two ranks at 1 ms and 100 ms and only the tail bound, then the probe fails naming
  // rank 1: the reference is the faster rank (taken as the 5 ms tail_floor), not a median that
  // the slow rank itself pulls halfway up (which capped the ratio at 2 below the bound of 3).
  auto judgement = judge_collective({rank(0, 1), rank(1, 100)}, ratio_only());
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.reason;
  EXPECT_EQ(slow_rank_numbers(judgement), std::vector<int>{1});
  EXPECT_NE(judgement.reason.find("rank 1 (host2) p99 100.1 ms"), std::string::npos)
      << judgement.reason;
  EXPECT_NEAR(judgement.reference_p99_ms, 1.06, 0.01);
  EXPECT_GT(judgement.tail_ratio, 19.0);
}

TEST(CollectiveVerdict, HalfTheRanksSlowFailsEverySlowRank) {
  // Given 10, 10, 100 and 100 ms (half the fabric behind a bad spine), then the probe fails
  // naming both slow ranks against the reference of the faster half (10 ms): the median of all
  // four (55 ms) would have made the tail ratio 1.8 and passed.
  auto judgement =
      judge_collective({rank(0, 10), rank(1, 10), rank(2, 100), rank(3, 100)}, ratio_only());
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.reason;
  EXPECT_EQ(slow_rank_numbers(judgement), (std::vector<int>{2, 3}));
  EXPECT_NEAR(judgement.reference_p99_ms, 10.06, 0.01);
  EXPECT_NE(judgement.reason.find("2 of 4 ranks"), std::string::npos) << judgement.reason;
  EXPECT_NE(judgement.reason.find("rank 2 (host3)"), std::string::npos) << judgement.reason;
  EXPECT_NE(judgement.reason.find("rank 3 (host4)"), std::string::npos) << judgement.reason;
}

TEST(CollectiveVerdict, UniformRanksPassAgainstTheReferenceOfTheFasterHalf) {
  // Given eight ranks between 10 and 13 ms, then the probe passes with no slow rank, the
  // reference is the median p99 of the faster four and the reason states it.
  std::vector<RankTimings> ranks;
  for (int i = 0; i < 8; ++i) ranks.push_back(rank(i, 10 + 0.4 * i));
  auto judgement = judge_collective(ranks, ratio_only());
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.reason;
  EXPECT_TRUE(judgement.slow_ranks.empty());
  EXPECT_NEAR(judgement.reference_p99_ms, 10.66, 0.01);
  EXPECT_NE(judgement.reason.find("reference p99 10.7 ms"), std::string::npos) << judgement.reason;
}

TEST(CollectiveVerdict, OneSlowRankAmongEightFailsAloneNamed) {
  // Given eight ranks at 10 ms but rank 5 at 40 ms, then the probe fails naming rank 5 only.
  std::vector<RankTimings> ranks;
  for (int i = 0; i < 8; ++i) ranks.push_back(rank(i, i == 5 ? 40 : 10));
  auto judgement = judge_collective(ranks, ratio_only());
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.reason;
  EXPECT_EQ(slow_rank_numbers(judgement), std::vector<int>{5});
  EXPECT_NE(judgement.reason.find("1 of 8 ranks"), std::string::npos) << judgement.reason;
}

TEST(CollectiveVerdict, TheReasonStatesTheReferenceAndEachSlowRanksRatio) {
  // Given 10, 10, 10 and 60 ms, then the reason gives the bound, the reference it multiplies
  // and where the reference comes from, and the slow rank's own ratio.
  auto judgement =
      judge_collective({rank(0, 10), rank(1, 10), rank(2, 10), rank(3, 60)}, ratio_only());
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.reason;
  for (const char* text :
       {"over max_tail_ratio 3.0 x reference p99 10.1 ms", "median p99 of the faster 2 of 4 ranks",
        "rank 3 (host4) p99 60.1 ms (ratio 6.0)"})
    EXPECT_NE(judgement.reason.find(text), std::string::npos) << text << "\n" << judgement.reason;
  ASSERT_EQ(judgement.slow_ranks.size(), 1u);
  EXPECT_NEAR(judgement.slow_ranks[0].ratio, 5.97, 0.01);
}

TEST(CollectiveVerdict, AReferenceUnderTheFloorIsSaidToBeTheFloor) {
  // Given two ranks at 1 ms and 100 ms, then the reason says the 1 ms reference was taken as
  // the 5 ms tail_floor, which is what the ratio 20 is against.
  auto judgement = judge_collective({rank(0, 1), rank(1, 100)}, ratio_only());
  EXPECT_NE(judgement.reason.find("taken as tail_floor 5.00 ms"), std::string::npos)
      << judgement.reason;
  EXPECT_NE(judgement.reason.find("(ratio 20.0)"), std::string::npos) << judgement.reason;
}

TEST(CollectivePercentile, NearestRank) {
  // Given 1..100, then p50 is 50, p99 is 99 and p100 is 100.
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);
  EXPECT_EQ(percentile(values, 50), 50);
  EXPECT_EQ(percentile(values, 99), 99);
  EXPECT_EQ(percentile(values, 100), 100);
  EXPECT_EQ(percentile({}, 99), 0);
}

}  // namespace
}  // namespace fabgate::pipeline
