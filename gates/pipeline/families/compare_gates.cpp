// Gates compare and compare-restored: a snapshot against the baseline under the run's rules.

#include "gates/pipeline/controller/pipeline.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <set>
#include <thread>
#include "adapters/core/text.h"
#include "gates/compare/default_rules.h"
#include "gates/compare/engine.h"
#include "gates/compare/exception_register.h"
#include "gates/compare/rule_set.h"
#include "gates/compare/snapshot.h"
#include "gates/compat/check.h"
#include "gates/compat/matrix.h"
#include "gates/pipeline/families/held_snapshot.h"
#include "gates/pipeline/families/identity_check.h"
#include "gates/pipeline/safety/interruption.h"
#include "gates/pipeline/families/monitoring.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/report_html.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/families/gate_support.h"

namespace fabgate::pipeline {

std::optional<compare::Report> Pipeline::compare_with_pre(const nlohmann::json& after,
                                                          const DeviceRouteTables& after_routes,
                                                          const std::string& label,
                                                          bool with_expected_differences,
                                                          std::vector<std::string>& problems) {
  auto rule_sets = rule_sets_for(repository_, change_);
  auto exceptions = exceptions_for(repository_);
  // The baseline is read once per run: settle-restored compares every round with it.
  if (!pre_parsed_)
    pre_parsed_ = std::make_shared<Result<compare::Snapshot>>(
        comparable_snapshot(pre_.document, pre_.routes, "snapshots/pre.json"));
  const auto& pre = *pre_parsed_;
  auto post = comparable_snapshot(after, after_routes, "snapshots/" + label + ".json");
  for (const auto* problem :
       {rule_sets.ok() ? nullptr : &rule_sets.error(),
        exceptions.ok() ? nullptr : &exceptions.error(), pre.ok() ? nullptr : &pre.error(),
        post.ok() ? nullptr : &post.error()}) {
    if (!problem) continue;
    problems.push_back(problem->message);
    for (const auto& detail : problem->details) problems.push_back(detail);
  }
  if (!problems.empty()) return std::nullopt;
  compare::CompareOptions options;
  options.max_age = repository_.settings.snapshot_max_age;
  // Every route that changed is named in diffs/ (report.md shows the first few).
  options.route_examples = 100'000;
  // After a rollback, counters (`increase` rules) count from the end of the rollback (the post
  // snapshot with the counter categories re-read then), or from the post snapshot that
  // captured the fault when they could not be re-read: a BFD session-down count or a drop
  // counter never returns to the baseline, so against it no restore could ever be verified,
  // and a session the rollback itself bounced on its way back is the rollback's, not a
  // relapse. Read per restored comparison (as the restored snapshot is): a round's cost grows
  // by one parse of that small document and one copy of its route tables.
  std::optional<Result<compare::Snapshot>> captured;
  const bool reread = counters_after_rollback_.document.is_object();
  const HeldSnapshot& since = reread ? counters_after_rollback_ : post_;
  if (label == "restored" && since.has_devices()) {
    captured.emplace(comparable_snapshot(
        since.document, since.routes,
        reread ? "snapshots/rollback-end.json" : "snapshots/post.json"));
    if (captured->ok()) {
      options.counters_since = &captured->value();
      if (reread) options.counters_since_what = "the end of the rollback";
    }
  }
  static const std::vector<intent::ExpectedDifference> kNone;
  return compare::compare_snapshots(pre.value(), post.value(), rule_sets.value(),
                                    with_expected_differences ? change_.compare.expected : kNone,
                                    exceptions.value(), options);
}

void Pipeline::compare(GateRecord& record, const HeldSnapshot& after, const std::string& label,
                       bool with_expected_differences) {
  std::vector<std::string> problems;
  auto compared =
      compare_with_pre(after.document, after.routes, label, with_expected_differences, problems);
  if (!compared) {
    record.verdict = Verdict::no_evidence;
    record.details = std::move(problems);
    record.summary = "the comparison could not run";
    return;
  }
  const compare::Report& report = *compared;
  auto json = compare::to_json(report);
  auto written = with_.evidence.write_json("diffs/" + label + "-vs-pre.json", json);
  if (written.ok())
    written = with_.evidence.write("diffs/" + label + "-vs-pre.txt",
                                   join(compare::render_human(report), "\n") + "\n");
  ChangeListing listing{label + " vs pre", "diffs/" + label + "-vs-pre-changes.txt",
                        changes_of(json)};
  if (written.ok()) written = with_.evidence.write(listing.file, change_listing_text(listing));
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
  outcome_.changes.push_back(std::move(listing));

  std::map<std::string, std::string> layers;
  for (const auto& result : report.results) {
    auto& layer = layers[std::string(compare::to_string(result.layer))];
    bool bad =
        result.verdict == compare::Verdict::fail || result.verdict == compare::Verdict::no_evidence;
    if (layer.empty() || (bad && layer != "fail"))
      layer = result.verdict == compare::Verdict::waived
                  ? "pass"
                  : std::string(compare::to_string(result.verdict));
    if (bad) record.details.push_back(check_line(result));
    // BFD and EVPN are control plane, and reported as their own layers too: an overlay report
    // must say whether EVPN held separately from the underlay's sessions.
    for (const char* part : {"bfd", "evpn"}) {
      if (result.path.find("devices." + result.device + "." + part + ".") != 0) continue;
      auto& own = layers[part];
      if (own.empty() || (bad && own != "fail"))
        own = result.verdict == compare::Verdict::waived
                  ? "pass"
                  : std::string(compare::to_string(result.verdict));
    }
  }
  for (const auto& [layer, verdict] : layers) outcome_.layers[label + "-compare"][layer] = verdict;
  if (report.first_disproven && !report.results.empty()) {
    // Put the first disproven hypothesis first, as the report's headline.
    std::string headline = check_line(report.results[*report.first_disproven]);
    auto it = std::find(record.details.begin(), record.details.end(), headline);
    if (it != record.details.end()) std::rotate(record.details.begin(), it, it + 1);
  }
  record.verdict = report.accepted()   ? Verdict::pass
                   : report.failed > 0 ? Verdict::fail
                                       : Verdict::no_evidence;
  record.summary = compare::summary_line(report);
}

}  // namespace fabgate::pipeline
