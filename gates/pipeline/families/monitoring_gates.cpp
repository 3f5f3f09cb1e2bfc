// Gates freshness-pre/post, alerts-pre/acceptance and silence, and promql probes
// (docs/monitoring.md).

#include "gates/pipeline/controller/pipeline.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <set>
#include <thread>
#include "adapters/core/text.h"
#include "gates/compare/default_rules.h"
#include "gates/compare/engine.h"
#include "gates/compare/exception_register.h"
#include "gates/compare/rule_set.h"
#include "gates/compare/snapshot.h"
#include "gates/compat/check.h"
#include "gates/compat/matrix.h"
#include "gates/pipeline/families/gate_support.h"
#include "gates/pipeline/families/identity_check.h"
#include "gates/pipeline/families/monitoring.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/report_html.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/safety/interruption.h"

namespace fabgate::pipeline {

std::vector<const intent::Device*> Pipeline::targets() const {
  std::vector<const intent::Device*> out;
  for (const auto& name : change_.targets)
    if (const auto* device = repository_.inventory.find(name)) out.push_back(device);
  return out;
}

void Pipeline::note_telemetry(const std::string& phase, Verdict verdict) {
  // The worst verdict of the phase's telemetry checks, like the probes' layers.
  auto& layer = outcome_.layers[phase]["telemetry"];
  if (layer.is_null() || layer == "pass" || (verdict == Verdict::fail && layer != "fail"))
    layer = std::string(to_string(verdict));
}

void Pipeline::probe_promql(const intent::Probe& declared, const std::string& phase,
                            std::vector<ProbeOutcome>& outcomes) {
  const auto& settings = repository_.settings.monitoring.prometheus;
  const intent::Device* host = repository_.inventory.find(declared.host);
  if (!settings || !with_.prometheus || !host) {
    ProbeOutcome outcome;
    outcome.name = declared.name;
    outcome.layer = declared.layer;
    outcome.host = declared.host;
    outcome.kind = "promql";
    outcome.phase = phase;
    outcome.started = now_utc();
    outcome.reason = "no Prometheus client: monitoring.prometheus is not configured for this run";
    outcomes.push_back(std::move(outcome));
    return;
  }
  outcomes.push_back(run_promql_probe(*with_.prometheus, *settings, *host, declared, phase,
                                      run_started_at_, now_utc()));
}

void Pipeline::check_freshness(GateRecord& record, const std::string& phase) {
  const auto& settings = *repository_.settings.monitoring.prometheus;
  if (!with_.prometheus) {
    record.verdict = Verdict::no_evidence;
    record.summary = "fabgate.yaml configures Prometheus but this run has no client for it";
    return;
  }
  // The metrics the change's promql probes read on a target must be fresh too. Probes that
  // read an empty answer as 0 are left out: for them no series is a valid answer.
  std::map<std::string, std::vector<std::string>> probe_metrics;
  for (const auto& probe : change_.acceptance.probes)
    if (probe.kind == "promql" && !probe.empty_is_zero)
      for (auto& metric : promql_metric_names(probe.query))
        probe_metrics[probe.host].push_back(std::move(metric));
  // After the change, Prometheus must also have scraped the targets throughout the run.
  std::optional<TimePoint> window_start;
  if (phase != "pre") window_start = run_started_at_;
  auto judgement = check_freshness_of(*with_.prometheus, settings, targets(), now_utc(),
                                      probe_metrics, window_start);
  record.verdict = judgement.verdict;
  record.summary = std::move(judgement.summary);
  record.details = std::move(judgement.details);
  note_telemetry(phase == "pre" ? "baseline" : "acceptance", record.verdict);
  auto written =
      with_.evidence.write_json("monitoring/freshness-" + phase + ".json", judgement.evidence);
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
}

void Pipeline::check_alerts(GateRecord& record, const std::string& phase) {
  const auto& settings = *repository_.settings.monitoring.alertmanager;
  if (!with_.alertmanager) {
    record.verdict = Verdict::no_evidence;
    record.summary = "fabgate.yaml configures Alertmanager but this run has no client for it";
    return;
  }
  MonitoringJudgement judgement;
  if (phase == "pre") {
    auto exceptions = exceptions_for(repository_);
    static const compare::ExceptionRegister kNone;
    judgement = check_alerts_before(*with_.alertmanager, settings, targets(),
                                    exceptions.ok() ? exceptions.value() : kNone, now_utc());
    for (const auto& id : judgement.exceptions_used)
      if (std::find(outcome_.exceptions_used.begin(), outcome_.exceptions_used.end(), id) ==
          outcome_.exceptions_used.end())
        outcome_.exceptions_used.push_back(id);
  } else {
    // With Prometheus configured, its ALERTS history also catches an alert that fired and
    // resolved within the settle time, once Prometheus proves it observed the window.
    AlertHistory history;
    if (repository_.settings.monitoring.prometheus) {
      history.prometheus = with_.prometheus;
      history.settings = *repository_.settings.monitoring.prometheus;
    }
    judgement = check_alerts_after(*with_.alertmanager, settings, targets(),
                                   change_.acceptance.expected_alerts, run_started_at_, history);
  }
  record.verdict = judgement.verdict;
  record.summary = std::move(judgement.summary);
  record.details = std::move(judgement.details);
  note_telemetry(phase == "pre" ? "baseline" : "acceptance", record.verdict);
  auto written =
      with_.evidence.write_json("monitoring/alerts-" + phase + ".json", judgement.evidence);
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
}

void Pipeline::create_silence(GateRecord& record) {
  const auto& settings = *repository_.settings.monitoring.alertmanager;
  if (!with_.alertmanager) {
    record.verdict = Verdict::no_evidence;
    record.summary = "fabgate.yaml configures Alertmanager but this run has no client for it";
    return;
  }
  // Long enough for the whole run, like the device locks' lease; fabgate expires it sooner.
  Duration span = change_.bounds.deadline + 2 * change_.acceptance.settle +
                  change_.confirm_timeout.value_or(Duration::zero()) + Duration{15 * 60'000};
  auto start = now_utc();
  auto request =
      window_silence(settings, targets(), with_.evidence.run_id(), change_.id, start, start + span);
  auto created = with_.alertmanager->create_silence(request);
  nlohmann::json matchers = nlohmann::json::array();
  for (const auto& m : request.matchers)
    matchers.push_back({{"name", m.name}, {"value", m.value}, {"is_regex", m.is_regex}});
  nlohmann::json document = {{"alertmanager", settings.endpoint.url},
                             {"matchers", matchers},
                             {"starts_at", format_utc(request.starts_at)},
                             {"ends_at", format_utc(request.ends_at)},
                             {"comment", request.comment}};
  if (!created.ok()) {
    record.verdict = Verdict::no_evidence;
    record.summary = "the change-window silence could not be created";
    record.details.push_back("[telemetry] " + created.error().message);
    document["error"] = created.error().message;
    (void)with_.evidence.write_json("monitoring/silence.json", document);
    return;
  }
  silence_id_ = created.value();
  // Journaled before any step, so `fabgate recover` expires it if this run dies.
  with_.evidence.append_journal({{"event", "silence-created"},
                                 {"silence", silence_id_},
                                 {"alertmanager", settings.endpoint.url},
                                 {"ends_at", format_utc(request.ends_at)},
                                 {"at", format_utc(now_utc())}});
  document["id"] = silence_id_;
  (void)with_.evidence.write_json("monitoring/silence.json", document);
  record.verdict = Verdict::pass;
  record.summary = "silence " + silence_id_ + " on " + matchers[0]["name"].get<std::string>() +
                   "=~" + matchers[0]["value"].get<std::string>() + " until " +
                   format_utc(request.ends_at) + " (expired when the run ends)";
}

void Pipeline::expire_silence() {
  if (silence_id_.empty() || !with_.alertmanager) return;
  gate("silence-expire", [&](GateRecord& record) {
    auto expired = with_.alertmanager->expire_silence(silence_id_);
    if (!expired.ok()) {
      // The run's outcome stands; the silence still ends by itself at its end time.
      record.verdict = Verdict::fail;
      record.summary = "silence " + silence_id_ +
                       " could not be expired; it ends by itself (monitoring/silence.json)";
      record.details.push_back("[telemetry] " + expired.error().message);
      return;
    }
    with_.evidence.append_journal(
        {{"event", "silence-expired"}, {"silence", silence_id_}, {"at", format_utc(now_utc())}});
    record.verdict = Verdict::pass;
    record.summary = "silence " + silence_id_ + " expired";
    silence_id_.clear();
  });
}

}  // namespace fabgate::pipeline
