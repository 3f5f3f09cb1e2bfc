// Device locks against a real sshd on 127.0.0.1. Each "controller" has its own connector,
// connection cache and SSH session, as two engineers' laptops or two CI runners would; the lock
// lives on the "device" (in the test's temporary directory: the base directory is an option).

#include "gates/pipeline/safety/device_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <latch>
#include <memory>
#include <thread>

#include "adapters/ssh/connection_cache.h"
#include "tests/gates/pipeline/sshd_device.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using namespace std::chrono_literals;
using testing::SshdFixture;
using testing::TempDir;

// One controller: its own SSH session to the device and its own DeviceLock.
struct Controller : SshSessions {
  Controller(const SshdFixture& sshd, const DeviceLockOptions& options)
      : SshSessions(sshd), lock(remote, options) {}
  DeviceLock lock;
};

// The pid of a process of this host that has exited and been reaped.
long exited_pid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return static_cast<long>(child);
}

class DeviceLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = SshdFixture::start();
    ASSERT_TRUE(sshd_) << SshdFixture::last_error();
    options_.base_dir = dir_.file("locks");
    options_.command_deadline = 10s;
    alice_ = std::make_unique<Controller>(*sshd_, options_);
    bob_ = std::make_unique<Controller>(*sshd_, options_);
    leaf1_ = device_on(*sshd_, "leaf1");
  }

  static LockHolder holder(const std::string& run, const std::string& who,
                           const std::string& change = "drain-spine1", Duration lease = 10min) {
    return LockHolder::for_this_controller(run, change, who, lease);
  }

  std::optional<LockHolder> current_holder() {
    auto current = alice_->lock.holder(leaf1_);
    EXPECT_TRUE(current.ok()) << current.error().message;
    return current.ok() ? *current : std::nullopt;
  }

  TempDir dir_{"fabgate-lock-test"};
  std::unique_ptr<SshdFixture> sshd_;
  DeviceLockOptions options_;
  std::unique_ptr<Controller> alice_;
  std::unique_ptr<Controller> bob_;
  intent::Device leaf1_;
};

TEST_F(DeviceLockTest, AcquireThenReleaseLeavesTheDeviceFreeForTheNextRun) {
  // Given alice acquires and releases leaf1, then the lock is free and bob acquires it.
  auto taken = alice_->lock.acquire(leaf1_, holder("a1b2c3d4", "alice"), TakeOver::no);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(taken->kind, AcquireOutcome::Kind::acquired);
  EXPECT_EQ(taken->message(), "leaf1: lock acquired by run a1b2c3d4");
  ASSERT_TRUE(current_holder().has_value());
  EXPECT_EQ(current_holder()->run, "a1b2c3d4");

  auto released = alice_->lock.release(leaf1_, "a1b2c3d4");
  ASSERT_TRUE(released.ok()) << released.error().message;
  EXPECT_EQ(released->kind, ReleaseOutcome::Kind::released);
  EXPECT_FALSE(current_holder().has_value());

  auto next = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::no);
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->kind, AcquireOutcome::Kind::acquired);
  EXPECT_FALSE(next->taken_over_from.has_value());
  EXPECT_EQ(current_holder()->run, "b0b0b0b0");
}

TEST_F(DeviceLockTest, ASecondRunSeesTheHolderWithEveryFieldAndCannotTakeItOver) {
  // Given alice holds leaf1, then bob is told `held` with alice's whole record, in a message
  // naming run, operator, change, start and controller; even with take-over requested, a live
  // holder keeps the lock.
  auto alice = holder("a1b2c3d4", "alice");
  ASSERT_EQ(alice_->lock.acquire(leaf1_, alice, TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);

  auto refused = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::no);
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->kind, AcquireOutcome::Kind::held);
  const LockHolder& seen = refused->holder;
  EXPECT_EQ(seen.run, "a1b2c3d4");
  EXPECT_EQ(seen.operator_name, "alice");
  EXPECT_EQ(seen.change, "drain-spine1");
  EXPECT_EQ(seen.controller_host, alice.controller_host);
  EXPECT_EQ(seen.controller_pid, static_cast<long>(::getpid()));
  EXPECT_EQ(seen.controller_boot_id, alice.controller_boot_id);
  EXPECT_EQ(seen.controller_start, alice.controller_start);
  EXPECT_EQ(seen.started, alice.started);
  EXPECT_EQ(seen.expires, alice.expires);
  std::string since = format_utc(std::chrono::floor<std::chrono::seconds>(alice.started));
  since.erase(19, 4);  // "…T01:02:03Z"
  EXPECT_EQ(refused->message(),
            "leaf1: locked by run a1b2c3d4 (alice, change drain-spine1, since " + since +
                ", controller " + alice.controller_host + " pid " + std::to_string(::getpid()) +
                ")");

  auto forced = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::yes);
  ASSERT_TRUE(forced.ok()) << forced.error().message;
  EXPECT_EQ(forced->kind, AcquireOutcome::Kind::held);
  EXPECT_EQ(current_holder()->run, "a1b2c3d4");
}

TEST_F(DeviceLockTest, ADeadHoldersLockIsReportedAndTakenOverOnlyWithTheFlag) {
  // Given a lock whose controller process on this host has exited, then bob is told
  // held-by-dead naming the pid; without the flag nothing changes, with it bob takes the lock
  // over and the outcome names the dead run; the dead run can then no longer release it.
  auto dead = holder("deadbeef", "carol");
  dead.controller_pid = exited_pid();
  dead.controller_start = "1";  // never a real start time: a reused pid still reads as exited
  ASSERT_EQ(alice_->lock.acquire(leaf1_, dead, TakeOver::no)->kind, AcquireOutcome::Kind::acquired);

  auto refused = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::no);
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->kind, AcquireOutcome::Kind::held_by_dead);
  EXPECT_EQ(refused->holder.run, "deadbeef");
  EXPECT_NE(refused->dead_because.find("pid " + std::to_string(dead.controller_pid)),
            std::string::npos)
      << refused->dead_because;
  EXPECT_NE(refused->dead_because.find("has exited"), std::string::npos) << refused->dead_because;
  EXPECT_NE(refused->message().find("explicit take-over"), std::string::npos);
  EXPECT_EQ(current_holder()->run, "deadbeef");

  auto taken = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::yes);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(taken->kind, AcquireOutcome::Kind::acquired);
  ASSERT_TRUE(taken->taken_over_from.has_value());
  EXPECT_EQ(taken->taken_over_from->run, "deadbeef");
  EXPECT_NE(taken->message().find("taken over by run b0b0b0b0 from dead run deadbeef"),
            std::string::npos)
      << taken->message();
  EXPECT_EQ(current_holder()->run, "b0b0b0b0");

  auto late = alice_->lock.release(leaf1_, "deadbeef");
  ASSERT_TRUE(late.ok()) << late.error().message;
  EXPECT_EQ(late->kind, ReleaseOutcome::Kind::held_by_other);
  EXPECT_EQ(current_holder()->run, "b0b0b0b0");
}

TEST_F(DeviceLockTest, AnExpiredLeaseMakesTheHolderDeadEvenIfItsProcessRuns) {
  // Given a holder whose process is alive (this test) but whose lease ended an hour ago, then
  // it is held-by-dead because the lease expired.
  auto stale =
      LockHolder::for_this_controller("0ldrun00", "old-change", "dave", 1h, now_utc() - 2h);
  ASSERT_EQ(alice_->lock.acquire(leaf1_, stale, TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);
  auto refused = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::no);
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->kind, AcquireOutcome::Kind::held_by_dead);
  EXPECT_NE(refused->dead_because.find("lease expired at"), std::string::npos)
      << refused->dead_because;
}

TEST_F(DeviceLockTest, AHolderOnAnotherHostIsJudgedByItsLeaseOnly) {
  // Given a holder on another host whose pid number does not exist here, then it is still
  // `held`: this controller cannot see that host's processes, only the running lease counts.
  auto remote_holder = holder("e1e1e1e1", "erin");
  remote_holder.controller_host = "erins-laptop";
  remote_holder.controller_pid = exited_pid();
  ASSERT_EQ(alice_->lock.acquire(leaf1_, remote_holder, TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);
  auto refused = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::yes);
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->kind, AcquireOutcome::Kind::held);
  EXPECT_NE(refused->message().find("controller erins-laptop pid"), std::string::npos);
}

TEST_F(DeviceLockTest, ReleaseByAnotherRunIsRefusedAndChangesNothing) {
  // Given alice holds leaf1, then bob's release is refused naming alice's run, and alice still
  // holds the lock; releasing a free lock says not-locked.
  ASSERT_EQ(alice_->lock.acquire(leaf1_, holder("a1b2c3d4", "alice"), TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);
  auto refused = bob_->lock.release(leaf1_, "b0b0b0b0");
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->kind, ReleaseOutcome::Kind::held_by_other);
  ASSERT_TRUE(refused->holder.has_value());
  EXPECT_EQ(refused->holder->run, "a1b2c3d4");
  EXPECT_EQ(current_holder()->run, "a1b2c3d4");

  ASSERT_EQ(alice_->lock.release(leaf1_, "a1b2c3d4")->kind, ReleaseOutcome::Kind::released);
  auto free = bob_->lock.release(leaf1_, "b0b0b0b0");
  ASSERT_TRUE(free.ok());
  EXPECT_EQ(free->kind, ReleaseOutcome::Kind::not_locked);
}

TEST_F(DeviceLockTest, AcquiringAgainWithTheHoldingRunKeepsTheSameLock) {
  // Given alice holds leaf1, then acquiring again with her run answers acquired without a new
  // generation, and one release frees it.
  auto first = alice_->lock.acquire(leaf1_, holder("a1b2c3d4", "alice"), TakeOver::no);
  auto again = alice_->lock.acquire(leaf1_, holder("a1b2c3d4", "alice"), TakeOver::no);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(again->kind, AcquireOutcome::Kind::acquired);
  EXPECT_EQ(again->generation, first->generation);
  ASSERT_EQ(alice_->lock.release(leaf1_, "a1b2c3d4")->kind, ReleaseOutcome::Kind::released);
  EXPECT_FALSE(current_holder().has_value());
}

TEST_F(DeviceLockTest, LocksOfDifferentDevicesAreIndependent) {
  // Given alice holds leaf1, then bob still acquires leaf2 (the lab's devices share one disk).
  ASSERT_EQ(alice_->lock.acquire(leaf1_, holder("a1b2c3d4", "alice"), TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);
  auto leaf2 = device_on(*sshd_, "leaf2");
  auto other = bob_->lock.acquire(leaf2, holder("b0b0b0b0", "bob"), TakeOver::no);
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(other->kind, AcquireOutcome::Kind::acquired);
}

TEST_F(DeviceLockTest, ATamperedHolderRecordNeedsAnExplicitTakeOver) {
  // Given a lock record that is not one fabgate wrote, then nobody may assume it is free: it
  // is held-by-dead saying the record is unreadable, and only take-over replaces it.
  ASSERT_EQ(alice_->lock.acquire(leaf1_, holder("a1b2c3d4", "alice"), TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);
  std::string record = alice_->lock.directory("leaf1") + "/gen-1";
  std::filesystem::remove(record);
  testing::write_file(record, "garbage\n");
  auto refused = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::no);
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->kind, AcquireOutcome::Kind::held_by_dead);
  EXPECT_NE(refused->dead_because.find("unreadable"), std::string::npos) << refused->dead_because;
  auto taken = bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::yes);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->kind, AcquireOutcome::Kind::acquired);
}

TEST_F(DeviceLockTest, UnsafeNamesAreRefusedBeforeContactingTheDevice) {
  // Given a run id that would escape the lock folder, then acquire fails invalid-name and
  // nothing is created.
  auto refused = alice_->lock.acquire(leaf1_, holder("../../x", "alice"), TakeOver::no);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, LockFailure::Kind::invalid_name);
  EXPECT_FALSE(std::filesystem::exists(options_.base_dir));
}

// Forwards every command to a real Remote, but first runs `interleave` once, right before the
// first command that creates a lock generation (the one that links the record into place): so
// another controller acts exactly between this controller's read and its create.
class InterleavingRemote final : public Remote {
 public:
  InterleavingRemote(Remote& inner, std::function<void()> interleave)
      : inner_(inner), interleave_(std::move(interleave)) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                   const std::string& command, Duration deadline,
                   std::string_view purpose) override {
    if (interleave_ && command.find("ln \"$tmp\"") != std::string::npos) {
      auto once = std::move(interleave_);
      interleave_ = nullptr;
      once();
    }
    return inner_.run(device, role, command, deadline, purpose);
  }

 private:
  Remote& inner_;
  std::function<void()> interleave_;
};

TEST_F(DeviceLockTest, AnAcquireThatLosesBetweenItsReadAndItsCreateSeesTheWinner) {
  // Given bob acquires leaf1 exactly after alice read it free and before alice creates her
  // record, then bob has the lock and alice is told `held` by bob: her stale read did not let
  // her overwrite or share it.
  std::optional<LockResult<AcquireOutcome>> bobs;
  InterleavingRemote remote(alice_->remote, [&] {
    bobs.emplace(bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::no));
  });
  DeviceLock alice(remote, options_);
  auto alices = alice.acquire(leaf1_, holder("a1b2c3d4", "alice"), TakeOver::no);
  ASSERT_TRUE(bobs.has_value()) << "the interleaving never happened";
  ASSERT_TRUE(bobs->ok()) << bobs->error().message;
  EXPECT_EQ((*bobs)->kind, AcquireOutcome::Kind::acquired);
  ASSERT_TRUE(alices.ok()) << alices.error().message;
  EXPECT_EQ(alices->kind, AcquireOutcome::Kind::held);
  EXPECT_EQ(alices->holder.run, "b0b0b0b0");
  EXPECT_EQ(current_holder()->run, "b0b0b0b0");
}

TEST_F(DeviceLockTest, ATakeOverThatLosesBetweenItsReadAndItsCreateDoesNotStealTheNewLock) {
  // Given a dead holder, and bob taking the lock over exactly after alice judged the holder
  // dead and before alice creates her record, then alice does not take over bob's (live)
  // lock: she is told `held` by bob.
  auto dead = holder("deadbeef", "carol");
  dead.controller_pid = exited_pid();
  dead.controller_start = "1";
  ASSERT_EQ(alice_->lock.acquire(leaf1_, dead, TakeOver::no)->kind, AcquireOutcome::Kind::acquired);
  std::optional<LockResult<AcquireOutcome>> bobs;
  InterleavingRemote remote(alice_->remote, [&] {
    bobs.emplace(bob_->lock.acquire(leaf1_, holder("b0b0b0b0", "bob"), TakeOver::yes));
  });
  DeviceLock alice(remote, options_);
  auto alices = alice.acquire(leaf1_, holder("a1b2c3d4", "alice"), TakeOver::yes);
  ASSERT_TRUE(bobs.has_value()) << "the interleaving never happened";
  ASSERT_TRUE(bobs->ok()) << bobs->error().message;
  EXPECT_EQ((*bobs)->kind, AcquireOutcome::Kind::acquired);
  ASSERT_TRUE(alices.ok()) << alices.error().message;
  EXPECT_EQ(alices->kind, AcquireOutcome::Kind::held);
  EXPECT_EQ(alices->holder.run, "b0b0b0b0");
  EXPECT_EQ(current_holder()->run, "b0b0b0b0");
}

// Runs `attempt` for alice and bob at the same moment, each on its own thread and session.
template <class Attempt>
std::pair<LockResult<AcquireOutcome>, LockResult<AcquireOutcome>> at_once(Controller& a,
                                                                          Controller& b,
                                                                          Attempt attempt) {
  std::latch start(2);
  std::optional<LockResult<AcquireOutcome>> first, second;
  std::thread one([&] {
    start.arrive_and_wait();
    first.emplace(attempt(a, 0));
  });
  std::thread two([&] {
    start.arrive_and_wait();
    second.emplace(attempt(b, 1));
  });
  one.join();
  two.join();
  return {std::move(*first), std::move(*second)};
}

TEST_F(DeviceLockTest, ConcurrentAcquiresFromTwoControllersHaveExactlyOneWinner) {
  // Given alice and bob acquiring leaf1 at the same instant over their own SSH sessions, many
  // rounds over, then every round exactly one acquires and the other is told `held` by the
  // winner's run.
  ASSERT_TRUE(alice_->lock.holder(leaf1_).ok());  // sessions open before the race starts
  ASSERT_TRUE(bob_->lock.holder(leaf1_).ok());
  for (int round = 0; round < 12; ++round) {
    std::string runs[2] = {"alice-" + std::to_string(round), "bob-" + std::to_string(round)};
    auto [a, b] = at_once(*alice_, *bob_, [&](Controller& controller, int who) {
      return controller.lock.acquire(leaf1_, holder(runs[who], who == 0 ? "alice" : "bob"),
                                     TakeOver::no);
    });
    ASSERT_TRUE(a.ok()) << a.error().message;
    ASSERT_TRUE(b.ok()) << b.error().message;
    int winners =
        (a->kind == AcquireOutcome::Kind::acquired) + (b->kind == AcquireOutcome::Kind::acquired);
    ASSERT_EQ(winners, 1) << "round " << round << ": " << a->message() << " / " << b->message();
    const auto& winner = a->kind == AcquireOutcome::Kind::acquired ? *a : *b;
    const auto& loser = a->kind == AcquireOutcome::Kind::acquired ? *b : *a;
    EXPECT_EQ(loser.kind, AcquireOutcome::Kind::held);
    EXPECT_EQ(loser.holder.run, winner.holder.run);
    EXPECT_EQ(current_holder()->run, winner.holder.run);
    ASSERT_EQ(alice_->lock.release(leaf1_, winner.holder.run)->kind,
              ReleaseOutcome::Kind::released);
  }
}

TEST_F(DeviceLockTest, ConcurrentTakeOversOfADeadHolderHaveExactlyOneWinner) {
  // Given a dead holder and alice and bob both taking over at the same instant, then exactly
  // one takes the lock and the other finds the winner, alive, holding it.
  ASSERT_TRUE(alice_->lock.holder(leaf1_).ok());
  ASSERT_TRUE(bob_->lock.holder(leaf1_).ok());
  for (int round = 0; round < 6; ++round) {
    auto dead = holder("dead-" + std::to_string(round), "carol");
    dead.controller_pid = exited_pid();
    dead.controller_start = "1";  // never a real start time: a reused pid still reads as exited
    ASSERT_EQ(alice_->lock.acquire(leaf1_, dead, TakeOver::no)->kind,
              AcquireOutcome::Kind::acquired);
    std::string runs[2] = {"alice-" + std::to_string(round), "bob-" + std::to_string(round)};
    auto [a, b] = at_once(*alice_, *bob_, [&](Controller& controller, int who) {
      return controller.lock.acquire(leaf1_, holder(runs[who], who == 0 ? "alice" : "bob"),
                                     TakeOver::yes);
    });
    ASSERT_TRUE(a.ok()) << a.error().message;
    ASSERT_TRUE(b.ok()) << b.error().message;
    int winners =
        (a->kind == AcquireOutcome::Kind::acquired) + (b->kind == AcquireOutcome::Kind::acquired);
    ASSERT_EQ(winners, 1) << "round " << round << ": " << a->message() << " / " << b->message();
    const auto& winner = a->kind == AcquireOutcome::Kind::acquired ? *a : *b;
    const auto& loser = a->kind == AcquireOutcome::Kind::acquired ? *b : *a;
    ASSERT_TRUE(winner.taken_over_from.has_value());
    EXPECT_EQ(winner.taken_over_from->run, dead.run);
    EXPECT_EQ(loser.kind, AcquireOutcome::Kind::held);
    EXPECT_EQ(loser.holder.run, winner.holder.run);
    ASSERT_EQ(alice_->lock.release(leaf1_, winner.holder.run)->kind,
              ReleaseOutcome::Kind::released);
  }
}

TEST_F(DeviceLockTest, AStaleFencingTokenIsRefusedByTheDeviceSideLock) {
  // Given bob's run locked leaf1 with fencing token 10 (its etcd lock's revision) and released
  // it, when alice's run, whose etcd lock was older (token 5), acquires leaf1, then the device
  // refuses: stale_token, naming both tokens and bob's run; nothing of alice's is written. A
  // token 10 or newer is accepted and recorded, and a run without a token is not fenced.
  auto bob = holder("b0b0b0b0", "bob");
  bob.fence_token = 10;
  ASSERT_EQ(bob_->lock.acquire(leaf1_, bob, TakeOver::no)->kind, AcquireOutcome::Kind::acquired);
  EXPECT_EQ(current_holder()->fence_token, 10);
  ASSERT_EQ(bob_->lock.release(leaf1_, bob.run)->kind, ReleaseOutcome::Kind::released);

  auto alice = holder("a1b2c3d4", "alice");
  alice.fence_token = 5;
  auto refused = alice_->lock.acquire(leaf1_, alice, TakeOver::no);
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->kind, AcquireOutcome::Kind::stale_token);
  EXPECT_EQ(refused->newer_token, 10);
  EXPECT_EQ(refused->newer_run, "b0b0b0b0");
  EXPECT_EQ(refused->message(),
            "leaf1: stale fencing token 5 of run a1b2c3d4: this device saw 10 (run b0b0b0b0), so "
            "a newer run has locked it since");
  EXPECT_FALSE(current_holder().has_value()) << "the refused run wrote no lock";

  alice.fence_token = 11;
  ASSERT_EQ(alice_->lock.acquire(leaf1_, alice, TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);
  EXPECT_EQ(testing::read_file(alice_->lock.fence_file("leaf1")), "11 a1b2c3d4 2\n")
      << "token, run and the generation that wrote it";
  ASSERT_EQ(alice_->lock.release(leaf1_, alice.run)->kind, ReleaseOutcome::Kind::released);
  ASSERT_EQ(bob_->lock.acquire(leaf1_, holder("c0c0c0c0", "carol"), TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired)
      << "a run without coordination has no token and is not fenced";
}

TEST_F(DeviceLockTest, AWriteWithAStaleTokenIsRefusedOnTheDeviceBeforeItRuns) {
  // Given the device saw token 10 (bob's lock), when alice's run, holding token 5, sends a
  // write through TokenFencedRemote, then the device refuses it before it runs (the file it
  // would create is absent), as `rejected` naming device and both tokens; the same command with
  // token 10 runs; the lock's own commands are not guarded; a command's own exit status 86
  // without the guard's line is left as it is.
  auto bob = holder("b0b0b0b0", "bob");
  bob.fence_token = 10;
  ASSERT_EQ(bob_->lock.acquire(leaf1_, bob, TakeOver::no)->kind, AcquireOutcome::Kind::acquired);

  std::int64_t token = 5;
  TokenFencedRemote fenced(
      alice_->remote,
      [&](const std::string& device) -> std::optional<std::int64_t> {
        if (device == "leaf1") return token;
        return std::nullopt;
      },
      options_.base_dir);
  const std::string marker = dir_.file("written");
  const std::string write = "touch " + marker + " && echo wrote";
  auto refused = fenced.run(leaf1_, ssh::CredentialRole::change, write, 10s, "step");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ssh::SshFailure::Kind::rejected);
  EXPECT_EQ(refused.error().message,
            "refused by leaf1 before it ran: stale fencing token 5: this device saw 10 (run "
            "b0b0b0b0); a newer run locked this device after this run's token 5 was issued, so "
            "this run may not write to it any more");
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
  auto via_stdin = fenced.run_via_stdin(leaf1_, ssh::CredentialRole::change, write, 10s, "step");
  ASSERT_FALSE(via_stdin.ok());
  EXPECT_FALSE(std::filesystem::exists(marker));

  auto lock_command =
      fenced.run(leaf1_, ssh::CredentialRole::change, "echo lock", 10s, "device-lock");
  ASSERT_TRUE(lock_command.ok()) << lock_command.error().message;
  EXPECT_EQ(lock_command->exit_status, 0);

  token = 10;
  auto written = fenced.run(leaf1_, ssh::CredentialRole::change, write, 10s, "step");
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->exit_status, 0);
  EXPECT_EQ(written->stdout_text, "wrote\n");
  EXPECT_TRUE(std::filesystem::exists(marker));
  auto own_status = fenced.run(leaf1_, ssh::CredentialRole::change, "exit 86", 10s, "step");
  ASSERT_TRUE(own_status.ok()) << own_status.error().message;
  EXPECT_EQ(own_status->exit_status, 86);
}

TEST_F(DeviceLockTest, AnEqualTokenOfASupersededHolderIsRefusedOnTheDevice) {
  // Given alice's run locked leaf1 with token 10 (generation 1) and was then judged dead (its
  // lease ended), when bob's run takes her lock over carrying the same token 10 (generation 2),
  // then alice's write carrying token 10 with her generation is refused by the device before it
  // runs (equal to the token the device holds is not enough: the holder changed), naming both
  // generations; bob's write runs, directly and through TokenFencedRemote.
  auto alice = LockHolder::for_this_controller("a1b2c3d4", "c", "alice", 1h, now_utc() - 2h);
  alice.fence_token = 10;
  auto first = alice_->lock.acquire(leaf1_, alice, TakeOver::no);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_EQ(first->kind, AcquireOutcome::Kind::acquired);
  auto bob = holder("b0b0b0b0", "bob");
  bob.fence_token = 10;
  auto taken = bob_->lock.acquire(leaf1_, bob, TakeOver::yes);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  ASSERT_EQ(taken->kind, AcquireOutcome::Kind::acquired) << taken->message();
  ASSERT_GT(taken->generation, first->generation);

  const std::string marker = dir_.file("written");
  const std::string write = "touch " + marker + " && echo wrote";
  auto stale = alice_->remote.run(
      leaf1_, ssh::CredentialRole::change,
      fenced_command(options_.base_dir, "leaf1", 10, first->generation, write), 10s, "step");
  ASSERT_TRUE(stale.ok()) << stale.error().message;
  EXPECT_EQ(stale->exit_status, TokenFencedRemote::kRefusedStatus);
  EXPECT_NE(stale->stderr_text.find("fabgate-fence: stale fencing token 10: this device's lock "
                                    "was taken over since (generation " +
                                    std::to_string(taken->generation) +
                                    " of run b0b0b0b0 holds it; this run's is " +
                                    std::to_string(first->generation) + ")"),
            std::string::npos)
      << stale->stderr_text;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the superseded holder's write ran";

  auto current = bob_->remote.run(
      leaf1_, ssh::CredentialRole::change,
      fenced_command(options_.base_dir, "leaf1", 10, taken->generation, write), 10s, "step");
  ASSERT_TRUE(current.ok()) << current.error().message;
  EXPECT_EQ(current->exit_status, 0) << current->stderr_text;
  EXPECT_TRUE(std::filesystem::exists(marker));
  std::filesystem::remove(marker);
  TokenFencedRemote fenced(
      bob_->remote, [](const std::string&) -> std::optional<std::int64_t> { return 10; },
      options_.base_dir);
  auto through = fenced.run(leaf1_, ssh::CredentialRole::change, write, 10s, "step");
  ASSERT_TRUE(through.ok()) << through.error().message;
  EXPECT_TRUE(std::filesystem::exists(marker)) << "this process's own generation was refused";
}

TEST_F(DeviceLockTest, ATakeOverWaitsForACommandOfTheOldHolderStillRunningOnTheDevice) {
  // Given alice's guarded command (token 10) is running on leaf1 (a 2 s step) when bob's run
  // takes her dead lock over with token 11, then bob's acquire completes only after her command
  // ended (its mark is there when the acquire returns, so no rollback of bob's can interleave
  // with it), and a command of alice's started after that is refused.
  auto alice = LockHolder::for_this_controller("a1b2c3d4", "c", "alice", 1h, now_utc() - 2h);
  alice.fence_token = 10;
  auto first = alice_->lock.acquire(leaf1_, alice, TakeOver::no);
  ASSERT_TRUE(first.ok() && first->kind == AcquireOutcome::Kind::acquired);
  const std::string started = dir_.file("started");
  const std::string ended = dir_.file("ended");
  std::thread step([&] {
    (void)alice_->remote.run(leaf1_, ssh::CredentialRole::change,
                             fenced_command(options_.base_dir, "leaf1", 10, first->generation,
                                            "touch " + started + "; sleep 2; touch " + ended),
                             20s, "step");
  });
  for (int i = 0; i < 200 && !std::filesystem::exists(started); ++i)
    std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(std::filesystem::exists(started)) << "alice's step did not start";
  auto bob = holder("b0b0b0b0", "bob");
  bob.fence_token = 11;
  auto taken = bob_->lock.acquire(leaf1_, bob, TakeOver::yes);
  const bool step_had_ended = std::filesystem::exists(ended);
  step.join();
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(taken->kind, AcquireOutcome::Kind::acquired) << taken->message();
  EXPECT_TRUE(step_had_ended) << "the take-over did not wait for the running command";
  auto late = alice_->remote.run(
      leaf1_, ssh::CredentialRole::change,
      fenced_command(options_.base_dir, "leaf1", 10, first->generation, "touch " + started), 10s,
      "step");
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->exit_status, TokenFencedRemote::kRefusedStatus) << late->stderr_text;
}

// ---- two change logins on one device ------------------------------------------------------

// Two controllers that log in to the same device as different users: root, and the fixture's
// unprivileged user (uid 64999), each through a server of its own on the same file system. The
// lock folder is sticky, so neither may rename over or remove the other's files.
class DeviceLockTwoLogins : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
    if (!SshdFixture::hermetic_logins()) GTEST_SKIP() << "a second login user needs root";
    // A base both logins can reach (a test's own temporary folder is private to root).
    char pattern[] = "/tmp/fabgate-two-logins-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    shared_ = pattern;
    std::filesystem::permissions(shared_, std::filesystem::perms(0755));
    options_.base_dir = shared_ + "/locks";
    options_.command_deadline = 10s;
    root_server_ = SshdFixture::start();
    ASSERT_TRUE(root_server_) << SshdFixture::last_error();
    user_server_ = SshdFixture::start({.unprivileged_login = true});
    ASSERT_TRUE(user_server_) << SshdFixture::last_error();
    root_ = std::make_unique<Controller>(*root_server_, options_);
    user_ = std::make_unique<Controller>(*user_server_, options_);
    leaf1_as_root_ = device_on(*root_server_, "leaf1");
    leaf1_as_user_ = device_on(*user_server_, "leaf1");
  }
  void TearDown() override {
    user_.reset();
    root_.reset();
    if (!shared_.empty()) std::filesystem::remove_all(shared_);
  }

  static LockHolder holder(const std::string& run, std::int64_t token) {
    auto taken = LockHolder::for_this_controller(run, "mtu", run, 10min);
    taken.fence_token = token;
    return taken;
  }
  std::string fence() const { return testing::read_file(options_.base_dir + "/leaf1.lock/fence"); }

  std::string shared_;
  DeviceLockOptions options_;
  std::unique_ptr<SshdFixture> root_server_, user_server_;
  std::unique_ptr<Controller> root_, user_;
  intent::Device leaf1_as_root_, leaf1_as_user_;
};

TEST_F(DeviceLockTwoLogins, ALoginWhoseFenceFileItIsNotStillRecordsItsNewerToken) {
  // Given root's run locked leaf1 with token 10 and released it (root wrote the fence file),
  // when a run logged in as another user locks it with token 11, then it is acquired and the
  // fence records 11 (before, the sticky folder kept it from replacing root's file: the
  // acquire failed and left its generation behind). Root's older token 10 is then refused
  // naming 11: the newer token was not lost. Both logins keep taking turns with newer tokens.
  auto root_run = holder("a1a1a1a1", 10);
  auto taken = root_->lock.acquire(leaf1_as_root_, root_run, TakeOver::no);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  ASSERT_EQ(taken->kind, AcquireOutcome::Kind::acquired);
  ASSERT_EQ(root_->lock.release(leaf1_as_root_, root_run.run)->kind,
            ReleaseOutcome::Kind::released);

  auto user_run = holder("b0b0b0b0", 11);
  auto second = user_->lock.acquire(leaf1_as_user_, user_run, TakeOver::no);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->kind, AcquireOutcome::Kind::acquired);
  EXPECT_EQ(fence(), "11 b0b0b0b0 2\n");
  ASSERT_EQ(user_->lock.release(leaf1_as_user_, user_run.run)->kind,
            ReleaseOutcome::Kind::released);

  auto stale = root_->lock.acquire(leaf1_as_root_, holder("c0c0c0c0", 10), TakeOver::no);
  ASSERT_TRUE(stale.ok()) << stale.error().message;
  EXPECT_EQ(stale->kind, AcquireOutcome::Kind::stale_token);
  EXPECT_EQ(stale->newer_token, 11);
  EXPECT_EQ(stale->newer_run, "b0b0b0b0");

  ASSERT_EQ(root_->lock.acquire(leaf1_as_root_, holder("d0d0d0d0", 12), TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);
  EXPECT_EQ(fence(), "12 d0d0d0d0 3\n");
  ASSERT_EQ(root_->lock.release(leaf1_as_root_, "d0d0d0d0")->kind,
            ReleaseOutcome::Kind::released);
  auto again = user_->lock.acquire(leaf1_as_user_, holder("e0e0e0e0", 13), TakeOver::no);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->kind, AcquireOutcome::Kind::acquired);
  EXPECT_EQ(fence(), "13 e0e0e0e0 4\n");
}

TEST_F(DeviceLockTwoLogins, AFenceFileAnotherLoginCannotWriteRefusesBeforeTakingTheLock) {
  // Given leaf1's fence written by root and left mode 0644 (as an older fabgate left it), when
  // the other login acquires with a newer token, then it is refused naming the file and what
  // to do, and no generation of it is left behind: the lock stays free.
  auto root_run = holder("a1a1a1a1", 10);
  ASSERT_EQ(root_->lock.acquire(leaf1_as_root_, root_run, TakeOver::no)->kind,
            AcquireOutcome::Kind::acquired);
  ASSERT_EQ(root_->lock.release(leaf1_as_root_, root_run.run)->kind,
            ReleaseOutcome::Kind::released);
  std::filesystem::permissions(options_.base_dir + "/leaf1.lock/fence",
                               std::filesystem::perms(0644));
  auto refused = user_->lock.acquire(leaf1_as_user_, holder("b0b0b0b0", 11), TakeOver::no);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("mode 0666"), std::string::npos)
      << refused.error().message;
  auto now = root_->lock.holder(leaf1_as_root_);
  ASSERT_TRUE(now.ok()) << now.error().message;
  EXPECT_FALSE(now->has_value()) << "a generation was left behind";
  EXPECT_EQ(fence(), "10 a1a1a1a1 1\n");
}

}  // namespace
}  // namespace fabgate::pipeline
