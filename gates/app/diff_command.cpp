#include "gates/app/diff_command.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "adapters/core/duration.h"
#include "adapters/core/text.h"
#include "adapters/core/time.h"
#include "gates/compare/default_rules.h"
#include "gates/compare/engine.h"
#include "gates/compare/exception_register.h"
#include "gates/compare/expected_differences.h"
#include "gates/compare/rule_set.h"
#include "gates/compare/snapshot.h"
#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/reporting/report_html.h"

namespace fabgate::app {

namespace {

Result<std::string> read_text(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::invalid_input(what + " " + path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<std::vector<compare::RuleSet>> load_rules(const DiffOptions& options) {
  std::vector<compare::RuleSet> sets;
  if (options.rule_files.empty()) {
    auto set =
        compare::load_rule_set(compare::default_rule_set_text(), compare::kDefaultRuleSetName);
    if (!set) return set.error();
    sets.push_back(std::move(set).value());
    return sets;
  }
  // Every file is checked before giving up, so one run shows every broken rule file.
  std::vector<std::string> problems;
  for (const auto& file : options.rule_files) {
    auto text = read_text(file, "rule set");
    if (!text) {
      problems.push_back(text.error().message);
      continue;
    }
    auto set = compare::load_rule_set(*text, file);
    if (!set) {
      problems.insert(problems.end(), set.error().details.begin(), set.error().details.end());
      if (set.error().details.empty()) problems.push_back(set.error().message);
      continue;
    }
    sets.push_back(std::move(set).value());
  }
  if (!problems.empty()) return Error::invalid_input("invalid compare rules", problems);
  return sets;
}

// Said once, after the "compare PRE -> POST" line, when a snapshot is older than --max-age:
// which, how old, what it means and how to compare archived snapshots.
std::vector<std::string> stale_statement(const compare::Report& report,
                                         const DiffOptions& options) {
  if (report.stale.empty()) return {};
  std::vector<std::string> sides;
  Duration oldest{0};
  for (const auto& item : report.stale) {
    sides.push_back(item.side + " taken at " + format_utc(item.taken_at) + " is " +
                    compare::format_age(item.age) + " old");
    oldest = std::max(oldest, item.age);
  }
  // A max age that covers the oldest: whole hours from an hour up, else whole minutes.
  const Duration hour = std::chrono::hours(1), minute = std::chrono::minutes(1);
  Duration unit = oldest >= hour ? hour : minute;
  auto covering = Duration((oldest.count() / unit.count() + 1) * unit.count());
  return {
      "",
      "stale: " + join(sides, ", ") + ", older than max age " + format_duration(report.max_age) +
          ".",
      "  Nothing proves the devices still look like this, so no check can pass (exit 3); the",
      "  differences below are what the snapshots hold. To compare archived snapshots, give a",
      "  max age that covers them: fabgate diff --max-age " + format_duration(covering) + " " +
          options.pre_file + " " + options.post_file + " (or --max-age 0s: no age check).",
  };
}

}  // namespace

Result<ExitCode> run_diff(const DiffOptions& options, const CommonOptions& common,
                          Console& console) {
  (void)common;
  auto max_age = parse_duration(options.max_age);
  if (!max_age)
    return Error::invalid_input("--max-age '" + options.max_age + "' is not a duration",
                                {"write e.g. 10m, 1h or 0s (no age check)"});

  auto rule_sets = load_rules(options);
  if (!rule_sets) return rule_sets.error();

  std::vector<intent::ExpectedDifference> expected;
  if (!options.change_file.empty()) {
    auto text = read_text(options.change_file, "change");
    if (!text) return text.error();
    auto loaded = compare::load_expected_differences(*text, options.change_file);
    if (!loaded) return loaded.error();
    expected = std::move(loaded).value();
  }

  compare::ExceptionRegister exceptions;
  if (!options.exceptions_file.empty()) {
    auto text = read_text(options.exceptions_file, "exceptions register");
    if (!text) return text.error();
    auto loaded = compare::load_exception_register(*text, options.exceptions_file);
    if (!loaded) return loaded.error();
    exceptions = std::move(loaded).value();
  }

  // Large route tables make loading the slow part; the pair loader bounds its memory to one
  // file's parse at a time (docs/benchmarks.md "Comparison of two large snapshots").
  auto loaded = compare::load_snapshot_pair(options.pre_file, options.post_file);
  if (!loaded) return loaded.error();
  auto* pre = &loaded->pre;
  auto* post = &loaded->post;

  compare::CompareOptions compare_options;
  compare_options.max_age = *max_age;
  // Archived snapshots: one statement of their age instead of every element's no-evidence,
  // and the differences they hold still listed.
  compare_options.stale = compare::StaleSnapshots::stated_once;
  auto report =
      compare::compare_snapshots(*pre, *post, *rule_sets, expected, exceptions, compare_options);

  if (!options.html_file.empty()) {
    auto document = compare::to_json(report);
    pipeline::ComparisonInput view{"pre " + options.pre_file + " vs post " + options.post_file,
                                   &document, "", ""};
    auto written = pipeline::write_file_atomically(
        options.html_file, pipeline::render_comparison_page(view, console.redactor()));
    if (!written.ok())
      return Error::internal("diff: --html " + options.html_file + ": " + written.error().message);
  }

  if (console.json_mode()) {
    console.json(compare::to_json(report));
  } else {
    auto paint = [&](compare::Verdict verdict, std::string_view text) {
      switch (verdict) {
        case compare::Verdict::pass:
          return console.green(text);
        case compare::Verdict::fail:
          return console.red(text);
        case compare::Verdict::no_evidence:
          return console.red(text);
        case compare::Verdict::waived:
          return console.yellow(text);
      }
      return std::string(text);
    };
    auto lines = compare::render_human(report, paint);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      console.line(lines[i]);
      if (i == 0)
        for (const auto& stale : stale_statement(report, options)) console.line(stale);
    }
    if (!options.html_file.empty()) console.line("page: " + options.html_file);
  }
  return report.accepted() ? ExitCode::accepted : ExitCode::refused;
}

}  // namespace fabgate::app
