#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/redact.h"
#include "gates/pipeline/reporting/comparison_input.h"
#include "gates/pipeline/reporting/layer_recovery.h"
#include "gates/pipeline/run_outcome.h"
#include "gates/pipeline/reporting/reports.h"

namespace fabgate::pipeline {

// report.html: the evidence as one self-contained page (inline CSS and SVG, no script, no
// external fetch; a Content-Security-Policy forbids any). Every value that came from intent,
// devices or probes is redacted with the run's redactor, then cut to length, then HTML-escaped,
// so the page is written as it is (EvidenceBundle::write_redacted). docs/report.md says how to
// read it.

// How much of a large bundle the page shows; the rest is linked (raw files in the bundle). A
// 1M-route comparison stays a page of a few hundred KiB.
struct ReportHtmlLimits {
  std::size_t entries_per_rule = 20;  // differing elements listed per compare rule
  std::size_t rules = 60;             // compare rules listed per comparison and verdict
  std::size_t details_per_entry = 5;  // example lines (routes added/removed) per element
  std::size_t table_rows = 32;        // rows of a probe's per-flow / per-rank table
  std::size_t devices = 200;          // devices in the identity table
  std::size_t value_chars = 240;      // characters of one value (pre, post, reason...)
};

struct ReportHtmlInput {
  const ReportContext& context;
  const RunOutcome& outcome;
  // The snapshot whose per-device identity (software and firmware) the page lists; null or
  // not an object: the page says no identity was collected.
  const nlohmann::json* identity_snapshot = nullptr;
  std::vector<ComparisonInput> comparisons;
};

// The page draws `layers` (compute_layer_recovery of the same outcome and comparisons) as it
// is: the manifest's layer_recovery and the page never disagree.
std::string render_report_html(const ReportHtmlInput& input, const LayerRecovery& layers,
                               const ReportHtmlLimits& limits = {});

// report.html for a bundle being sealed, and the layer recovery it draws, for the manifest
// (to_json): reads the comparisons the run wrote (diffs/*-vs-pre.json) from `bundle_dir`,
// computes the layer recovery once from them and `outcome`, and takes identity from `baseline`
// (snapshots/pre). A comparison file that is missing or not JSON is left out, never thrown.
struct BundlePage {
  std::string html;
  LayerRecovery layers;
};
BundlePage render_bundle_report(const ReportContext& context, const RunOutcome& outcome,
                                const std::filesystem::path& bundle_dir,
                                const nlohmann::json& baseline);

// report.html of a bundle `recover` seals without running anything (the dead run had finished,
// or had sent no step): what recover found and why nothing was rolled back. It proves no layer,
// and says so: the crashed run's own records hold whatever evidence it gathered.
struct RecoverNotice {
  std::string change;
  std::string run_id;
  std::string mode;          // the dead run's mode: apply, rehearse
  std::string run_operator;  // who started the dead run
  std::string intent_commit;
  std::string recovered_by;
  std::uint64_t after_record = 0;  // the journal record the dead run stopped after
  std::string last_event;
  std::string why;  // recover's verdict in words
  ExitCode exit_code = ExitCode::internal_error;
};
std::string render_recover_notice_page(const RecoverNotice& notice, const Redactor& redactor);

// `fabgate diff PRE POST --html FILE`: the same comparison view as report.html, as a page of
// its own.
std::string render_comparison_page(const ComparisonInput& comparison, const Redactor& redactor,
                                   const ReportHtmlLimits& limits = {});

// Escapes text for HTML element content and attribute values; control characters other than
// tab and line breaks become '?'.
std::string html_escape(std::string_view text);

}  // namespace fabgate::pipeline
