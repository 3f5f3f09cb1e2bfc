#include "gates/app/validate_command.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/core/text.h"
#include "gates/app/intent_loading.h"
#include "gates/app/policy_check.h"
#include "gates/app/trusted_policy.h"
#include "gates/pipeline/reporting/reports.h"

namespace fabgate::app {
namespace {

nlohmann::json commit_json(const intent::CommitInfo& commit) {
  return {{"id", commit.id},
          {"author", commit.author_name + " <" + commit.author_email + ">"},
          {"committer", commit.committer_name + " <" + commit.committer_email + ">"},
          {"time", format_utc(commit.time)},
          {"summary", commit.summary},
          {"signed", commit.signed_commit}};
}

nlohmann::json problems_json(const Diagnostics& diagnostics) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& item : diagnostics.items()) {
    out.push_back({{"file", item.where.file},
                   {"line", item.where.line},
                   {"column", item.where.column},
                   {"message", item.message},
                   {"hint", item.hint}});
  }
  return out;
}

std::string role_summary(const intent::Inventory& inventory) {
  std::map<std::string, int> roles;
  for (const auto& device : inventory.devices) ++roles[device.role];
  std::vector<std::string> parts;
  for (const auto& [role, count] : roles) parts.push_back(std::to_string(count) + " " + role);
  return join(parts, ", ");
}

std::string change_summary(const intent::Change& change) {
  std::string out = change.id + ": " + change.title + "\n";
  out += "    targets   " + join(change.targets, ", ") + " (max " +
         std::to_string(change.bounds.max_targets) + ")\n";
  out += "    steps     " + std::to_string(change.steps.size()) + ", rollback " +
         std::to_string(change.rollback.size()) + "\n";
  out += "    bounds    step_timeout " + format_duration(change.bounds.step_timeout) +
         ", rollback_timeout " + format_duration(change.bounds.effective_rollback_timeout()) +
         ", deadline " + format_duration(change.bounds.deadline) + ", waves " +
         std::to_string(change.bounds.waves.empty() ? 1 : change.bounds.waves.size()) + "\n";
  if (change.window)
    out += "    window    " + format_utc(change.window->start) + " .. " +
           format_utc(change.window->end) + "\n";
  out += "    probes    " + std::to_string(change.acceptance.probes.size());
  return out;
}

// One JUnit testcase per intent file checked, failing with that file's file:line:column
// problems; problems that name no checked file (a missing file, an unknown change id) and the
// policy check get testcases of their own, so nothing found is left out of the report.
std::string validate_junit(const std::vector<std::string>& files, const Diagnostics& problems,
                           const std::vector<std::string>& policy_lines, const std::string& fatal) {
  struct Case {
    std::string classname, name;
    std::vector<std::string> failures;
  };
  std::vector<Case> cases;
  std::map<std::string, std::size_t> by_file;
  for (const auto& file : files) {
    by_file[file] = cases.size();
    cases.push_back({"intent.files", file, {}});
  }
  for (const auto& item : problems.items()) {
    std::string file = item.where.file;
    // A YAML syntax error carries its file:line:column in the message, not in `where`.
    if (file.empty())
      for (const auto& checked : files)
        if (starts_with(item.message, checked + ":")) file = checked;
    auto found = by_file.find(file);
    if (found == by_file.end()) {
      by_file[file] = cases.size();
      cases.push_back({"intent.files", file.empty() ? "intent" : file, {}});
      found = by_file.find(file);
    }
    cases[found->second].failures.push_back(item.where.file.empty() ? item.message
                                                                    : item.to_string());
  }
  if (!policy_lines.empty() || !files.empty())
    cases.push_back({"intent.policies", "policy check", policy_lines});
  if (!fatal.empty()) cases.push_back({"intent", "read intent", {fatal}});
  std::size_t failures = 0;
  for (const auto& test : cases) failures += !test.failures.empty();
  using pipeline::xml_escape;
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites name=\"fabgate\" tests=\"" << cases.size() << "\" failures=\"" << failures
      << "\">\n";
  xml << "  <testsuite name=\"validate\" tests=\"" << cases.size() << "\" failures=\"" << failures
      << "\">\n";
  for (const auto& test : cases) {
    xml << "    <testcase classname=\"" << xml_escape(test.classname) << "\" name=\""
        << xml_escape(test.name) << "\">\n";
    if (!test.failures.empty()) {
      xml << "      <failure type=\"invalid\" message=\"" << xml_escape(test.failures.front())
          << "\">" << xml_escape(join(test.failures, "\n")) << "</failure>\n";
    }
    xml << "    </testcase>\n";
  }
  xml << "  </testsuite>\n</testsuites>\n";
  return xml.str();
}

void write_junit(const CommonOptions& common, Console& console, const std::string& xml) {
  if (common.junit_file.empty()) return;
  std::ofstream junit(common.junit_file);
  junit << xml;
  if (!junit) console.warn("could not write " + common.junit_file);
}

}  // namespace

Result<ExitCode> run_validate(const CommonOptions& common, const ValidateOptions& options,
                              Console& console) {
  auto loaded = read_intent(common);
  if (!loaded.ok()) {
    // No intent to check (no repository, unknown ref, no intent root): still one document a CI
    // job can read, on stdout and in the JUnit file.
    const Error& error = loaded.error();
    if (console.json_mode())
      console.json({{"valid", false},
                    {"error", {{"message", error.message}, {"details", error.details}}},
                    {"exit_code", to_int(error.exit_code)},
                    {"problems", nlohmann::json::array()},
                    {"policy_problems", nlohmann::json::array()}});
    write_junit(common, console, validate_junit({}, Diagnostics{}, {}, error.message));
    return std::move(loaded).error();
  }
  const auto& outcome = loaded->outcome;
  const intent::Change* selected = nullptr;
  Diagnostics problems = outcome.diagnostics;
  if (outcome.repository && !options.change.empty()) {
    selected = outcome.repository->find_change(options.change);
    if (!selected) {
      std::vector<std::string> ids;
      for (const auto& change : outcome.repository->changes) ids.push_back(change.id);
      std::string hint = "changes: " + join(ids, ", ");
      if (auto s = nearest_word(options.change, ids)) hint = "did you mean '" + *s + "'?";
      problems.error(
          SourceLocation{},
          "no change '" + options.change + "' at commit " + loaded->commit.id.substr(0, 12), hint);
    }
  }
  if (outcome.repository) {
    for (const auto& change : outcome.repository->changes) {
      if (selected && selected != &change) continue;
      for (const auto& device : intent::devices_without_rollback(change))
        problems.error(
            change.where,
            "change '" + change.id + "': device '" + device + "' has steps but no rollback steps",
            "every change must say how to undo itself on each device it touches; "
            "apply would refuse it");
    }
  }
  std::vector<std::string> policy_lines;
  if (outcome.repository) policy_lines = policy_problems(*outcome.repository);
  const bool valid = problems.empty() && policy_lines.empty();
  // Where plan and apply would read the approval policy from (docs/approvals.md); that there is
  // no trusted ref is not an intent problem, but apply would refuse, so it is said.
  std::string policy_from, policy_from_problem;
  if (outcome.repository) {
    auto trusted = read_trusted_policy(common, loaded.value(), nullptr);
    if (trusted.ok()) {
      policy_from = trusted->source;
      if (!trusted->edits.empty())
        policy_from += "; this commit edits it (" + join(trusted->edits, "; ") + ")";
    } else {
      policy_from_problem = trusted.error().message;
    }
  }

  if (console.json_mode()) {
    nlohmann::json document = {{"valid", valid},
                               {"commit", commit_json(loaded->commit)},
                               {"intent_root", loaded->intent_root},
                               {"problems", problems_json(problems)},
                               {"policy_problems", policy_lines},
                               {"uncommitted", loaded->uncommitted}};
    if (!policy_from.empty()) document["approval_policy_from"] = policy_from;
    if (!policy_from_problem.empty()) document["approval_policy_problem"] = policy_from_problem;
    if (outcome.repository) {
      const auto& repository = *outcome.repository;
      document["devices"] = repository.inventory.devices.size();
      nlohmann::json changes = nlohmann::json::array();
      for (const auto& change : repository.changes)
        changes.push_back({{"id", change.id}, {"file", change.file}, {"targets", change.targets}});
      document["changes"] = changes;
      document["policies"] = repository.policy_files;
    }
    console.json(document);
  }

  write_junit(common, console, validate_junit(loaded->files, problems, policy_lines, ""));

  for (const auto& file : loaded->uncommitted)
    console.warn("work tree differs from commit " + loaded->commit.id.substr(0, 12) + ": " + file +
                 " (validated the commit; plan and apply will refuse until it is committed)");
  if (!policy_from_problem.empty())
    console.warn(policy_from_problem + " (plan and apply will refuse until there is one)");
  if (loaded->outcome.repository) warn_lab_only_settings(*loaded->outcome.repository, console);

  if (!valid) {
    auto lines = problems.lines();
    lines.insert(lines.end(), policy_lines.begin(), policy_lines.end());
    return Error::invalid_input("intent at " + loaded->commit.id.substr(0, 12) + " has " +
                                    std::to_string(lines.size()) + " problem" +
                                    (lines.size() == 1 ? "" : "s"),
                                lines);
  }
  if (!console.json_mode()) {
    const auto& repository = *outcome.repository;
    const auto& commit = loaded->commit;
    console.line(console.green("valid") + ": intent at " + commit.id.substr(0, 12));
    console.line("  commit    " + commit.id.substr(0, 12) + " \"" + commit.summary + "\" by " +
                 commit.author_name + " <" + commit.author_email + ">, " + format_utc(commit.time) +
                 (commit.signed_commit ? ", signed" : ", unsigned"));
    console.line("  root      " + (loaded->intent_root.empty() ? "." : loaded->intent_root));
    console.line("  devices   " + std::to_string(repository.inventory.devices.size()) + " (" +
                 role_summary(repository.inventory) + ")");
    std::vector<std::string> ids;
    for (const auto& change : repository.changes) ids.push_back(change.id);
    console.line("  changes   " + std::to_string(ids.size()) +
                 (ids.empty() ? "" : ": " + join(ids, ", ")));
    console.line("  policies  " + std::to_string(repository.policy_files.size()) + " files");
    if (!policy_from.empty()) console.line("  approval  policy from " + policy_from);
    if (selected) console.line("  change    " + change_summary(*selected));
  }
  return ExitCode::accepted;
}

}  // namespace fabgate::app
