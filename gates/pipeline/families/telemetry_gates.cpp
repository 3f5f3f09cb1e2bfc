// Gates telemetry-start, telemetry and telemetry-restored (telemetry_layer.h).

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

// How long telemetry streams may run: long enough for the change and, should it be rolled
// back, the rollback and its verification (the device locks' lease, less the confirm timer).
static Duration telemetry_bound(const intent::Change& change) {
  return change.bounds.deadline + 2 * change.acceptance.settle + Duration{900'000};
}

// What the change declares about its telemetry: the gap it tolerates and the flaps it causes.
TelemetryRules telemetry_rules(const intent::Change& change) {
  return {change.acceptance.telemetry_max_gap, change.acceptance.expected_flaps};
}

void Pipeline::start_telemetry(GateRecord& record) {
  auto started = telemetry_->start(telemetry_bound(change_), Duration{5'000});
  record.verdict = started.verdict;
  record.summary = std::move(started.summary);
  record.details = std::move(started.details);
  if (blocks(record.verdict)) note_telemetry("during", record.verdict);
}

// The gate's details: why a device is no-evidence, then every event.
static void telemetry_details(GateRecord& record, const TelemetryOutcome& outcome) {
  record.verdict = outcome.verdict;
  record.summary = outcome.summary;
  for (const auto& device : outcome.devices) {
    if (!device.stream_failure.empty())
      record.details.push_back(device.device + ": " + device.stream_failure);
    if (!device.mode.empty() && device.mode != "STREAM/SAMPLE") {
      record.details.push_back(device.device + ": subscribed by " + device.mode + ": " +
                               device.mode_cost);
      if (device.failed_rounds > 0)
        record.details.push_back(device.device + ": " + std::to_string(device.failed_rounds) +
                                 " of " + std::to_string(device.rounds) + " " + device.mode +
                                 " rounds failed (silences): " + join(device.round_failures, "; "));
    }
    for (const auto& gap : device.gaps) record.details.push_back(device.device + ": " + gap);
    for (const auto& flap : device.unexpected_flaps)
      record.details.push_back(device.device + ": " + flap + " (not in acceptance.expected_flaps)");
    for (const auto& gap : device.covered_gaps)
      record.details.push_back(device.device + ": " + gap);
  }
  for (const auto& line : event_lines(outcome)) record.details.push_back(line);
}

void Pipeline::stop_telemetry(GateRecord& record, AfterAcceptance then) {
  TelemetryOutcome outcome;
  if (then == AfterAcceptance::keep_streaming) {
    outcome = telemetry_->cut(Flaps::judged);
  } else {
    outcome = telemetry_->stop(Flaps::judged);
    telemetry_.reset();
  }
  outcome.phase = "during";
  auto written = with_.evidence.write_json("telemetry/during.json", to_json(outcome));
  note_telemetry("during", outcome.verdict);
  telemetry_details(record, outcome);
  if (then == AfterAcceptance::keep_streaming)
    record.details.push_back(
        "the streams keep running through the rollback (telemetry/rollback.json)");
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
  outcome_.telemetry = std::move(outcome);
}

void Pipeline::begin_rollback_telemetry() {
  rollback_telemetry_started_ = now_utc();
  if (telemetry_ || !with_.gnmi_connect) return;  // still streaming since before the change
  auto subjects = telemetry_subjects(repository_.inventory, change_.targets, pre_.document);
  if (std::none_of(subjects.begin(), subjects.end(),
                   [](const TelemetrySubject& subject) { return subject.device->gnmi; }))
    return;
  telemetry_ = std::make_unique<TelemetrySession>(with_.gnmi_connect, std::move(subjects),
                                                  Duration{1000}, telemetry_rules(change_));
  gate("telemetry-rollback-start", [&](GateRecord& r) {
    auto started = telemetry_->start(telemetry_bound(change_), Duration{5'000});
    r.verdict = started.verdict;
    r.summary = std::move(started.summary);
    r.details = std::move(started.details);
    if (blocks(r.verdict)) note_telemetry("rollback", r.verdict);
  });
  rollback_telemetry_started_ = now_utc();
}

// Whether an event is a change of state (oper-status, session-state), a flap or a
// disappearance, as opposed to a counter or prefix-count movement, which routing churn makes
// without the restore being at fault.
static bool changes_state(const gnmi::TelemetryEvent& event) {
  return event.flap || event.disappeared || event.what.rfind("oper-status ", 0) == 0 ||
         event.what.rfind("session-state ", 0) == 0;
}

// The state changes that happened after the restore verification first held: each one is a
// departure from the restored state. An event is stamped with the sample that showed it, up to
// one sampling interval after the change itself, so changes the verifying round already saw
// can carry a later stamp: those within two intervals of the round's end are not counted.
static std::vector<std::string> departures_after(const TelemetryOutcome& outcome,
                                                 TimePoint held_at) {
  const std::int64_t cut_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  (held_at + 2 * outcome.interval).time_since_epoch())
                                  .count();
  std::vector<std::string> lines;
  for (const auto& device : outcome.devices)
    for (const auto& event : device.events)
      if (event.timestamp_ns > cut_ns && changes_state(event))
        lines.push_back(device.device + " " + event_subject(event) + " " +
                        format_device_time(event.timestamp_ns) + " " + event.what +
                        (event.flap ? " (flapped)" : "") + ": after the restore held at " +
                        format_utc(held_at));
  return lines;
}

void Pipeline::stop_rollback_telemetry(GateRecord& record) {
  // The restore can be verified within one sample of the rollback: the window must hold a
  // sample of the state that was verified. Without a dwell, a sample from each stream since the
  // verifying round began is one (the round's snapshot and probes were taken from then on), and
  // a round longer than a sampling interval has it already: nothing is waited for. Departures
  // count from two intervals after that round ended, and one sample more would arrive within
  // about one: it would show the state, not watch it. Watching the restored state is the
  // dwell's job: with one, the streams prove the state between the two rounds and through the
  // second, so the window ends only after one sample more (at most two sampling intervals), as
  // it does when no round held.
  const bool verified_without_dwell = restore_held_at_ && restore_round_ &&
                                      restore_round_->not_held.empty() &&
                                      change_.acceptance.restore_dwell <= Duration::zero() &&
                                      !restore_round_->telemetry_mark.empty();
  TelemetryOutcome outcome =
      verified_without_dwell ? telemetry_->stop_after_sample_since(restore_round_->telemetry_mark)
                             : telemetry_->stop_after_next_sample();
  telemetry_.reset();
  outcome.phase = "rollback";
  outcome.rollback_started = rollback_telemetry_started_;
  std::vector<std::string> departures;
  if (restore_held_at_) departures = departures_after(outcome, *restore_held_at_);
  nlohmann::json document = to_json(outcome);
  if (restore_held_at_) {
    document["restore_held_at"] = format_utc(*restore_held_at_);
    document["departures_after_restore"] = departures;
  }
  auto written = with_.evidence.write_json("telemetry/rollback.json", document);
  note_telemetry("rollback", outcome.verdict);
  telemetry_details(record, outcome);
  if (!departures.empty()) {
    // The restored state did not hold: this fails the gate and the restore (exit 5).
    record.verdict = Verdict::fail;
    record.summary =
        std::to_string(departures.size()) + " state change" + (departures.size() == 1 ? "" : "s") +
        " after the restore held: the restored state did not hold (" + outcome.summary + ")";
    record.details.insert(record.details.begin(), departures.begin(), departures.end());
    note_telemetry("rollback", Verdict::fail);
  }
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
  outcome_.rollback_telemetry = std::move(outcome);
}

}  // namespace fabgate::pipeline
