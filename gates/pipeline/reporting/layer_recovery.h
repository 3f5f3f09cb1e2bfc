#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/time.h"
#include "gates/pipeline/reporting/comparison_input.h"
#include "gates/pipeline/run_outcome.h"

namespace fabgate::pipeline {

// The recovery of each layer in one run, computed once (compute_layer_recovery) and shown twice:
// as the manifest's layer_recovery (to_json; `fabgate evidence show` prints it) and as
// report.html's "Recovery by layer". A layer is proven only by its own checks, each placed at the
// time its evidence was taken.

// One check of a layer: a probe's end, a snapshot's taken_at, a continuous probe's interruption.
struct LayerObservation {
  TimePoint at;
  std::string verdict;  // pass, fail, no-evidence (a waived check counts as pass)
  std::string source;   // "acceptance probes", "post-change snapshot vs pre", ...
  // Anything but a pass (a failure, no evidence) leaves the layer unproven from here on.
  bool passed() const { return verdict == "pass"; }
};

enum class LayerStatus {
  held,          // every check passed
  restored,      // failed, then passed after its last failure
  not_restored,  // its last check failed
  not_proven,    // its last checks had no evidence after it had passed
  no_evidence,   // no check with evidence of this layer ran
};
// "held", "restored", "NOT RESTORED", "NOT PROVEN", "no evidence": the words the manifest and
// the page use.
std::string_view to_string(LayerStatus status);

struct LayerRecord {
  std::string layer;
  std::vector<LayerObservation> observations;   // by time
  std::optional<TimePoint> baseline_reference;  // the pre snapshot a comparison compared against
  LayerStatus status = LayerStatus::no_evidence;
  std::optional<TimePoint> last_good;      // last pass before the first failure (or last pass)
  std::optional<LayerObservation> failed;  // the first check that did not pass
  std::optional<TimePoint> restored;       // first pass after the last check that did not
  std::vector<std::string> evidence;       // the observations' sources, sorted, once each
};

// Every layer the run knows of (the compare layers, the probes' layers, any layer a phase
// judged), in the order a fabric recovers, then any other layer by name.
struct LayerRecovery {
  std::vector<LayerRecord> layers;
};

// Reads outcome.layers (phase -> layer -> verdict), the probes' times and the continuous probe's
// per-flow interruptions, the gates' ends where nothing more precise exists, and the snapshot
// times of `comparisons` ("<label>-vs-pre" in json_link judges phase "<label>-compare"). Probe
// details are foreign documents: a field of another type is no evidence, never a throw.
LayerRecovery compute_layer_recovery(const RunOutcome& outcome,
                                     const std::vector<ComparisonInput>& comparisons);

// The manifest's layer_recovery: [{layer, status, last_good, failed_at, failed_verdict,
// failed_by, restored_at, evidence: [sources]}]; times are ISO UTC or null.
nlohmann::json to_json(const LayerRecovery& recovery);

}  // namespace fabgate::pipeline
