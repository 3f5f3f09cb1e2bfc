#pragma once

// Monitoring as evidence and as a gate (docs/monitoring.md): the freshness gate (targets
// scraped, samples fresh, the source reports the inventory's identity), what Prometheus observed
// during the change window (scrapes, rule evaluations), promql probes, the alert gates and the
// change-window silence. Each function judges what the adapters in adapters/prom return; none
// of them talks HTTP itself.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/prom/alertmanager_client.h"
#include "adapters/prom/prometheus_client.h"
#include "gates/compare/exception_register.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/probes.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

// What a monitoring gate found: its verdict, lines for the report, and the evidence document
// (every query, its raw answer and evaluation time).
struct MonitoringJudgement {
  Verdict verdict = Verdict::no_evidence;
  std::string summary;
  std::vector<std::string> details;
  nlohmann::json evidence = nlohmann::json::object();
  std::vector<std::string> exceptions_used;
};

// Labels as PromQL writes them: {a="1",b="2"}.
std::string labels_text(const std::map<std::string, std::string>& labels);

// A raw answer for the evidence: JSON when it parses within the depth limit, else the text.
nlohmann::json raw_answer(const std::string& raw);

// The device's label matcher: `series` with {{name}}, {{mgmt}} and {{label.KEY}} replaced.
// nullopt when the template names a label the device does not have.
std::optional<std::string> series_matcher(const std::string& series, const intent::Device& device);

// The hostname a source must report for `device`: the inventory's declared hostname, else its
// name.
std::string expected_hostname(const intent::Device& device);

// The metric names a PromQL query selects with a label matcher: every identifier directly
// followed by `{` (`rate(node_network_receive_drop_total{ {{series}} }[1m])` ->
// node_network_receive_drop_total), in order, without repeats. Metrics named without braces
// are not found; a promql probe selects its host's series with braces anyway.
std::vector<std::string> promql_metric_names(const std::string& query);

// Freshness, every age on Prometheus' own clock (instant queries without a time): for every
// target, `up` is 1 and its newest sample (timestamp(up)) is younger than max_age, Prometheus
// still scrapes the target (it is among /api/v1/targets' active targets) at an interval no
// longer than max_age, each `fresh` metric (and each metric in `probe_metrics` for that device)
// has a sample younger than max_age, and the identity metric is as fresh and its label equals
// the expected hostname. With `window_start`, also check_window_scrapes over [window_start,
// at] (the count only). A wrong identity fails; unreachable Prometheus, absent series, stale
// samples, unscraped targets and down targets are no-evidence.
MonitoringJudgement check_freshness_of(
    const prom::PrometheusClient& prometheus, const intent::PrometheusSettings& settings,
    const std::vector<const intent::Device*>& targets, TimePoint at,
    const std::map<std::string, std::vector<std::string>>& probe_metrics = {},
    std::optional<TimePoint> window_start = std::nullopt);

// Which targets had an alert pending in their failure domain at some point of the window
// (Prometheus' ALERTS{alertstate="pending"} history): a failed scrape makes the target's series
// stale for an evaluation, which restarts the `for:` of an alert pending on them, so the gap may
// have postponed that alert past the window.
struct PendingAlerts {
  std::set<std::string> devices;       // targets with an alert pending during the window
  std::optional<std::string> unknown;  // why the pending history could not be read
};

// What Prometheus observed of the targets during [window_start, window_end] (controller's
// clock; the queries take its length and run at Prometheus' clock): each target's `up` series
// has at least max(2, half the scrapes its interval implies) samples (count_over_time), the
// interval as /api/v1/targets reports it. With `failed_scrapes` (alerts-acceptance), failed
// scrapes (up == 0) are judged too: tolerated only when each is a single failed scrape between
// two successful ones, they are at most 1 in 10 of the window's scrapes, the window's last
// scrape succeeded, and no alert was pending on the target (`failed_scrapes`); otherwise
// no-evidence naming how many failed, the first and the last. Anything else is no-evidence.
MonitoringJudgement check_window_scrapes(const prom::PrometheusClient& prometheus,
                                         const intent::PrometheusSettings& settings,
                                         const std::vector<const intent::Device*>& targets,
                                         TimePoint window_start, TimePoint window_end,
                                         const PendingAlerts* failed_scrapes);

// Whether Prometheus evaluated its alerting rules during the window: every rule group with an
// alerting rule (which groups could raise an alert on a target cannot be told beforehand) was
// last evaluated at or after the window's start and at most max_age before Prometheus' now,
// and no alerting rule reports an evaluation error. No alerting rule at all, or any of that
// unknown, is no-evidence.
MonitoringJudgement check_rule_evaluation(const prom::PrometheusClient& prometheus,
                                          const intent::PrometheusSettings& settings,
                                          TimePoint window_start, TimePoint window_end);

// One `kind: promql` probe on its host: an instant query at `at`, or a range query over
// [window_start, at]; every value must satisfy `expect`. Empty answers are no-evidence unless
// the probe says empty_is_zero. The query, raw answer and evaluation time go into
// outcome.detail.
ProbeOutcome run_promql_probe(const prom::PrometheusClient& prometheus,
                              const intent::PrometheusSettings& settings,
                              const intent::Device& host, const intent::Probe& probe,
                              const std::string& phase, TimePoint window_start, TimePoint at);

// Whether an alert belongs to a target's failure domain: its device label names the target, or
// every failure_domain label the device declares matches the alert's label of the same name.
bool alert_concerns(const prom::Alert& alert, const intent::AlertmanagerSettings& settings,
                    const intent::Device& device);

// Before the change: no firing, unsilenced alert in a target's failure domain, unless an
// unexpired exception (device + `rule: alert:<alertname>`) waives it; a waived alert is listed.
MonitoringJudgement check_alerts_before(const prom::AlertmanagerClient& alertmanager,
                                        const intent::AlertmanagerSettings& settings,
                                        const std::vector<const intent::Device*>& targets,
                                        const compare::ExceptionRegister& exceptions,
                                        TimePoint now);

// The Prometheus that evaluates the alerting rules, and how the targets map to its series.
struct AlertHistory {
  const prom::PrometheusClient* prometheus = nullptr;  // null: Alertmanager only
  intent::PrometheusSettings settings;
};

// After the change: any alert in a target's failure domain that started firing at or after
// `window_start`, silenced or not, fails unless its name is in `expected`. Alertmanager holds
// only the alerts firing now; with a `history` Prometheus, the ALERTS series over
// [window_start, now] also catch an alert that fired and resolved within the window, and the
// window must have been observed: check_window_scrapes (a failed scrape included) and
// check_rule_evaluation. A history that cannot be read or a window not observed is no-evidence
// (a new alert still fails).
MonitoringJudgement check_alerts_after(const prom::AlertmanagerClient& alertmanager,
                                       const intent::AlertmanagerSettings& settings,
                                       const std::vector<const intent::Device*>& targets,
                                       const std::vector<std::string>& expected,
                                       TimePoint window_start, const AlertHistory& history = {});

// The silence for a change window: one matcher on the device label, a regex over the targets.
prom::SilenceRequest window_silence(const intent::AlertmanagerSettings& settings,
                                    const std::vector<const intent::Device*>& targets,
                                    const std::string& run_id, const std::string& change_id,
                                    TimePoint starts, TimePoint ends);

}  // namespace fabgate::pipeline
