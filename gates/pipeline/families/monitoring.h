#pragma once

// Monitoring as evidence and as a gate (docs/monitoring.md): the freshness gate (targets
// scraped, samples fresh, the source reports the inventory's identity), promql probes, the
// alert gates and the change-window silence. Each function judges what the adapters in
// adapters/prom return; none of them talks HTTP itself.

#include <map>
#include <optional>
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

// Freshness: for every target, `up` is 1, each `fresh` metric (and each metric in
// `probe_metrics` for that device) has a sample younger than max_age, and the identity
// metric's label equals the expected hostname. Down or wrong identity fails; unreachable
// Prometheus, absent series and stale samples are no-evidence.
MonitoringJudgement check_freshness_of(
    const prom::PrometheusClient& prometheus, const intent::PrometheusSettings& settings,
    const std::vector<const intent::Device*>& targets, TimePoint at,
    const std::map<std::string, std::vector<std::string>>& probe_metrics = {});

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

// After the change: any alert in a target's failure domain that started firing at or after
// `window_start`, silenced or not, fails unless its name is in `expected`. Alertmanager holds
// only the alerts firing now; with `history` (the Prometheus that evaluates the rules), the
// ALERTS series over [window_start, now] also catch an alert that fired and resolved within
// the window. A history that cannot be read is no-evidence.
MonitoringJudgement check_alerts_after(const prom::AlertmanagerClient& alertmanager,
                                       const intent::AlertmanagerSettings& settings,
                                       const std::vector<const intent::Device*>& targets,
                                       const std::vector<std::string>& expected,
                                       TimePoint window_start,
                                       const prom::PrometheusClient* history = nullptr);

// The silence for a change window: one matcher on the device label, a regex over the targets.
prom::SilenceRequest window_silence(const intent::AlertmanagerSettings& settings,
                                    const std::vector<const intent::Device*>& targets,
                                    const std::string& run_id, const std::string& change_id,
                                    TimePoint starts, TimePoint ends);

}  // namespace fabgate::pipeline
