#include "gates/pipeline/reporting/reports.h"

#include <sstream>

#include "adapters/core/build_info.h"
#include "adapters/core/sha256.h"
#include "adapters/core/text.h"
#include "gates/compare/exception_register.h"
#include "gates/intent/loader.h"
#include "gates/pipeline/reporting/plan_digest.h"

namespace fabgate::pipeline {
namespace {

nlohmann::json steps_json(const std::vector<intent::Step>& steps) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& step : steps) {
    nlohmann::json item = {{"device", step.device}, {"description", step.description}};
    if (!step.run.empty()) item["run"] = step.run;
    if (!step.gnmi_set.empty()) {
      item["gnmi"] = nlohmann::json::array();
      for (const auto& op : step.gnmi_set)
        item["gnmi"].push_back({{"op", op.op}, {"path", op.path}, {"value", op.value}});
    }
    if (step.timeout) item["timeout_ms"] = step.timeout->count();
    out.push_back(item);
  }
  return out;
}

std::string verdict_word(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "**FAIL**";
    case Verdict::no_evidence:
      return "**NO EVIDENCE**";
    case Verdict::skipped:
      return "skipped";
  }
  return "?";
}

// What an exit code means for a run of `mode`: a plan that exits 0 applied nothing and was
// accepted by nobody, so it never reads "accepted".
std::string exit_meaning(Mode mode, ExitCode code) {
  switch (code) {
    case ExitCode::accepted:
      return mode == Mode::plan   ? "plan ready for review, nothing has been applied"
             : mode == Mode::twin ? "held on the twin, nothing has been applied to production"
                                  : "accepted";
    case ExitCode::internal_error:
      return "internal error";
    case ExitCode::invalid_input:
      return "invalid input";
    case ExitCode::refused:
      return "refused before any change; nothing was touched";
    case ExitCode::rolled_back:
      return "change failed and was rolled back; baseline verified";
    case ExitCode::not_restored:
      return "ROLLBACK FAILED OR BASELINE NOT VERIFIED: a human must act now";
  }
  return "";
}

// A value in a Markdown line or table cell. Redacted before it is flattened: a configured secret
// that holds '|' or a newline would no longer match once flattened, so the later redaction of
// the whole file could not catch it.
std::string md_cell(const Redactor& redactor, std::string_view value) {
  std::string text = redactor.redact(value);
  for (auto& c : text)
    if (c == '|' || c == '\n') c = ' ';
  return text;
}

std::string seconds(Duration duration) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(2);
  out << duration.count() / 1000.0 << " s";
  return out.str();
}

void steps_table(std::ostringstream& md, const std::vector<StepRun>& runs,
                 const Redactor& redactor) {
  md << "| device | # | command | result | time |\n|---|---|---|---|---|\n";
  for (const auto& run : runs)
    md << "| " << run.device << " | " << run.index << " | `" << md_cell(redactor, run.command)
       << "` | " << to_string(run.state)
       << (run.reason.empty() ? "" : ": " + md_cell(redactor, run.reason)) << " | "
       << seconds(run.duration) << " |\n";
}

}  // namespace

std::string escape_markup(std::string_view text, std::string_view apostrophe) {
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
        out += apostrophe;
        break;
      default:
        // XML 1.0 forbids most control characters; command output can contain them.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

std::string xml_escape(const std::string& text) {
  return escape_markup(text, "&apos;");
}

nlohmann::json change_to_json(const intent::Change& change) {
  nlohmann::json waves = change.bounds.waves.empty() ? nlohmann::json::array({change.targets})
                                                     : nlohmann::json(change.bounds.waves);
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& probe : change.acceptance.probes) probes.push_back(to_json(probe));
  nlohmann::json expected = nlohmann::json::array();
  for (const auto& item : change.compare.expected)
    expected.push_back({{"device", item.device},
                        {"path", item.path},
                        {"values", item.values},
                        {"absent", item.absent}});
  nlohmann::json out = {
      {"id", change.id},
      {"title", change.title},
      {"file", change.file},
      {"targets", change.targets},
      {"bounds",
       {{"max_targets", change.bounds.max_targets},
        {"step_timeout_ms", change.bounds.step_timeout.count()},
        {"rollback_timeout_ms", change.bounds.effective_rollback_timeout().count()},
        {"deadline_ms", change.bounds.deadline.count()},
        {"waves", waves}}},
      {"steps", steps_json(change.steps)},
      {"rollback", steps_json(change.rollback)},
      {"acceptance", {{"settle_ms", change.acceptance.settle.count()}, {"probes", probes}}},
      {"compare", {{"rule_sets", change.compare.rule_sets}, {"expected", expected}}}};
  if (change.window)
    out["window"] = {{"start", format_utc(change.window->start)},
                     {"end", format_utc(change.window->end)}};
  if (change.confirm_timeout) out["confirm_timeout_ms"] = change.confirm_timeout->count();
  if (change.acceptance.during)
    out["acceptance"]["during"] = {
        {"host", change.acceptance.during->host},
        {"target", change.acceptance.during->target},
        {"flows", change.acceptance.during->flows},
        {"max_disruption_ms", change.acceptance.during->max_disruption.count()}};
  return out;
}

std::string change_digest(const intent::Change& change) {
  return sha256_hex(
      change_to_json(change).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string policies_digest(const intent::IntentRepository& repository) {
  Sha256 hash;
  for (const auto& [path, text] : repository.policy_texts) {
    hash.update(path);
    hash.update(std::string(1, '\0'));
    hash.update(text);
    hash.update(std::string(1, '\0'));
  }
  return hash.hex_digest();
}

// The telemetry layer, one section per window (during the change, through the rollback): per
// device, what was streamed and every interface and BGP event at the device's timestamp; a
// device not covered says why it is no-evidence.
static std::string telemetry_markdown(const std::optional<TelemetryOutcome>& telemetry,
                                      const Redactor& redactor) {
  if (!telemetry) return "";
  const bool rollback = telemetry->phase == "rollback";
  const std::string file = "telemetry/" + telemetry->phase + ".json";
  std::ostringstream md;
  md << (rollback ? "## Telemetry through the rollback (gNMI)\n\n"
                  : "## During-change telemetry (gNMI)\n\n")
     << "Interface state and BGP neighbours (session state, received prefixes) streamed ("
     << modes_text(*telemetry) << " every " << format_duration(telemetry->interval) << ") from "
     << format_utc(telemetry->window_start) << " to " << format_utc(telemetry->window_end)
     << " (controller clock)";
  if (rollback && telemetry->rollback_started)
    md << "; the rollback began at " << format_utc(*telemetry->rollback_started);
  md << "; event times are the devices' own timestamps. A silence longer than "
     << format_duration(telemetry->max_gap)
     << " makes a device no-evidence unless carrier-transitions or established-transitions on "
        "both sides of it cover it"
     << (telemetry->flaps_judged ? "; a flap the change does not expect fails the window" : "")
     << ". " << to_string(telemetry->verdict) << ": " << md_cell(redactor, telemetry->summary)
     << "\n\n";
  md << "| device | streamed as | samples | first sample | last sample | verdict |\n"
        "|---|---|---|---|---|---|\n";
  for (const auto& device : telemetry->devices)
    md << "| " << device.device << " | " << device.why << " | " << device.samples << " | "
       << (device.samples ? format_device_time(device.first_ns) : "-") << " | "
       << (device.samples ? format_device_time(device.last_ns) : "-") << " | "
       << to_string(device.verdict) << " |\n";
  md << "\n";
  bool any_event = false;
  for (const auto& device : telemetry->devices) any_event |= !device.events.empty();
  if (any_event) {
    // Bounded like every table of the report: the rest stays in the window's JSON.
    constexpr std::size_t kMaxEventRows = 200;
    std::size_t rows = 0, left_out = 0;
    md << "| device time | device | interface or BGP neighbour | event |\n|---|---|---|---|\n";
    for (const auto& device : telemetry->devices)
      for (const auto& event : device.events) {
        if (rows++ >= kMaxEventRows) {
          ++left_out;
          continue;
        }
        md << "| " << format_device_time(event.timestamp_ns) << " | " << device.device << " | "
           << md_cell(redactor, event_subject(event)) << " | " << md_cell(redactor, event.what)
           << flap_note(*telemetry, device.device, event) << " |\n";
      }
    if (left_out > 0) md << "\n… " << left_out << " more events in `" << file << "`.\n";
    md << "\n";
  } else {
    md << "No interface changed oper-status, no error or discard counter rose, and no BGP "
          "session or received-prefix count changed.\n\n";
  }
  for (const auto& device : telemetry->devices) {
    if (!device.stream_failure.empty())
      md << "- " << device.device << ": " << md_cell(redactor, device.stream_failure) << "\n";
    if (!device.mode.empty() && device.mode != to_string(TelemetryMode::stream))
      md << "- " << device.device << ": subscribed by " << device.mode << " ("
         << device.failed_rounds << " of " << device.rounds
         << " rounds failed): " << md_cell(redactor, device.mode_cost) << "\n";
    for (const auto& gap : device.gaps) md << "- " << device.device << ": " << gap << "\n";
    for (const auto& gap : device.covered_gaps) md << "- " << device.device << ": " << gap << "\n";
  }
  for (const auto& line : telemetry->not_streamed) md << "- not streamed: " << line << "\n";
  md << "\nThe timeline per device is in `" << file << "`.\n\n";
  return md.str();
}

std::string render_report_markdown(const ReportContext& context, const RunOutcome& outcome) {
  const auto& change = context.change;
  const Redactor& redactor = context.redactor;
  std::ostringstream md;
  md << "# fabgate " << to_string(context.mode) << ": " << change.id << "\n\n";
  md << "**Outcome: exit " << to_int(outcome.exit_code) << " — "
     << exit_meaning(context.mode, outcome.exit_code) << ".**\n\n";
  md << "- Devices left: " << outcome.device_state << "\n";
  md << "- First disproven hypothesis: "
     << (outcome.first_disproven.empty() ? "none" : md_cell(redactor, outcome.first_disproven))
     << "\n";
  for (const auto& line : outcome.diagnosis)
    md << "- Diagnosis: " << md_cell(redactor, line) << "\n";
  if (!outcome.exceptions_used.empty())
    md << "- Exceptions used (waived checks are listed under Findings): "
       << join(outcome.exceptions_used, ", ") << "\n";
  if (outcome.detection_to_restore)
    md << "- Failure detected to baseline verified: " << seconds(*outcome.detection_to_restore)
       << (outcome.settle_restored
               ? " (the restore verification held in the round started " +
                     seconds(*outcome.settle_restored) + " after the rollback" +
                     (outcome.restore_dwell && *outcome.restore_dwell > Duration::zero()
                          ? " and again after a dwell of " + seconds(*outcome.restore_dwell)
                          : std::string()) +
                     ")"
               : std::string())
       << "\n";
  if (outcome.detection_to_rollback_sent || outcome.rollback_sent_to_verified) {
    std::vector<std::string> parts;
    if (outcome.detection_to_rollback_sent)
      parts.push_back("failure detected to rollback sent " +
                      seconds(*outcome.detection_to_rollback_sent));
    if (outcome.rollback_sent_to_verified)
      parts.push_back("rollback sent to the first restore round that held " +
                      seconds(*outcome.rollback_sent_to_verified));
    if (outcome.restore_dwell && outcome.rollback_sent_to_verified)
      parts.push_back("dwell " + seconds(*outcome.restore_dwell));
    md << "- Restore in parts: " << join(parts, "; ") << "\n";
  }
  md << "- Change: " << md_cell(redactor, change.title) << " (`" << change.file << "`)\n";
  md << "- Plan digest: `" << plan_digest(context.repository, context.change) << "`\n";
  if (!outcome.approvals.empty()) {
    std::vector<std::string> lines;
    for (const auto& approval : outcome.approvals)
      lines.push_back((approval.approver.empty() ? approval.file : approval.approver) + " (" +
                      approval.outcome +
                      (approval.bundle_copy.empty() ? ", not copied: unreadable"
                                                    : ", copy in " + approval.bundle_copy) +
                      ")");
    md << "- Approvals: " << md_cell(redactor, join(lines, ", ")) << "\n";
  }
  md << "- Intent commit: `" << context.repository.commit.id << "` by "
     << context.repository.commit.author_name << " <" << context.repository.commit.author_email
     << ">\n";
  md << "- Targets: " << join(change.targets, ", ") << "\n";
  md << "- Operator: " << context.operator_name << ", run " << context.run_id << ", fabgate "
     << tool_version() << " (" << build_commit() << ")\n\n";

  md << "## Gates\n\n| # | gate | verdict | time | summary |\n|---|---|---|---|---|\n";
  int n = 0;
  for (const auto& gate : outcome.gates)
    md << "| " << ++n << " | " << gate.name << " | " << verdict_word(gate.verdict) << " | "
       << seconds(gate.duration) << " | " << md_cell(redactor, gate.summary) << " |\n";
  md << "\n";

  bool any_details = false;
  for (const auto& gate : outcome.gates) {
    if (gate.details.empty()) continue;
    if (!any_details) md << "## Findings\n\n";
    any_details = true;
    md << "### " << gate.name << " (" << to_string(gate.verdict) << ")\n\n";
    std::size_t shown = 0;
    for (const auto& detail : gate.details) {
      if (++shown > 50) {
        md << "- … " << gate.details.size() - 50 << " more in the evidence files\n";
        break;
      }
      md << "- " << md_cell(redactor, detail) << "\n";
    }
    md << "\n";
  }

  if (outcome.layers.is_object() && !outcome.layers.empty()) {
    md << "## By layer\n\nA layer is proven only by checks of that layer: a session back up is "
          "not forwarding restored, and EVPN routes present are not an overlay that forwards "
          "(only an overlay probe proves that).\n\n| phase | layer | verdict |\n|---|---|---|\n";
    // bfd and evpn are parts of the control plane, overlay (frames across VXLAN) a part of
    // forwarding: each is shown with the layer it belongs to.
    auto layer_name = [](const std::string& layer) {
      if (layer == "bfd" || layer == "evpn") return layer + " (control plane)";
      if (layer == "overlay") return layer + " (forwarding)";
      return layer;
    };
    // A phase that is not a table of layers, or a verdict that is not a word, is shown as no
    // evidence: the report is written on every way out and must never throw.
    for (auto phase = outcome.layers.begin(); phase != outcome.layers.end(); ++phase) {
      if (!phase->is_object()) {
        md << "| " << phase.key() << " | - | no-evidence |\n";
        continue;
      }
      for (auto layer = phase->begin(); layer != phase->end(); ++layer)
        md << "| " << phase.key() << " | " << layer_name(layer.key()) << " | "
           << (layer->is_string() ? layer->get<std::string>() : "no-evidence") << " |\n";
    }
    md << "\n";
  }

  if (!outcome.probes.empty()) {
    md << "## Probes\n\n| phase | probe | layer | host | verdict | reason "
          "|\n|---|---|---|---|---|---|\n";
    for (const auto& probe : outcome.probes)
      md << "| " << probe.phase << " | " << probe.name << " | " << probe.layer << " | "
         << probe.host << " | " << to_string(probe.verdict)
         << (probe.waived_by.empty() ? "" : " (waived by " + probe.waived_by + ")") << " | "
         << md_cell(redactor, probe.reason) << " |\n";
    md << "\n";
  }
  if (!outcome.steps.empty()) {
    md << "## Steps executed\n\n";
    steps_table(md, outcome.steps, redactor);
    md << "\n";
  }
  if (!outcome.rollback_steps.empty()) {
    md << "## Rollback executed\n\n";
    steps_table(md, outcome.rollback_steps, redactor);
    md << "\n";
  }
  md << change_listing_markdown(outcome.changes, redactor);
  md << telemetry_markdown(outcome.telemetry, redactor);
  md << telemetry_markdown(outcome.rollback_telemetry, redactor);
  md << config_diff_markdown(outcome.config_deltas);
  md << "## Evidence\n\nSnapshots in `snapshots/`, comparisons in `diffs/`, probe results in "
        "`probes/`, every command sent in `commands.jsonl`, the journal in `journal.jsonl`. "
        "`fabgate evidence verify` checks this folder against `manifest.json`.\n";
  return md.str();
}

std::string render_review_markdown(const ReportContext& context, const RunOutcome& outcome) {
  const auto& change = context.change;
  const Redactor& redactor = context.redactor;
  const auto& repository = context.repository;
  const std::string digest = plan_digest(repository, change);
  auto gate_named = [&](const std::string& name) -> const GateRecord* {
    for (const auto& gate : outcome.gates)
      if (gate.name == name) return &gate;
    return nullptr;
  };
  auto gate_section = [&](std::ostringstream& md, const std::string& name) {
    const GateRecord* gate = gate_named(name);
    if (!gate) {
      md << "- " << name << ": did not run (an earlier gate stopped the plan)\n";
      return;
    }
    md << "- " << name << ": " << verdict_word(gate->verdict) << " — "
       << md_cell(redactor, gate->summary) << "\n";
    std::size_t shown = 0;
    for (const auto& detail : gate->details) {
      if (++shown > 20) {
        md << "  - … " << gate->details.size() - 20 << " more in report.md\n";
        break;
      }
      md << "  - " << md_cell(redactor, detail) << "\n";
    }
  };
  auto step_line = [&](const intent::Step& step) {
    std::string what;
    if (!step.run.empty()) what = "`" + md_cell(redactor, step.run) + "`";
    for (const auto& op : step.gnmi_set)
      what += (what.empty() ? "" : "; ") + std::string("gNMI ") + op.op + " `" +
              md_cell(redactor, op.path) + "`" +
              (op.value.empty() ? "" : " = `" + md_cell(redactor, op.value) + "`");
    return "- **" + step.device + "**: " + what +
           (step.description.empty() ? "" : " — " + md_cell(redactor, step.description)) +
           (step.timeout ? " (timeout " + format_duration(*step.timeout) + ")" : "") + "\n";
  };

  std::ostringstream md;
  md << "# Review: " << change.id << " — " << md_cell(redactor, change.title) << "\n\n";
  md << "- Plan digest: `" << digest << "`\n";
  md << "- Intent commit: `" << repository.commit.id << "` by " << repository.commit.author_name
     << " <" << repository.commit.author_email << "> (" << change.file << ")\n";
  md << "- Plan status: exit " << to_int(outcome.exit_code) << " — "
     << exit_meaning(context.mode, outcome.exit_code) << "\n";
  md << "- Approval policy: " << repository.approval_policy().min_approvals << " approval(s) from `"
     << repository.approval_policy().allowed_signers
     << "`, counted by distinct key; nobody who authored or committed a commit of the change "
        "can approve; "
     << (repository.approval_policy().max_age
             ? "approvals older than " + format_duration(*repository.approval_policy().max_age) +
                   " do not count; "
             : std::string())
     << "rehearsal "
     << (repository.approval_policy().require_rehearsal ? "required" : "not required") << "\n"
     << (repository.trusted_policy
             ? "- Approval policy read from: " + repository.trusted_policy->source + "\n"
             : std::string());
  // Fleet settings are read from the trusted ref only: what the change edits of them is
  // listed for the reviewer and is not in force until it is merged there (docs/security.md).
  if (repository.trusted_policy && !repository.trusted_policy->edits.empty()) {
    md << "- **Fleet settings this change edits** (not used by this plan or its apply; in "
          "force only once merged into the trusted ref, and the change needs an approval):\n";
    for (const auto& edit : repository.trusted_policy->edits)
      md << "  - " << md_cell(redactor, edit) << "\n";
  }
  md << "\n";

  md << "## What changes where\n\n";
  for (const auto& step : change.steps) md << step_line(step);
  md << "\n## Rollback\n\nRun on every device that may have been changed, last touched first:\n\n";
  if (change.rollback.empty()) md << "- **none declared**\n";
  for (const auto& step : change.rollback) md << step_line(step);

  md << "\n## Blast radius\n\n";
  md << "- Targets (" << change.targets.size() << ", at most " << change.bounds.max_targets
     << " at once): " << join(change.targets, ", ") << "\n";
  md << "- Devices in scope (snapshotted and compared before and after): "
     << repository.inventory.devices.size() << "\n";
  if (!change.out_of_service.empty())
    md << "- Left out of service once accepted (the redundancy budgets count "
       << (change.out_of_service.size() == 1 ? "it" : "them") << " until a change returns "
       << (change.out_of_service.size() == 1 ? "it" : "them")
       << "): " << join(change.out_of_service, ", ") << "\n";
  if (!change.back_in_service.empty())
    md << "- Returned to service once accepted: " << join(change.back_in_service, ", ") << "\n";
  auto waves = change.bounds.waves.empty() ? std::vector<std::vector<std::string>>{change.targets}
                                           : change.bounds.waves;
  for (std::size_t i = 0; i < waves.size(); ++i)
    md << "- Wave " << i + 1 << " (" << waves[i].size() << " device"
       << (waves[i].size() == 1 ? "" : "s") << "): " << join(waves[i], ", ") << "\n";

  md << "\n## Bounds\n\n- step timeout " << format_duration(change.bounds.step_timeout)
     << ", deadline " << format_duration(change.bounds.deadline) << "\n";
  md << "- rollback timeout " << format_duration(change.bounds.effective_rollback_timeout())
     << " per rollback step"
     << (change.bounds.rollback_timeout ? "" : " (default: max(3 x step timeout, 1m))")
     << "; not cut short by the deadline\n";
  if (change.window)
    md << "- window " << format_utc(change.window->start) << " .. "
       << format_utc(change.window->end) << "\n";
  else
    md << "- no maintenance window declared\n";
  if (change.confirm_timeout)
    md << "- confirm timeout " << format_duration(*change.confirm_timeout) << "\n";

  md << "\n## Compatibility\n\n";
  gate_section(md, "compat");
  md << "\n## Baseline health\n\n";
  gate_section(md, "window");
  gate_section(md, "snapshot-pre");
  gate_section(md, "rollback-plan");
  gate_section(md, "baseline-probes");

  md << "\n## Probes\n\nRun before the change (baseline), after it settles (acceptance) and after "
        "a rollback; settle "
     << format_duration(change.acceptance.settle) << ".\n\n";
  for (const auto& probe : change.acceptance.probes)
    md << "- `" << probe.name << "` (" << probe.layer << ", " << probe.kind << ") on " << probe.host
       << (probe.target.empty() ? "" : " to " + probe.target)
       << (probe.run.empty() ? "" : ": `" + md_cell(redactor, probe.run) + "`") << "\n";
  if (change.acceptance.during)
    md << "- during the change: " << change.acceptance.during->flows << " flows from "
       << change.acceptance.during->host << " to " << change.acceptance.during->target
       << ", longest interruption at most "
       << format_duration(change.acceptance.during->max_disruption) << "\n";

  md << "\n## Rule sets and expected differences\n\n";
  auto rule_sets = plan_digest_input(repository, change)["rule_sets"];
  for (const auto& set : rule_sets)
    md << "- rule set `" << set["name"].get<std::string>() << "` ("
       << (set["source"].is_string() ? set["source"].get<std::string>() : "NOT FOUND") << ")\n";
  if (change.compare.expected.empty())
    md << "- expected differences: none; every compared element must hold\n";
  for (const auto& item : change.compare.expected)
    md << "- expected: " << item.device << ": `" << item.path << "` -> "
       << (item.absent           ? "absent"
           : item.values.empty() ? "any value"
                                 : join(item.values, " | "))
       << "\n";

  md << "\n## Exceptions in force\n\n";
  // What is in force is the register at the trusted ref, where the run read it; the change's
  // own copy may add waivers that do not apply (docs/approvals.md).
  auto register_text = repository.exceptions_register();
  if (repository.trusted_policy) md << "Read from " << repository.trusted_policy->source << ".\n\n";
  std::size_t in_force = 0;
  if (register_text) {
    auto entries = compare::load_exception_register(register_text->second, register_text->first);
    if (entries.ok()) {
      for (const auto& entry : entries->entries) {
        if (entry.expired(now_utc())) continue;
        ++in_force;
        md << "- " << entry.id << ": device `" << entry.device << "`, rule `" << entry.rule << "`"
           << (entry.path ? ", path `" + entry.path->text() + "`" : "") << " — "
           << md_cell(redactor, entry.reason) << " (owner " << entry.owner << ", until "
           << format_utc(entry.expiry) << ")\n";
      }
    }
  }
  if (in_force == 0) md << "None: nothing is waived.\n";
  if (std::string config = config_diff_markdown(outcome.config_deltas); !config.empty()) {
    // Only a rehearsal of this very digest has post and restored snapshots to diff.
    md << "\n" << config;
    if (!outcome.config_deltas_from.empty())
      md << "The diffs above are those of the " << outcome.config_deltas_from
         << ", which rehearsed this plan's digest.\n";
  } else if (std::string captured = config_capture_markdown(outcome.configs_captured);
             !captured.empty())
    md << "\n" << captured;
  if (!outcome.config_deltas_refused.empty())
    md << "\nNo rehearsal diff: " << md_cell(redactor, outcome.config_deltas_refused) << ".\n";

  if (outcome.exit_code != ExitCode::accepted) {
    // A refused plan is not offered for signature: `fabgate approve` refuses it too.
    md << "\n## Not ready for approval\n\nThe gates refused this change before anything was "
          "touched (see the verdicts above); `fabgate approve` refuses to sign this plan. Fix "
          "what they found, commit, and run `fabgate plan "
       << change.id << "` again.\n";
    return md.str();
  }
  md << "\n## Approve\n\nThe digest covers the change, the resolved inventory, the rule sets, "
        "every policy file and the intent commit; any edit needs a new approval.\n\n";
  md << "    fabgate approve plan.json --key ~/.ssh/id_ed25519\n";
  md << "    fabgate apply " << change.id << " --approval approvals/\n";
  return md.str();
}

nlohmann::json render_plan_json(const ReportContext& context, const RunOutcome& outcome) {
  nlohmann::json gates = nlohmann::json::array();
  for (const auto& gate : outcome.gates)
    gates.push_back({{"name", gate.name},
                     {"verdict", std::string(to_string(gate.verdict))},
                     {"summary", gate.summary},
                     {"details", gate.details}});
  return {{"format", "fabgate.plan/1"},
          {"digest", plan_digest(context.repository, context.change)},
          {"digest_input", plan_digest_input(context.repository, context.change)},
          {"intent_commit", context.repository.commit.id},
          {"change", change_to_json(context.change)},
          {"change_digest", change_digest(context.change)},
          {"policies_digest", policies_digest(context.repository)},
          {"baseline", gates},
          {"ready", outcome.exit_code == ExitCode::accepted}};
}

std::string render_junit(const ReportContext& context, const RunOutcome& outcome) {
  std::size_t tests = outcome.gates.size() + outcome.probes.size();
  std::size_t failures = 0, skipped = 0;
  for (const auto& gate : outcome.gates) {
    failures += blocks(gate.verdict);
    skipped += gate.verdict == Verdict::skipped;
  }
  for (const auto& probe : outcome.probes)
    failures += blocks(probe.verdict) && probe.waived_by.empty();
  // Each value is redacted before it is escaped; the file is written as it is
  // (EvidenceBundle::write_redacted), since redacting escaped markup could miss an escaped secret
  // and would put a raw '<redacted>' into it.
  auto escape = [&](const std::string& text) { return xml_escape(context.redactor.redact(text)); };
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites name=\"fabgate\" tests=\"" << tests << "\" failures=\"" << failures
      << "\">\n";
  xml << "  <testsuite name=\""
      << escape(std::string(to_string(context.mode)) + "." + context.change.id) << "\" tests=\""
      << tests << "\" failures=\"" << failures << "\" skipped=\"" << skipped << "\">\n";
  for (const auto& gate : outcome.gates) {
    xml << "    <testcase classname=\"gates\" name=\"" << escape(gate.name) << "\" time=\""
        << gate.duration.count() / 1000.0 << "\">\n";
    if (gate.verdict == Verdict::skipped) {
      xml << "      <skipped message=\"" << escape(gate.summary) << "\"/>\n";
    } else if (blocks(gate.verdict)) {
      xml << "      <failure type=\"" << to_string(gate.verdict) << "\" message=\""
          << escape(gate.summary) << "\">" << escape(join(gate.details, "\n")) << "</failure>\n";
    }
    xml << "    </testcase>\n";
  }
  for (const auto& probe : outcome.probes) {
    xml << "    <testcase classname=\"probes." << escape(probe.phase) << "\" name=\""
        << escape(probe.name + " [" + probe.layer + "]") << "\" time=\""
        << probe.duration.count() / 1000.0 << "\">\n";
    if (blocks(probe.verdict) && probe.waived_by.empty())
      xml << "      <failure type=\"" << to_string(probe.verdict) << "\" message=\""
          << escape(probe.reason) << "\"/>\n";
    xml << "    </testcase>\n";
  }
  xml << "  </testsuite>\n</testsuites>\n";
  return xml.str();
}

nlohmann::json render_manifest(const ReportContext& context, const RunOutcome& outcome) {
  nlohmann::json gates = nlohmann::json::array();
  for (const auto& gate : outcome.gates)
    gates.push_back({{"name", gate.name},
                     {"verdict", std::string(to_string(gate.verdict))},
                     {"summary", gate.summary},
                     {"started_at", format_utc(gate.started)},
                     {"duration_ms", gate.duration.count()}});
  nlohmann::json manifest = {
      {"format", "fabgate.evidence/1"},
      {"tool",
       {{"name", "fabgate"}, {"version", tool_version()}, {"build_commit", build_commit()}}},
      {"mode", std::string(to_string(context.mode))},
      {"run_id", context.run_id},
      {"operator", context.operator_name},
      {"intent_commit", context.repository.commit.id},
      {"intent_root", context.repository.root},
      {"change", {{"id", context.change.id}, {"file", context.change.file}}},
      {"digests",
       {{"change", change_digest(context.change)},
        {"policies", policies_digest(context.repository)}}},
      {"plan_digest", plan_digest(context.repository, context.change)},
      {"approvals", nlohmann::json::array()},
      {"gates", gates},
      {"exit_code", to_int(outcome.exit_code)},
      {"outcome", exit_meaning(context.mode, outcome.exit_code)},
      {"first_disproven", outcome.first_disproven},
      {"device_state", outcome.device_state},
      {"diagnosis", outcome.diagnosis},
      {"exceptions_used", outcome.exceptions_used},
      {"finished_at", format_utc(now_utc())}};
  // A plan's verdict as a headline field, so the bundle digest covers it (`fabgate approve`
  // signs only a plan whose verified manifest says ready).
  if (context.mode == Mode::plan) manifest["ready"] = outcome.exit_code == ExitCode::accepted;
  if (outcome.detection_to_restore)
    manifest["detection_to_restore_ms"] = outcome.detection_to_restore->count();
  if (outcome.settle_restored) manifest["restore_held_after_ms"] = outcome.settle_restored->count();
  if (outcome.restore_dwell) manifest["restore_dwell_ms"] = outcome.restore_dwell->count();
  if (outcome.detection_to_rollback_sent)
    manifest["detection_to_rollback_sent_ms"] = outcome.detection_to_rollback_sent->count();
  if (outcome.rollback_sent_to_verified)
    manifest["rollback_sent_to_verified_ms"] = outcome.rollback_sent_to_verified->count();
  for (const auto& approval : outcome.approvals)
    manifest["approvals"].push_back(approval.to_json());
  // Settings that weaken security, allowed only in a lab: the evidence says the run used them.
  manifest["lab_only_settings"] = intent::lab_only_settings(context.repository.inventory);
  return manifest;
}

nlohmann::json render_rehearsal_json(const ReportContext& context, const RunOutcome& outcome) {
  nlohmann::json gates = nlohmann::json::array();
  for (const auto& gate : outcome.gates)
    gates.push_back({{"name", gate.name},
                     {"verdict", std::string(to_string(gate.verdict))},
                     {"summary", gate.summary}});
  return {{"format", "fabgate.rehearsal/1"},
          {"digest", plan_digest(context.repository, context.change)},
          {"change", context.change.id},
          {"commit", context.repository.commit.id},
          {"run_id", context.run_id},
          {"passed", context.mode == Mode::rehearse && outcome.exit_code == ExitCode::accepted},
          {"exit", to_int(outcome.exit_code)},
          {"device_state", outcome.device_state},
          {"detection_to_restore_ms", outcome.detection_to_restore
                                          ? nlohmann::json(outcome.detection_to_restore->count())
                                          : nlohmann::json(nullptr)},
          {"gates", gates},
          {"finished_at", format_utc(now_utc())}};
}

nlohmann::json render_summary_json(const ReportContext& context, const RunOutcome& outcome,
                                   const std::string& evidence_dir) {
  nlohmann::json summary = render_manifest(context, outcome);
  summary["evidence"] = evidence_dir;
  summary["layers"] = outcome.layers;
  summary["diagnosis"] = outcome.diagnosis;
  if (outcome.telemetry) summary["telemetry"] = to_json(*outcome.telemetry);
  if (outcome.rollback_telemetry)
    summary["rollback_telemetry"] = to_json(*outcome.rollback_telemetry);
  nlohmann::json gates = nlohmann::json::array();
  for (const auto& gate : outcome.gates)
    gates.push_back({{"name", gate.name},
                     {"verdict", std::string(to_string(gate.verdict))},
                     {"summary", gate.summary},
                     {"details", gate.details},
                     {"duration_ms", gate.duration.count()}});
  summary["gates"] = gates;
  return summary;
}

}  // namespace fabgate::pipeline
