// Device locks in the real Debian etcd 3.4 (one member on a reserved 127.0.0.1 port, data in a
// temp folder): runs racing for one device, a retake that gets a newer token, a dead holder that
// still refuses, take-overs by recover (refused while the run is alive, exactly one of two at
// once wins), release, and records another controller wrote badly.

#include "gates/coordination/locks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
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
using Kind = FleetLockFailure::Kind;

const char* kPrefix = "/fabgate/fabric-a";

RunIdentity run(const std::string& id, const std::string& who, std::int64_t lease = 0) {
  return RunIdentity{id, who, "drain-" + id, "ci-" + who, lease};
}

class DeviceLocks : public etcd::testing::OneEtcdMember {};

TEST_F(DeviceLocks, EightRunsRaceForOneDeviceAndExactlyOneGetsIt) {
  // Given eight controllers lock leaf1 (and each its own second device) at the same instant,
  // then exactly one gets leaf1, every other is refused as `held` naming the winner, and no
  // refused run left any key: all or nothing.
  constexpr int kRuns = 8;
  std::vector<etcd::EtcdClient> clients;
  for (int i = 0; i < kRuns; ++i) clients.push_back(client());
  std::atomic<int> won{0};
  std::atomic<int> held{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i)
    threads.emplace_back([&, i] {
      while (!go) std::this_thread::yield();
      LockLedger ledger(clients[i], kPrefix);
      auto taken = ledger.take(run("run-" + std::to_string(i), "op" + std::to_string(i)),
                               {"leaf1", "own-" + std::to_string(i)});
      if (taken)
        ++won;
      else if (taken.error().kind == Kind::held)
        ++held;
    });
  go = true;
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(won, 1);
  EXPECT_EQ(held, kRuns - 1);
  auto reader = client();
  auto locks = LockLedger(reader, kPrefix).list();
  ASSERT_TRUE(locks) << locks.error().message;
  ASSERT_EQ(locks->size(), 2u) << "leaf1 and the winner's own device, nothing of the losers";
  EXPECT_EQ((*locks)[0].device, "leaf1");
  EXPECT_EQ((*locks)[1].device, "own-" + (*locks)[0].holder.run_id.substr(4));
}

TEST_F(DeviceLocks, TheSecondRunIsRefusedNamingTheHolderAndTheTokenGrowsWithEachHolder) {
  // Given alice's run (alive on its lease) locks d1 and d2, when bob's run asks for d2, then
  // bob is refused naming alice's run, operator, change, controller, liveness and token, and
  // gets nothing; alice locking again keeps her locks with newer tokens; once she releases, bob
  // gets d2 with a larger token than hers.
  auto a_client = client();
  auto b_client = client();
  LockLedger alice(a_client, kPrefix);
  LockLedger bob(b_client, kPrefix);
  auto lease = a_client.grant(30);
  ASSERT_TRUE(lease) << lease.error().message;
  auto a_tokens = alice.take(run("run-a", "alice", lease->id), {"d1", "d2"});
  ASSERT_TRUE(a_tokens) << a_tokens.error().message;
  ASSERT_EQ(a_tokens->size(), 2u);
  EXPECT_EQ(a_tokens->at("d1"), a_tokens->at("d2")) << "one transaction, one revision";

  auto refused = bob.take(run("run-b", "bob"), {"d2", "d3"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::held);
  ASSERT_EQ(refused.error().holders.size(), 1u);
  const auto& holder = refused.error().holders[0];
  EXPECT_EQ(holder.holder.run_id, "run-a");
  EXPECT_EQ(holder.holder.lease, lease->id);
  EXPECT_TRUE(holder.alive);
  EXPECT_NE(refused.error().message.find("d2: locked by run run-a (alice, change drain-run-a, on "
                                         "ci-alice, alive, since "),
            std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("token " + std::to_string(a_tokens->at("d2"))),
            std::string::npos);
  auto d3 = b_client.get(std::string(kPrefix) + "/locks/d3");
  ASSERT_TRUE(d3);
  EXPECT_TRUE(d3->kvs.empty()) << "a refused run writes nothing";

  auto again = alice.take(run("run-a", "alice", lease->id), {"d1", "d2"});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_GT(again->at("d1"), a_tokens->at("d1")) << "every take writes a newer token";
  EXPECT_EQ(again->at("d1"), again->at("d2"));

  auto released = alice.release("run-a");
  ASSERT_TRUE(released) << released.error().message;
  EXPECT_EQ(*released, 2);
  auto b_tokens = bob.take(run("run-b", "bob"), {"d2", "d3"});
  ASSERT_TRUE(b_tokens) << b_tokens.error().message;
  EXPECT_GT(b_tokens->at("d2"), again->at("d2"));
  auto none = alice.release("run-a");
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0) << "releasing a run that holds nothing is harmless";
}

TEST_F(DeviceLocks, ADeadHolderKeepsItsLockUntilReleasedAndIsNamedDead) {
  // Given run-a locked d1 on a 1 s lease that is no longer kept alive, when its lease has
  // lapsed, then bob is still refused, the holder shown dead with `fabgate recover run-a`;
  // run-a's own recover (same run id) retakes it with a newer token; after release bob gets it.
  auto a_client = client();
  LockLedger alice(a_client, kPrefix);
  auto lease = a_client.grant(1);
  ASSERT_TRUE(lease);
  auto tokens = alice.take(run("run-a", "alice", lease->id), {"d1"});
  ASSERT_TRUE(tokens) << tokens.error().message;
  ASSERT_TRUE(eventually([&] {
    auto alive = a_client.get(std::string(kPrefix) + "/runs/run-a/alive");
    return alive && alive->kvs.empty();
  })) << "the lease did not lapse";

  auto b_client = client();
  LockLedger bob(b_client, kPrefix);
  auto refused = bob.take(run("run-b", "bob"), {"d1"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::held);
  EXPECT_FALSE(refused.error().holders[0].alive);
  EXPECT_NE(refused.error().message.find("dead: its lease is gone and the device is in an unknown "
                                         "state until `fabgate recover run-a`"),
            std::string::npos)
      << refused.error().message;

  auto recover_lease = a_client.grant(30);
  ASSERT_TRUE(recover_lease);
  auto adopted = alice.take(run("run-a", "alice", recover_lease->id), {"d1"});
  ASSERT_TRUE(adopted) << adopted.error().message;
  EXPECT_GT(adopted->at("d1"), tokens->at("d1"));
  ASSERT_TRUE(alice.release("run-a"));
  EXPECT_TRUE(bob.take(run("run-b", "bob"), {"d1"}));
}

TEST_F(DeviceLocks, ATakeOverIsRefusedWhileTheRunIsAliveAndRetakingItOnAnotherLeaseToo) {
  // Given run-a alive on its lease holding d1, then a take-over of run-a is refused as `alive`
  // naming its controller and its lease's seconds left, a take() of run-a on another lease (a
  // recover's pipeline) is refused the same way, and d1's lock is unchanged.
  auto a_client = client();
  LockLedger alice(a_client, kPrefix);
  auto lease = a_client.grant(30);
  ASSERT_TRUE(lease);
  auto tokens = alice.take(run("run-a", "alice", lease->id), {"d1"});
  ASSERT_TRUE(tokens) << tokens.error().message;

  auto r_client = client();
  LockLedger recoverer(r_client, kPrefix);
  auto recover_lease = r_client.grant(30);
  ASSERT_TRUE(recover_lease);
  auto refused = recoverer.take_over(run("run-a", "bob", recover_lease->id));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::alive);
  EXPECT_NE(refused.error().message.find("run run-a is alive: its controller (ci-alice) still "
                                         "keeps its lease"),
            std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find(" s left of 30 s"), std::string::npos)
      << refused.error().message;
  auto retaken = recoverer.take(run("run-a", "bob", recover_lease->id), {"d1"});
  ASSERT_FALSE(retaken);
  EXPECT_EQ(retaken.error().kind, Kind::alive);
  auto d1 = r_client.get(std::string(kPrefix) + "/locks/d1");
  ASSERT_TRUE(d1 && d1->kvs.size() == 1u);
  EXPECT_EQ(d1->kvs.front().mod_revision, tokens->at("d1")) << "the live run's lock was rewritten";
}

TEST_F(DeviceLocks, ATakeOverOfARunThatRecordedItsEndIsRefusedAndRewritesNoLock) {
  // Given run-a holding d1 whose lease lapsed after it recorded its end (exit 0, change kept)
  // under P/journal/run-a/end, when a recover takes it over, then it is refused as `ended`,
  // naming the exit code and the controller, and d1's lock keeps run-a's token: no newer token
  // is minted for a rollback of a run whose devices were verified.
  auto a_client = client();
  LockLedger alice(a_client, kPrefix);
  auto lease = a_client.grant(1);
  ASSERT_TRUE(lease);
  auto tokens = alice.take(run("run-a", "alice", lease->id), {"d1"});
  ASSERT_TRUE(tokens) << tokens.error().message;
  ASSERT_TRUE(a_client
                  .put(std::string(kPrefix) + "/journal/run-a/end",
                       R"({"run":"run-a","exit_code":0,"fate":"kept","controller":"ci-alice",)"
                       R"("at":"2026-12-06T09:00:00Z"})")
                  .ok());
  ASSERT_TRUE(eventually([&] {
    auto alive = a_client.get(std::string(kPrefix) + "/runs/run-a/alive");
    return alive && alive->kvs.empty();
  })) << "the lease did not lapse";

  auto r_client = client();
  auto recover_lease = r_client.grant(30);
  ASSERT_TRUE(recover_lease);
  auto refused = LockLedger(r_client, kPrefix).take_over(run("run-a", "bob", recover_lease->id));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::ended);
  EXPECT_NE(refused.error().message.find("run run-a recorded its end in the store (exit 0, change "
                                         "kept, by controller ci-alice"),
            std::string::npos)
      << refused.error().message;
  auto d1 = r_client.get(std::string(kPrefix) + "/locks/d1");
  ASSERT_TRUE(d1 && d1->kvs.size() == 1u);
  EXPECT_EQ(d1->kvs.front().mod_revision, tokens->at("d1")) << "the lock was taken over";
  auto recovering = r_client.get(std::string(kPrefix) + "/recovering/run-a");
  ASSERT_TRUE(recovering);
  EXPECT_TRUE(recovering->kvs.empty());
}

TEST_F(DeviceLocks, OfTwoTakeOversOfADeadRunAtOnceExactlyOneWinsWithANewerToken) {
  // Given run-a's lease lapsed while it held d1 and d2, when four recovers take it over at the
  // same instant, then exactly one wins, with one newer token for both devices; every other is
  // refused as `recovering` naming the winner's controller; other runs' locks are untouched;
  // once the winner's lease ends, a later take-over succeeds with a newer token still.
  auto a_client = client();
  LockLedger alice(a_client, kPrefix);
  auto lease = a_client.grant(1);
  ASSERT_TRUE(lease);
  auto tokens = alice.take(run("run-a", "alice", lease->id), {"d1", "d2"});
  ASSERT_TRUE(tokens) << tokens.error().message;
  ASSERT_TRUE(LockLedger(a_client, kPrefix).take(run("run-c", "carol"), {"d9"}));
  ASSERT_TRUE(eventually([&] {
    auto alive = a_client.get(std::string(kPrefix) + "/runs/run-a/alive");
    return alive && alive->kvs.empty();
  })) << "the lease did not lapse";

  constexpr int kRecovers = 4;
  std::vector<etcd::EtcdClient> clients;
  std::vector<std::int64_t> leases;
  for (int i = 0; i < kRecovers; ++i) {
    clients.push_back(client());
    auto granted = clients.back().grant(30);
    ASSERT_TRUE(granted);
    leases.push_back(granted->id);
  }
  std::atomic<int> won{0};
  std::atomic<int> recovering{0};
  std::atomic<bool> go{false};
  std::vector<std::map<std::string, std::int64_t>> winners(kRecovers);
  std::vector<std::string> refusals(kRecovers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRecovers; ++i)
    threads.emplace_back([&, i] {
      while (!go) std::this_thread::yield();
      LockLedger ledger(clients[i], kPrefix);
      auto taken = ledger.take_over({"run-a", "op" + std::to_string(i), "drain-run-a",
                                     "ctl-" + std::to_string(i), leases[i]});
      if (taken) {
        ++won;
        winners[i] = *taken;
      } else {
        refusals[i] = taken.error().message;
        if (taken.error().kind == Kind::recovering) ++recovering;
      }
    });
  go = true;
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(won, 1);
  EXPECT_EQ(recovering, kRecovers - 1);
  int winner = 0;
  for (int i = 0; i < kRecovers; ++i)
    if (!winners[i].empty()) winner = i;
  ASSERT_EQ(winners[winner].size(), 2u);
  EXPECT_GT(winners[winner].at("d1"), tokens->at("d1"));
  EXPECT_EQ(winners[winner].at("d1"), winners[winner].at("d2"));
  for (int i = 0; i < kRecovers; ++i) {
    if (i == winner) continue;
    EXPECT_NE(refusals[i].find("is being recovered by controller ctl-" + std::to_string(winner)),
              std::string::npos)
        << refusals[i];
  }
  auto locks = LockLedger(a_client, kPrefix).list();
  ASSERT_TRUE(locks);
  ASSERT_EQ(locks->size(), 3u);
  EXPECT_EQ((*locks)[0].token, winners[winner].at("d1"));
  EXPECT_EQ((*locks)[2].holder.run_id, "run-c") << "another run's lock was taken over";

  ASSERT_TRUE(clients[winner].revoke(leases[winner]));
  auto later_lease = a_client.grant(30);
  ASSERT_TRUE(later_lease);
  auto later = LockLedger(a_client, kPrefix).take_over(run("run-a", "dave", later_lease->id));
  ASSERT_TRUE(later) << later.error().message;
  EXPECT_GT(later->at("d1"), winners[winner].at("d1"));
}

TEST_F(DeviceLocks, AnUnreadableRecordIsNeverAFreeDeviceAndBadNamesAreRefusedUnsent) {
  // Given a lock record that is not JSON, then a run is refused naming it unreadable, and the
  // fleet view lists it; a run id or device with '/' is refused before anything is sent.
  auto c = client();
  ASSERT_TRUE(c.put(std::string(kPrefix) + "/locks/d9", "garbage"));
  LockLedger ledger(c, kPrefix);
  auto refused = ledger.take(run("run-a", "alice"), {"d9"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::held);
  EXPECT_NE(refused.error().message.find("the lock record is unreadable"), std::string::npos);
  auto locks = ledger.list();
  ASSERT_TRUE(locks);
  ASSERT_EQ(locks->size(), 1u);
  EXPECT_FALSE((*locks)[0].readable);

  EXPECT_EQ(ledger.take(run("a/b", "alice"), {"d1"}).error().kind, Kind::invalid);
  EXPECT_EQ(ledger.take(run("run-a", "alice"), {"../d1"}).error().kind, Kind::invalid);

  auto closed = open_client({etcd::testing::Listener(false).url()}, 1s);
  EXPECT_EQ(LockLedger(closed, kPrefix).take(run("run-a", "alice"), {"d1"}).error().kind,
            Kind::store);
}

}  // namespace
}  // namespace fabgate::coordination
