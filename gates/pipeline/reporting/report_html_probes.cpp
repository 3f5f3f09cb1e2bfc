#include <algorithm>
#include <vector>

#include "adapters/core/foreign_json.h"
#include "gates/pipeline/reporting/report_html_parts.h"

// report.html's probe sections: the continuous probe per flow, the gNMI telemetry windows, and
// every probe with its per-flow or per-rank results. Probe details are documents from probe
// hosts: a field of another type is shown as absent, never thrown.

namespace fabgate::pipeline::html_parts {
namespace {

// Interruptions drawn per flow: a flapping path can record thousands; the raw file has them all.
constexpr std::size_t kMaxGapsPerFlow = 200;

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

}  // namespace

void disruption_section(std::ostringstream& html, const RunOutcome& outcome, const Axis& axis,
                        const Text& text) {
  std::vector<const ProbeOutcome*> watches;
  for (const auto& probe : outcome.probes)
    if (probe.phase == "during") watches.push_back(&probe);
  if (watches.empty()) return;
  html << "<h2>Disruption during the change</h2>\n";
  for (const auto* watch : watches) {
    const auto& detail = watch->detail;
    html << "<p>" << badge(to_string(watch->verdict)) << " " << text.whole(watch->reason)
         << "</p>\n";
    // The watch's own stalls (its sampler's, or its responder's holding probes): spans it did
    // not judge, no evidence either way and not an outage of any path, so they are listed
    // apart from the flows' interruptions.
    if (const nlohmann::json* stalls = array_member(detail, "stalls"); stalls && !stalls->empty()) {
      constexpr std::size_t kShownStalls = 5;
      html << "<p class=\"muted\">The watch itself stalled (its sampler, or its responder "
              "holding probes: no evidence for these spans; not path outages): ";
      std::size_t shown_stalls = 0;
      for (const auto& stall : *stalls) {
        if (shown_stalls == kShownStalls) break;
        auto at = time_member(stall, "started_at");
        auto length = integer_member(stall, "length_ms");
        if (!at || !length) continue;
        html << (shown_stalls++ ? ", " : "") << clock_of(*at) << " for " << *length << " ms";
      }
      const auto count = integer_member(detail, "stall_count");
      if (count && *count > static_cast<std::int64_t>(shown_stalls))
        html << " … " << *count << " in all (probes/during.json)";
      html << "</p>\n";
    }
    const nlohmann::json* flow_list = array_member(detail, "flows");
    if (!flow_list) {
      html << "<p class=\"muted\">The continuous probe left no per-flow record (see "
              "probes/during.json).</p>\n";
      continue;
    }
    const auto& flows = *flow_list;
    std::size_t shown = std::min(flows.size(), text.limits().table_rows);
    auto started = time_member(detail, "started_at");
    auto ended = time_member(detail, "ended_at");
    double height = kTop + kRow * static_cast<double>(shown) + 8;
    std::ostringstream svg;
    svg << svg_open(height, "continuous probe per flow") << ticks(axis, height - 4);
    double y = kTop;
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& flow = flows[i];
      svg << "<text class=\"row\" x=\"4\" y=\"" << fixed(y + kRow / 2 + 4, 1) << "\">flow "
          << text(member_text(flow, "src_port")) << "</text>";
      if (started && ended)
        svg << "<rect class=\"pass\" x=\"" << fixed(axis.x(*started), 1) << "\" y=\""
            << fixed(y + 9, 1) << "\" width=\""
            << fixed(std::max(1.0, axis.x(*ended) - axis.x(*started)), 1) << "\" height=\"4\"/>";
      // Every interruption the flow lists (any array of {started_at, length_ms}), else its
      // longest; one whose start or length is not a time and an integer is left out.
      std::vector<const nlohmann::json*> gaps;
      if (flow.is_object())
        for (const auto& [key, value] : flow.items())
          if (value.is_array())
            for (const auto& item : value)
              if (item.is_object() && item.contains("started_at") && item.contains("length_ms") &&
                  gaps.size() < kMaxGapsPerFlow)
                gaps.push_back(&item);
      if (const nlohmann::json* longest = object_member(flow, "longest_interruption");
          gaps.empty() && longest)
        gaps.push_back(longest);
      for (const auto* gap : gaps) {
        auto at = time_member(*gap, "started_at");
        auto length_ms = integer_member(*gap, "length_ms");
        if (!at || !length_ms) continue;
        Duration length{*length_ms};
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
      double sent = number_member(flow, "samples_sent").value_or(0);
      double received = number_member(flow, "samples_received").value_or(0);
      html << "<tr><td>" << text(member_text(flow, "src_port")) << "</td><td>"
           << text(member_text(flow, "samples_sent")) << "</td><td>"
           << text(member_text(flow, "samples_received")) << "</td><td>"
           << (sent > 0 ? fixed(100.0 * (sent - received) / sent, 2) + " %" : "—") << "</td><td>"
           << text(member_text(flow, "interruptions")) << "</td><td>"
           << text(member_text(flow, "longest_interruption_ms")) << " ms</td></tr>";
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
          "prefixes) streamed ("
       << text(modes_text(telemetry)) << ") every "
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
    if (!device.mode.empty() && device.mode != to_string(TelemetryMode::stream))
      notes.push_back(device.device + ": subscribed by " + device.mode + " (" +
                      std::to_string(device.failed_rounds) + " of " +
                      std::to_string(device.rounds) + " rounds failed): " + device.mode_cost);
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

void probes_section(std::ostringstream& html, const RunOutcome& outcome, const Axis& axis,
                    const Text& text) {
  const auto& probes = outcome.probes;
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

}  // namespace fabgate::pipeline::html_parts
