// alerts-acceptance reading Prometheus' ALERTS history: which firing episodes count as new,
// and when the history cannot speak for the window (too few scrapes, a failed scrape, rule
// groups not evaluated, an answer of an unexpected shape). Alertmanager and Prometheus are
// scripted here (the real ones are in monitoring_gates_test and monitoring_window_test); the
// logic under test is how their answers are read.

#include <gtest/gtest.h>

#include <algorithm>

#include "gates/pipeline/families/monitoring.h"

namespace fabgate::pipeline {
namespace {

class NoAlerts : public prom::AlertmanagerClient {
 public:
  NoAlerts() : prom::AlertmanagerClient({"http://alertmanager.invalid"}) {}
  Expected<std::vector<prom::Alert>, prom::AlertFailure> alerts(std::string* raw) const override {
    if (raw) *raw = "[]";
    return std::vector<prom::Alert>{};
  }
};

// What the scripted Prometheus observed of leaf1 (target {job="node",node="leaf1"}, scraped
// every second) during a window that started 30 s ago; by default all of it, healthy.
struct Observed {
  std::vector<double> firing_at;  // seconds after the window's start with an ALERTS point
  double scrapes = 31;
  std::vector<double> failed_at;  // seconds after the window's start with up == 0
  double rules_evaluated = 29;    // seconds after the window's start; negative: before it
  bool rules_answer_garbage = false;
  std::vector<double> pending_at;  // seconds after the window's start with a pending ALERTS point
  bool pending_unreadable = false;
};

class ScriptedHistory : public prom::PrometheusClient {
 public:
  ScriptedHistory(TimePoint start, Observed observed)
      : prom::PrometheusClient({"http://prometheus.invalid"}),
        start_s_(std::chrono::duration<double>(start.time_since_epoch()).count()),
        observed_(std::move(observed)) {}

  // ALERTS over the window: one series firing (or pending) at the scripted offsets.
  Expected<prom::QueryAnswer, prom::PromFailure> query_range(const std::string& promql, TimePoint,
                                                             TimePoint end,
                                                             Duration) const override {
    const bool pending = promql.find("pending") != std::string::npos;
    if (pending && observed_.pending_unreadable)
      return prom::PromFailure{prom::PromFailure::Kind::timeout, "the query timed out after 5s"};
    prom::QueryAnswer answer = empty(promql, "matrix");
    answer.evaluated_at = end;
    prom::Series series;
    series.labels = {{"__name__", "ALERTS"},
                     {"alertname", "FabricInterfaceDown"},
                     {"alertstate", pending ? "pending" : "firing"},
                     {"node", "leaf1"},
                     {"device", "to-host2"}};
    for (double offset : pending ? observed_.pending_at : observed_.firing_at)
      series.points.push_back({start_s_ + offset, 1});
    answer.series.push_back(series);
    return answer;
  }

  // time(), and count_over_time / min_over_time / the raw samples of leaf1's `up`.
  Expected<prom::QueryAnswer, prom::PromFailure> query_now(
      const std::string& promql) const override {
    const double now = start_s_ + 30;
    if (promql == "time()") {
      auto answer = empty(promql, "scalar");
      answer.series.push_back({{}, {{now, now}}});
      return answer;
    }
    auto answer = empty(promql, promql.ends_with("]") ? "matrix" : "vector");
    prom::Series up{{{"job", "node"}, {"node", "leaf1"}}, {}};
    if (promql.starts_with("count_over_time(")) {
      up.points.push_back({now, observed_.scrapes});
    } else if (promql.starts_with("min_over_time(")) {
      up.points.push_back({now, observed_.failed_at.empty() ? 1.0 : 0.0});
    } else {
      up.labels["__name__"] = "up";
      for (int second = 0; second <= 30; ++second) {
        bool failed = std::find(observed_.failed_at.begin(), observed_.failed_at.end(), second) !=
                      observed_.failed_at.end();
        up.points.push_back({start_s_ + second, failed ? 0.0 : 1.0});
      }
    }
    answer.series.push_back(up);
    return answer;
  }

  Expected<std::vector<prom::ScrapeTarget>, prom::PromFailure> targets(
      std::string* raw) const override {
    if (raw) *raw = "{}";
    prom::ScrapeTarget target;
    target.labels = {{"job", "node"}, {"node", "leaf1"}};
    target.scrape_interval = Duration{1'000};
    return std::vector<prom::ScrapeTarget>{target};
  }

  // Through the real parser, so an answer of another shape is what the gate gets.
  Expected<std::vector<prom::RuleGroup>, prom::PromFailure> rule_groups(
      std::string* raw) const override {
    const std::string evaluated =
        format_utc(prom::from_api_time(start_s_ + observed_.rules_evaluated));
    std::string body =
        observed_.rules_answer_garbage
            ? R"({"status":"success","data":{"groups":[{"name":"fabric","interval":1,"rules":{"a":1}}]}})"
            : R"({"status":"success","data":{"groups":[{"name":"fabric","file":"fabric.yml",)"
              R"("interval":1,"lastEvaluation":")" +
                  evaluated +
                  R"(","rules":[{"name":"FabricInterfaceDown","type":"alerting",)"
                  R"("health":"ok","lastError":""}]}]}})";
    if (raw) *raw = body;
    return prom::parse_rules_answer(body, 200);
  }

 private:
  static prom::QueryAnswer empty(const std::string& promql, const std::string& type) {
    prom::QueryAnswer answer;
    answer.query = promql;
    answer.result_type = type;
    answer.raw = "{}";
    return answer;
  }
  double start_s_;
  Observed observed_;
};

MonitoringJudgement judge_window(Observed observed) {
  intent::AlertmanagerSettings settings;
  settings.device_label = "node";
  intent::Device leaf1;
  leaf1.name = "leaf1";
  // The window started 30 s ago; the history answers in 1 s steps from its start.
  const TimePoint start = now_utc() - std::chrono::seconds(30);
  NoAlerts alertmanager;
  ScriptedHistory history(start, std::move(observed));
  AlertHistory source{&history, {}};
  source.settings.series = "node=\"{{name}}\"";
  source.settings.max_age = Duration{10'000};
  return check_alerts_after(alertmanager, settings, {&leaf1}, {}, start, source);
}

MonitoringJudgement judge(std::vector<double> firing_at) {
  return judge_window(Observed{.firing_at = std::move(firing_at)});
}

std::string details_of(const MonitoringJudgement& judgement) {
  std::string out;
  for (const auto& line : judgement.details) out += line + "\n";
  return out;
}

TEST(AlertHistory, AnAlertThatFiredAndResolvedDuringTheWindowFails) {
  // Given FabricInterfaceDown firing from 5 s to 8 s into the window, then gone, then the
  // gate fails and names it as resolved before the check.
  auto judgement = judge({5, 6, 7, 8});
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.summary;
  ASSERT_FALSE(judgement.details.empty());
  EXPECT_NE(judgement.details[0].find("FabricInterfaceDown"), std::string::npos);
  EXPECT_NE(judgement.details[0].find("resolved before this check"), std::string::npos);
}

TEST(AlertHistory, AnAlertFiringThroughoutSinceBeforeTheWindowIsNotNew) {
  // Given the alert firing at every step from the window's start on (alerts-pre judged it),
  // then it is not counted as started during the change.
  std::vector<double> always;
  for (int second = 0; second <= 30; ++second) always.push_back(second);
  auto judgement = judge(always);
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;
}

TEST(AlertHistory, AnAlertThatResolvedAndFiredAgainDuringTheWindowFails) {
  // Given the alert still firing at the window's start (an earlier change's, about to
  // resolve), resolved at 2 s, and firing again from 10 s to 13 s, then the second episode
  // is new: the gate fails with the time it started.
  auto judgement = judge({0, 1, 2, 10, 11, 12, 13});
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.summary;
  ASSERT_FALSE(judgement.details.empty());
  EXPECT_NE(judgement.details[0].find("FabricInterfaceDown"), std::string::npos);
  const auto findings = judgement.evidence["findings"];
  ASSERT_EQ(findings.size(), 1u) << findings.dump(2);
  EXPECT_EQ(findings[0]["verdict"], "fail");
}

TEST(AlertHistory, RuleGroupsLastEvaluatedBeforeTheWindowAreNoEvidence) {
  // Given no alert anywhere but the only rule group last evaluated 5 s before the window
  // began, then the gate cannot pass: it is no-evidence naming the group and saying nobody
  // evaluated its alerts during the change.
  auto judgement = judge_window(Observed{.rules_evaluated = -5});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("rule group fabric (fabric.yml) last evaluated at"),
            std::string::npos)
      << details_of(judgement);
  EXPECT_NE(details_of(judgement).find("before the window began"), std::string::npos);
  EXPECT_NE(judgement.summary.find("did not observe the whole change"), std::string::npos)
      << judgement.summary;
}

TEST(AlertHistory, ARuleGroupEvaluatedLongerThanMaxAgeAgoIsNoEvidence) {
  // Given the group evaluated inside the window but 12 s before the check (max_age 10 s), then
  // its alerts have not judged the end of the change: no-evidence.
  auto judgement = judge_window(Observed{.rules_evaluated = 18});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("longer than max_age 10s"), std::string::npos)
      << details_of(judgement);
}

TEST(AlertHistory, TwoFailedScrapesInARowAreNoEvidenceNamingWhen) {
  // Given leaf1's target down at 12 s and 13 s into the window (up == 0) and no alert, then the
  // gap is longer than one missed scrape: the gate is no-evidence naming the target, the
  // number of failed scrapes, when they were and why they are not tolerated.
  const TimePoint start = now_utc() - std::chrono::seconds(30);
  auto judgement = judge_window(Observed{.failed_at = {12, 13}});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  const std::string details = details_of(judgement);
  EXPECT_NE(details.find("leaf1: target {job=\"node\",node=\"leaf1\"} was down during the change "
                         "(up == 0, 2 failed scrapes, the first at "),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("2 failed scrapes in a row"), std::string::npos) << details;
  // The first failure's time, to the second.
  EXPECT_NE(details.find(format_utc(start + std::chrono::seconds(12)).substr(0, 19)),
            std::string::npos)
      << details;
}

TEST(AlertHistory, OneIsolatedFailedScrapeWithNoAlertPendingIsToleratedAndReported) {
  // Given leaf1's scrape at 12 s failed once between two successful ones (a slow exporter on a
  // busy host) and no alert pending or firing, then the gate passes: the gap hides at most
  // what lasted under two scrape intervals, which no scrape could prove anyway. The tolerated
  // failure is named in the details and the summary.
  auto judgement = judge_window(Observed{.failed_at = {12}});
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary << "\n" << details_of(judgement);
  EXPECT_NE(details_of(judgement).find("leaf1: target {job=\"node\",node=\"leaf1\"} missed 1 "
                                       "scrape (up == 0 at "),
            std::string::npos)
      << details_of(judgement);
  EXPECT_NE(judgement.summary.find("no new alert"), std::string::npos) << judgement.summary;
}

TEST(AlertHistory, AnIsolatedFailedScrapeWhileAnAlertWasPendingIsNoEvidence) {
  // Given one failed scrape at 12 s and FabricInterfaceDown pending on leaf1 from 10 s to 14 s
  // (its `for:` not reached), then the gap may have restarted that `for:` and postponed the
  // alert past the window: no-evidence, saying so.
  auto judgement = judge_window(Observed{.failed_at = {12}, .pending_at = {10, 11, 12, 13, 14}});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("an alert was pending on it during the window"),
            std::string::npos)
      << details_of(judgement);
}

TEST(AlertHistory, AnIsolatedFailedScrapeIsNoEvidenceWhenThePendingHistoryIsUnreadable) {
  // Given one failed scrape and the pending-alert history timing out, then whether the gap
  // restarted an alert's `for:` is unknown: no-evidence naming why.
  auto judgement = judge_window(Observed{.failed_at = {12}, .pending_unreadable = true});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("whether an alert was pending on it is unknown: the query "
                                       "timed out after 5s"),
            std::string::npos)
      << details_of(judgement);
}

TEST(AlertHistory, IsolatedFailedScrapesMoreThanOneInTenAreNoEvidence) {
  // Given four isolated failed scrapes among the window's 31 (more than 1 in 10), then the
  // target was not observed well enough: no-evidence naming the proportion.
  auto judgement = judge_window(Observed{.failed_at = {3, 9, 15, 21}});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("4 of 31 scrapes failed, more than 1 in 10"),
            std::string::npos)
      << details_of(judgement);
}

TEST(AlertHistory, AFailedLastScrapeOfTheWindowIsNoEvidence) {
  // Given the window's last scrape failed (nothing after it shows the target back), then the
  // gap reaches the end of the change: no-evidence.
  auto judgement = judge_window(Observed{.failed_at = {30}});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("the window's last scrape failed"), std::string::npos)
      << details_of(judgement);
}

TEST(AlertHistory, TooFewScrapesInTheWindowIsNoEvidence) {
  // Given 3 scrapes of a target scraped every second in a 30 s window (at least 15 needed),
  // then the gate is no-evidence naming the count and what was needed.
  auto judgement = judge_window(Observed{.scrapes = 3});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("3 scrapes of target {job=\"node\",node=\"leaf1\"} in "
                                       "the 30 s window, at least 15 needed"),
            std::string::npos)
      << details_of(judgement);
}

TEST(AlertHistory, ANewAlertStillFailsWhenTheWindowWasNotFullyObserved) {
  // Given an alert that fired during the window and a failed scrape too, then the gate fails:
  // what was observed is enough to reject the change.
  auto judgement = judge_window(Observed{.firing_at = {5, 6, 7}, .failed_at = {20}});
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.summary;
}

TEST(AlertHistory, ARulesAnswerOfAnotherShapeIsNoEvidenceNotACrash) {
  // Given Prometheus answering /api/v1/rules with a group whose rules are an object, then the
  // gate is no-evidence naming the field.
  auto judgement = judge_window(Observed{.rules_answer_garbage = true});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("group fabric's rules"), std::string::npos)
      << details_of(judgement);
}

}  // namespace
}  // namespace fabgate::pipeline
