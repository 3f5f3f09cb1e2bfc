// Freshness and the alert gate against what the real Debian prometheus (2.42), alertmanager
// and node exporter on 127.0.0.1 (tests/adapters/prom/monitoring_stack.h) actually observed:
// an instant query returns the newest `up` of the last 5 minutes, so `up == 1` alone proves
// neither that Prometheus still scrapes a target, nor that it scrapes it often enough, nor that
// it evaluated its alerting rules during the change. Each case here passed before freshness
// aged its samples and the alert gate checked the window.

#include <gtest/gtest.h>

#include "gates/pipeline/families/monitoring.h"
#include "tests/adapters/prom/monitoring_stack.h"

namespace fabgate::pipeline {
namespace {

using testing::eventually;
using testing::MonitoringStack;

std::string details_of(const MonitoringJudgement& judgement) {
  std::string out;
  for (const auto& line : judgement.details) out += line + "\n";
  return out;
}

intent::PrometheusSettings settings_for(const MonitoringStack& stack, Duration max_age) {
  intent::PrometheusSettings settings;
  settings.endpoint.url = stack.prometheus_url();
  settings.series = "job=\"{{label.job}}\"";
  settings.max_age = max_age;
  settings.identity_metric.clear();  // the identity is not what these cases are about
  return settings;
}

intent::Device device_on_job(const std::string& name, const std::string& job) {
  intent::Device device;
  device.name = name;
  device.labels["job"] = job;
  return device;
}

// Whether an instant query of the job's `up` returns 1: what the freshness gate used to
// accept.
bool instant_up(const prom::PrometheusClient& prometheus, const std::string& job) {
  auto up = prometheus.query("up{job=\"" + job + "\"}", now_utc());
  return up.ok() && up->series.size() == 1 && !up->series[0].points.empty() &&
         up->series[0].points[0].value == 1;
}

class MonitoringWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = MonitoringStack::missing(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(MonitoringWindow, ATargetScrapedLessOftenThanMaxAgeIsNoEvidenceThoughUpIsOne) {
  // Given a job scraped every 12 s and max_age 10 s, once its first scrape is in (an instant
  // query returns up == 1), then freshness is no-evidence naming the target, its interval and
  // max_age: between two scrapes its samples are older than max_age.
  MonitoringStack stack("leaf1", "", MonitoringStack::Tls::off,
                        "  - job_name: slow\n"
                        "    scrape_interval: 12s\n"
                        "    scrape_timeout: 5s\n"
                        "    static_configs: [{targets: ['{{exporter}}']}]\n");
  ASSERT_TRUE(stack.wait_ready()) << stack.logs();
  auto prometheus = stack.prometheus_client();
  ASSERT_TRUE(eventually([&] { return instant_up(prometheus, "slow"); }, std::chrono::seconds(20)))
      << stack.logs();
  auto slow = device_on_job("slow1", "slow");
  auto judgement =
      check_freshness_of(prometheus, settings_for(stack, Duration{10'000}), {&slow}, now_utc());
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  EXPECT_NE(details_of(judgement).find("slow1: target {instance=\"" + stack.exporter_address() +
                                       "\",job=\"slow\"} is scraped every 12s, longer than "
                                       "max_age 10s"),
            std::string::npos)
      << details_of(judgement);

  // The node job of the same stack, scraped every second, is fresh.
  auto fast = device_on_job("leaf1", "node");
  auto fresh =
      check_freshness_of(prometheus, settings_for(stack, Duration{10'000}), {&fast}, now_utc());
  EXPECT_EQ(fresh.verdict, Verdict::pass) << details_of(fresh);
}

TEST_F(MonitoringWindow, APrometheusThatStoppedScrapingTheTargetIsNoEvidenceThoughUpIsOne) {
  // Given Prometheus restarted without the target's job (no staleness marker is written then,
  // so an instant query still returns its last up == 1 for 5 minutes), then freshness is
  // no-evidence: the target is not among those Prometheus scrapes, and once max_age (2 s)
  // passed, its newest `up` sample is named with its age.
  MonitoringStack stack;
  ASSERT_TRUE(stack.wait_ready()) << stack.logs();
  auto prometheus = stack.prometheus_client();
  stack.restart_prometheus(false);
  ASSERT_TRUE(eventually([&] { return prometheus.ready().ok(); })) << stack.logs();
  ASSERT_TRUE(instant_up(prometheus, "node")) << stack.logs();

  auto leaf1 = device_on_job("leaf1", "node");
  const auto settings = settings_for(stack, Duration{2'000});
  MonitoringJudgement judgement;
  ASSERT_TRUE(eventually(
      [&] {
        judgement = check_freshness_of(prometheus, settings, {&leaf1}, now_utc());
        return details_of(judgement).find("s old on Prometheus' clock, older than max_age 2s") !=
               std::string::npos;
      },
      std::chrono::seconds(15)))
      << details_of(judgement);
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
  EXPECT_NE(details_of(judgement).find("leaf1: target {device=\"leaf1\",instance=\"" +
                                       stack.exporter_address() +
                                       "\",job=\"node\"} is not among the targets Prometheus "
                                       "scrapes now"),
            std::string::npos)
      << details_of(judgement);
  // Still returned by an instant query: the old answer the gate no longer takes for a fresh
  // one.
  EXPECT_TRUE(instant_up(prometheus, "node"));
}

TEST_F(MonitoringWindow, AlertRulesNotEvaluatedDuringTheWindowMakeTheAlertGateNoEvidence) {
  // Given a healthy target and no alert, but a second alerting rule group evaluated once an
  // hour (so not during a change of a few seconds), then alerts-acceptance is no-evidence
  // naming that group; the 1 s group next to it is judged evaluated.
  MonitoringStack stack("leaf1",
                        "  - name: hourly\n"
                        "    interval: 1h\n"
                        "    rules:\n"
                        "      - alert: FabgateSlowCheck\n"
                        "        expr: fabgate_lab_link_up == 5\n");
  ASSERT_TRUE(stack.wait_ready()) << stack.logs();
  auto prometheus = stack.prometheus_client();
  intent::AlertmanagerSettings alerting;
  alerting.endpoint.url = stack.alertmanager_url();
  auto leaf1 = device_on_job("leaf1", "node");
  AlertHistory history{&prometheus, settings_for(stack, Duration{10'000})};

  // A window long enough for a few scrapes; its start is read after the hourly group's last
  // evaluation, so that evaluation is before the window (it has most likely never run).
  auto before = prometheus.rule_groups();
  ASSERT_TRUE(before.ok()) << before.error().message;
  const TimePoint window_start = now_utc();
  const PendingAlerts none;
  ASSERT_TRUE(eventually(
      [&] {
        return check_window_scrapes(prometheus, history.settings, {&leaf1}, window_start, now_utc(),
                                    &none)
                   .verdict == Verdict::pass;
      },
      std::chrono::seconds(20)))
      << stack.logs();
  auto judgement = check_alerts_after(stack.alertmanager_client(), alerting, {&leaf1}, {},
                                      window_start, history);
  auto after = prometheus.rule_groups();
  ASSERT_TRUE(after.ok());
  for (const auto& group : *after)
    if (group.name == "hourly" && group.last_evaluation && *group.last_evaluation >= window_start)
      GTEST_SKIP() << "the hourly group happened to run inside this window (1 in ~1000)";
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence) << judgement.summary;
  const std::string details = details_of(judgement);
  EXPECT_NE(details.find("rule group hourly"), std::string::npos) << details;
  EXPECT_NE(details.find("nobody evaluated its alerts during the change"), std::string::npos)
      << details;
  EXPECT_EQ(details.find("rule group fabgate-test"), std::string::npos) << details;
  const auto groups = judgement.evidence["rule_evaluation"]["groups"];
  ASSERT_EQ(groups.size(), 2u) << judgement.evidence.dump(2);
  EXPECT_EQ(groups[0]["group"], "fabgate-test");
  EXPECT_EQ(groups[0]["verdict"], "pass");
}

}  // namespace
}  // namespace fabgate::pipeline
