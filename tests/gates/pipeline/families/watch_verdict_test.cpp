#include "gates/pipeline/families/watch_verdict.h"

#include <gtest/gtest.h>

#include "gates/pipeline/families/probes.h"

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

// A watch report as fabgate-probe watch prints it: 20 s at 10 ms resolution, the paths fine.
json watch_report() {
  return json{{"probe", "watch"},
              {"verdict", "pass"},
              {"reason", "no flow interrupted longer than 300 ms (longest 0 ms)"},
              {"resolution_ms", 10},
              {"started_at", "2026-12-02T12:00:00.000Z"},
              {"ended_at", "2026-12-02T12:00:20.000Z"},
              {"stopped_by", "signal"},
              {"longest_interruption_ms", 0},
              {"longest_possible_interruption_ms", 0},
              {"stall_count", 0},
              {"longest_stall_ms", 0},
              {"stalled_ms", 0},
              {"stalls", json::array()},
              {"flows", json::array()}};
}

json with_stalls(json report, std::initializer_list<long long> lengths) {
  long long total = 0, longest = 0;
  int second = 1;
  for (long long length : lengths) {
    report["stalls"].push_back(
        {{"started_at", "2026-12-02T12:00:0" + std::to_string(second++) + ".000Z"},
         {"length_ms", length}});
    total += length;
    longest = std::max(longest, length);
  }
  report["stall_count"] = static_cast<int>(lengths.size());
  report["longest_stall_ms"] = longest;
  report["stalled_ms"] = total;
  return report;
}

// Judged as the disruption gate does when it asks the watch to stop after `until_stop_ms` of
// sampling (by default just under the report's 20 s window).
WatchJudgement judge(const json& report, long long allowed_ms, long long until_stop_ms = 19'900) {
  return judge_watch(read_watch_report(report),
                     WatchRequest{Duration{allowed_ms}, Duration{until_stop_ms}});
}

TEST(WatchVerdictGate, ShortSamplerStallsOnHealthyPathsPassAndAreNamed) {
  // Given a watch whose sampler stalled twice for 25 ms while every path answered, with 300 ms
  // allowed, then the disruption gate passes and its reason names the stalls, never an outage.
  auto judgement = judge(with_stalls(watch_report(), {25, 25}), 300);
  EXPECT_EQ(judgement.verdict, Verdict::pass);
  EXPECT_NE(judgement.reason.find("longest interruption 0 ms (resolution 10 ms; allowed 300 ms)"),
            std::string::npos)
      << judgement.reason;
  EXPECT_NE(judgement.reason.find("the watch itself stalled 2 times (0 of them its responder "
                                  "holding probes; longest 25 ms, 50 ms together)"),
            std::string::npos)
      << judgement.reason;
}

TEST(WatchVerdictGate, AStallLongerThanTheAllowanceIsNoEvidenceNotFail) {
  // Given the sampler stalled for 450 ms with 300 ms allowed and no interruption observed,
  // then the gate has no evidence (an outage could have passed unseen) and names the stall;
  // it never fails the change on the network's account.
  auto judgement = judge(with_stalls(watch_report(), {450}), 300);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_NE(judgement.reason.find("no evidence for 450 ms"), std::string::npos) << judgement.reason;
}

TEST(WatchVerdictGate, AResponderHoldingProbesIsNamedAndNoEvidenceWhenLongerThanAllowed) {
  // Given a watch whose responder held every flow's probes for 120 ms (its process not
  // scheduled) while no path lost anything, with 20 ms allowed, then the gate has no evidence
  // for that span and says the responder held the probes; it never fails the change on the
  // network's account.
  json report = with_stalls(watch_report(), {120});
  report["responder_stall_count"] = 1;
  auto judgement = judge(report, 20);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_NE(judgement.reason.find("no evidence for 120 ms"), std::string::npos) << judgement.reason;
  EXPECT_NE(judgement.reason.find("1 of them its responder holding probes"), std::string::npos)
      << judgement.reason;
}

TEST(WatchVerdictGate, AWronglyTypedResponderStallCountIsNoEvidenceNamingIt) {
  // Given a report whose responder_stall_count is text, then the report is unreadable, naming
  // the field: no default that reads as healthy.
  json report = watch_report();
  report["responder_stall_count"] = "none";
  auto judgement = judge(report, 300);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_NE(judgement.reason.find("responder_stall_count"), std::string::npos) << judgement.reason;
}

TEST(WatchVerdictGate, StallsOverATenthOfTheWatchAreNoEvidence) {
  // Given 50 stalls of 50 ms (2.5 s of a 20 s watch), each within the 300 ms allowance, then
  // the watch sampled too little of the change: no evidence, naming the stalled time.
  json report = with_stalls(watch_report(), {50});
  report["stall_count"] = 50;
  report["stalled_ms"] = 2500;
  auto judgement = judge(report, 300);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_NE(judgement.reason.find("no evidence for 2500 ms of 20000 ms watched"), std::string::npos)
      << judgement.reason;
}

TEST(WatchVerdictGate, AnObservedInterruptionOverTheAllowanceFailsEvenWithStalls) {
  // Given 350 ms observed on a flow (probes sent and not answered) and a 30 ms stall, with
  // 300 ms allowed, then the gate fails: the outage was seen, not inferred from the stall.
  json report = with_stalls(watch_report(), {30});
  report["verdict"] = "fail";
  report["longest_interruption_ms"] = 350;
  report["longest_possible_interruption_ms"] = 350;
  auto judgement = judge(report, 300);
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_NE(judgement.reason.find("longest interruption 350 ms"), std::string::npos);
}

TEST(WatchVerdictGate, AnInterruptionThatMayHaveExceededTheAllowanceAcrossAStallIsNoEvidence) {
  // Given 280 ms observed and up to 330 ms with the sampler's lateness at its ends, with 300 ms
  // allowed, then the gate cannot tell: no evidence, stating both figures.
  json report = with_stalls(watch_report(), {50});
  report["longest_interruption_ms"] = 280;
  report["longest_possible_interruption_ms"] = 330;
  auto judgement = judge(report, 300);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_NE(judgement.reason.find("up to 330 ms"), std::string::npos) << judgement.reason;
}

TEST(WatchVerdictGate, AReportWithoutStallFieldsIsNoEvidenceNamingTheField) {
  // Given a report from a watch that does not measure itself (an older fabgate-probe on the
  // host), then the gate has no evidence and names the missing field.
  json report = watch_report();
  report.erase("stalls");
  auto judgement = judge(report, 300);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_EQ(judgement.reason, "unreadable watch report: field 'stalls' missing");
}

TEST(WatchVerdictGate, WronglyTypedFieldsAreNoEvidenceNamingThemNeverAThrow) {
  // Given stall fields of the wrong type, then each is no evidence naming the field, and
  // nothing throws.
  json text_figure = watch_report();
  text_figure["longest_stall_ms"] = "25";
  EXPECT_EQ(judge(text_figure, 300).reason,
            "unreadable watch report: field 'longest_stall_ms' is not a non-negative integer");
  json bad_stall = with_stalls(watch_report(), {25});
  bad_stall["stalls"][0]["length_ms"] = 25.5;
  EXPECT_EQ(judge(bad_stall, 300).reason,
            "unreadable watch report: field 'stalls[0].length_ms' is not a non-negative integer");
  json not_a_list = watch_report();
  not_a_list["stalls"] = "none";
  EXPECT_EQ(judge(not_a_list, 300).verdict, Verdict::no_evidence);
  json bad_verdict = watch_report();
  bad_verdict["verdict"] = 1;
  EXPECT_EQ(judge(bad_verdict, 300).reason,
            "unreadable watch report: field 'verdict' is not a string");
}

TEST(WatchVerdictGate, AWatchWithNoEvidenceKeepsItsReason) {
  // Given the probe itself had no evidence (no flow ever answered), then so has the gate, with
  // the probe's reason.
  json report = {{"probe", "watch"},
                 {"verdict", "no-evidence"},
                 {"reason", "no flow received any reply"},
                 {"flows", json::array()}};
  auto judgement = judge(report, 300);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_EQ(judgement.reason, "no flow received any reply");
}

TEST(WatchVerdictGate, AWatchThatStoppedByItselfIsNoEvidenceNeverPass) {
  // Given a watch that saw no interruption but stopped by itself (max-duration) before the
  // disruption gate asked it to stop, then the gate has no evidence for the rest of the
  // window: it says when the watch stopped and that the window after it was not watched.
  json report = watch_report();
  report["stopped_by"] = "max-duration";
  auto judgement = judge(report, 300, 60'000);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_EQ(judgement.reason.rfind("the watch stopped by itself (max-duration) at "
                                   "2026-12-02T12:00:20.000Z, before the disruption gate asked "
                                   "it to stop: the window after it was not watched",
                                   0),
            0u)
      << judgement.reason;
  // Even when the stop request came within its window: it did not run until asked.
  EXPECT_EQ(judge(report, 300, 10'000).verdict, Verdict::no_evidence);
}

TEST(WatchVerdictGate, AWindowEndingBeforeTheStopRequestIsNoEvidence) {
  // Given a watch stopped by a signal after 20 s of its window while the disruption gate asked
  // after 45 s (someone else stopped it), then the last 25 s were not watched: no evidence.
  auto judgement = judge(watch_report(), 300, 45'000);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_NE(judgement.reason.find("window ended at 2026-12-02T12:00:20.000Z after 20000 ms, "
                                  "25000 ms short of the stop request"),
            std::string::npos)
      << judgement.reason;
  // Within one resolution of the request it watched the whole window.
  EXPECT_EQ(judge(watch_report(), 300, 20'005).verdict, Verdict::pass);
}

TEST(WatchVerdictGate, AnInterruptionSeenBeforeTheWatchStoppedByItselfStillFails) {
  // Given 350 ms observed with 300 ms allowed, by a watch that then stopped by itself, then
  // the gate fails: what it saw is evidence, whatever it missed after.
  json report = watch_report();
  report["verdict"] = "fail";
  report["stopped_by"] = "max-duration";
  report["longest_interruption_ms"] = 350;
  report["longest_possible_interruption_ms"] = 350;
  EXPECT_EQ(judge(report, 300, 60'000).verdict, Verdict::fail);
}

TEST(WatchVerdictGate, AReportThatDoesNotSayWhatStoppedItIsNoEvidence) {
  // Given a report without `stopped_by`, or with a number there, then the gate cannot tell
  // whether the watch ran until asked: no evidence naming the field.
  json report = watch_report();
  report.erase("stopped_by");
  EXPECT_EQ(judge(report, 300).reason, "unreadable watch report: field 'stopped_by' is missing");
  report["stopped_by"] = 1;
  EXPECT_EQ(judge(report, 300).verdict, Verdict::no_evidence);
}

intent::Probe declared(const std::string& kind, long long timeout_ms) {
  intent::Probe probe;
  probe.kind = kind;
  probe.timeout = Duration{timeout_ms};
  return probe;
}

TEST(WatchBound, TheWatchOutlastsTheDeadlineSettleAndEveryAcceptanceProbe) {
  // Given a change with a 5 min deadline, a 30 s settle and three acceptance probes (a
  // command, flows and a 3-rank collective), then the watch must outlast all of them one
  // after another: more than the sum of their timeouts, each with its own overheads.
  intent::Change change;
  change.bounds.deadline = Duration{300'000};
  change.acceptance.settle = Duration{30'000};
  change.acceptance.probes = {declared("command", 30'000), declared("flows", 30'000),
                              declared("collective", 90'000)};
  change.acceptance.probes[2].hosts = {"h1", "h2", "h3"};
  const Duration probes = probe_bound(change.acceptance.probes[0]) +
                          probe_bound(change.acceptance.probes[1]) +
                          probe_bound(change.acceptance.probes[2]);
  EXPECT_GE(probe_bound(change.acceptance.probes[0]), Duration{30'000});
  EXPECT_GT(probe_bound(change.acceptance.probes[1]), Duration{30'000});
  // A collective's own timeout covers its iterations; each rank adds its start and collection.
  EXPECT_GT(probe_bound(change.acceptance.probes[2]), Duration{90'000 + 3 * 3'000});
  const Duration needed = watch_must_outlast(change);
  EXPECT_GE(needed, Duration{300'000 + 30'000} + probes);
  // The old bound (deadline + settle + 120 s) stopped the watch before these probes ended.
  EXPECT_GT(needed, Duration{300'000 + 30'000 + 120'000});
  EXPECT_LT(needed, kWatchLimit);
}

TEST(WatchBound, AChangeLongerThanTheWatchsLimitNeedsMoreThanTheLimit) {
  // Given a 6 h deadline and a probe, then what the watch must outlast exceeds fabgate-probe's
  // 6 h limit: the watch is capped there and its verdict would be no evidence, never pass.
  intent::Change change;
  change.bounds.deadline = kWatchLimit;
  change.acceptance.probes = {declared("command", 30'000)};
  EXPECT_GT(watch_must_outlast(change), kWatchLimit);
}

}  // namespace
}  // namespace fabgate::pipeline
