// Gate twin: the change tried on a twin of the fabric around its targets before production
// (docs/twin.md). The twin itself lives in gates/pipeline/twin.

#include <algorithm>
#include <string>
#include <vector>

#include "gates/compare/engine.h"
#include "gates/pipeline/controller/pipeline.h"
#include "gates/pipeline/families/collector_snapshotter.h"
#include "gates/pipeline/families/gate_support.h"
#include "gates/pipeline/families/held_snapshot.h"
#include "gates/pipeline/twin/twin_rehearsal.h"

namespace fabgate::pipeline {

namespace {

// The twin settings in force: the trusted ref's when a command acts on devices (the change's
// own commit cannot switch its rehearsal off), else this commit's.
std::optional<intent::TwinSettings> twin_settings(const intent::IntentRepository& repository) {
  if (repository.trusted_policy) return repository.trusted_policy->twin;
  return repository.settings.twin;
}

}  // namespace

bool Pipeline::twin_wanted() const {
  if (options_.mode == Mode::twin) return true;
  if (options_.mode == Mode::plan) return false;
  auto settings = twin_settings(repository_);
  return settings && settings->enabled;
}

void Pipeline::rehearse_on_twin(GateRecord& record) {
  auto settings = twin_settings(repository_).value_or(intent::TwinSettings{});
  std::vector<std::string> profile_notes;
  auto profiles = trusted_profiles_for(repository_, profile_notes);
  if (!profiles.ok()) {
    record.verdict = Verdict::no_evidence;
    record.summary = "the collector profiles could not be read: " + profiles.error().message;
    return;
  }
  for (auto& note : profile_notes) record.details.push_back(std::move(note));
  twin::TwinOptions options;
  options.radius = settings.radius;
  options.converge_timeout = settings.converge_timeout;
  options.parallelism = std::max(1, options_.parallelism);
  options.fabric.state_root = settings.state_dir;

  // The twin is judged as production is: the same rule sets, exceptions and expected
  // differences, twin-after against twin-before.
  auto compare = [&](const HeldSnapshot& before, const HeldSnapshot& after) {
    twin::TwinComparison comparison;
    // The twin's own snapshots, as compared (twin-made interfaces and what the twin cannot
    // reproduce left out): the evidence of its verdict beside twin/report.json.
    for (const auto& [file, snapshot] :
         {std::pair{"twin/before.json", &before}, {"twin/after.json", &after}})
      if (auto written = with_.evidence.write_json(file, snapshot->document); !written.ok())
        comparison.lines.push_back("evidence: " + written.error().message);
    auto rule_sets = rule_sets_for(repository_, change_);
    auto exceptions = exceptions_for(repository_);
    auto parsed_before = comparable_snapshot(before.document, before.routes, "twin/before.json");
    auto parsed_after = comparable_snapshot(after.document, after.routes, "twin/after.json");
    for (const auto* problem :
         {rule_sets.ok() ? nullptr : &rule_sets.error(),
          exceptions.ok() ? nullptr : &exceptions.error(),
          parsed_before.ok() ? nullptr : &parsed_before.error(),
          parsed_after.ok() ? nullptr : &parsed_after.error()})
      if (problem) comparison.lines.push_back("the comparison could not run: " + problem->message);
    if (!comparison.lines.empty()) return comparison;
    compare::CompareOptions compare_options;
    compare_options.max_age = repository_.settings.snapshot_max_age;
    auto report = compare::compare_snapshots(parsed_before.value(), parsed_after.value(),
                                             rule_sets.value(), change_.compare.expected,
                                             exceptions.value(), compare_options);
    for (const auto& result : report.results)
      if (result.verdict == compare::Verdict::fail || result.verdict == compare::Verdict::no_evidence)
        comparison.lines.push_back(check_line(result));
    if (report.first_disproven && *report.first_disproven < report.results.size()) {
      auto headline = check_line(report.results[*report.first_disproven]);
      auto it = std::find(comparison.lines.begin(), comparison.lines.end(), headline);
      if (it != comparison.lines.end()) std::rotate(comparison.lines.begin(), it, it + 1);
    }
    comparison.verdict = report.accepted()   ? Verdict::pass
                         : report.failed > 0 ? Verdict::fail
                                             : Verdict::no_evidence;
    return comparison;
  };

  twin::TwinInputs inputs{repository_.inventory,      change_,
                          pre_,                        profiles.value(),
                          repository_.settings.probes, repository_.commit.id,
                          compare,                     repository_.settings.secret_env};
  auto outcome = twin::rehearse_on_twin(inputs, options);
  auto written = with_.evidence.write_json("twin/report.json", outcome.report);
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);

  record.verdict = outcome.verdict;
  record.summary = outcome.summary;
  for (auto& line : outcome.details) record.details.push_back(std::move(line));
  if (outcome.report.contains("fidelity_gaps"))
    record.details.push_back(
        "the twin's limits for this change: " +
        std::to_string(outcome.report["fidelity_gaps"].size()) + " (twin/report.json)");
  // A twin that could not judge the change refuses it unless the change says why it does not
  // want one; a twin that disproved it always refuses.
  // `fabgate twin` is asked for the twin's verdict itself: no waiver there.
  if (outcome.verdict == Verdict::no_evidence && options_.mode != Mode::twin) {
    auto waived = change_.not_wanted.find("twin");
    if (waived != change_.not_wanted.end()) {
      record.verdict = Verdict::pass;
      record.summary = "no twin verdict (" + outcome.summary + "); the change does not want one: " +
                       waived->second;
    }
  }
  if (outcome.verdict == Verdict::fail) {
    record.details.push_back("production untouched: no step was sent to any device");
  }
}

}  // namespace fabgate::pipeline
