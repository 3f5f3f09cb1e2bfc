#pragma once

// Redundancy budgets (issue 32): how much of a group of devices may be in change at once,
// across every controller that changes the fleet. Read from policies/budgets.yaml:
//
//   budgets:
//     - name: spines-per-pod
//       role: spine          # the devices it counts, by inventory role
//       labels: {tier: dc}   # optional: and by inventory labels
//       per: pod             # optional: one group per value of this label
//       max_in_change: 1     # at most this many at once, or
//     - name: leaves-per-pod
//       role: leaf
//       per: pod
//       max_percent: 25      # at most this share of the group, rounded down
//
// docs/coordination.md.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/diagnostics.h"
#include "adapters/core/result.h"
#include "gates/intent/model.h"

namespace fabgate::coordination {

struct Budget {
  std::string name;
  std::string role;
  std::map<std::string, std::string> labels;
  std::string per;                   // empty: the budget is one group over the whole fleet
  std::optional<int> max_in_change;  // exactly one of these two
  std::optional<int> max_percent;
  SourceLocation where;

  bool counts(const intent::Device& device) const;
  // The devices a group of `size` may have in change at once.
  int capacity(int size) const;
};

struct BudgetPolicy {
  std::string file;
  std::vector<Budget> budgets;
};

// True for text usable as one segment of a coordination key: 1-128 of [A-Za-z0-9._-], not "."
// or "..".
bool plain_key_segment(const std::string& text);

// Parses a budgets file. Every problem is reported with file:line:column; names are unique and
// safe as a key segment ([A-Za-z0-9._-]).
Result<BudgetPolicy> load_budgets(std::string_view yaml_text, const std::string& file_name);

// One group of one budget: its members in the inventory and how many may be in change at once.
struct BudgetGroup {
  std::string budget;
  std::string group;  // the `per` label's value; empty when the budget has no `per`
  int size = 0;
  int capacity = 0;
  SourceLocation where;  // the budget's
  std::vector<std::string> members;  // every device of the group in the inventory, sorted

  std::string describe() const;  // "spines-per-pod (pod=p3)" / "all-spines"
};

// Every group of every budget, in the file's order of budgets and by group name within one: the
// fleet view shows each with its headroom, claimed or not. Invalid input (exit 2) when a counted
// device lacks the `per` label or has one that cannot name a group, with file:line:column.
Result<std::vector<BudgetGroup>> groups_of(const BudgetPolicy& policy,
                                           const intent::Inventory& inventory);

// What one change needs of one group: the targets it counts.
struct Demand {
  BudgetGroup group;
  std::vector<std::string> devices;  // sorted
};

// The groups `targets` fall into and the targets in each. Invalid input (exit 2) when a counted
// device lacks the `per` label, or when the change's own targets exceed a group's capacity (it
// could never run, whatever else is in change): each named with the budget's file:line:column.
Result<std::vector<Demand>> demands_of(const BudgetPolicy& policy,
                                       const intent::Inventory& inventory,
                                       const std::vector<std::string>& targets);

}  // namespace fabgate::coordination
