// Budget claims against the real Debian etcd 3.4 (one member on a reserved 127.0.0.1 port, data
// in a temp folder): two runs draining both spines of one pod, a race for the last unit, a dead
// holder keeping its claim until it is released, records another controller wrote badly, and
// an unreachable store.

#include "gates/coordination/claims.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/adapters/etcd/etcd_fixture.h"

namespace fabgate::coordination {
namespace {

using namespace std::chrono_literals;
using etcd::testing::eventually;
using etcd::testing::open_client;
using Kind = ClaimFailure::Kind;

const char* kPrefix = "/fabgate/fabric-a";

// The pod's spines are spine1 and spine2 (of pod P, whatever P), as the inventory would say.
Demand spine_of_pod(const std::string& device, const std::string& pod, int capacity = 1) {
  return Demand{BudgetGroup{"spines-per-pod",
                            "pod=" + pod,
                            2,
                            capacity,
                            {"budgets.yaml", 2, 5},
                            {"spine1", "spine2"}},
                {device}};
}

RunIdentity run(const std::string& id, const std::string& who, const std::string& change,
                const std::string& controller, std::int64_t lease = 0) {
  return RunIdentity{id, who, change, controller, lease};
}

class BudgetClaims : public etcd::testing::OneEtcdMember {};

TEST_F(BudgetClaims, TheSecondSpineOfAPodIsRefusedNamingWhoHoldsTheFirst) {
  // Given at most one spine per pod in change, when team A's run claims spine1 of p3 and team
  // B's run (another controller) then claims spine2 of p3, then B is refused naming the budget,
  // A's run, operator, change and controller; a spine of another pod is still allowed.
  auto a_client = client();
  auto b_client = client();
  BudgetLedger a(a_client, kPrefix);
  BudgetLedger b(b_client, kPrefix);
  auto lease = a_client.grant(30);
  ASSERT_TRUE(lease) << lease.error().message;
  auto claimed = a.claim(run("run-a", "alice", "drain-spine1", "ci-runner-1", lease->id),
                         {spine_of_pod("spine1", "p3")});
  ASSERT_TRUE(claimed) << claimed.error().message;

  auto refused =
      b.claim(run("run-b", "bob", "drain-spine2", "ci-runner-2"), {spine_of_pod("spine2", "p3")});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::over_budget);
  EXPECT_EQ(refused.error().message,
            "budget spines-per-pod (pod=p3) allows 1 of 2 devices in change or out of service at "
            "once; this change "
            "needs spine2; held by run run-a (alice, change drain-spine1, on ci-runner-1, alive, "
            "holds spine1)");
  ASSERT_EQ(refused.error().holders.size(), 1u);
  EXPECT_EQ(refused.error().holders[0].run.controller, "ci-runner-1");

  auto other_pod =
      b.claim(run("run-b", "bob", "drain-spine2", "ci-runner-2"), {spine_of_pod("spine2", "p4")});
  EXPECT_TRUE(other_pod) << other_pod.error().message;

  // Once A releases, B may drain spine2 of p3.
  auto released = a.release("run-a");
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_EQ(*released, 1);
  auto after = b.claim(run("run-b", "bob", "drain-spine2", "ci-runner-2"),
                       {spine_of_pod("spine2", "p3"), spine_of_pod("spine2", "p4")});
  EXPECT_TRUE(after) << after.error().message;
}

TEST_F(BudgetClaims, ARunInFlightCountsByItsDevicesAfterItsBudgetWasRenamed) {
  // Given run-a in flight holding spine1 of p3 under budget "spines-per-pod", when main renames
  // the budget to "pod-spines" (same pod, same members, room for one) and run-b claims spine2 of
  // p3 under the new name, then run-b is refused naming run-a: the claim is counted by the
  // device it holds, not by the name it was made under. A budget whose group does not hold
  // spine1 is not affected.
  auto a_client = client();
  auto b_client = client();
  BudgetLedger a(a_client, kPrefix);
  BudgetLedger b(b_client, kPrefix);
  ASSERT_TRUE(a.claim(run("run-a", "alice", "drain-spine1", "ci-runner-1"),
                      {spine_of_pod("spine1", "p3")}));
  Demand renamed = spine_of_pod("spine2", "p3");
  // A claim reads other budgets' claims in two ranges, before and after its own budget's keys:
  // a new name that sorts before the old one and one that sorts after it.
  for (const char* name : {"pod-spines", "zz-spines"}) {
    SCOPED_TRACE(name);
    renamed.group.budget = name;
    auto refused = b.claim(run("run-b", "bob", "drain-spine2", "ci-runner-2"), {renamed});
    ASSERT_FALSE(refused) << "a renamed budget admitted a second spine of p3";
    EXPECT_EQ(refused.error().kind, Kind::over_budget);
    EXPECT_NE(refused.error().message.find("held by run run-a (alice, change drain-spine1"),
              std::string::npos)
        << refused.error().message;
  }
  renamed.group.budget = "pod-spines";
  Demand elsewhere = renamed;
  elsewhere.group.members = {"spine2", "spine3"};
  EXPECT_TRUE(b.claim(run("run-b", "bob", "drain-spine2", "ci-runner-2"), {elsewhere}));
}

TEST_F(BudgetClaims, ReleasedGroupsLeaveNothingUnderTheClaimsThatEveryClaimReads) {
  // Given 50 pods whose spine was claimed and released (each group's guard bumped twice), then
  // nothing is left under P/budgets/, which every claim reads whole to count claims made under
  // other budget names: the guards are under P/guards/ (at 20,000 devices, reading them with
  // every claim was most of etcd's work, docs/benchmarks.md). A claim in one of those pods is
  // still guarded: it writes its group's guard there, and a second spine is still refused.
  auto own = client();
  BudgetLedger ledger(own, kPrefix);
  for (int pod = 0; pod < 50; ++pod) {
    const std::string id = "run-" + std::to_string(pod);
    ASSERT_TRUE(ledger.claim(run(id, "op", "c", "ctl"),
                             {spine_of_pod("spine1", "p" + std::to_string(pod))}));
    ASSERT_TRUE(ledger.release(id));
  }
  auto claims_area = own.get_prefix(std::string(kPrefix) + "/budgets/");
  ASSERT_TRUE(claims_area) << claims_area.error().message;
  EXPECT_TRUE(claims_area->kvs.empty()) << claims_area->kvs.front().key;
  auto guards = own.get_prefix(std::string(kPrefix) + "/guards/");
  ASSERT_TRUE(guards) << guards.error().message;
  EXPECT_EQ(guards->kvs.size(), 50u);

  // A guard where an older fabgate kept it (inside the claims' read) goes with the first claim
  // in its group.
  const std::string legacy = std::string(kPrefix) + "/budgets/spines-per-pod/pod=p7/guard";
  ASSERT_TRUE(own.put(legacy, "run-old"));
  ASSERT_TRUE(ledger.claim(run("run-x", "op", "c", "ctl"), {spine_of_pod("spine1", "p7")}));
  auto legacy_left = own.get(legacy);
  ASSERT_TRUE(legacy_left) << legacy_left.error().message;
  EXPECT_TRUE(legacy_left->kvs.empty()) << "the old guard is still read with every claim";
  auto guard = own.get(std::string(kPrefix) + "/guards/spines-per-pod/pod=p7");
  ASSERT_TRUE(guard) << guard.error().message;
  ASSERT_EQ(guard->kvs.size(), 1u);
  EXPECT_EQ(guard->kvs.front().value, "run-x");
  auto second = ledger.claim(run("run-y", "op", "c", "ctl"), {spine_of_pod("spine2", "p7")});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, Kind::over_budget);
}

TEST_F(BudgetClaims, OfEightRunsRacingForTheLastUnitExactlyOneWins) {
  // Given a group with room for one device, when eight controllers claim it at the same moment
  // (each its own client and device), then exactly one claim succeeds and the seven others are
  // refused as over budget: the guarded transaction lets no two through.
  constexpr int kRacers = 8;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<int> outcome(kRacers, -1);  // 0 won, 1 over budget, 2 other failure
  std::vector<std::string> messages(kRacers);
  std::vector<std::thread> racers;
  for (int i = 0; i < kRacers; ++i) {
    racers.emplace_back([&, i] {
      auto own = client();
      BudgetLedger ledger(own, kPrefix);
      ++ready;
      while (!go) std::this_thread::yield();
      auto result = ledger.claim(run("run-" + std::to_string(i), "op", "c", "ctl"),
                                 {spine_of_pod("spine" + std::to_string(i), "p1")});
      outcome[i] = result ? 0 : result.error().kind == Kind::over_budget ? 1 : 2;
      if (!result) messages[i] = result.error().message;
    });
  }
  while (ready < kRacers) std::this_thread::yield();
  go = true;
  for (auto& racer : racers) racer.join();
  int won = 0;
  for (int i = 0; i < kRacers; ++i) {
    EXPECT_NE(outcome[i], 2) << messages[i];
    won += outcome[i] == 0;
  }
  EXPECT_EQ(won, 1);
  auto own = client();
  auto groups = BudgetLedger(own, kPrefix).groups();
  ASSERT_TRUE(groups) << groups.error().message;
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ(groups->front().holders.size(), 1u) << "a refused claim left a key behind";
}

TEST_F(BudgetClaims, ARunReleasingTheGroupsItClaimedFreesThemAndNothingElse) {
  // Given run A holding spine1 of p1 and p2 and run B holding spine1 of p3, when A releases
  // naming the groups it was granted (what its own run does at the end), then A's two claims
  // are counted and gone, B's stays, and releasing again finds nothing.
  auto own = client();
  BudgetLedger ledger(own, kPrefix);
  const std::vector<Demand> a_groups = {spine_of_pod("spine1", "p1"), spine_of_pod("spine1", "p2")};
  ASSERT_TRUE(ledger.claim(run("run-a", "alice", "c", "ctl"), a_groups));
  ASSERT_TRUE(ledger.claim(run("run-b", "bob", "c", "ctl"), {spine_of_pod("spine1", "p3")}));

  auto released = ledger.release("run-a", {}, &a_groups);
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_EQ(*released, 2);
  auto groups = ledger.groups();
  ASSERT_TRUE(groups) << groups.error().message;
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ(groups->front().group, "pod=p3");
  EXPECT_TRUE(ledger.claim(run("run-c", "carol", "c", "ctl"), {spine_of_pod("spine2", "p1")}))
      << "the released group is free again";

  auto again = ledger.release("run-a", {}, &a_groups);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, 0);
}

TEST_F(BudgetClaims, ADeadRunKeepsItsClaimUntilItIsReleased) {
  // Given a run whose lease expires (it died mid-change), then its claim stays, the holder shows
  // as dead with `fabgate recover` named, and another run is still refused; after release
  // (what recover does once the devices are restored) the other run may proceed.
  auto owner = client();
  BudgetLedger dying(owner, kPrefix);
  auto lease = owner.grant(1);
  ASSERT_TRUE(lease) << lease.error().message;
  ASSERT_TRUE(dying.claim(run("run-dead", "carol", "mtu-9000", "jump-1", lease->id),
                          {spine_of_pod("spine1", "p1")}));
  ASSERT_TRUE(eventually([&] {
    auto ttl = owner.time_to_live(lease->id);
    return ttl && ttl->ttl == -1;
  })) << "the lease never expired";

  auto other_client = client();
  BudgetLedger other(other_client, kPrefix);
  auto refused =
      other.claim(run("run-next", "dave", "drain", "jump-2"), {spine_of_pod("spine2", "p1")});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::over_budget);
  ASSERT_EQ(refused.error().holders.size(), 1u);
  EXPECT_FALSE(refused.error().holders[0].alive);
  EXPECT_NE(refused.error().message.find("holder dead or without a lease: devices in unknown "
                                         "state until `fabgate recover run-dead`"),
            std::string::npos)
      << refused.error().message;

  auto groups = other.groups();
  ASSERT_TRUE(groups);
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ(groups->front().budget, "spines-per-pod");
  EXPECT_EQ(groups->front().group, "pod=p1");
  ASSERT_EQ(groups->front().holders.size(), 1u);
  EXPECT_EQ(groups->front().holders[0].run.run_id, "run-dead");
  EXPECT_FALSE(groups->front().holders[0].alive);

  auto released = other.release("run-dead");  // from another controller, as recover would
  ASSERT_TRUE(released);
  EXPECT_EQ(*released, 1);
  EXPECT_TRUE(
      other.claim(run("run-next", "dave", "drain", "jump-2"), {spine_of_pod("spine2", "p1")}));
  auto again = other.release("run-dead");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 0) << "releasing twice is harmless";
}

TEST_F(BudgetClaims, ClaimingAgainReplacesTheRunsOwnClaim) {
  // Given a run that already holds spine1, when it claims again (a retried start), then it is
  // not refused by its own claim.
  auto own = client();
  BudgetLedger ledger(own, kPrefix);
  ASSERT_TRUE(ledger.claim(run("run-a", "op", "c", "ctl"), {spine_of_pod("spine1", "p1")}));
  auto again = ledger.claim(run("run-a", "op", "c", "ctl"), {spine_of_pod("spine1", "p1")});
  EXPECT_TRUE(again) << again.error().message;
}

TEST_F(BudgetClaims, AClaimRecordThatCannotBeReadCountsAsAFullGroup) {
  // Given a claim record another controller wrote in a shape this version cannot read, then it
  // counts as holding the whole group (never as holding nothing), and the refusal says so.
  auto own = client();
  ASSERT_TRUE(own.put(std::string(kPrefix) + "/budgets/spines-per-pod/pod=p1/claims/run-x",
                      "{\"devices\": \"spine1\"}"));
  BudgetLedger ledger(own, kPrefix);
  auto refused = ledger.claim(run("run-a", "op", "c", "ctl"), {spine_of_pod("spine2", "p1", 2)});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::over_budget);
  EXPECT_NE(refused.error().message.find(
                "run run-x (claim record unreadable: counted as holding the whole group)"),
            std::string::npos)
      << refused.error().message;
}

TEST(BudgetClaimsStore, AnUnreachableStoreIsAStoreFailureAndARunIdMustBeAKeySegment) {
  // Given no etcd at the endpoint, then a claim fails as a store failure naming etcd, never as
  // a claim granted; a run id with '/' is refused before anything is sent.
  auto client = open_client(
      {"http://127.0.0.1:" + std::to_string(fabgate::testing::reserve_test_port())}, 1s);
  BudgetLedger ledger(client, kPrefix);
  auto claimed = ledger.claim(run("run-a", "op", "c", "ctl"), {spine_of_pod("spine1", "p1")});
  ASSERT_FALSE(claimed);
  EXPECT_EQ(claimed.error().kind, Kind::store);
  EXPECT_NE(claimed.error().message.find(
                "coordination: read the queue, the devices out of service and the budget "
                "groups: etcd unreachable"),
            std::string::npos)
      << claimed.error().message;
  auto bad = ledger.claim(run("../x", "op", "c", "ctl"), {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, Kind::invalid);
}

TEST_F(BudgetClaims, AQueuedRunGoesBeforeANewcomerAndOnlyWhereTheirGroupsMeet) {
  // Given run-a holding spine1 of p3 and run-b queued for p3 (it waits, --wait), when run-a
  // releases, then a newcomer asking for p3 is refused naming run-b, which claims next; a
  // newcomer asking for p4 is not held up by a queue for p3.
  auto own = client();
  BudgetLedger ledger(own, kPrefix);
  ASSERT_TRUE(
      ledger.claim(run("run-a", "alice", "drain-spine1", "ci-1"), {spine_of_pod("spine1", "p3")}));
  auto lease = own.grant(30);
  ASSERT_TRUE(lease) << lease.error().message;
  auto b = run("run-b", "bob", "drain-spine2", "ci-2", lease->id);
  auto refused = ledger.claim(b, {spine_of_pod("spine2", "p3")});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::over_budget);
  ASSERT_TRUE(ledger.enqueue(b, {spine_of_pod("spine2", "p3")}, now_utc() + 60s));
  ASSERT_TRUE(ledger.enqueue(b, {spine_of_pod("spine2", "p3")}, now_utc() + 60s))
      << "queueing again is harmless";
  ASSERT_TRUE(ledger.release("run-a"));

  auto newcomer =
      ledger.claim(run("run-c", "carol", "drain-spine1", "ci-3"), {spine_of_pod("spine1", "p3")});
  ASSERT_FALSE(newcomer) << "the newcomer jumped the queue";
  EXPECT_EQ(newcomer.error().kind, Kind::queued);
  EXPECT_NE(newcomer.error().message.find(
                "runs queued before this one wait for its budget groups: run run-b (bob, change "
                "drain-spine2, on ci-2, queued since "),
            std::string::npos)
      << newcomer.error().message;
  auto elsewhere =
      ledger.claim(run("run-d", "dave", "drain-spine1", "ci-4"), {spine_of_pod("spine1", "p4")});
  EXPECT_TRUE(elsewhere) << elsewhere.error().message;

  auto first = ledger.claim(b, {spine_of_pod("spine2", "p3")});
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(ledger.dequeue("run-b"));
  auto queue = ledger.queue();
  ASSERT_TRUE(queue);
  EXPECT_TRUE(queue->empty());
}

TEST_F(BudgetClaims, TheQueueKeepsItsOrderAndAWaiterThatDiesLeavesIt) {
  // Given three runs queued for one group in the order b, c, d, then each sees only those
  // before it as ahead; when c's lease expires (its controller died), c leaves the queue by
  // itself and d is behind b only.
  auto own = client();
  BudgetLedger ledger(own, kPrefix);
  auto long_lease = own.grant(30);
  auto short_lease = own.grant(1);
  ASSERT_TRUE(long_lease && short_lease);
  auto b = run("run-b", "bob", "c1", "ci-2", long_lease->id);
  auto c = run("run-c", "carol", "c2", "ci-3", short_lease->id);
  auto d = run("run-d", "dave", "c3", "ci-4", long_lease->id);
  for (const auto* who : {&b, &c, &d})
    ASSERT_TRUE(ledger.enqueue(*who, {spine_of_pod("spine1", "p1")}, now_utc() + 60s));
  auto queue = ledger.queue();
  ASSERT_TRUE(queue);
  ASSERT_EQ(queue->size(), 3u);
  EXPECT_EQ(queue->at(0).run.run_id, "run-b");
  EXPECT_EQ(queue->at(1).run.run_id, "run-c");
  EXPECT_EQ(queue->at(2).run.run_id, "run-d");
  EXPECT_EQ(queue->at(2).groups, std::vector<std::string>{"spines-per-pod/pod=p1"});

  auto first = ledger.claim(b, {spine_of_pod("spine1", "p1")});
  EXPECT_TRUE(first) << "the head of the queue is held up by nobody";
  ASSERT_TRUE(ledger.release("run-b"));  // also leaves the queue

  ASSERT_TRUE(eventually([&] {
    auto ttl = own.time_to_live(short_lease->id);
    return ttl && ttl->ttl == -1;
  })) << "the lease never expired";
  auto d_claim = ledger.claim(d, {spine_of_pod("spine1", "p1")});
  EXPECT_TRUE(d_claim) << "a dead waiter still held the queue: " << d_claim.error().message;
}

TEST_F(BudgetClaims, AQueueRecordThatCannotBeReadBlocksNoOne) {
  // Given a queue entry another controller wrote in a shape this version cannot read, then it
  // is listed as unreadable and no claim waits behind it (the queue is fairness; the guards,
  // not the queue, keep budgets).
  auto own = client();
  ASSERT_TRUE(own.put(std::string(kPrefix) + "/queue/run-x", "[not json"));
  BudgetLedger ledger(own, kPrefix);
  auto queue = ledger.queue();
  ASSERT_TRUE(queue);
  ASSERT_EQ(queue->size(), 1u);
  EXPECT_FALSE(queue->front().readable);
  EXPECT_EQ(queue->front().describe(), "run run-x (queue record unreadable: not JSON)")
      << queue->front().problem;
  auto claimed = ledger.claim(run("run-a", "op", "c", "ctl"), {spine_of_pod("spine1", "p1")});
  EXPECT_TRUE(claimed) << claimed.error().message;
}

}  // namespace
}  // namespace fabgate::coordination

namespace fabgate::coordination {
namespace {

TEST_F(BudgetClaims, ADrainedSpineCountsUntilTheChangeThatReturnsItIsAccepted) {
  // Given at most one spine per pod in change or out of service, when alice's accepted drain
  // of spine1 releases its claim leaving spine1 out of service, then bob's drain of spine2 is
  // refused naming spine1 as out of service and who left it out, although no run is in flight;
  // an undrain of spine1 may run (spine1 counts once), and once it is accepted (spine1 back in
  // service) bob's drain fits.
  auto a_client = client();
  auto b_client = client();
  BudgetLedger a(a_client, kPrefix);
  BudgetLedger b(b_client, kPrefix);
  auto alice = run("run-a", "alice", "drain-spine1", "ci-runner-1");
  ASSERT_TRUE(a.claim(alice, {spine_of_pod("spine1", "p3")}));
  auto released = a.release("run-a", ServiceTransition{alice, {"spine1"}, {}});
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_EQ(*released, 1);

  auto out = b.out_of_service();
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].device, "spine1");
  EXPECT_EQ((*out)[0].run.change, "drain-spine1");

  auto bob = run("run-b", "bob", "drain-spine2", "ci-runner-2");
  auto refused = b.claim(bob, {spine_of_pod("spine2", "p3")});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::over_budget);
  EXPECT_TRUE(refused.error().holders.empty());
  ASSERT_EQ(refused.error().out_of_service.size(), 1u);
  EXPECT_NE(refused.error().message.find("; spine1 (out of service since "), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find(
                ", left out by run run-a: alice, change drain-spine1, on ci-runner-1)"),
            std::string::npos)
      << refused.error().message;
  // A group of which spine1 is not a member (pod p4: spine2 and spine3) does not count it.
  Demand other_pod = spine_of_pod("spine2", "p4");
  other_pod.group.members = {"spine3", "spine2"};
  std::sort(other_pod.group.members.begin(), other_pod.group.members.end());
  EXPECT_TRUE(b.claim(bob, {other_pod}));
  ASSERT_TRUE(b.release("run-b"));

  // The undrain of spine1 fits: spine1 is counted once, out of service and in change.
  auto carol = run("run-c", "carol", "undrain-spine1", "ci-runner-3");
  auto undrain = a.claim(carol, {spine_of_pod("spine1", "p3")});
  ASSERT_TRUE(undrain) << undrain.error().message;
  // Refused or rolled back: nothing changes in service.
  ASSERT_TRUE(a.release("run-c"));
  EXPECT_EQ(b.out_of_service()->size(), 1u);
  ASSERT_TRUE(a.claim(carol, {spine_of_pod("spine1", "p3")}));
  ASSERT_TRUE(a.release("run-c", ServiceTransition{carol, {}, {"spine1"}}));
  EXPECT_TRUE(b.out_of_service()->empty());
  auto fits = b.claim(bob, {spine_of_pod("spine2", "p3")});
  EXPECT_TRUE(fits) << fits.error().message;
}

TEST_F(BudgetClaims, OnlyAServiceChangeBumpsTheGuardEveryClaimIsConditionalOn) {
  // Given a claim's transaction is conditional on P/service/guard (so a drain accepted between
  // a claim's read and its write makes the claim read again; the race test below shows the
  // outcome), then a release that records a device out of service bumps that guard, and a
  // plain release leaves it alone: ordinary runs do not make claims contend.
  auto client_a = client();
  BudgetLedger a(client_a, kPrefix);
  auto alice = run("run-a", "alice", "drain-spine1", "ci-runner-1");
  ASSERT_TRUE(a.claim(alice, {spine_of_pod("spine1", "p3")}));
  auto before = client_a.get(std::string(kPrefix) + "/service/guard");
  ASSERT_TRUE(before);
  EXPECT_TRUE(before->kvs.empty());
  ASSERT_TRUE(a.release("run-a", ServiceTransition{alice, {"spine1"}, {}}));
  auto after = client_a.get(std::string(kPrefix) + "/service/guard");
  ASSERT_TRUE(after);
  ASSERT_EQ(after->kvs.size(), 1u);
  // A release without a transition leaves the guard alone (no needless contention).
  const auto revision = after->kvs[0].mod_revision;
  ASSERT_TRUE(a.claim(run("run-x", "xavier", "bfd-timers", "ci"), {spine_of_pod("spine1", "p3")}));
  ASSERT_TRUE(a.release("run-x"));
  auto unchanged = client_a.get(std::string(kPrefix) + "/service/guard");
  ASSERT_TRUE(unchanged);
  EXPECT_EQ(unchanged->kvs[0].mod_revision, revision);
}

TEST_F(BudgetClaims, RacingDrainsOfBothSpinesNeverLeaveBothOutOfService) {
  // Given at most one spine of p3 in change or out of service, when two runs drain spine1 and
  // spine2 at once over many rounds, each accepted drain leaving its spine out of service and
  // then returned by an undrain, then in no round are both spines out of service together.
  auto client_a = client();
  auto client_b = client();
  for (int round = 0; round < 10; ++round) {
    std::atomic<int> drained{0};
    auto drain = [&](etcd::EtcdClient& client, const std::string& spine) {
      BudgetLedger ledger(client, kPrefix);
      auto who = run("run-" + spine + "-" + std::to_string(round), "op", "drain-" + spine, "ci");
      if (!ledger.claim(who, {spine_of_pod(spine, "p3")})) return;
      if (ledger.release(who.run_id, ServiceTransition{who, {spine}, {}})) ++drained;
    };
    std::thread first([&] { drain(client_a, "spine1"); });
    std::thread second([&] { drain(client_b, "spine2"); });
    first.join();
    second.join();
    BudgetLedger ledger(client_a, kPrefix);
    auto out = ledger.out_of_service();
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(drained.load(), 1) << "round " << round;
    ASSERT_EQ(out->size(), 1u) << "round " << round;
    auto undrainer = run("undrain-" + std::to_string(round), "op", "undrain", "ci");
    ASSERT_TRUE(ledger.claim(undrainer, {spine_of_pod((*out)[0].device, "p3")}));
    ASSERT_TRUE(
        ledger.release(undrainer.run_id, ServiceTransition{undrainer, {}, {(*out)[0].device}}));
  }
}

}  // namespace
}  // namespace fabgate::coordination
