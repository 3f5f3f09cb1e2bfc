#include "gates/pipeline/reporting/layer_recovery.h"

#include <algorithm>
#include <map>
#include <set>

#include "adapters/core/foreign_json.h"
#include "gates/compare/rule_set.h"

namespace fabgate::pipeline {
namespace {

// Layers in the order a fabric recovers; any other layer the evidence names follows them.
const std::vector<std::string>& layer_order() {
  static const std::vector<std::string> order = {
      "link",    "bfd",       "bgp",  "control-plane", "evpn",       "forwarding",
      "overlay", "transport", "rdma", "telemetry",     "monitoring", "workload"};
  return order;
}

std::string phase_source(const std::string& phase) {
  if (phase == "baseline") return "baseline probes";
  if (phase == "acceptance") return "acceptance probes";
  if (phase == "restored") return "probes after rollback";
  if (phase == "during") return "continuous probe";
  if (phase == "rollback") return "telemetry through the rollback";
  if (phase == "post-compare") return "post-change snapshot vs pre";
  if (phase == "restored-compare") return "restored snapshot vs pre";
  return phase;
}

const GateRecord* gate_for_phase(const RunOutcome& outcome, const std::string& phase) {
  static const std::map<std::string, std::string> gates = {
      {"baseline", "baseline-probes"},    {"acceptance", "acceptance"},
      {"restored", "restored-probes"},    {"during", "disruption"},
      {"post-compare", "compare"},        {"restored-compare", "compare-restored"},
      {"rollback", "telemetry-restored"},
  };
  auto mapped = gates.find(phase);
  const std::string& name = mapped == gates.end() ? phase : mapped->second;
  for (const auto& gate : outcome.gates)
    if (gate.name == name) return &gate;
  return nullptr;
}

struct Timeline {
  std::vector<LayerObservation> observations;
  std::optional<TimePoint> baseline_reference;
};

// When the `which` snapshot ("pre" or "post") of the comparison written as "<label>-vs-pre" was
// taken.
std::optional<TimePoint> comparison_taken(const std::vector<ComparisonInput>& comparisons,
                                          const std::string& label, const char* which) {
  for (const auto& comparison : comparisons)
    if (comparison.document && comparison.json_link.find(label + "-vs-pre") != std::string::npos)
      if (comparison.document->contains(which))
        return time_member(comparison.document->at(which), "taken_at");
  return std::nullopt;
}

// The continuous probes of `layer`: the layer was seen good while one sampled, bad from each
// flow's interruption's start, good again at its end unless it was still going on. Returns
// whether any observation was added. The watch report is a foreign document: a field of another
// type adds nothing.
bool add_continuous_probe(const RunOutcome& outcome, const std::string& layer,
                          const std::string& verdict, Timeline& timeline) {
  std::size_t before = timeline.observations.size();
  for (const auto& probe : outcome.probes) {
    if (probe.phase != "during" || probe.layer != layer) continue;
    const auto& detail = probe.detail;
    const nlohmann::json* flows = array_member(detail, "flows");
    // Sampling counts as good from the start only if replies came back at all.
    double received = 0;
    if (flows)
      for (const auto& flow : *flows)
        received += number_member(flow, "samples_received").value_or(0);
    auto started = time_member(detail, "started_at");
    if (started && received > 0)
      timeline.observations.push_back({*started, "pass", "continuous probe"});
    std::optional<TimePoint> first_gap;
    if (flows)
      for (const auto& flow : *flows) {
        const nlohmann::json* gap = object_member(flow, "longest_interruption");
        if (!gap) continue;
        auto gap_start = time_member(*gap, "started_at");
        if (!gap_start) continue;
        const std::string port = member_text(flow, "src_port");
        timeline.observations.push_back(
            {*gap_start, "fail", "continuous probe: flow " + port + " lost"});
        if (!first_gap || *gap_start < *first_gap) first_gap = gap_start;
        // Back at the interruption's end: unknown when it was still going on or its length is
        // not a whole number of milliseconds.
        auto length_ms = integer_member(*gap, "length_ms");
        if (!bool_member(*gap, "ongoing").value_or(false) && length_ms)
          timeline.observations.push_back({*gap_start + Duration{*length_ms}, "pass",
                                           "continuous probe: flow " + port + " back"});
      }
    auto ended = time_member(detail, "ended_at");
    if (verdict != "pass" && !first_gap)
      timeline.observations.push_back(
          {ended.value_or(probe.started + probe.duration), verdict, "continuous probe"});
    else if (verdict == "pass" && ended)
      timeline.observations.push_back({*ended, "pass", "continuous probe"});
  }
  return timeline.observations.size() > before;
}

// Every layer verdict the run recorded (outcome.layers, phase -> layer -> verdict), placed at
// the time its own evidence was taken: a probe's end, a snapshot's taken_at, a continuous
// probe's interruptions; the end of the phase's gate only when nothing more precise exists.
std::map<std::string, Timeline> timelines(const RunOutcome& outcome,
                                          const std::vector<ComparisonInput>& comparisons) {
  std::map<std::string, Timeline> layers;
  for (const auto& layer : compare::kLayers) layers[std::string(compare::to_string(layer))];
  for (const auto& probe : outcome.probes) layers[probe.layer];

  if (!outcome.layers.is_object()) return layers;
  for (auto phase = outcome.layers.begin(); phase != outcome.layers.end(); ++phase) {
    if (!phase->is_object()) continue;
    for (auto entry = phase->begin(); entry != phase->end(); ++entry) {
      const std::string& layer = entry.key();
      std::string verdict = entry->is_string() ? entry->get<std::string>() : "no-evidence";
      if (verdict == "waived") verdict = "pass";
      auto& timeline = layers[layer];
      const std::string& name = phase.key();
      std::optional<TimePoint> at;
      if (name.size() > 8 && name.compare(name.size() - 8, 8, "-compare") == 0) {
        std::string label = name.substr(0, name.size() - 8);
        at = comparison_taken(comparisons, label, "post");
        if (auto pre = comparison_taken(comparisons, label, "pre"))
          timeline.baseline_reference = pre;
      } else if (name == "during") {
        if (add_continuous_probe(outcome, layer, verdict, timeline)) continue;
      } else {
        for (const auto& probe : outcome.probes)
          if (probe.phase == name && probe.layer == layer) {
            TimePoint end = probe.started + probe.duration;
            if (!at || end > *at) at = end;
          }
      }
      if (!at)
        if (const GateRecord* gate = gate_for_phase(outcome, name))
          at = gate->started + gate->duration;
      if (!at) continue;
      timeline.observations.push_back({*at, verdict, phase_source(name)});
    }
  }
  for (auto& [name, timeline] : layers)
    std::stable_sort(
        timeline.observations.begin(), timeline.observations.end(),
        [](const LayerObservation& a, const LayerObservation& b) { return a.at < b.at; });
  return layers;
}

LayerRecord record_of(const std::string& layer, Timeline timeline) {
  LayerRecord record;
  record.layer = layer;
  record.observations = std::move(timeline.observations);
  record.baseline_reference = timeline.baseline_reference;
  const auto& all = record.observations;
  std::set<std::string> sources;
  for (const auto& observation : all) sources.insert(observation.source);
  record.evidence.assign(sources.begin(), sources.end());

  auto bad = [](const LayerObservation& observation) { return !observation.passed(); };
  auto first_bad = std::find_if(all.begin(), all.end(), bad);
  for (auto it = all.begin(); it != first_bad; ++it) record.last_good = it->at;
  if (std::none_of(all.begin(), all.end(),
                   [](const LayerObservation& o) { return o.verdict != "no-evidence"; })) {
    record.status = LayerStatus::no_evidence;
    return record;
  }
  if (first_bad == all.end()) {
    record.status = LayerStatus::held;
    return record;
  }
  record.failed = *first_bad;
  auto last_bad = std::find_if(all.rbegin(), all.rend(), bad).base();  // one past it
  if (last_bad != all.end()) {
    record.restored = last_bad->at;
    record.status = LayerStatus::restored;
  } else {
    record.status =
        first_bad->verdict == "no-evidence" ? LayerStatus::not_proven : LayerStatus::not_restored;
  }
  return record;
}

}  // namespace

std::string_view to_string(LayerStatus status) {
  switch (status) {
    case LayerStatus::held:
      return "held";
    case LayerStatus::restored:
      return "restored";
    case LayerStatus::not_restored:
      return "NOT RESTORED";
    case LayerStatus::not_proven:
      return "NOT PROVEN";
    case LayerStatus::no_evidence:
      return "no evidence";
  }
  return "no evidence";
}

LayerRecovery compute_layer_recovery(const RunOutcome& outcome,
                                     const std::vector<ComparisonInput>& comparisons) {
  auto layers = timelines(outcome, comparisons);
  LayerRecovery recovery;
  for (const auto& name : layer_order()) {
    auto found = layers.find(name);
    if (found == layers.end()) continue;
    recovery.layers.push_back(record_of(name, std::move(found->second)));
    layers.erase(found);
  }
  for (auto& [name, timeline] : layers)
    recovery.layers.push_back(record_of(name, std::move(timeline)));
  return recovery;
}

nlohmann::json to_json(const LayerRecovery& recovery) {
  auto when = [](const std::optional<TimePoint>& t) {
    return t ? nlohmann::json(format_utc(*t)) : nlohmann::json(nullptr);
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& layer : recovery.layers)
    out.push_back(
        {{"layer", layer.layer},
         {"status", to_string(layer.status)},
         {"last_good", when(layer.last_good)},
         {"failed_at", when(layer.failed ? std::optional(layer.failed->at) : std::nullopt)},
         {"failed_verdict", layer.failed ? layer.failed->verdict : ""},
         {"failed_by", layer.failed ? layer.failed->source : ""},
         {"restored_at", when(layer.restored)},
         {"evidence", layer.evidence}});
  return out;
}

}  // namespace fabgate::pipeline
