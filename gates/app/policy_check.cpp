#include "gates/app/policy_check.h"

#include "gates/compare/exception_register.h"
#include "gates/compare/rule_set.h"
#include "gates/compat/matrix.h"
#include "gates/coordination/budgets.h"

#include <set>

namespace fabgate::app {
namespace {

void collect(const Error& error, const std::string& display, std::vector<std::string>& out) {
  if (error.details.empty()) {
    out.push_back(display + ": error: " + error.message);
    return;
  }
  for (const auto& detail : error.details) out.push_back(detail);
}

}  // namespace

std::vector<std::string> policy_problems(const intent::IntentRepository& repository) {
  std::vector<std::string> problems;
  const std::string& policies = repository.settings.policies_dir;
  auto shown = [&](const std::string& path) {
    return repository.root.empty() ? path : repository.root + "/" + path;
  };
  for (const auto& [path, text] : repository.policy_texts) {
    bool yaml = path.size() > 5 && path.compare(path.size() - 5, 5, ".yaml") == 0;
    if (yaml && path.rfind(policies + "/compare/", 0) == 0) {
      auto set = compare::load_rule_set(text, shown(path));
      if (!set.ok()) collect(set.error(), shown(path), problems);
    } else if (path == policies + "/exceptions.yaml") {
      auto exceptions = compare::load_exception_register(text, shown(path));
      if (!exceptions.ok()) collect(exceptions.error(), shown(path), problems);
    } else if (path == policies + "/compat.yaml") {
      auto matrix = compat::load_matrix(text, shown(path));
      if (!matrix.ok()) collect(matrix.error(), shown(path), problems);
    } else if (path == policies + "/budgets.yaml") {
      // The budgets, and every change against them: one whose own targets exceed a budget could
      // never run (docs/coordination.md).
      auto budgets = coordination::load_budgets(text, shown(path));
      if (!budgets.ok()) {
        collect(budgets.error(), shown(path), problems);
        continue;
      }
      std::set<std::string> seen;
      for (const auto& change : repository.changes) {
        auto demands = coordination::demands_of(*budgets, repository.inventory, change.targets);
        if (demands.ok()) continue;
        for (const auto& detail : demands.error().details)
          if (seen.insert(detail).second) problems.push_back("change '" + change.id + "': " + detail);
      }
    }
  }
  return problems;
}

}  // namespace fabgate::app
