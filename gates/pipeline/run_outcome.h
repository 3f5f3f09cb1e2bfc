#pragma once

// What a run is (its mode) and what it ended with (RunOutcome): the vocabulary the run
// controller hands to the reporting room, so that reporting never reaches back into the
// controller (gates/pipeline/controller).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/exit_code.h"
#include "gates/pipeline/families/approval_gate.h"
#include "gates/pipeline/families/execute.h"
#include "gates/pipeline/families/probes.h"
#include "gates/pipeline/families/telemetry_layer.h"
#include "gates/pipeline/reporting/change_listing.h"
#include "gates/pipeline/reporting/config_diff.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

enum class Mode {
  plan,      // read-only gates, then the review artifact
  apply,     // every gate; roll back on failure
  rehearse,  // apply, then a forced rollback and the same restore verification
  twin,      // the read-only gates, then the change tried on a twin only (docs/twin.md)
};
std::string_view to_string(Mode mode);

// What a run ended with. Everything here also lands in the evidence bundle.
struct RunOutcome {
  ExitCode exit_code = ExitCode::internal_error;
  std::vector<GateRecord> gates;
  std::string first_disproven;  // the first failing check, one line; empty when none failed
  bool change_started = false;  // at least one step was sent
  std::string device_state;     // one line: what state the devices were left in
  std::vector<ProbeOutcome> probes;
  std::vector<StepRun> steps;
  std::vector<StepRun> rollback_steps;
  std::optional<Duration> detection_to_restore;  // failure detected -> restore verified
  // The restore in its parts (docs/benchmarks.md "Restore time"), each against its own floor:
  // failure detected -> the first rollback command handed to its device's session (what the
  // outage waits for on the controller: the gates between, the journal, confirm-timer disarm),
  // and that moment -> the end of the first restore round that held (snapshot, comparison and
  // probes), i.e. the restore verified without the dwell's wait and confirming round.
  std::optional<Duration> detection_to_rollback_sent;
  std::optional<Duration> rollback_sent_to_verified;
  // Rollback to the restore verification holding: the start of the first round of settle-restored
  // whose snapshot matched the baseline and whose probes passed. Absent: no round held.
  std::optional<Duration> settle_restored;
  // How long the restored state had to hold after that round (acceptance.restore_dwell).
  std::optional<Duration> restore_dwell;
  nlohmann::json layers = nlohmann::json::object();  // phase -> layer -> verdict of its checks
  std::vector<std::string> diagnosis;                // what the layers mean together, in words
  std::vector<std::string> exceptions_used;  // register entries that waived a check or probe
  std::vector<ApprovalRecord> approvals;     // every approval file given, counted or not
  // Running-configuration diffs of each later snapshot against pre (config_diff.h).
  std::vector<ConfigDelta> config_deltas;
  std::vector<std::string> configs_captured;  // "leaf1 (42 lines)": config in the pre snapshot
  // What each comparison found changed, entry by entry (change_listing.h).
  std::vector<ChangeListing> changes;
  // plan with --rehearsal: where config_deltas come from ("rehearsal <folder>"), or why the
  // rehearsal's diffs are not shown.
  std::string config_deltas_from;
  std::string config_deltas_refused;
  // The during-change telemetry layer (telemetry_layer.h); absent when nothing was streamed.
  std::optional<TelemetryOutcome> telemetry;
  // The same layer through the rollback and the restore verification; absent when the run
  // was not rolled back or nothing was streamed.
  std::optional<TelemetryOutcome> rollback_telemetry;
  // The run controller's own account of how the run ended (docs/reliability.md):
  std::vector<std::string> internal_errors;       // "acceptance: <what()>": exceptions caught
  std::string interrupted_by;                     // "SIGTERM": the first signal, when one arrived
  std::vector<std::string> evidence_not_written;  // files the bundle could not keep, and why
  bool sealed = false;                            // manifest.json was written
  // Exit 5 only: the devices that may still hold the change, and the command that finishes.
  std::vector<std::string> may_still_be_changed;
  std::string recover_command;
};

}  // namespace fabgate::pipeline
