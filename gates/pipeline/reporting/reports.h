#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "adapters/core/redact.h"
#include "gates/intent/model.h"
#include "gates/pipeline/run_outcome.h"

namespace fabgate::pipeline {

struct ReportContext {
  const intent::IntentRepository& repository;
  const intent::Change& change;
  Mode mode;
  std::string operator_name;
  std::string run_id;
  // The run's redactor: the Markdown and JUnit writers redact each value before they escape it.
  const Redactor& redactor;
};

// The change as data: targets, bounds, waves, steps, rollback, acceptance, expected
// differences. Used by plan.json and for the change digest.
nlohmann::json change_to_json(const intent::Change& change);
// sha256 over the canonical change JSON.
std::string change_digest(const intent::Change& change);
// sha256 over every policy file at the commit (path and content).
std::string policies_digest(const intent::IntentRepository& repository);

// report.md: written so that a reader of this file alone can tell what ran, what failed first,
// and what state the devices were left in.
std::string render_report_markdown(const ReportContext& context, const RunOutcome& outcome);
// review.md: for a reviewer in a pull request (what changes where, rollback, bounds, baseline).
std::string render_review_markdown(const ReportContext& context, const RunOutcome& outcome);
nlohmann::json render_plan_json(const ReportContext& context, const RunOutcome& outcome);
// rehearsal.json: the rehearsal record `apply` can be asked for (approval.require_rehearsal),
// bound to the plan digest. `passed` only when the change was accepted and its forced rollback
// was verified restored.
nlohmann::json render_rehearsal_json(const ReportContext& context, const RunOutcome& outcome);
// junit.xml: one testcase per gate and per probe; blocking verdicts are failures. Every value
// is redacted with context.redactor before it is escaped, so the text needs no further pass.
std::string render_junit(const ReportContext& context, const RunOutcome& outcome);
// manifest.json without its "files" map (EvidenceBundle::finish adds it).
nlohmann::json render_manifest(const ReportContext& context, const RunOutcome& outcome);
// The one JSON document `--json` prints for plan/apply/rehearse.
nlohmann::json render_summary_json(const ReportContext& context, const RunOutcome& outcome,
                                   const std::string& evidence_dir);

// Escapes text for markup (&, <, >, ", and ' as `apostrophe`); control characters other than
// tab and line breaks become '?'. xml_escape for JUnit, html_escape (report_html.h) for pages.
std::string escape_markup(std::string_view text, std::string_view apostrophe);
std::string xml_escape(const std::string& text);

}  // namespace fabgate::pipeline
