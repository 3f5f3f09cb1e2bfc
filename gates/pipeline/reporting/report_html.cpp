#include "gates/pipeline/reporting/report_html.h"

#include <fstream>
#include <iterator>
#include <sstream>

#include "adapters/core/build_info.h"
#include "adapters/core/foreign_json.h"
#include "adapters/core/text.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/report_html_parts.h"

// report.html's page: its skeleton and style, the header, identity and steps, and the order of
// the sections (report_html_timelines.cpp, report_html_probes.cpp,
// report_html_comparisons.cpp draw the rest).

namespace fabgate::pipeline {
namespace {

using namespace html_parts;

std::string verdict_words(Mode mode, ExitCode code) {
  switch (code) {
    case ExitCode::accepted:
      return mode == Mode::plan ? "PLAN READY: every read-only gate passed; nothing was touched"
             : mode == Mode::rehearse ? "REHEARSAL PASSED: the change was accepted, then rolled "
                                        "back, and the baseline was verified"
             : mode == Mode::twin ? "HELD ON THE TWIN: the change passed on an emulated copy of "
                                    "its fabric; production was not touched"
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

// Flattens identity fields to "a.b.c" -> value, for any platform's identity shape. Identity is
// what devices reported: fields nested deeper than any foreign document fabgate reads are left
// out rather than followed (the recursion stays bounded), and bytes that are not UTF-8 are
// replaced rather than thrown.
void flatten(const nlohmann::json& value, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out, int depth = 0) {
  if (value.is_object()) {
    if (depth >= kForeignJsonMaxDepth) return;
    for (const auto& [key, child] : value.items())
      flatten(child, prefix.empty() ? key : prefix + "." + key, out, depth + 1);
  } else if (!value.is_null()) {
    out.emplace_back(prefix,
                     value.is_string()
                         ? value.get<std::string>()
                         : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
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
       << (snapshot->contains("taken_at") ? ", taken " + text(member_text(*snapshot, "taken_at"))
                                          : "")
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

// A comparison the run wrote to the bundle; null when it is missing, unreadable, not JSON or
// nested deeper than fabgate reads (the page then says no comparison ran, never throws).
nlohmann::json read_json_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return nullptr;
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ForeignJson parsed = parse_foreign_json(text);
  return parsed.ok() ? std::move(parsed.document) : nlohmann::json(nullptr);
}

}  // namespace

std::string render_report_html(const ReportHtmlInput& input, const LayerRecovery& layers,
                               const ReportHtmlLimits& limits) {
  Text text(input.context.redactor, limits);
  const RunOutcome& outcome = input.outcome;
  Axis axis = axis_of(outcome, layers);
  std::ostringstream html;
  html << page_open("fabgate " + std::string(to_string(input.context.mode)) + ": " +
                    text(input.context.change.id));
  header(html, input, text);
  gate_timeline(html, outcome, axis);
  layer_section(html, layers, axis);
  disruption_section(html, outcome, axis, text);
  telemetry_section(html, input.outcome.telemetry, text);
  telemetry_section(html, input.outcome.rollback_telemetry, text);
  gate_table(html, outcome, axis, text);
  probes_section(html, outcome, axis, text);
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
  BundlePage page;
  page.layers = compute_layer_recovery(outcome, input.comparisons);
  page.html = render_report_html(input, page.layers);
  return page;
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
