#include "gates/coordination/budgets.h"

#include <algorithm>
#include <map>
#include <set>

#include "adapters/core/yaml_reader.h"

namespace fabgate::coordination {

bool Budget::counts(const intent::Device& device) const {
  if (device.role != role) return false;
  for (const auto& [key, value] : labels) {
    auto found = device.labels.find(key);
    if (found == device.labels.end() || found->second != value) return false;
  }
  return true;
}

int Budget::capacity(int size) const {
  if (max_in_change) return std::min(*max_in_change, size);
  return static_cast<int>(static_cast<long long>(*max_percent) * size / 100);
}

bool plain_key_segment(const std::string& text) {
  return !text.empty() && text.size() <= 128 && text != "." && text != ".." &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
         });
}

std::string BudgetGroup::describe() const {
  return group.empty() ? budget : budget + " (" + group + ")";
}

namespace {

std::optional<Budget> read_budget(YamlReader& reader, const YAML::Node& node, std::size_t index,
                                  std::set<std::string>& names) {
  std::string what = "budget " + std::to_string(index + 1);
  if (!reader.expect_map(node, what)) return std::nullopt;
  reader.check_keys(node, {"name", "role", "labels", "per", "max_in_change", "max_percent"}, what);
  Budget budget;
  budget.where = reader.at(node);
  bool ok = true;
  if (auto name = reader.string(node, "name", Need::required, what)) {
    what = "budget '" + *name + "'";
    budget.name = *name;
    if (!plain_key_segment(*name)) {
      reader.error(node["name"], "budget name '" + *name + "' is not a plain name",
                   "letters, digits, '.', '_' and '-'");
      ok = false;
    } else if (!names.insert(*name).second) {
      reader.error(node["name"], "budget name '" + *name + "' is used twice");
      ok = false;
    }
  } else {
    ok = false;
  }
  if (auto role = reader.string(node, "role", Need::required, what)) {
    budget.role = *role;
  } else {
    ok = false;
  }
  if (auto labels = reader.child(node, "labels", Need::optional, what)) {
    if (reader.expect_map(*labels, "labels of " + what)) {
      for (const auto& entry : *labels) {
        if (!entry.second.IsScalar()) {
          reader.error(entry.second, "label '" + entry.first.as<std::string>() + "' of " + what +
                                         " must be a plain value");
          ok = false;
          continue;
        }
        budget.labels[entry.first.as<std::string>()] = entry.second.as<std::string>();
      }
    } else {
      ok = false;
    }
  }
  if (auto per = reader.string(node, "per", Need::optional, what)) budget.per = *per;
  bool has_count = static_cast<bool>(node["max_in_change"]);
  bool has_percent = static_cast<bool>(node["max_percent"]);
  if (has_count == has_percent) {
    reader.error(node, what + " needs exactly one of max_in_change and max_percent");
    return std::nullopt;
  }
  if (has_count) {
    auto count = reader.integer(node, "max_in_change", Need::required, what, 0, 100'000);
    if (!count) return std::nullopt;
    budget.max_in_change = static_cast<int>(*count);
  } else {
    auto percent = reader.integer(node, "max_percent", Need::required, what, 0, 100);
    if (!percent) return std::nullopt;
    budget.max_percent = static_cast<int>(*percent);
  }
  if (!ok) return std::nullopt;
  return budget;
}

}  // namespace

Result<BudgetPolicy> load_budgets(std::string_view yaml_text, const std::string& file_name) {
  auto parsed = parse_yaml(yaml_text, file_name);
  if (!parsed) return parsed.error();
  const YAML::Node& root = *parsed;
  Diagnostics diagnostics;
  YamlReader reader(file_name, diagnostics);
  BudgetPolicy policy;
  policy.file = file_name;
  if (root.IsNull()) return policy;  // no budgets: nothing is limited
  reader.check_duplicate_keys(root);
  if (reader.expect_map(root, "budgets file")) {
    reader.check_keys(root, {"budgets"}, "budgets file");
    auto list = reader.child(root, "budgets", Need::optional, "budgets file");
    if (list && reader.expect_sequence(*list, "'budgets'")) {
      std::set<std::string> names;
      for (std::size_t i = 0; i < list->size(); ++i)
        if (auto budget = read_budget(reader, (*list)[i], i, names))
          policy.budgets.push_back(std::move(*budget));
    }
  }
  if (!diagnostics.empty())
    return Error::invalid_input("budgets file " + file_name + " is invalid", diagnostics.lines());
  return policy;
}

namespace {

// The members of every group of `budget`, by group ("pod=p3"; "" for a budget without `per`),
// each sorted by inventory order. A counted device that cannot be placed in a group is a
// problem (file:line:column), never left out: leaving it out would hide it from every count.
std::map<std::string, std::vector<std::string>> members_of(const Budget& budget,
                                                           const intent::Inventory& inventory,
                                                           std::vector<std::string>& problems) {
  std::map<std::string, std::vector<std::string>> members;
  for (const auto& device : inventory.devices) {
    if (!budget.counts(device)) continue;
    std::string group;
    if (!budget.per.empty()) {
      auto label = device.labels.find(budget.per);
      if (label == device.labels.end()) {
        problems.push_back(budget.where.to_string() + ": budget '" + budget.name +
                           "' counts device '" + device.name + "' (role " + budget.role +
                           ") but it has no label '" + budget.per +
                           "' to group it by; label it in the inventory");
        continue;
      }
      group = budget.per + "=" + label->second;
      if (!plain_key_segment(label->second)) {
        problems.push_back(device.where.to_string() + ": label '" + budget.per + "' of device '" +
                           device.name + "' is '" + label->second + "', which budget '" +
                           budget.name +
                           "' cannot name a group by (letters, digits, '.', '_' and '-')");
        continue;
      }
    }
    members[group].push_back(device.name);
  }
  return members;
}

BudgetGroup group_of(const Budget& budget, const std::string& group,
                     std::vector<std::string> members) {
  std::sort(members.begin(), members.end());
  const int size = static_cast<int>(members.size());
  return BudgetGroup{budget.name, group, size, budget.capacity(size), budget.where,
                     std::move(members)};
}

}  // namespace

Result<std::vector<BudgetGroup>> groups_of(const BudgetPolicy& policy,
                                           const intent::Inventory& inventory) {
  std::vector<BudgetGroup> groups;
  std::vector<std::string> problems;
  for (const auto& budget : policy.budgets)
    for (const auto& [group, members] : members_of(budget, inventory, problems))
      groups.push_back(group_of(budget, group, members));
  if (!problems.empty())
    return Error::invalid_input(
        "the inventory does not fit the redundancy budgets of " + policy.file, problems);
  return groups;
}

Result<std::vector<Demand>> demands_of(const BudgetPolicy& policy,
                                       const intent::Inventory& inventory,
                                       const std::vector<std::string>& targets) {
  std::set<std::string> target_set(targets.begin(), targets.end());
  std::vector<Demand> demands;
  std::vector<std::string> problems;
  for (const auto& budget : policy.budgets) {
    // Group sizes count the whole inventory; the demand only the targets.
    for (const auto& [group, members] : members_of(budget, inventory, problems)) {
      std::vector<std::string> devices;
      for (const auto& member : members)
        if (target_set.count(member)) devices.push_back(member);
      if (devices.empty()) continue;
      std::sort(devices.begin(), devices.end());
      BudgetGroup budget_group = group_of(budget, group, members);
      if (static_cast<int>(devices.size()) > budget_group.capacity) {
        problems.push_back(budget.where.to_string() + ": the change's own targets exceed budget " +
                           budget_group.describe() + ": it changes " +
                           std::to_string(devices.size()) + " of " +
                           std::to_string(budget_group.size) + " devices, at most " +
                           std::to_string(budget_group.capacity) + " may be in change at once");
        continue;
      }
      demands.push_back(Demand{std::move(budget_group), std::move(devices)});
    }
  }
  if (!problems.empty())
    return Error::invalid_input("the change does not fit the redundancy budgets of " + policy.file,
                                problems);
  return demands;
}

}  // namespace fabgate::coordination
