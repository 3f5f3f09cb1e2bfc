// The fleet view (`fabgate status`) against the real Debian etcd 3.4 (one member on a reserved
// 127.0.0.1 port, data in a temp folder): runs alive and dead, every budget group with its
// headroom, the budget queue in the order runs joined it, records it cannot read, and a store it
// cannot reach.

#include "gates/coordination/fleet.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/adapters/etcd/etcd_fixture.h"

namespace fabgate::coordination {
namespace {

using namespace std::chrono_literals;
using etcd::testing::eventually;
using etcd::testing::open_client;

const std::string kPrefix = "/fabgate/fabric-a";

// Two pods, each with two spines and four leaves.
intent::Inventory two_pods() {
  intent::Inventory inventory;
  for (std::string pod : {"p1", "p2"}) {
    std::vector<std::pair<std::string, std::string>> devices{{"spine1-" + pod, "spine"},
                                                             {"spine2-" + pod, "spine"}};
    for (int leaf = 1; leaf <= 4; ++leaf)
      devices.emplace_back("leaf" + std::to_string(leaf) + "-" + pod, "leaf");
    for (auto& [name, role] : devices) {
      intent::Device device;
      device.name = name;
      device.role = role;
      device.labels["pod"] = pod;
      inventory.devices.push_back(std::move(device));
    }
  }
  return inventory;
}

// One spine per pod; half of a pod's leaves.
const char* kBudgets = R"(budgets:
  - name: spines-per-pod
    role: spine
    per: pod
    max_in_change: 1
  - name: leaves-per-pod
    role: leaf
    per: pod
    max_percent: 50
)";

std::string queue_record(const std::string& run, const std::string& group) {
  return R"({"run":")" + run + R"(","operator":"dana","change":"mtu-)" + run +
         R"(","controller":"ci-9","since":"2026-12-03T09:00:00Z",)" +
         R"("until":"2026-12-03T09:30:00Z","groups":[")" + group + R"("]})";
}

class FleetStatus : public etcd::testing::OneEtcdMember {
 protected:
  void SetUp() override {
    OneEtcdMember::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto policy = load_budgets(kBudgets, "policies/budgets.yaml");
    ASSERT_TRUE(policy) << policy.error().message;
    policy_ = *policy;
    auto groups = groups_of(policy_, inventory_);
    ASSERT_TRUE(groups) << groups.error().message;
    groups_ = *groups;
  }

  // Claims `targets` for a run, its alive key on `lease` (0: none).
  void claim(etcd::EtcdClient& client, const std::string& run, const std::string& who,
             const std::vector<std::string>& targets, std::int64_t lease) {
    auto demands = demands_of(policy_, inventory_, targets);
    ASSERT_TRUE(demands) << demands.error().message;
    BudgetLedger ledger(client, kPrefix);
    auto claimed =
        ledger.claim(RunIdentity{run, who, "drain-" + run, "ctl-" + who, lease}, *demands);
    ASSERT_TRUE(claimed) << claimed.error().message;
  }

  intent::Inventory inventory_ = two_pods();
  BudgetPolicy policy_;
  std::vector<BudgetGroup> groups_;
};

const GroupView* find_group(const coordination::FleetView& view, const std::string& budget,
                            const std::string& group) {
  for (const auto& candidate : view.groups)
    if (candidate.group.budget == budget && candidate.group.group == group) return &candidate;
  return nullptr;
}

TEST_F(FleetStatus, ShowsAliveAndDeadHoldersHeadroomAndTheQueueInOrder) {
  // Given alice's run holding spine1-p1 and leaf1-p1 on a kept lease, bob's run holding
  // spine1-p2 whose 1 s lease expired, a claim record in p2's spines that cannot be read, a
  // claim under a budget the file no longer has, and three runs queued (the second one's key
  // sorts first; the third one's record has groups of the wrong type), then the view lists
  // alice's run in flight with its lease, every group of the file with its capacity and
  // headroom (p2's leaves too, where nothing is claimed), alice alive and bob dead, the
  // unreadable record as holding the whole group, the queue in the order the runs joined it, and
  // bob's run, the unreadable one and the retired budget's holder as dead runs to recover.
  auto client = open_client(cluster_->endpoints());
  auto alice_lease = client.grant(60);
  ASSERT_TRUE(alice_lease) << alice_lease.error().message;
  claim(client, "run-alice", "alice", {"spine1-p1", "leaf1-p1"}, alice_lease->id);
  auto bob_lease = client.grant(1);
  ASSERT_TRUE(bob_lease) << bob_lease.error().message;
  claim(client, "run-bob", "bob", {"spine1-p2"}, bob_lease->id);
  ASSERT_TRUE(eventually([&] {
    auto alive = client.get(kPrefix + "/runs/run-bob/alive");
    return alive && alive->kvs.empty();
  })) << "bob's lease did not expire";
  ASSERT_TRUE(client.put(kPrefix + "/budgets/spines-per-pod/pod=p2/claims/run-x", "{\"devices\":"));
  ASSERT_TRUE(client.put(kPrefix + "/budgets/retired/all/claims/run-old",
                         R"({"run":"run-old","operator":"eve","change":"old","controller":"ci-1",)"
                         R"("devices":["leaf4-p1"],"claimed_at":"2026-11-30T10:00:00Z"})"));
  ASSERT_TRUE(
      client.put(kPrefix + "/queue/run-q2", queue_record("run-q2", "leaves-per-pod/pod=p1")));
  ASSERT_TRUE(
      client.put(kPrefix + "/queue/run-q1", queue_record("run-q1", "spines-per-pod/pod=p1")));
  ASSERT_TRUE(client.put(kPrefix + "/queue/run-q0",
                         R"({"until":"2026-12-03T09:30:00Z",)"
                         R"("since":"2026-12-03T09:00:00Z","groups":"all"})"));

  auto view = read_fleet(client, kPrefix, groups_);
  ASSERT_TRUE(view) << view.error().message;

  ASSERT_EQ(view->runs.size(), 1u);
  EXPECT_EQ(view->runs[0].run_id, "run-alice");
  EXPECT_EQ(view->runs[0].controller, "ctl-alice");
  EXPECT_EQ(view->runs[0].granted_ttl_s, 60);
  EXPECT_GT(view->runs[0].ttl_left_s, 0);
  EXPECT_LE(view->runs[0].ttl_left_s, 60);

  // The file's four groups in its order, then the claims it has no budget for.
  ASSERT_EQ(view->groups.size(), 5u);
  EXPECT_EQ(view->groups[0].group.describe(), "spines-per-pod (pod=p1)");
  EXPECT_EQ(view->groups[3].group.describe(), "leaves-per-pod (pod=p2)");
  EXPECT_FALSE(view->groups[4].in_budgets_file);
  EXPECT_EQ(view->groups[4].group.budget, "retired");

  const auto* spines_p1 = find_group(*view, "spines-per-pod", "pod=p1");
  ASSERT_TRUE(spines_p1);
  EXPECT_EQ(spines_p1->group.capacity, 1);
  EXPECT_EQ(spines_p1->in_change, std::vector<std::string>{"spine1-p1"});
  EXPECT_EQ(spines_p1->headroom(), 0);
  ASSERT_EQ(spines_p1->holders.size(), 1u);
  EXPECT_TRUE(spines_p1->holders[0].alive);
  EXPECT_EQ(spines_p1->holders[0].run.operator_name, "alice");
  EXPECT_FALSE(spines_p1->holders[0].claimed_at.empty());

  const auto* leaves_p1 = find_group(*view, "leaves-per-pod", "pod=p1");
  ASSERT_TRUE(leaves_p1);
  EXPECT_EQ(leaves_p1->group.size, 4);
  EXPECT_EQ(leaves_p1->group.capacity, 2);
  EXPECT_EQ(leaves_p1->headroom(), 1);

  const auto* spines_p2 = find_group(*view, "spines-per-pod", "pod=p2");
  ASSERT_TRUE(spines_p2);
  ASSERT_EQ(spines_p2->holders.size(), 2u);
  EXPECT_EQ(spines_p2->holders[0].run.run_id, "run-bob");
  EXPECT_FALSE(spines_p2->holders[0].alive);
  EXPECT_FALSE(spines_p2->holders[1].readable);
  EXPECT_TRUE(spines_p2->full_by_unreadable());
  EXPECT_EQ(spines_p2->headroom(), 0);

  const auto* leaves_p2 = find_group(*view, "leaves-per-pod", "pod=p2");
  ASSERT_TRUE(leaves_p2);
  EXPECT_TRUE(leaves_p2->holders.empty());
  EXPECT_EQ(leaves_p2->headroom(), 2);

  ASSERT_EQ(view->queue.size(), 3u);
  EXPECT_EQ(view->queue[0].run.run_id, "run-q2");
  EXPECT_EQ(view->queue[0].groups, std::vector<std::string>{"leaves-per-pod/pod=p1"});
  EXPECT_EQ(view->queue[0].until, "2026-12-03T09:30:00Z");
  EXPECT_EQ(view->queue[1].run.run_id, "run-q1");
  EXPECT_EQ(view->queue[2].run.run_id, "run-q0");
  EXPECT_FALSE(view->queue[2].readable);
  EXPECT_NE(view->queue[2].problem.find("groups"), std::string::npos) << view->queue[2].problem;

  ASSERT_EQ(view->dead.size(), 3u);
  EXPECT_EQ(view->dead[0].run_id, "run-bob");
  EXPECT_EQ(view->dead[0].change, "drain-run-bob");
  EXPECT_EQ(view->dead[0].devices, std::vector<std::string>{"spine1-p2"});
  EXPECT_EQ(view->dead[1].run_id, "run-old");
  EXPECT_EQ(view->dead[1].groups, std::vector<std::string>{"retired"});
  EXPECT_EQ(view->dead[2].run_id, "run-x");
  EXPECT_FALSE(view->dead[2].readable);
}

TEST_F(FleetStatus, AnEmptyStoreShowsEveryGroupWithItsFullHeadroom) {
  // Given nothing claimed, queued or running, then every group of the file is listed with all
  // its capacity free, and nothing else.
  auto client = open_client(cluster_->endpoints());
  auto view = read_fleet(client, kPrefix, groups_);
  ASSERT_TRUE(view) << view.error().message;
  EXPECT_TRUE(view->runs.empty());
  EXPECT_TRUE(view->queue.empty());
  EXPECT_TRUE(view->dead.empty());
  ASSERT_EQ(view->groups.size(), 4u);
  for (const auto& group : view->groups)
    EXPECT_EQ(group.headroom(), group.group.capacity) << group.group.describe();
}

TEST(FleetViewStore, AnUnreachableStoreIsAFailureNamingTheEndpointAndTheRead) {
  // Given no etcd at the endpoint, then reading the view fails (never an empty fleet), naming
  // the endpoint and what it was reading.
  const std::string endpoint =
      "http://127.0.0.1:" + std::to_string(fabgate::testing::reserve_test_port());
  auto client = open_client({endpoint}, 1s);
  auto view = read_fleet(client, kPrefix, {});
  ASSERT_FALSE(view);
  EXPECT_NE(view.error().message.find("coordination: read the runs in flight: etcd unreachable"),
            std::string::npos)
      << view.error().message;
  EXPECT_NE(view.error().message.find(endpoint), std::string::npos) << view.error().message;
}

}  // namespace
}  // namespace fabgate::coordination
