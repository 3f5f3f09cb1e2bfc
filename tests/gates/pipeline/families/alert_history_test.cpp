// alerts-acceptance reading Prometheus' ALERTS history: which firing episodes count as new.
// Alertmanager and Prometheus are scripted here (the real ones are in monitoring_gates_test);
// the logic under test is how the series' points are read.

#include <gtest/gtest.h>

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

// Answers every range query with one ALERTS series firing at the given seconds after `start`.
class ScriptedHistory : public prom::PrometheusClient {
 public:
  ScriptedHistory(TimePoint start, std::vector<double> firing_at)
      : prom::PrometheusClient({"http://prometheus.invalid"}),
        start_(start),
        firing_at_(std::move(firing_at)) {}
  Expected<prom::QueryAnswer, prom::PromFailure> query_range(const std::string& promql, TimePoint,
                                                             TimePoint end,
                                                             Duration) const override {
    prom::QueryAnswer answer;
    answer.query = promql;
    answer.result_type = "matrix";
    answer.evaluated_at = end;
    answer.raw = "{}";
    prom::Series series;
    series.labels = {{"__name__", "ALERTS"},
                     {"alertname", "FabricInterfaceDown"},
                     {"alertstate", "firing"},
                     {"node", "leaf1"},
                     {"device", "to-host2"}};
    const double start_s = std::chrono::duration<double>(start_.time_since_epoch()).count();
    for (double offset : firing_at_) series.points.push_back({start_s + offset, 1});
    answer.series.push_back(series);
    return answer;
  }

 private:
  TimePoint start_;
  std::vector<double> firing_at_;
};

MonitoringJudgement judge(std::vector<double> firing_at) {
  intent::AlertmanagerSettings settings;
  settings.device_label = "node";
  intent::Device leaf1;
  leaf1.name = "leaf1";
  // The window started 30 s ago; the history answers in 1 s steps from its start.
  const TimePoint start = now_utc() - std::chrono::seconds(30);
  NoAlerts alertmanager;
  ScriptedHistory history(start, std::move(firing_at));
  return check_alerts_after(alertmanager, settings, {&leaf1}, {}, start, &history);
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

}  // namespace
}  // namespace fabgate::pipeline
