#include "gates/pipeline/report_html.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "adapters/core/build_info.h"
#include "adapters/core/shorten.h"
#include "adapters/core/text.h"
#include "gates/compare/exception_register.h"
#include "gates/compare/rule_set.h"
#include "gates/pipeline/change_listing.h"
#include "gates/pipeline/plan_digest.h"

namespace fabgate::pipeline {
namespace {

// ---- values --------------------------------------------------------------------------------

// Turns a value into page text: redacted first (a secret cut in half or escaped would no longer
// match), then shortened at a phrase or word boundary (shorten()), then escaped.
class Text {
 public:
  Text(const Redactor& redactor, const ReportHtmlLimits& limits)
      : redactor_(redactor), limits_(limits) {}
  std::string operator()(std::string_view value) const { return cut(value, limits_.value_chars); }
  std::string whole(std::string_view value) const { return cut(value, std::string::npos); }
  std::string cut(std::string_view value, std::size_t chars) const {
    std::string text = redactor_.redact(value);
    if (chars != std::string::npos) text = shorten(text, chars);
    return html_escape(text);
  }
  // A JSON value as one line: strings as they are, anything else serialised.
  std::string json(const nlohmann::json& value) const {
    if (value.is_null()) return "<em>(absent)</em>";
    if (value.is_string()) return (*this)(value.get<std::string>());
    return (*this)(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  const ReportHtmlLimits& limits() const { return limits_; }

 private:
  const Redactor& redactor_;
  const ReportHtmlLimits& limits_;
};

std::string str(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

std::optional<TimePoint> time_of(const nlohmann::json& object, const char* key) {
  std::string text = str(object, key);
  if (text.empty()) return std::nullopt;
  return parse_iso8601(text);
}

std::string fixed(double value, int precision) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(precision);
  out << value;
  return out.str();
}

std::string seconds(Duration duration) {
  return fixed(duration.count() / 1000.0, 2) + " s";
}

// "02:14:05.123" of an ISO time: the page's axis is one run, so the date is said once.
std::string clock_of(TimePoint when) {
  return format_utc(when).substr(11, 12);
}

std::string verdict_class(std::string_view verdict) {
  if (verdict == "pass" || verdict == "waived") return "pass";
  if (verdict == "fail") return "fail";
  if (verdict == "skipped") return "skip";
  return "noev";
}

std::string verdict_label(std::string_view verdict) {
  if (verdict == "fail") return "FAIL";
  if (verdict == "no-evidence") return "NO EVIDENCE";
  return std::string(verdict);
}

std::string badge(std::string_view verdict) {
  return "<span class=\"badge " + verdict_class(verdict) + "\">" +
         html_escape(verdict_label(verdict)) + "</span>";
}

// ---- the time axis -------------------------------------------------------------------------

constexpr double kWidth = 1000;
constexpr double kLabel = 190;  // left column for row names
constexpr double kRight = 20;
constexpr double kRow = 22;
// Interruptions drawn per flow: a flapping path can record thousands; the raw file has them all.
constexpr std::size_t kMaxGapsPerFlow = 200;
constexpr double kTop = 40;  // room for the first-failure label and the tick labels

struct Axis {
  TimePoint start;
  TimePoint end;
  double x(TimePoint when) const {
    double span = std::max<double>(1, static_cast<double>((end - start).count()));
    double offset = static_cast<double>((when - start).count());
    return kLabel + std::clamp(offset / span, 0.0, 1.0) * (kWidth - kLabel - kRight);
  }
  std::string relative(TimePoint when) const {
    return "+" + fixed(static_cast<double>((when - start).count()) / 1000.0, 2) + " s";
  }
};

std::string svg_open(double height, const std::string& label) {
  return "<svg class=\"timeline\" viewBox=\"0 0 " + fixed(kWidth, 0) + " " + fixed(height, 0) +
         "\" width=\"100%\" role=\"img\" aria-label=\"" + html_escape(label) + "\">";
}

// Vertical grid lines with "+N s" labels at a step of 1, 2 or 5 times a power of ten.
std::string ticks(const Axis& axis, double bottom) {
  double span = std::max<double>(1, static_cast<double>((axis.end - axis.start).count()));
  double step = 1;
  for (double scale = 1; step * 10 < span; scale *= 10)
    for (double factor : {1.0, 2.0, 5.0}) {
      step = factor * scale;
      if (span / step <= 10) break;
    }
  std::ostringstream svg;
  for (double t = 0; t <= span + 0.5; t += step) {
    double x = kLabel + t / span * (kWidth - kLabel - kRight);
    svg << "<line class=\"grid\" x1=\"" << fixed(x, 1) << "\" y1=\"" << kTop - 6 << "\" x2=\""
        << fixed(x, 1) << "\" y2=\"" << fixed(bottom, 1) << "\"/>";
    bool at_edge = x > kWidth - kRight - 20;  // keep the last label inside the drawing
    svg << "<text class=\"tick" << (at_edge ? " left" : "") << "\" x=\"" << fixed(x, 1) << "\" y=\""
        << kTop - 10 << "\">+"
        << (step >= 1000 ? fixed(t / 1000.0, step >= 10000 ? 0 : 1) + " s" : fixed(t, 0) + " ms")
        << "</text>";
  }
  return svg.str();
}

// ---- per-layer recovery ---------------------------------------------------------------------

struct Observation {
  TimePoint at;
  std::string verdict;  // pass, fail, no-evidence
  std::string source;   // "acceptance probes", "post-change comparison", ...
};

bool bad(const Observation& observation) {
  return observation.verdict != "pass";
}

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

struct LayerTimeline {
  std::vector<Observation> observations;        // sorted by time
  std::optional<TimePoint> baseline_reference;  // the pre snapshot compared against
};

// Every layer verdict the run recorded (outcome.layers, phase -> layer -> verdict), placed at
// the time its own evidence was taken: a probe's end, a snapshot's taken_at, a continuous
// probe's interruptions; the end of the phase's gate only when nothing more precise exists.
std::map<std::string, LayerTimeline> layer_timelines(const ReportHtmlInput& input) {
  const RunOutcome& outcome = input.outcome;
  std::map<std::string, LayerTimeline> layers;
  for (const auto& layer : compare::kLayers) layers[std::string(compare::to_string(layer))];
  for (const auto& probe : outcome.probes) layers[probe.layer];

  auto comparison_taken = [&](const std::string& label, const char* which) {
    for (const auto& comparison : input.comparisons)
      if (comparison.document && comparison.json_link.find(label + "-vs-pre") != std::string::npos)
        if (comparison.document->contains(which))
          return time_of(comparison.document->at(which), "taken_at");
    return std::optional<TimePoint>();
  };

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
        at = comparison_taken(label, "post");
        if (auto pre = comparison_taken(label, "pre")) timeline.baseline_reference = pre;
      } else if (name == "during") {
        std::size_t before = timeline.observations.size();
        // The continuous probe: forwarding was seen good while it sampled, bad from each
        // interruption's start, good again at its end unless it was still going on.
        for (const auto& probe : outcome.probes) {
          if (probe.phase != "during" || probe.layer != layer) continue;
          const auto& detail = probe.detail;
          // Sampling counts as good from the start only if replies came back at all.
          double received = 0;
          if (detail.contains("flows") && detail["flows"].is_array())
            for (const auto& flow : detail["flows"])
              if (flow.is_object()) received += flow.value("samples_received", 0.0);
          auto started = time_of(detail, "started_at");
          if (started && received > 0)
            timeline.observations.push_back({*started, "pass", "continuous probe"});
          std::optional<TimePoint> first_gap;
          if (detail.contains("flows") && detail["flows"].is_array())
            for (const auto& flow : detail["flows"]) {
              const auto& gap = flow.contains("longest_interruption") ? flow["longest_interruption"]
                                                                      : nlohmann::json();
              auto gap_start = time_of(gap, "started_at");
              if (!gap_start) continue;
              timeline.observations.push_back(
                  {*gap_start, "fail",
                   "continuous probe: flow " + str(flow, "src_port") + " lost"});
              if (!first_gap || *gap_start < *first_gap) first_gap = gap_start;
              if (!gap.value("ongoing", false))
                timeline.observations.push_back(
                    {*gap_start + Duration{gap.value("length_ms", 0)}, "pass",
                     "continuous probe: flow " + str(flow, "src_port") + " back"});
            }
          auto ended = time_of(detail, "ended_at");
          if (verdict != "pass" && !first_gap)
            timeline.observations.push_back(
                {ended.value_or(probe.started + probe.duration), verdict, "continuous probe"});
          else if (verdict == "pass" && ended)
            timeline.observations.push_back({*ended, "pass", "continuous probe"});
        }
        if (timeline.observations.size() > before) continue;
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
    std::stable_sort(timeline.observations.begin(), timeline.observations.end(),
                     [](const Observation& a, const Observation& b) { return a.at < b.at; });
  return layers;
}

std::vector<std::string> ordered_layers(const std::map<std::string, LayerTimeline>& layers) {
  std::vector<std::string> names;
  for (const auto& name : layer_order())
    if (layers.count(name)) names.push_back(name);
  for (const auto& [name, timeline] : layers)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}

struct LayerStatus {
  std::string word;  // held, restored, NOT RESTORED, no evidence
  std::string css;
  std::optional<TimePoint> last_good;  // last pass before the first failure (or last pass)
  std::optional<Observation> failed;   // the first failing observation
  std::optional<TimePoint> restored;   // first pass after the last failing observation
};

LayerStatus status_of(const LayerTimeline& timeline) {
  LayerStatus status;
  const auto& all = timeline.observations;
  auto first_bad = std::find_if(all.begin(), all.end(), bad);
  for (auto it = all.begin(); it != first_bad; ++it) status.last_good = it->at;
  if (all.empty() || std::none_of(all.begin(), all.end(), [](const Observation& o) {
        return o.verdict != "no-evidence";
      })) {
    status.word = "no evidence";
    status.css = "noev";
    return status;
  }
  if (first_bad == all.end()) {
    status.word = "held";
    status.css = "pass";
    return status;
  }
  status.failed = *first_bad;
  auto last_bad = std::find_if(all.rbegin(), all.rend(), bad).base();  // one past it
  if (last_bad != all.end()) {
    status.restored = last_bad->at;
    status.word = "restored";
    status.css = "pass";
  } else {
    status.word = first_bad->verdict == "no-evidence" ? "NOT PROVEN" : "NOT RESTORED";
    status.css = first_bad->verdict == "no-evidence" ? "noev" : "fail";
  }
  return status;
}

std::string layer_svg(const std::vector<std::string>& names,
                      const std::map<std::string, LayerTimeline>& layers, const Axis& axis) {
  double height = kTop + kRow * static_cast<double>(names.size()) + 8;
  std::ostringstream svg;
  svg << svg_open(height, "recovery timeline per layer") << ticks(axis, height - 4);
  double y = kTop;
  for (const auto& name : names) {
    const auto& timeline = layers.at(name);
    const auto& all = timeline.observations;
    double mid = y + kRow / 2;
    svg << "<text class=\"row\" x=\"4\" y=\"" << fixed(mid + 4, 1) << "\">" << html_escape(name)
        << "</text>";
    LayerStatus status = status_of(timeline);
    if (status.word == "no evidence") {
      // Never drawn as health: the whole row hatched, in words.
      svg << "<rect class=\"noev\" x=\"" << kLabel << "\" y=\"" << fixed(y + 5, 1) << "\" width=\""
          << kWidth - kLabel - kRight << "\" height=\"" << kRow - 10
          << "\"><title>no evidence for this layer in this run</title></rect>"
          << "<text class=\"inbar\" x=\"" << kLabel + 6 << "\" y=\"" << fixed(mid + 4, 1)
          << "\">no evidence</text>";
    } else {
      for (std::size_t i = 0; i + 1 <= all.size(); ++i) {
        double from = axis.x(all[i].at);
        bool last = i + 1 == all.size();
        if (last && !bad(all[i])) break;  // health is not extended past its evidence
        double to = last ? kWidth - kRight : axis.x(all[i + 1].at);
        std::string css = !bad(all[i])               ? (bad(all[i + 1]) ? "gap" : "pass")
                          : all[i].verdict == "fail" ? "fail"
                                                     : "noev";
        svg << "<rect class=\"" << css << "\" x=\"" << fixed(from, 1) << "\" y=\""
            << fixed(y + (css == "gap" ? 9 : 6), 1) << "\" width=\""
            << fixed(std::max(1.0, to - from), 1) << "\" height=\"" << (css == "gap" ? 4 : 10)
            << "\"/>";
      }
      if (timeline.baseline_reference)
        svg << "<path class=\"ref\" d=\"M" << fixed(axis.x(*timeline.baseline_reference), 1) << " "
            << fixed(mid - 6, 1) << " l5 6 l-5 6 l-5 -6 z\"><title>pre-change snapshot "
            << clock_of(*timeline.baseline_reference)
            << ": the baseline compared against</title></path>";
      for (const auto& observation : all)
        svg << "<circle class=\"" << verdict_class(observation.verdict) << " dot\" cx=\""
            << fixed(axis.x(observation.at), 1) << "\" cy=\"" << fixed(mid, 1)
            << "\" r=\"4.5\"><title>" << html_escape(observation.source) << ": "
            << html_escape(observation.verdict) << " at " << clock_of(observation.at)
            << "</title></circle>";
      if (status.word == "NOT RESTORED" || status.word == "NOT PROVEN")
        svg << "<text class=\"inbar alarm\" x=\"" << kWidth - kRight - 4 << "\" y=\""
            << fixed(mid - 6, 1) << "\">" << status.word << "</text>";
    }
    y += kRow;
  }
  svg << "</svg>";
  return svg.str();
}

// ---- sections -------------------------------------------------------------------------------

std::string verdict_words(Mode mode, ExitCode code) {
  switch (code) {
    case ExitCode::accepted:
      return mode == Mode::plan ? "PLAN READY: every read-only gate passed; nothing was touched"
             : mode == Mode::rehearse ? "REHEARSAL PASSED: the change was accepted, then rolled "
                                        "back, and the baseline was verified"
                                      : "ACCEPTED: the change is in place and verified";
    case ExitCode::refused:
      return "REFUSED before any change: a pre-change gate failed or had no evidence; nothing was "
             "touched";
    case ExitCode::rolled_back:
      return "ROLLED BACK: the change failed and was rolled back; the baseline was verified";
    case ExitCode::not_restored:
      return "NOT RESTORED: the rollback failed or the baseline was not verified; a human must "
             "act now";
    case ExitCode::invalid_input:
      return "INVALID INPUT";
    case ExitCode::internal_error:
      return "INTERNAL ERROR";
  }
  return "";
}

std::string verdict_css(ExitCode code) {
  switch (code) {
    case ExitCode::accepted:
      return "pass";
    case ExitCode::rolled_back:
      return "warn";
    default:
      return "fail";
  }
}

const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
.verdict{padding:12px 16px;border-radius:6px;font-size:17px;font-weight:600;margin:12px 0;color:#fff}
.verdict.pass{background:#2e7d32}.verdict.warn{background:#e65100}.verdict.fail{background:#b71c1c}
dl.facts{display:grid;grid-template-columns:200px 1fr;gap:2px 12px;margin:8px 0}
dl.facts dt{color:#555}dl.facts dd{margin:0;word-break:break-word}
table{border-collapse:collapse;margin:6px 0;width:100%;background:#fff}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top;word-break:break-word}
th{background:#f0f0f0;white-space:nowrap}.nw{white-space:nowrap}
code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.badge{display:inline-block;padding:0 6px;border-radius:3px;font-size:12px;font-weight:600;color:#fff}
.badge.pass{background:#2e7d32}.badge.fail{background:#c62828}.badge.noev{background:#616161}
.badge.skip{background:#bdbdbd;color:#222}
svg.timeline{background:#fff;border:1px solid #ddd;margin:6px 0}
svg .grid{stroke:#e0e0e0;stroke-width:1}svg .tick{font-size:11px;fill:#666;text-anchor:middle}svg .tick.left{text-anchor:end}
svg .row{font-size:12.5px;fill:#222}svg .inbar{font-size:11.5px;fill:#222}
svg .left{text-anchor:end}svg .alarm{text-anchor:end;font-weight:700;fill:#b71c1c}
svg .pass{fill:#2e7d32}svg .fail{fill:#c62828}svg .noev{fill:url(#fg-hatch);stroke:#424242;stroke-width:1}
svg .skip{fill:#e0e0e0;stroke:#9e9e9e;stroke-dasharray:3 2}svg .gap{fill:#ffb300}
svg .dot{stroke:#fff;stroke-width:1.5}svg .ref{fill:#1565c0}
svg .first{stroke:#b71c1c;stroke-width:1.5;stroke-dasharray:4 3}svg .firsttext{font-size:11.5px;fill:#b71c1c;font-weight:700}
.legend span{margin-right:14px}.swatch{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle}
.muted{color:#666}details{margin:4px 0}summary{cursor:pointer}
)";

// Patterns the SVGs share: a hatch for "no evidence", which must never read as green.
const char* kDefs =
    R"x(<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>)x"
    R"x(<pattern id="fg-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">)x"
    R"x(<rect width="6" height="6" fill="#eeeeee"/><rect width="3" height="6" fill="#9e9e9e"/></pattern>)x"
    R"x(</defs></svg>)x";

std::string page_open(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'; img-src data:\">"
         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
         "<title>" +
         title + "</title><style>" + kStyle + "</style></head><body>" + kDefs + "<main>\n";
}

std::string legend() {
  return "<p class=\"legend muted\"><span><i class=\"swatch\" style=\"background:#2e7d32\"></i>"
         "pass</span><span><i class=\"swatch\" style=\"background:#c62828\"></i>fail</span>"
         "<span><svg width=\"14\" height=\"10\"><rect width=\"14\" height=\"10\" "
         "fill=\"url(#fg-hatch)\"/></svg> no evidence (never health)</span><span><i "
         "class=\"swatch\" style=\"background:#ffb300\"></i>between a good and a bad "
         "check</span><span><i class=\"swatch\" style=\"background:#1565c0\"></i>baseline "
         "snapshot</span></p>\n";
}

Axis axis_of(const ReportHtmlInput& input, const std::map<std::string, LayerTimeline>& layers) {
  std::optional<TimePoint> start, end;
  auto widen = [&](TimePoint t) {
    if (!start || t < *start) start = t;
    if (!end || t > *end) end = t;
  };
  for (const auto& gate : input.outcome.gates) {
    widen(gate.started);
    widen(gate.started + gate.duration);
  }
  for (const auto& probe : input.outcome.probes) {
    widen(probe.started);
    widen(probe.started + probe.duration);
  }
  for (const auto& [name, timeline] : layers) {
    for (const auto& observation : timeline.observations) widen(observation.at);
    if (timeline.baseline_reference) widen(*timeline.baseline_reference);
  }
  if (!start) start = end = now_utc();
  if (*end <= *start) end = *start + Duration{1};
  return {*start, *end};
}

void header(std::ostringstream& html, const ReportHtmlInput& input, const Text& text) {
  const auto& context = input.context;
  const auto& outcome = input.outcome;
  html << "<h1>fabgate " << to_string(context.mode) << ": " << text(context.change.id) << " — "
       << text(context.change.title) << "</h1>\n";
  html << "<div class=\"verdict " << verdict_css(outcome.exit_code) << "\">"
       << html_escape(verdict_words(context.mode, outcome.exit_code)) << " (exit "
       << to_int(outcome.exit_code) << ")</div>\n<dl class=\"facts\">";
  auto fact = [&](const std::string& name, const std::string& value) {
    html << "<dt>" << name << "</dt><dd>" << value << "</dd>";
  };
  fact("exit code", std::to_string(to_int(outcome.exit_code)));
  fact("devices left", text.whole(outcome.device_state));
  fact("first disproven hypothesis",
       outcome.first_disproven.empty() ? "none" : text.whole(outcome.first_disproven));
  for (const auto& line : outcome.diagnosis) fact("diagnosis", text.whole(line));
  if (outcome.detection_to_restore)
    fact("failure detected to baseline verified", seconds(*outcome.detection_to_restore));
  fact("change", text(context.change.id) + " — " + text(context.change.title) + " (<code>" +
                     text(context.change.file) + "</code>)");
  fact("intent commit", "<code>" + text(context.repository.commit.id) + "</code> by " +
                            text(context.repository.commit.author_name));
  fact("plan digest", "<code>" + text(plan_digest(context.repository, context.change)) + "</code>");
  fact("operator", text(context.operator_name));
  fact("run", text(context.run_id) + ", fabgate " + html_escape(tool_version()) + " (" +
                  html_escape(build_commit()) + ")");
  fact("targets", text.whole(join(context.change.targets, ", ")));
  html << "</dl>\n<h3>Approvals</h3>\n";
  if (outcome.approvals.empty()) {
    html << "<p class=\"muted\">"
         << (context.mode == Mode::plan ? "plan: approvals are proven at apply"
                                        : "no approval file was given")
         << "</p>\n";
  } else {
    html << "<table><tr><th>signer</th><th>key fingerprint</th><th>approved at</th>"
            "<th>outcome</th><th>counted</th><th>copy in bundle</th></tr>";
    for (const auto& approval : outcome.approvals)
      html << "<tr><td>" << text(approval.approver.empty() ? approval.file : approval.approver)
           << "</td><td><code>" << (approval.key.empty() ? "(not verified)" : text(approval.key))
           << "</code></td><td>" << text(approval.approved_at) << "</td><td>"
           << text(approval.outcome)
           << (approval.reason.empty() ? "" : ": " + text(approval.reason)) << "</td><td>"
           << (approval.counted ? "yes" : "no") << "</td><td>"
           << (approval.bundle_copy.empty() ? std::string("not copied")
                                            : "<a href=\"" + text(approval.bundle_copy) + "\">" +
                                                  text(approval.bundle_copy) + "</a>")
           << "</td></tr>";
    html << "</table>\n";
  }
}

void gate_timeline(std::ostringstream& html, const ReportHtmlInput& input, const Axis& axis) {
  const auto& gates = input.outcome.gates;
  html << "<h2>Gate timeline</h2>\n<p class=\"muted\">One bar per gate on a shared time axis "
          "from "
       << html_escape(format_utc(axis.start)) << " (UTC); the dashed line marks the first "
       << "failure.</p>\n"
       << legend();
  double height = kTop + kRow * static_cast<double>(gates.size()) + 8;
  std::ostringstream svg;
  svg << svg_open(height, "gate timeline") << ticks(axis, height - 4);
  double y = kTop;
  bool first_marked = false;
  std::ostringstream marker;
  for (const auto& gate : gates) {
    std::string verdict(to_string(gate.verdict));
    double from = axis.x(gate.started);
    double to = axis.x(gate.started + gate.duration);
    double width = std::max(3.0, to - from);
    svg << "<text class=\"row\" x=\"4\" y=\"" << fixed(y + kRow / 2 + 4, 1) << "\">"
        << html_escape(gate.name) << "</text>";
    svg << "<rect class=\"" << verdict_class(verdict) << "\" x=\"" << fixed(from, 1) << "\" y=\""
        << fixed(y + 4, 1) << "\" width=\"" << fixed(width, 1) << "\" height=\"" << kRow - 8
        << "\"><title>" << html_escape(gate.name) << ": " << verdict << ", "
        << seconds(gate.duration) << "</title></rect>";
    std::string label = verdict_label(verdict) + " · " + seconds(gate.duration);
    bool room_right = from + width + 8 + 7.0 * static_cast<double>(label.size()) < kWidth - kRight;
    svg << "<text class=\"inbar" << (room_right ? "" : " left") << "\" x=\""
        << fixed(room_right ? from + width + 5 : from - 5, 1) << "\" y=\""
        << fixed(y + kRow / 2 + 4, 1) << "\">" << html_escape(label) << "</text>";
    if (!first_marked && blocks(gate.verdict)) {
      // Drawn after every bar, labelled above the axis, so no bar hides it.
      first_marked = true;
      double x = axis.x(gate.started + gate.duration);
      bool left = x > kWidth - 200;
      marker << "<line class=\"first\" x1=\"" << fixed(x, 1) << "\" y1=\"16\" x2=\"" << fixed(x, 1)
             << "\" y2=\"" << fixed(height - 4, 1) << "\"/><text class=\"firsttext"
             << (left ? " left" : "") << "\" x=\"" << fixed(left ? x - 4 : x + 4, 1)
             << "\" y=\"13\">first failure: " << html_escape(gate.name) << "</text>";
    }
    y += kRow;
  }
  svg << marker.str();
  svg << "</svg>\n";
  html << svg.str();
}

void gate_table(std::ostringstream& html, const ReportHtmlInput& input, const Axis& axis,
                const Text& text) {
  const auto& gates = input.outcome.gates;
  html << "<h2>Gates</h2>\n<table><tr><th>#</th><th>gate</th><th>verdict</th><th>started</"
          "th><th>duration</th>"
          "<th>summary</th></tr>";
  int n = 0;
  for (const auto& gate : gates) {
    html << "<tr><td class=\"nw\">" << ++n << "</td><td class=\"nw\">" << html_escape(gate.name)
         << "</td><td class=\"nw\">" << badge(to_string(gate.verdict))
         << "</td><td class=\"mono nw\">" << axis.relative(gate.started) << "</td><td class=\"nw\">"
         << seconds(gate.duration) << "</td><td>" << text.whole(gate.summary);
    if (!gate.details.empty()) {
      html << "<details" << (blocks(gate.verdict) ? " open" : "") << "><summary>"
           << gate.details.size() << " detail line" << (gate.details.size() == 1 ? "" : "s")
           << "</summary><ul>";
      std::size_t shown = 0;
      for (const auto& detail : gate.details) {
        if (++shown > text.limits().entries_per_rule) {
          html << "<li class=\"muted\">… " << gate.details.size() - shown + 1
               << " more in report.md</li>";
          break;
        }
        html << "<li>" << text(detail) << "</li>";
      }
      html << "</ul></details>";
    }
    html << "</td></tr>";
  }
  html << "</table>\n";
}

void layer_section(std::ostringstream& html, const std::vector<std::string>& names,
                   const std::map<std::string, LayerTimeline>& layers, const Axis& axis) {
  html << "<h2>Recovery by layer</h2>\n<p class=\"muted\">Each layer is proven only by its own "
          "checks, placed at the time its evidence was taken (probe end, snapshot time, "
          "continuous-probe interruptions). Link up is not workload recovery; a layer without "
          "evidence is hatched, never green.</p>\n"
       << layer_svg(names, layers, axis);
  html << "<table><tr><th>layer</th><th>status</th><th>last seen good</th><th>failed</th>"
          "<th>proven restored</th><th>evidence</th></tr>";
  for (const auto& name : names) {
    const auto& timeline = layers.at(name);
    LayerStatus status = status_of(timeline);
    auto when = [&](const std::optional<TimePoint>& t) {
      return t ? clock_of(*t) + " <span class=\"muted\">(" + axis.relative(*t) + ")</span>"
               : std::string("—");
    };
    std::set<std::string> sources;
    for (const auto& observation : timeline.observations) sources.insert(observation.source);
    std::vector<std::string> source_list(sources.begin(), sources.end());
    html << "<tr><td>" << html_escape(name) << "</td><td><span class=\"badge " << status.css
         << "\">" << html_escape(status.word) << "</span></td><td>" << when(status.last_good)
         << "</td><td>"
         << (status.failed ? when(status.failed->at) + " " +
                                 html_escape(status.failed->verdict + ": " + status.failed->source)
                           : std::string("—"))
         << "</td><td>"
         << (status.restored ? when(status.restored)
             : status.failed ? std::string("<strong>never</strong>")
                             : std::string("—"))
         << "</td><td>"
         << (source_list.empty() ? std::string("no check of this layer ran")
                                 : html_escape(join(source_list, ", ")))
         << "</td></tr>";
  }
  html << "</table>\n";
}

void disruption_section(std::ostringstream& html, const ReportHtmlInput& input, const Axis& axis,
                        const Text& text) {
  std::vector<const ProbeOutcome*> watches;
  for (const auto& probe : input.outcome.probes)
    if (probe.phase == "during") watches.push_back(&probe);
  if (watches.empty()) return;
  html << "<h2>Disruption during the change</h2>\n";
  for (const auto* watch : watches) {
    const auto& detail = watch->detail;
    html << "<p>" << badge(to_string(watch->verdict)) << " " << text.whole(watch->reason)
         << "</p>\n";
    // The watch's own stalls: spans it did not sample, no evidence either way and not an
    // outage of any path, so they are listed apart from the flows' interruptions.
    if (auto stalls = detail.find("stalls");
        detail.is_object() && stalls != detail.end() && stalls->is_array() && !stalls->empty()) {
      constexpr std::size_t kShownStalls = 5;
      html << "<p class=\"muted\">The sampler itself stalled (no evidence for these spans; not "
              "path outages): ";
      std::size_t shown_stalls = 0;
      for (const auto& stall : *stalls) {
        if (shown_stalls == kShownStalls) break;
        auto at = time_of(stall, "started_at");
        auto length = stall.find("length_ms");
        if (!at || length == stall.end() || !length->is_number_integer()) continue;
        html << (shown_stalls++ ? ", " : "") << clock_of(*at) << " for " << length->get<long long>()
             << " ms";
      }
      const auto count = detail.find("stall_count");
      if (count != detail.end() && count->is_number_integer() &&
          count->get<long long>() > static_cast<long long>(shown_stalls))
        html << " … " << count->get<long long>() << " in all (probes/during.json)";
      html << "</p>\n";
    }
    if (!detail.contains("flows") || !detail["flows"].is_array()) {
      html << "<p class=\"muted\">The continuous probe left no per-flow record (see "
              "probes/during.json).</p>\n";
      continue;
    }
    const auto& flows = detail["flows"];
    std::size_t shown = std::min(flows.size(), text.limits().table_rows);
    auto started = time_of(detail, "started_at");
    auto ended = time_of(detail, "ended_at");
    double height = kTop + kRow * static_cast<double>(shown) + 8;
    std::ostringstream svg;
    svg << svg_open(height, "continuous probe per flow") << ticks(axis, height - 4);
    double y = kTop;
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& flow = flows[i];
      svg << "<text class=\"row\" x=\"4\" y=\"" << fixed(y + kRow / 2 + 4, 1) << "\">flow "
          << text(str(flow, "src_port")) << "</text>";
      if (started && ended)
        svg << "<rect class=\"pass\" x=\"" << fixed(axis.x(*started), 1) << "\" y=\""
            << fixed(y + 9, 1) << "\" width=\""
            << fixed(std::max(1.0, axis.x(*ended) - axis.x(*started)), 1) << "\" height=\"4\"/>";
      std::vector<nlohmann::json> gaps;
      for (const auto& [key, value] : flow.items())
        if (value.is_array())
          for (const auto& item : value)
            if (item.is_object() && item.contains("started_at") && item.contains("length_ms") &&
                gaps.size() < kMaxGapsPerFlow)
              gaps.push_back(item);
      if (gaps.empty() && flow.contains("longest_interruption") &&
          flow["longest_interruption"].is_object())
        gaps.push_back(flow["longest_interruption"]);
      for (const auto& gap : gaps) {
        auto at = time_of(gap, "started_at");
        if (!at) continue;
        Duration length{gap.value("length_ms", 0)};
        double from = axis.x(*at);
        svg << "<rect class=\"fail\" x=\"" << fixed(from, 1) << "\" y=\"" << fixed(y + 4, 1)
            << "\" width=\"" << fixed(std::max(2.0, axis.x(*at + length) - from), 1)
            << "\" height=\"" << kRow - 8 << "\"><title>lost " << length.count() << " ms from "
            << clock_of(*at) << "</title></rect>";
      }
      y += kRow;
    }
    svg << "</svg>\n";
    html << svg.str();
    html << "<table><tr><th>flow</th><th>sent</th><th>received</th><th>loss</th>"
            "<th>interruptions</th><th>longest</th></tr>";
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& flow = flows[i];
      double sent = flow.value("samples_sent", 0.0);
      double received = flow.value("samples_received", 0.0);
      html << "<tr><td>" << text(str(flow, "src_port")) << "</td><td>"
           << text(str(flow, "samples_sent")) << "</td><td>" << text(str(flow, "samples_received"))
           << "</td><td>" << (sent > 0 ? fixed(100.0 * (sent - received) / sent, 2) + " %" : "—")
           << "</td><td>" << text(str(flow, "interruptions")) << "</td><td>"
           << text(str(flow, "longest_interruption_ms")) << " ms</td></tr>";
    }
    html << "</table>\n";
    if (flows.size() > shown)
      html << "<p class=\"muted\">… " << flows.size() - shown
           << " more flows in <a href=\"probes/during.json\">probes/during.json</a></p>\n";
  }
}

// The telemetry layer, one section per window (during the change, through the rollback):
// devices streamed, then every interface and BGP event at the device's timestamp, then the
// silences that made a device no-evidence.
void telemetry_section(std::ostringstream& html, const std::optional<TelemetryOutcome>& window,
                       const Text& text) {
  if (!window) return;
  const TelemetryOutcome& telemetry = *window;
  const bool rollback = telemetry.phase == "rollback";
  const std::string file = "telemetry/" + telemetry.phase + ".json";
  html << (rollback ? "<h2>Telemetry through the rollback (gNMI)</h2>\n<p>"
                    : "<h2>During-change telemetry (gNMI)</h2>\n<p>")
       << badge(to_string(telemetry.verdict)) << " " << text(telemetry.summary)
       << "</p>\n<p class=\"muted\">Interface state and BGP neighbours (session state, received "
          "prefixes) streamed every "
       << html_escape(format_duration(telemetry.interval)) << " from "
       << html_escape(format_utc(telemetry.window_start)) << " to "
       << html_escape(format_utc(telemetry.window_end));
  if (rollback && telemetry.rollback_started)
    html << "; the rollback began at " << html_escape(format_utc(*telemetry.rollback_started));
  html << "; event times are the devices' own timestamps; a silence longer than "
       << html_escape(format_duration(telemetry.max_gap))
       << " makes a device no-evidence unless carrier-transitions or established-transitions on "
          "both sides of it cover it"
       << (telemetry.flaps_judged ? "; a flap the change does not expect fails the window" : "")
       << ".</p>\n<table><tr><th>device</th><th>streamed as</th>"
          "<th>samples</th><th>first sample</th><th>last sample</th><th>verdict</th></tr>";
  for (const auto& device : telemetry.devices)
    html << "<tr><td>" << text(device.device) << "</td><td>" << text(device.why) << "</td><td>"
         << device.samples << "</td><td class=\"mono\">"
         << (device.samples ? format_device_time(device.first_ns) : "—")
         << "</td><td class=\"mono\">"
         << (device.samples ? format_device_time(device.last_ns) : "—") << "</td><td>"
         << badge(to_string(device.verdict)) << "</td></tr>";
  html << "</table>\n<table><tr><th>device time</th><th>device</th><th>interface or BGP "
          "neighbour</th><th>event</th></tr>";
  std::size_t rows = 0;
  for (const auto& device : telemetry.devices)
    for (const auto& event : device.events) {
      if (rows++ >= text.limits().table_rows) continue;
      html << "<tr><td class=\"mono\">" << format_device_time(event.timestamp_ns) << "</td><td>"
           << text(device.device) << "</td><td class=\"mono\">" << text(event_subject(event))
           << "</td><td>" << text(event.what + flap_note(telemetry, device.device, event))
           << "</td></tr>";
    }
  if (rows == 0)
    html << "<tr><td colspan=\"4\">No interface changed oper-status, no error or discard "
            "counter rose, and no BGP session or received-prefix count changed.</td></tr>";
  html << "</table>\n";
  if (rows > text.limits().table_rows)
    html << "<p class=\"muted\">… " << rows - text.limits().table_rows << " more events in " << file
         << "</p>\n";
  std::vector<std::string> notes;
  for (const auto& device : telemetry.devices) {
    if (!device.stream_failure.empty())
      notes.push_back(device.device + ": " + device.stream_failure);
    for (const auto& gap : device.gaps) notes.push_back(device.device + ": " + gap);
    for (const auto& gap : device.covered_gaps) notes.push_back(device.device + ": " + gap);
  }
  for (const auto& line : telemetry.not_streamed) notes.push_back("not streamed: " + line);
  if (!notes.empty()) {
    html << "<ul>";
    for (const auto& note : notes) html << "<li>" << text(note) << "</li>";
    html << "</ul>\n";
  }
  html << "<p class=\"muted\">The timeline per device is in <a href=\"" << file << "\">" << file
       << "</a>.</p>\n";
}

// A probe's per-flow or per-rank results: every array of objects in its JSON document, as a
// table of its scalar fields (nested values as one line).
void probe_detail_tables(std::ostringstream& html, const ProbeOutcome& probe, const Text& text) {
  if (!probe.detail.is_object()) return;
  for (const auto& [key, rows] : probe.detail.items()) {
    if (!rows.is_array() || rows.empty() || !rows.front().is_object()) continue;
    std::vector<std::string> columns;
    for (const auto& row : rows) {
      if (!row.is_object()) continue;
      for (const auto& [column, value] : row.items())
        if (std::find(columns.begin(), columns.end(), column) == columns.end() &&
            columns.size() < 10)
          columns.push_back(column);
      if (columns.size() >= 10) break;
    }
    std::size_t shown = std::min(rows.size(), text.limits().table_rows);
    html << "<details><summary>" << text(probe.name) << " (" << text(probe.phase)
         << "): " << rows.size() << " " << html_escape(key) << "</summary><table><tr>";
    for (const auto& column : columns) html << "<th>" << text(column) << "</th>";
    html << "</tr>";
    for (std::size_t i = 0; i < shown; ++i) {
      html << "<tr>";
      for (const auto& column : columns)
        html << "<td class=\"mono\">"
             << (rows[i].is_object() && rows[i].contains(column) ? text.json(rows[i][column])
                                                                 : std::string())
             << "</td>";
      html << "</tr>";
    }
    html << "</table>";
    if (rows.size() > shown)
      html << "<p class=\"muted\">… " << rows.size() - shown << " more in <a href=\"probes/"
           << text(probe.phase) << ".json\">probes/" << text(probe.phase) << ".json</a></p>";
    html << "</details>\n";
  }
}

void probes_section(std::ostringstream& html, const ReportHtmlInput& input, const Axis& axis,
                    const Text& text) {
  const auto& probes = input.outcome.probes;
  html << "<h2>Probes</h2>\n";
  if (probes.empty()) {
    html << "<p class=\"muted\">No probe ran in this run.</p>\n";
    return;
  }
  html << "<table><tr><th>phase</th><th>probe</th><th>layer</th><th>host</th><th>verdict</th>"
          "<th>started</th><th>duration</th><th>reason</th></tr>";
  for (const auto& probe : probes)
    html << "<tr><td>" << text(probe.phase) << "</td><td>" << text(probe.name) << "</td><td>"
         << text(probe.layer) << "</td><td>" << text(probe.host) << "</td><td>"
         << badge(to_string(probe.verdict))
         << (probe.waived_by.empty() ? "" : " waived by " + text(probe.waived_by))
         << "</td><td class=\"mono\">" << axis.relative(probe.started) << "</td><td>"
         << seconds(probe.duration) << "</td><td>" << text.whole(probe.reason) << "</td></tr>";
  html << "</table>\n";
  for (const auto& probe : probes)
    if (probe.phase != "during") probe_detail_tables(html, probe, text);
}

// What changed, named: per category its counts and first entries, as report.md lists them
// (change_listing.h), with a link to the full list the run wrote next to the comparison.
void changed_entries(std::ostringstream& html, const ComparisonInput& comparison,
                     const Text& text) {
  auto categories = changes_of(*comparison.document);
  if (categories.empty()) return;
  std::string full_list;
  const std::string& json = comparison.json_link;
  if (json.size() > 5 && json.compare(json.size() - 5, 5, ".json") == 0)
    full_list = json.substr(0, json.size() - 5) + "-changes.txt";
  html << "<h4>What changed</h4>\n";
  for (const auto& category : categories) {
    html << "<p><strong>" << text(category.name)
         << "</strong>: " << html_escape(change_counts(category)) << "</p>\n<ul>";
    std::size_t shown = 0;
    for (const auto& entry : category.entries) {
      if (shown++ == kChangesShownPerCategory) break;
      html << "<li><code>" << text(entry) << "</code></li>";
    }
    if (category.total() > std::min(shown, kChangesShownPerCategory)) {
      html << "<li class=\"muted\">and "
           << category.total() - std::min(shown, kChangesShownPerCategory) << " more";
      if (!full_list.empty())
        html << ", full list in <a href=\"" << text.whole(full_list) << "\">"
             << text.whole(full_list) << "</a>";
      html << "</li>";
    }
    html << "</ul>\n";
  }
}

// One comparison: unexpected differences first (fail, then no-evidence), grouped by rule with
// the first entries of each; waived, expected and passing checks folded, as counts.
void comparison_body(std::ostringstream& html, const ComparisonInput& comparison,
                     const Text& text) {
  const auto& limits = text.limits();
  const nlohmann::json& doc = *comparison.document;
  const auto& counts = doc.contains("counts") ? doc["counts"] : nlohmann::json::object();
  std::string verdict = str(doc, "verdict");
  html << "<p>" << badge(verdict.empty() ? "no-evidence" : verdict) << " "
       << text(str(counts, "total")) << " checks: " << text(str(counts, "pass")) << " pass, "
       << text(str(counts, "fail")) << " fail, " << text(str(counts, "no_evidence"))
       << " no evidence, " << text(str(counts, "waived")) << " waived";
  if (doc.contains("pre") && doc.contains("post"))
    html << " <span class=\"muted\">(pre taken " << text(str(doc["pre"], "taken_at"))
         << ", post taken " << text(str(doc["post"], "taken_at")) << ")</span>";
  html << "</p>\n";
  std::vector<std::string> links;
  for (const auto* link : {&comparison.json_link, &comparison.text_link})
    if (!link->empty())
      links.push_back("<a href=\"" + text.whole(*link) + "\">" + text.whole(*link) + "</a>");
  if (!links.empty()) html << "<p class=\"muted\">Every result: " << join(links, ", ") << "</p>\n";
  if (doc.contains("first_disproven") && doc["first_disproven"].is_object()) {
    const auto& first = doc["first_disproven"];
    html << "<p><strong>First disproven:</strong> " << text(str(first, "rule")) << " on "
         << text(str(first, "device")) << " at <code>" << text(str(first, "path"))
         << "</code>: " << text(str(first, "reason")) << "</p>\n";
  }

  struct Group {
    std::size_t count = 0;
    std::vector<const nlohmann::json*> first;
  };
  // kind -> rule -> group, rules in order of first appearance.
  std::map<std::string, std::vector<std::pair<std::string, Group>>> kinds;
  auto group_of = [&](const std::string& kind, const std::string& rule) -> Group& {
    auto& groups = kinds[kind];
    for (auto& [name, group] : groups)
      if (name == rule) return group;
    groups.emplace_back(rule, Group{});
    return groups.back().second;
  };
  if (doc.contains("results") && doc["results"].is_array())
    for (const auto& result : doc["results"]) {
      std::string result_verdict = str(result, "verdict");
      std::string kind = result_verdict == "fail"                       ? "fail"
                         : result_verdict == "no-evidence"              ? "no-evidence"
                         : result_verdict == "waived"                   ? "waived"
                         : str(result, "rule") == "expected-difference" ? "expected"
                                                                        : "pass";
      std::string rule = str(result, "rule_set") + "/" + str(result, "rule");
      Group& group = group_of(kind, rule);
      ++group.count;
      if (kind != "pass" && group.first.size() < limits.entries_per_rule)
        group.first.push_back(&result);
    }

  auto entries = [&](const std::string& kind, bool folded, const std::string& heading) {
    auto found = kinds.find(kind);
    if (found == kinds.end()) return;
    std::size_t total = 0;
    for (const auto& [rule, group] : found->second) total += group.count;
    html << (folded ? "<details><summary>" : "<h3>") << html_escape(heading) << " (" << total << ")"
         << (folded ? "</summary>" : "</h3>") << "\n";
    std::size_t rules_shown = 0;
    for (const auto& [rule, group] : found->second) {
      if (++rules_shown > limits.rules) {
        html << "<p class=\"muted\">… " << found->second.size() - limits.rules
             << " more rules in the raw files</p>";
        break;
      }
      html << "<p><code>" << text(rule) << "</code>: " << group.count << " element"
           << (group.count == 1 ? "" : "s") << "</p>";
      if (group.first.empty()) continue;
      html << "<table><tr><th>device</th><th>path</th><th>pre</th><th>post</th><th>reason</th>"
              "</tr>";
      for (const auto* result : group.first) {
        html << "<tr><td>" << text(str(*result, "device")) << "</td><td class=\"mono\">"
             << text(str(*result, "path")) << "</td><td class=\"mono\">"
             << text.json(result->value("pre", nlohmann::json())) << "</td><td class=\"mono\">"
             << text.json(result->value("post", nlohmann::json())) << "</td><td>"
             << text(str(*result, "reason"));
        if (result->contains("exception"))
          html << " (waived by " << text(str(*result, "exception")) << ")";
        if (result->contains("details") && (*result)["details"].is_array()) {
          const auto& details = (*result)["details"];
          html << "<ul class=\"mono\">";
          std::size_t shown = 0;
          for (const auto& line : details) {
            if (++shown > limits.details_per_entry) {
              html << "<li class=\"muted\">… " << details.size() - limits.details_per_entry
                   << " more</li>";
              break;
            }
            html << "<li>" << text.json(line) << "</li>";
          }
          html << "</ul>";
        }
        html << "</td></tr>";
      }
      html << "</table>";
      if (group.count > group.first.size())
        html << "<p class=\"muted\">… " << group.count - group.first.size() << " more"
             << (comparison.json_link.empty()
                     ? std::string()
                     : " in <a href=\"" + text.whole(comparison.json_link) + "\">" +
                           text.whole(comparison.json_link) + "</a>")
             << "</p>";
    }
    html << (folded ? "</details>\n" : "\n");
  };
  changed_entries(html, comparison, text);
  entries("fail", false, "Unexpected differences");
  entries("no-evidence", false, "Without evidence");
  entries("waived", true, "Waived by an exception");
  entries("expected", true, "Expected differences, as the change declared");
  entries("pass", true, "Held");
}

void comparisons_section(std::ostringstream& html, const ReportHtmlInput& input, const Text& text) {
  html << "<h2>Comparison</h2>\n";
  if (input.comparisons.empty()) {
    html << "<p class=\"muted\">No comparison ran in this run.</p>\n";
    return;
  }
  for (const auto& comparison : input.comparisons) {
    html << "<h3>" << text(comparison.title) << "</h3>\n";
    comparison_body(html, comparison, text);
  }
}

void exceptions_section(std::ostringstream& html, const ReportHtmlInput& input, const Text& text) {
  std::vector<std::string> ids = input.outcome.exceptions_used;
  for (const auto& comparison : input.comparisons)
    if (comparison.document && comparison.document->contains("exceptions_used"))
      for (const auto& id : (*comparison.document)["exceptions_used"])
        if (id.is_string() && std::find(ids.begin(), ids.end(), id.get<std::string>()) == ids.end())
          ids.push_back(id.get<std::string>());
  html << "<h2>Exceptions used</h2>\n";
  if (ids.empty()) {
    html << "<p>None: nothing was waived.</p>\n";
    return;
  }
  const auto& repository = input.context.repository;
  std::optional<compare::ExceptionRegister> entries;
  auto register_text =
      repository.policy_texts.find(repository.settings.policies_dir + "/exceptions.yaml");
  if (register_text != repository.policy_texts.end()) {
    auto loaded = compare::load_exception_register(register_text->second, register_text->first);
    if (loaded.ok()) entries = std::move(loaded.value());
  }
  html << "<table><tr><th>exception</th><th>owner</th><th>expiry</th><th>scope</th>"
          "<th>reason</th></tr>";
  for (const auto& id : ids) {
    const compare::ExceptionEntry* entry = nullptr;
    if (entries)
      for (const auto& candidate : entries->entries)
        if (candidate.id == id) entry = &candidate;
    if (!entry) {
      html << "<tr><td>" << text(id)
           << "</td><td colspan=\"4\">not found in the register at the "
              "intent commit</td></tr>";
      continue;
    }
    html << "<tr><td>" << text(id) << "</td><td>" << text(entry->owner) << "</td><td>"
         << html_escape(format_utc(entry->expiry)) << "</td><td>device <code>"
         << text(entry->device) << "</code>, rule <code>" << text(entry->rule) << "</code>"
         << (entry->path ? ", path <code>" + text(entry->path->text()) + "</code>" : "")
         << "</td><td>" << text(entry->reason) << "</td></tr>";
  }
  html << "</table>\n";
}

// Flattens identity fields to "a.b.c" -> value, for any platform's identity shape.
void flatten(const nlohmann::json& value, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items())
      flatten(child, prefix.empty() ? key : prefix + "." + key, out);
  } else if (!value.is_null()) {
    out.emplace_back(prefix, value.is_string() ? value.get<std::string>() : value.dump());
  }
}

void identity_section(std::ostringstream& html, const ReportHtmlInput& input, const Text& text) {
  html << "<h2>Software and firmware</h2>\n";
  const nlohmann::json* snapshot = input.identity_snapshot;
  if (!snapshot || !snapshot->is_object() || !snapshot->contains("devices") ||
      !(*snapshot)["devices"].is_object()) {
    html << "<p class=\"muted\">No snapshot with device identity is part of this run.</p>\n";
    return;
  }
  const auto& devices = (*snapshot)["devices"];
  html << "<p class=\"muted\">From the pre-change snapshot"
       << (snapshot->contains("taken_at") ? ", taken " + text(str(*snapshot, "taken_at")) : "")
       << ".</p>\n<table><tr><th>device</th><th>identity</th></tr>";
  std::size_t shown = 0;
  for (const auto& [name, device] : devices.items()) {
    if (++shown > text.limits().devices) break;
    std::vector<std::pair<std::string, std::string>> fields;
    if (device.is_object() && device.contains("identity")) flatten(device["identity"], "", fields);
    html << "<tr><td>" << text(name) << "</td><td>";
    if (fields.empty())
      html << "<span class=\"badge noev\">NO EVIDENCE</span> no identity collected";
    std::vector<std::string> parts;
    for (const auto& [key, value] : fields)
      parts.push_back("<code>" + text(key) + "</code> " + text(value));
    html << join(parts, " · ") << "</td></tr>";
  }
  html << "</table>\n";
  if (devices.size() > text.limits().devices)
    html << "<p class=\"muted\">… " << devices.size() - text.limits().devices
         << " more devices in <a href=\"snapshots/pre.json\">snapshots/pre.json</a></p>\n";
}

void steps_section(std::ostringstream& html, const std::string& heading,
                   const std::vector<StepRun>& runs, const Axis& axis, const Text& text) {
  if (runs.empty()) return;
  html << "<h2>" << heading
       << "</h2>\n<table><tr><th>device</th><th>#</th><th>command</th>"
          "<th>result</th><th>started</th><th>time</th></tr>";
  for (const auto& run : runs)
    html << "<tr><td>" << text(run.device) << "</td><td>" << run.index << "</td><td><code>"
         << text(run.command) << "</code></td><td>" << html_escape(to_string(run.state))
         << (run.reason.empty() ? "" : ": " + text(run.reason)) << "</td><td class=\"mono\">"
         << axis.relative(run.started) << "</td><td>" << seconds(run.duration) << "</td></tr>";
  html << "</table>\n";
}

nlohmann::json read_json_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return nullptr;
  auto document = nlohmann::json::parse(in, nullptr, false);
  return document.is_discarded() ? nlohmann::json(nullptr) : document;
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

std::string render_report_html(const ReportHtmlInput& input, const ReportHtmlLimits& limits) {
  Text text(input.context.redactor, limits);
  auto layers = layer_timelines(input);
  auto names = ordered_layers(layers);
  Axis axis = axis_of(input, layers);
  std::ostringstream html;
  html << page_open("fabgate " + std::string(to_string(input.context.mode)) + ": " +
                    text(input.context.change.id));
  header(html, input, text);
  gate_timeline(html, input, axis);
  layer_section(html, names, layers, axis);
  disruption_section(html, input, axis, text);
  telemetry_section(html, input.outcome.telemetry, text);
  telemetry_section(html, input.outcome.rollback_telemetry, text);
  gate_table(html, input, axis, text);
  probes_section(html, input, axis, text);
  comparisons_section(html, input, text);
  exceptions_section(html, input, text);
  identity_section(html, input, text);
  steps_section(html, "Steps executed", input.outcome.steps, axis, text);
  steps_section(html, "Rollback executed", input.outcome.rollback_steps, axis, text);
  html << "<h2>Evidence</h2>\n<p>This page summarises the bundle; the bundle is the evidence: "
          "<a href=\"report.md\">report.md</a>, <a href=\"manifest.json\">manifest.json</a> "
          "(sha256 of every file, this page included), snapshots in <code>snapshots/</code>, "
          "comparisons in <code>diffs/</code>, probe results in <code>probes/</code>, every "
          "command sent in <code>commands.jsonl</code>. <code>fabgate evidence verify</code> "
          "checks the folder against the manifest.</p>\n</main></body></html>\n";
  return html.str();
}

nlohmann::json layer_recovery_json(const ReportHtmlInput& input) {
  auto layers = layer_timelines(input);
  nlohmann::json out = nlohmann::json::array();
  auto when = [](const std::optional<TimePoint>& t) {
    return t ? nlohmann::json(format_utc(*t)) : nlohmann::json(nullptr);
  };
  for (const auto& name : ordered_layers(layers)) {
    const auto& timeline = layers.at(name);
    LayerStatus status = status_of(timeline);
    std::set<std::string> sources;
    for (const auto& observation : timeline.observations) sources.insert(observation.source);
    out.push_back(
        {{"layer", name},
         {"status", status.word},
         {"last_good", when(status.last_good)},
         {"failed_at", when(status.failed ? std::optional(status.failed->at) : std::nullopt)},
         {"failed_verdict", status.failed ? status.failed->verdict : ""},
         {"failed_by", status.failed ? status.failed->source : ""},
         {"restored_at", when(status.restored)},
         {"evidence", std::vector<std::string>(sources.begin(), sources.end())}});
  }
  return out;
}

BundlePage render_bundle_report(const ReportContext& context, const RunOutcome& outcome,
                                const std::filesystem::path& bundle_dir,
                                const nlohmann::json& baseline) {
  ReportHtmlInput input{context, outcome, &baseline, {}};
  nlohmann::json post = read_json_file(bundle_dir / "diffs/post-vs-pre.json");
  nlohmann::json restored = read_json_file(bundle_dir / "diffs/restored-vs-pre.json");
  if (post.is_object())
    input.comparisons.push_back({"Post-change snapshot vs pre-change", &post,
                                 "diffs/post-vs-pre.json", "diffs/post-vs-pre.txt"});
  if (restored.is_object())
    input.comparisons.push_back({"Restored snapshot vs pre-change (no expected differences)",
                                 &restored, "diffs/restored-vs-pre.json",
                                 "diffs/restored-vs-pre.txt"});
  return {render_report_html(input), layer_recovery_json(input)};
}

std::string render_recover_notice_page(const RecoverNotice& notice, const Redactor& redactor) {
  const ReportHtmlLimits limits;  // Text keeps a reference
  Text text(redactor, limits);
  std::ostringstream html;
  html << page_open("fabgate recover: " + text(notice.change));
  html << "<h1>fabgate recover: " << text(notice.change) << "</h1>\n";
  html << "<div class=\"verdict " << verdict_css(notice.exit_code) << "\">" << text(notice.why)
       << " (exit " << to_int(notice.exit_code) << ")</div>\n";
  html << "<dl class=\"facts\">";
  const std::pair<const char*, std::string> facts[] = {
      {"dead run", notice.run_id + " (" + notice.mode + " by " + notice.run_operator + ")"},
      {"intent commit", notice.intent_commit},
      {"recovered by", notice.recovered_by},
      {"journal", "the run stopped after record " + std::to_string(notice.after_record) + " (" +
                      notice.last_event + ")"}};
  for (const auto& [label, value] : facts)
    html << "<dt>" << label << "</dt><dd>" << text(value) << "</dd>";
  html << "</dl>\n<h2>Layers</h2>\n<p>No layer was checked by this recover: it had nothing to "
          "roll back, so it proves nothing about the devices' state. The dead run's journal and "
          "whatever snapshots and probes it wrote in this folder are its evidence.</p>\n";
  html << "</main></body></html>\n";
  return html.str();
}

std::string render_comparison_page(const ComparisonInput& comparison, const Redactor& redactor,
                                   const ReportHtmlLimits& limits) {
  Text text(redactor, limits);
  std::ostringstream html;
  html << page_open("fabgate diff: " + text(comparison.title));
  html << "<h1>fabgate diff</h1>\n<h3>" << text(comparison.title) << "</h3>\n";
  if (comparison.document) comparison_body(html, comparison, text);
  html << "</main></body></html>\n";
  return html.str();
}

}  // namespace fabgate::pipeline
