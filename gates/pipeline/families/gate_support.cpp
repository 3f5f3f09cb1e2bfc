#include "gates/pipeline/families/gate_support.h"

#include <algorithm>
#include <optional>

#include "gates/compare/default_rules.h"

namespace fabgate::pipeline {

Result<std::vector<compare::RuleSet>> rule_sets_for(const intent::IntentRepository& repository,
                                                    const intent::Change& change) {
  std::vector<std::string> names = repository.settings.rule_sets;
  for (const auto& name : change.compare.rule_sets)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::vector<compare::RuleSet> sets;
  const std::string compare_dir = repository.settings.policies_dir + "/compare/";
  for (const auto& name : names) {
    std::optional<compare::RuleSet> found;
    for (const auto& [path, text] : repository.policy_texts) {
      if (path.rfind(compare_dir, 0) != 0) continue;
      auto set = compare::load_rule_set(text, path);
      if (!set.ok()) return std::move(set).error();
      if (set->name == name) found = std::move(set.value());
    }
    if (!found && (name == "fabric-default" || name == "rdma-default")) {
      auto set = name == "fabric-default" ? compare::load_rule_set(compare::default_rule_set_text(),
                                                                   compare::kDefaultRuleSetName)
                                          : compare::load_rule_set(compare::rdma_rule_set_text(),
                                                                   compare::kRdmaRuleSetName);
      if (!set.ok()) return std::move(set).error();
      found = std::move(set.value());
    }
    if (!found) return Error::invalid_input("compare: rule set '" + name + "' not found");
    sets.push_back(std::move(*found));
  }
  return sets;
}

Result<compare::ExceptionRegister> exceptions_for(const intent::IntentRepository& repository) {
  // Waivers come from the trusted ref when the command read one: a change cannot waive its own
  // failing checks (docs/approvals.md).
  if (const auto& trusted = repository.trusted_policy) {
    if (!trusted->exceptions) return compare::ExceptionRegister{};
    return compare::load_exception_register(*trusted->exceptions,
                                            trusted->exceptions_path + " at " + trusted->source);
  }
  auto it = repository.policy_texts.find(repository.settings.policies_dir + "/exceptions.yaml");
  if (it == repository.policy_texts.end()) return compare::ExceptionRegister{};
  return compare::load_exception_register(it->second, it->first);
}

const compare::ExceptionEntry* waiver_of(const Result<compare::ExceptionRegister>& exceptions,
                                         const ProbeOutcome& outcome) {
  if (outcome.verdict == Verdict::pass || !exceptions.ok()) return nullptr;
  for (const auto& entry : exceptions->entries)
    if (!entry.expired(now_utc()) && entry.covers(outcome.host, "probe:" + outcome.name, {}))
      return &entry;
  return nullptr;
}

std::string check_line(const compare::CheckResult& result) {
  return "[" + std::string(compare::to_string(result.layer)) + "] " + result.path + ": " +
         result.pre.value_or("(absent)") + " -> " + result.post.value_or("(absent)") + ": " +
         result.reason +
         (result.exception_id.empty() ? "" : " (waived by " + result.exception_id + ")");
}

}  // namespace fabgate::pipeline
