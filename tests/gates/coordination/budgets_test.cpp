// The budgets file (policies/budgets.yaml) and the groups a change's targets fall into.

#include "gates/coordination/budgets.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fabgate::coordination {
namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

// Two pods: each with two spines and four leaves; a host without a pod.
intent::Inventory two_pods() {
  intent::Inventory inventory;
  auto add = [&](std::string name, std::string role, std::string pod) {
    intent::Device device;
    device.name = std::move(name);
    device.role = std::move(role);
    if (!pod.empty()) device.labels["pod"] = std::move(pod);
    device.where = {"inventory.yaml", static_cast<int>(inventory.devices.size()) + 2, 3};
    inventory.devices.push_back(std::move(device));
  };
  for (std::string pod : {"p1", "p2"}) {
    add("spine1-" + pod, "spine", pod);
    add("spine2-" + pod, "spine", pod);
    for (int leaf = 1; leaf <= 4; ++leaf)
      add("leaf" + std::to_string(leaf) + "-" + pod, "leaf", pod);
  }
  add("host1", "host", "");
  return inventory;
}

const char* kBudgets = R"(budgets:
  - name: spines-per-pod
    role: spine
    per: pod
    max_in_change: 1
  - name: leaves-per-pod
    role: leaf
    per: pod
    max_percent: 25
)";

TEST(Budgets, AChangeFallsIntoTheGroupsOfItsTargets) {
  // Given one spine per pod and 25 % of a pod's leaves, then draining spine1 of pod p1 needs
  // one unit of spines-per-pod (pod=p1) and nothing else; a host counts in no budget.
  auto policy = load_budgets(kBudgets, "policies/budgets.yaml");
  ASSERT_TRUE(policy) << policy.error().message << joined(policy.error().details);
  auto demands = demands_of(*policy, two_pods(), {"spine1-p1", "host1"});
  ASSERT_TRUE(demands) << joined(demands.error().details);
  ASSERT_EQ(demands->size(), 1u);
  const auto& demand = demands->front();
  EXPECT_EQ(demand.group.describe(), "spines-per-pod (pod=p1)");
  EXPECT_EQ(demand.group.size, 2);
  EXPECT_EQ(demand.group.capacity, 1);
  EXPECT_EQ(demand.devices, (std::vector<std::string>{"spine1-p1"}));
}

TEST(Budgets, EveryGroupOfEveryBudgetIsListedWithItsSizeAndCapacity) {
  // Given one spine per pod and 25 % of a pod's leaves over two pods, then the fleet view's
  // groups are both budgets' groups of both pods, in the file's order, each with its size and
  // capacity, whatever any change targets; a counted device without the pod label is invalid.
  auto policy = load_budgets(kBudgets, "policies/budgets.yaml");
  ASSERT_TRUE(policy) << policy.error().message << joined(policy.error().details);
  auto groups = groups_of(*policy, two_pods());
  ASSERT_TRUE(groups) << joined(groups.error().details);
  std::vector<std::string> described;
  for (const auto& group : *groups)
    described.push_back(group.describe() + " " + std::to_string(group.capacity) + "/" +
                        std::to_string(group.size));
  EXPECT_EQ(described, (std::vector<std::string>{
                           "spines-per-pod (pod=p1) 1/2", "spines-per-pod (pod=p2) 1/2",
                           "leaves-per-pod (pod=p1) 1/4", "leaves-per-pod (pod=p2) 1/4"}));

  auto unlabelled = two_pods();
  unlabelled.devices[0].labels.clear();
  auto refused = groups_of(*policy, unlabelled);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(joined(refused.error().details)
                .find("counts device 'spine1-p1' (role spine) but it "
                      "has no label 'pod'"),
            std::string::npos)
      << joined(refused.error().details);
}

TEST(Budgets, APercentOfAGroupRoundsDown) {
  // Given 25 % of four leaves, then one leaf per pod may be in change; a budget of 25 % over a
  // group of three allows none.
  Budget quarter{"q", "leaf", {}, "", std::nullopt, 25, {}};
  EXPECT_EQ(quarter.capacity(4), 1);
  EXPECT_EQ(quarter.capacity(7), 1);
  EXPECT_EQ(quarter.capacity(8), 2);
  EXPECT_EQ(quarter.capacity(3), 0);
  Budget count{"c", "leaf", {}, "", 3, std::nullopt, {}};
  EXPECT_EQ(count.capacity(2), 2) << "a count larger than the group allows the whole group";
}

TEST(Budgets, AChangeWhoseOwnTargetsExceedABudgetIsInvalid) {
  // Given at most one spine per pod, then a change draining both spines of p1 is refused
  // before anything runs, naming the budget's file:line:column, the group and the bound; both
  // spines of different pods fit.
  auto policy = load_budgets(kBudgets, "policies/budgets.yaml");
  ASSERT_TRUE(policy);
  auto both = demands_of(*policy, two_pods(), {"spine1-p1", "spine2-p1"});
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(joined(both.error().details)
                .find("policies/budgets.yaml:2:5: the change's own targets exceed budget "
                      "spines-per-pod (pod=p1): it changes 2 of 2 devices, at most 1 may be in "
                      "change at once"),
            std::string::npos)
      << joined(both.error().details);
  auto apart = demands_of(*policy, two_pods(), {"spine1-p1", "spine1-p2"});
  ASSERT_TRUE(apart) << joined(apart.error().details);
  EXPECT_EQ(apart->size(), 2u);
}

TEST(Budgets, ACountedDeviceWithoutTheGroupingLabelIsInvalid) {
  // Given a spine without a pod label, then the budget cannot place it and says so, rather than
  // leaving it out of every count.
  auto inventory = two_pods();
  inventory.devices[0].labels.clear();
  auto policy = load_budgets(kBudgets, "policies/budgets.yaml");
  ASSERT_TRUE(policy);
  auto demands = demands_of(*policy, inventory, {"spine2-p1"});
  ASSERT_FALSE(demands);
  EXPECT_NE(joined(demands.error().details)
                .find("budget 'spines-per-pod' counts device 'spine1-p1' (role spine) but it has "
                      "no label 'pod'"),
            std::string::npos)
      << joined(demands.error().details);
}

TEST(Budgets, LabelsNarrowWhatABudgetCounts) {
  // Given a budget over spines labelled tier=core, then a spine without that label is not in it.
  auto inventory = two_pods();
  inventory.devices[0].labels["tier"] = "core";
  auto policy = load_budgets(
      "budgets:\n  - name: core\n    role: spine\n    labels: {tier: core}\n"
      "    max_in_change: 0\n",
      "b.yaml");
  ASSERT_TRUE(policy) << joined(policy.error().details);
  EXPECT_FALSE(demands_of(*policy, inventory, {"spine1-p1"}));
  auto other = demands_of(*policy, inventory, {"spine2-p1"});
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->empty());
}

TEST(Budgets, MistakesInTheFileAreNamedWithTheirPlace) {
  // Given a file with several mistakes, then each is reported at its line and column.
  auto policy = load_budgets(R"(budgets:
  - name: spines
    role: spine
    max_in_change: 1
    max_percent: 20
  - name: spines
    role: spine
    max_percent: 120
  - name: "a/b"
    role: leaf
    max_in_change: 1
  - name: leaves
    max_in_change: 1
    pre: pod
)",
                             "policies/budgets.yaml");
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error().exit_code, ExitCode::invalid_input);
  std::string details = joined(policy.error().details);
  EXPECT_NE(details.find("policies/budgets.yaml:2:5: error: budget 'spines' needs exactly one of "
                         "max_in_change and max_percent"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("policies/budgets.yaml:6:11: error: budget name 'spines' is used twice"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("policies/budgets.yaml:8:"), std::string::npos) << details;
  EXPECT_NE(details.find("budget name 'a/b' is not a plain name"), std::string::npos) << details;
  EXPECT_NE(details.find("policies/budgets.yaml:14:5"), std::string::npos)
      << "the misspelt key 'pre'\n"
      << details;
  EXPECT_NE(details.find("'role'"), std::string::npos) << details;
}

TEST(Budgets, AnEmptyFileLimitsNothing) {
  auto policy = load_budgets("", "policies/budgets.yaml");
  ASSERT_TRUE(policy);
  auto demands = demands_of(*policy, two_pods(), {"spine1-p1", "spine2-p1"});
  ASSERT_TRUE(demands);
  EXPECT_TRUE(demands->empty());
}

}  // namespace
}  // namespace fabgate::coordination
