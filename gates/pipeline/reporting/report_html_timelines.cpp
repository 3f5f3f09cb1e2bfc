#include <algorithm>

#include "adapters/core/text.h"
#include "gates/pipeline/reporting/report_html_parts.h"

// report.html's time axis: the gate timeline, the gate table and the recovery of each layer
// (drawn from the layer-recovery model, never recomputed here).

namespace fabgate::pipeline::html_parts {
namespace {

// The badge colour of a layer's status: no evidence and not proven are never green.
std::string status_css(LayerStatus status) {
  switch (status) {
    case LayerStatus::held:
    case LayerStatus::restored:
      return "pass";
    case LayerStatus::not_restored:
      return "fail";
    case LayerStatus::not_proven:
    case LayerStatus::no_evidence:
      return "noev";
  }
  return "noev";
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

std::string layer_svg(const LayerRecovery& layers, const Axis& axis) {
  double height = kTop + kRow * static_cast<double>(layers.layers.size()) + 8;
  std::ostringstream svg;
  svg << svg_open(height, "recovery timeline per layer") << ticks(axis, height - 4);
  double y = kTop;
  for (const auto& layer : layers.layers) {
    const auto& all = layer.observations;
    double mid = y + kRow / 2;
    svg << "<text class=\"row\" x=\"4\" y=\"" << fixed(mid + 4, 1) << "\">"
        << html_escape(layer.layer) << "</text>";
    if (layer.status == LayerStatus::no_evidence) {
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
        if (last && all[i].passed()) break;  // health is not extended past its evidence
        double to = last ? kWidth - kRight : axis.x(all[i + 1].at);
        std::string css = all[i].passed()            ? (all[i + 1].passed() ? "pass" : "gap")
                          : all[i].verdict == "fail" ? "fail"
                                                     : "noev";
        svg << "<rect class=\"" << css << "\" x=\"" << fixed(from, 1) << "\" y=\""
            << fixed(y + (css == "gap" ? 9 : 6), 1) << "\" width=\""
            << fixed(std::max(1.0, to - from), 1) << "\" height=\"" << (css == "gap" ? 4 : 10)
            << "\"/>";
      }
      if (layer.baseline_reference)
        svg << "<path class=\"ref\" d=\"M" << fixed(axis.x(*layer.baseline_reference), 1) << " "
            << fixed(mid - 6, 1) << " l5 6 l-5 6 l-5 -6 z\"><title>pre-change snapshot "
            << clock_of(*layer.baseline_reference)
            << ": the baseline compared against</title></path>";
      for (const auto& observation : all)
        svg << "<circle class=\"" << verdict_class(observation.verdict) << " dot\" cx=\""
            << fixed(axis.x(observation.at), 1) << "\" cy=\"" << fixed(mid, 1)
            << "\" r=\"4.5\"><title>" << html_escape(observation.source) << ": "
            << html_escape(observation.verdict) << " at " << clock_of(observation.at)
            << "</title></circle>";
      if (layer.status == LayerStatus::not_restored || layer.status == LayerStatus::not_proven)
        svg << "<text class=\"inbar alarm\" x=\"" << kWidth - kRight - 4 << "\" y=\""
            << fixed(mid - 6, 1) << "\">" << to_string(layer.status) << "</text>";
    }
    y += kRow;
  }
  svg << "</svg>";
  return svg.str();
}

}  // namespace

Axis axis_of(const RunOutcome& outcome, const LayerRecovery& layers) {
  std::optional<TimePoint> start, end;
  auto widen = [&](TimePoint t) {
    if (!start || t < *start) start = t;
    if (!end || t > *end) end = t;
  };
  for (const auto& gate : outcome.gates) {
    widen(gate.started);
    widen(gate.started + gate.duration);
  }
  for (const auto& probe : outcome.probes) {
    widen(probe.started);
    widen(probe.started + probe.duration);
  }
  for (const auto& layer : layers.layers) {
    for (const auto& observation : layer.observations) widen(observation.at);
    if (layer.baseline_reference) widen(*layer.baseline_reference);
  }
  if (!start) start = end = now_utc();
  if (*end <= *start) end = *start + Duration{1};
  return {*start, *end};
}

void gate_timeline(std::ostringstream& html, const RunOutcome& outcome, const Axis& axis) {
  const auto& gates = outcome.gates;
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

void gate_table(std::ostringstream& html, const RunOutcome& outcome, const Axis& axis,
                const Text& text) {
  const auto& gates = outcome.gates;
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

void layer_section(std::ostringstream& html, const LayerRecovery& layers, const Axis& axis) {
  html << "<h2>Recovery by layer</h2>\n<p class=\"muted\">Each layer is proven only by its own "
          "checks, placed at the time its evidence was taken (probe end, snapshot time, "
          "continuous-probe interruptions). Link up is not workload recovery; a layer without "
          "evidence is hatched, never green.</p>\n"
       << layer_svg(layers, axis);
  html << "<table><tr><th>layer</th><th>status</th><th>last seen good</th><th>failed</th>"
          "<th>proven restored</th><th>evidence</th></tr>";
  auto when = [&](const std::optional<TimePoint>& t) {
    return t ? clock_of(*t) + " <span class=\"muted\">(" + axis.relative(*t) + ")</span>"
             : std::string("—");
  };
  for (const auto& layer : layers.layers) {
    html << "<tr><td>" << html_escape(layer.layer) << "</td><td><span class=\"badge "
         << status_css(layer.status) << "\">" << html_escape(to_string(layer.status))
         << "</span></td><td>" << when(layer.last_good) << "</td><td>"
         << (layer.failed ? when(layer.failed->at) + " " +
                                html_escape(layer.failed->verdict + ": " + layer.failed->source)
                          : std::string("—"))
         << "</td><td>"
         << (layer.restored ? when(layer.restored)
             : layer.failed ? std::string("<strong>never</strong>")
                            : std::string("—"))
         << "</td><td>"
         << (layer.evidence.empty() ? std::string("no check of this layer ran")
                                    : html_escape(join(layer.evidence, ", ")))
         << "</td></tr>";
  }
  html << "</table>\n";
}

}  // namespace fabgate::pipeline::html_parts
