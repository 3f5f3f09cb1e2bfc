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

// A flow sampled every 3 ms (a 10 ms interval), echoes 1 ms after sending, as a sampler would
// really have sent it: nothing inside [stall_from, stall_to), and nothing answered inside the
// cut [cut_from, cut_to).
struct Scripted {
  int until = 1000;
  int cut_from = -1, cut_to = -1;
  int stall_from = -1, stall_to = -1;
};

std::vector<Sample> sampled_every_3ms(const Scripted& script) {
  std::vector<Sample> samples;
  for (int sent = 0; sent < script.until; sent += 3) {
    if (sent >= script.stall_from && sent < script.stall_to) sent = script.stall_to;
    // A probe is answered when it left before the cut or its echo came back after it.
    const bool lost = sent + 1 >= script.cut_from && sent < script.cut_to;
    samples.push_back(Sample{at(sent), !lost, at(sent + 1)});
  }
  return samples;
}

constexpr milliseconds kInterval{10};
constexpr milliseconds kPeriod{3};  // the sampler's schedule per flow at that interval

TEST(SamplerStalls, AStallWithEveryPathFineIsNoInterruption) {
  // Given the sampler not scheduled for 25 ms (no probe left on any flow) and every probe
  // answered, then no flow reports an interruption, and the stall is named once with its
  // start and length, not once per flow: the 64 flows "interrupted for 16-29 ms at the same
  // moment" were the sampler's own stall.
  const Scripted script{.until = 600, .stall_from = 301, .stall_to = 324};
  auto summary = find_interruptions(sampled_every_3ms(script), at(600), kPeriod);
  EXPECT_FALSE(summary.longest);
  EXPECT_EQ(summary.interruptions, 0);

  StallRecorder stalls(at(0), kInterval);
  const auto samples = sampled_every_3ms(script);
  for (std::size_t i = 1; i < samples.size(); ++i) {
    for (int flow = 0; flow < 64; ++flow) {
      // The flows of one tick leave a few microseconds apart.
      const std::chrono::microseconds skew{flow * 2};
      stalls.sent(samples[i - 1].sent_at - at(0) + skew, samples[i].sent_at - at(0) + skew);
    }
    stalls.end_tick();
  }
  auto named = stalls.summary();
  EXPECT_EQ(named.count, 1);
  ASSERT_TRUE(named.longest);
  EXPECT_EQ(named.longest->started_at, at(300));
  // 24 ms between the sends before and after it, and the 126 us the tick's sends spread over.
  EXPECT_EQ(named.longest->length, milliseconds(25));
  EXPECT_EQ(named.total, milliseconds(25));
}

TEST(SamplerStalls, StallsOfDifferentFlowsThatOverlapAreOneStall) {
  // Given one flow not sent from 100 to 130 ms and another from 110 to 145 ms (the sampler was
  // preempted halfway through a tick), and later one not sent from 500 to 520 ms, then the
  // sampler stalled twice, 45 ms and 20 ms, 65 ms in all.
  StallRecorder stalls(at(0), kInterval);
  stalls.sent(milliseconds(100), milliseconds(130));
  stalls.sent(milliseconds(110), milliseconds(145));
  stalls.sent(milliseconds(140), milliseconds(143));  // on time: not a stall
  stalls.end_tick();
  stalls.sent(milliseconds(500), milliseconds(520));
  auto named = stalls.summary();
  EXPECT_EQ(named.count, 2);
  ASSERT_EQ(named.stalls.size(), 2u);
  EXPECT_EQ(named.stalls[0].length, milliseconds(45));
  EXPECT_EQ(named.stalls[1].started_at, at(500));
  EXPECT_EQ(named.total, milliseconds(65));
}

TEST(SamplerStalls, ASamplerRunningSlowIsManyShortStallsCountedOnce) {
  // Given ticks 15 ms apart for 60 ms at a 10 ms interval (every flow sampled, but below the
  // watch's resolution), then each gap is a stall of its own, 15 ms long, and the total is the
  // 60 ms they cover, not the longest span they chain into.
  StallRecorder stalls(at(0), kInterval);
  for (int tick = 1; tick <= 4; ++tick) {
    for (int flow = 0; flow < 8; ++flow) {
      const std::chrono::microseconds skew{flow * 10};
      stalls.sent(milliseconds((tick - 1) * 15) + skew, milliseconds(tick * 15) + skew);
    }
    stalls.end_tick();
  }
  auto named = stalls.summary();
  EXPECT_EQ(named.count, 4);
  ASSERT_TRUE(named.longest);
  EXPECT_EQ(named.longest->length, milliseconds(16));  // 15 ms and the tick's own 70 us
  EXPECT_EQ(named.total, milliseconds(61));
}

TEST(SamplerStalls, ACutWithAStallInsideIsReportedAtLeastItsTrueLength) {
  // Given a 300 ms cut (100-400 ms) and the sampler stalled for 40 ms in the middle of it,
  // then the interruption is reported at least 300 ms and at most two sample periods and one
  // round trip more: probes lost on both sides of the stall prove the path down around it.
  const Scripted script{
      .until = 700, .cut_from = 100, .cut_to = 400, .stall_from = 200, .stall_to = 240};
  auto summary = find_interruptions(sampled_every_3ms(script), at(700), kPeriod);
  ASSERT_TRUE(summary.longest);
  EXPECT_EQ(summary.interruptions, 1);
  EXPECT_GE(summary.longest->length, milliseconds(300));
  EXPECT_LE(summary.longest->length, milliseconds(300 + 2 * 3 + 1));
  EXPECT_EQ(summary.longest->unobserved, milliseconds(0));
}

TEST(SamplerStalls, AStallAtTheStartOfACutIsUnobservedNotInterruption) {
  // Given a 300 ms cut (100-400 ms) that began while the sampler stalled (sends at 96 ms, then
  // 140 ms: 41 ms behind its 3 ms schedule), then the observed interruption starts as if the
  // sampler had been on time (137 ms) and ends at the first echo after the cut (402 ms), the
  // 41 ms go to unobserved, and observed plus unobserved still covers the whole cut.
  const Scripted script{
      .until = 700, .cut_from = 100, .cut_to = 400, .stall_from = 97, .stall_to = 140};
  auto summary = find_interruptions(sampled_every_3ms(script), at(700), kPeriod);
  ASSERT_TRUE(summary.longest);
  EXPECT_EQ(summary.longest->started_at, at(137));
  EXPECT_EQ(summary.longest->length, milliseconds(402 - 137));
  EXPECT_EQ(summary.longest->unobserved, milliseconds(41));
  ASSERT_TRUE(summary.longest_possible);
  EXPECT_GE(*summary.longest_possible, milliseconds(300));
}

TEST(SamplerStalls, AStallAtTheEndOfACutIsUnobservedNotInterruption) {
  // Given a 300 ms cut (100-400 ms) whose end fell in a stall (last lost send at 381 ms, next
  // send at 420 ms: 36 ms behind schedule, answered at 421 ms), then the observed
  // interruption runs from the last answer (96 ms) to that answer as if sent on time (385 ms),
  // the 36 ms are unobserved, and observed plus unobserved covers the cut.
  const Scripted script{
      .until = 700, .cut_from = 100, .cut_to = 400, .stall_from = 382, .stall_to = 420};
  auto summary = find_interruptions(sampled_every_3ms(script), at(700), kPeriod);
  ASSERT_TRUE(summary.longest);
  EXPECT_EQ(summary.longest->started_at, at(96));
  EXPECT_EQ(summary.longest->length, milliseconds(385 - 96));
  EXPECT_EQ(summary.longest->unobserved, milliseconds(36));
  ASSERT_TRUE(summary.longest_possible);
  EXPECT_GE(*summary.longest_possible, milliseconds(300));
}

TEST(SamplerStalls, LatenessNeverWidensTheObservedFigureBeyondItsResolution) {
  // Given a 300 ms cut (100-400 ms) and the sampler 40 ms late at both of its edges, then the
  // observed figure stays within two sample periods and a round trip of the cut, as for a
  // sampler on schedule: the late sender's delay is not billed to the path (a starved sender
  // once over-reported a cut by 77 ms).
  std::vector<Sample> samples;
  for (int sent = 0; sent < 97; sent += 3) samples.push_back(Sample{at(sent), true, at(sent + 1)});
  for (int sent = 137; sent < 398; sent += 3) samples.push_back(Sample{at(sent), false, {}});
  for (int sent = 437; sent < 600; sent += 3)
    samples.push_back(Sample{at(sent), true, at(sent + 1)});
  auto summary = find_interruptions(samples, at(600), kPeriod);
  ASSERT_TRUE(summary.longest);
  EXPECT_GE(summary.longest->length + summary.longest->unobserved, milliseconds(300));
  EXPECT_LE(summary.longest->length, milliseconds(300 + 2 * 3 + 1));
}

TEST(SamplerStalls, AnOutageStillOngoingWhenTheSamplerStoppedSendingEndsAtItsLastProbe) {
  // Given a cut from 100 ms to the end and the sampler sending nothing after 300 ms of a run
  // stopped at 600 ms, then the ongoing interruption is observed until one period after the
  // last probe (303 ms) and the remaining 297 ms are unobserved.
  const Scripted script{.until = 301, .cut_from = 100, .cut_to = 10'000};
  auto summary = find_interruptions(sampled_every_3ms(script), at(600), kPeriod);
  ASSERT_TRUE(summary.longest);
  EXPECT_TRUE(summary.longest->ongoing);
  EXPECT_EQ(summary.longest->length, milliseconds(303 - 96));
  EXPECT_EQ(summary.longest->unobserved, milliseconds(297));
}

TEST(ResponderStalls, ProbesOfEveryFlowHeldByOneDescheduledResponderAreOneStallOfIts) {
  // Given a responder not scheduled from 200 to 261 ms while 64 flows kept sampling every
  // 3 ms (each echo, arriving at 261 ms, reports how long its probe sat there), then the watch
  // names one stall of the responder's, 61 ms from 200 ms, and nothing else.
  StallRecorder stalls(at(0), kInterval);
  for (int sent = 200; sent < 260; sent += 3) {
    for (int flow = 0; flow < 64; ++flow) stalls.held(milliseconds(261), milliseconds(261 - sent));
  }
  auto named = stalls.summary();
  EXPECT_EQ(named.count, 1);
  EXPECT_EQ(named.responder_count, 1);
  ASSERT_TRUE(named.longest);
  EXPECT_EQ(named.longest->by, StallSource::responder);
  EXPECT_EQ(named.longest->started_at, at(200));
  EXPECT_EQ(named.longest->length, milliseconds(61));
  EXPECT_EQ(named.total, milliseconds(61));
}

TEST(ResponderStalls, HoldsWithinTheResolutionAreNoStall) {
  // Given echoes held 4 ms by the responder at a 10 ms interval, then no stall is named: the
  // residence is taken out of the round trip, and the watch kept its resolution.
  StallRecorder stalls(at(0), kInterval);
  stalls.held(milliseconds(100), milliseconds(4));
  EXPECT_EQ(stalls.summary().count, 0);
  EXPECT_FALSE(stalls.inside_hold(milliseconds(97), milliseconds(10)));
}

TEST(ResponderStalls, ASamplerStallInsideAResponderHoldIsCountedOnceInTheTotal) {
  // Given the responder holding probes from 100 to 200 ms and the sampler stalled from 140 to
  // 160 ms (recorded first: the responder's hold is known only when its echoes return), then
  // both are named and the total is the 100 ms they cover, not 120 ms nor 20 ms.
  StallRecorder stalls(at(0), kInterval);
  stalls.sent(milliseconds(140), milliseconds(160));
  stalls.end_tick();
  stalls.held(milliseconds(200), milliseconds(100));
  auto named = stalls.summary();
  EXPECT_EQ(named.count, 2);
  EXPECT_EQ(named.responder_count, 1);
  EXPECT_EQ(named.total, milliseconds(100));
  ASSERT_EQ(named.stalls.size(), 2u);
  EXPECT_EQ(named.stalls[0].by, StallSource::responder);  // in time order
  EXPECT_EQ(named.stalls[0].started_at, at(100));
}

TEST(ResponderStalls, OnlyProbesThatReachedTheResponderDuringItsHoldAreInsideIt) {
  // Given the responder holding probes from 100 to 200 ms, then a probe sent within the hold,
  // or within one way's reach (10 ms) before it began, reached it while it held probes (a probe
  // lost then was dropped from its full buffer, not by the path); probes sent well before or
  // after it did not.
  StallRecorder stalls(at(0), kInterval);
  stalls.held(milliseconds(200), milliseconds(100));
  stalls.held(milliseconds(600), milliseconds(50));
  const milliseconds reach{10};
  EXPECT_TRUE(stalls.inside_hold(milliseconds(150), reach));
  EXPECT_TRUE(stalls.inside_hold(milliseconds(95), reach));
  EXPECT_TRUE(stalls.inside_hold(milliseconds(200), reach));
  EXPECT_FALSE(stalls.inside_hold(milliseconds(80), reach));
  EXPECT_FALSE(stalls.inside_hold(milliseconds(201), reach));
  EXPECT_FALSE(stalls.inside_hold(milliseconds(400), reach));
  EXPECT_TRUE(stalls.inside_hold(milliseconds(560), reach));
}

}  // namespace
}  // namespace fabgate::flows
