// The device-locks gate (Safeguards::lock_targets) against a real sshd on 127.0.0.1: in which
// order a run takes its targets' locks, where it stops, and what it gives back when refused.
// Another controller (its own SSH session) holds the lock the run runs into. And the confirm
// timers before a rollback: each device's is disarmed only when its own rollback starts, so a
// rollback cut short leaves the devices it never reached to revert by themselves.

#include "gates/pipeline/safety/safeguards.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>

#include "gates/pipeline/families/execute.h"
#include "gates/pipeline/reporting/evidence.h"
#include "tests/gates/pipeline/sshd_device.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using namespace std::chrono_literals;
using testing::SshdFixture;
using testing::TempDir;

class SafeguardsLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = SshdFixture::start();
    ASSERT_TRUE(sshd_) << SshdFixture::last_error();
    options_.locks.base_dir = dir_.file("locks");
    options_.locks.command_deadline = 10s;
    options_.operator_name = "alice";
    inventory_.devices = {device_on(*sshd_, "d1"), device_on(*sshd_, "d2")};
    alice_ = std::make_unique<SshSessions>(*sshd_);
    bob_ = std::make_unique<SshSessions>(*sshd_);
    auto bundle =
        EvidenceBundle::create(dir_.file("evidence"), "c", now_utc(), "a1b2c3d4", Redactor{});
    ASSERT_TRUE(bundle.ok()) << bundle.error().message;
    evidence_ = std::move(bundle).value();
  }

  // Bob, another controller, takes `device`'s lock for his own run.
  void bob_holds(const std::string& device) {
    DeviceLock lock(bob_->remote, options_.locks);
    auto taken =
        lock.acquire(*inventory_.find(device),
                     LockHolder::for_this_controller("b0b0b0b0", "c", "bob", 10min), TakeOver::no);
    ASSERT_TRUE(taken.ok()) << taken.error().message;
    ASSERT_EQ(taken->kind, AcquireOutcome::Kind::acquired);
  }

  // Alice's run locks the targets of a change that lists them in `targets` order.
  GateRecord alice_locks(const std::vector<std::string>& targets) {
    change_.id = "c";
    change_.targets = targets;
    alice_safeguards_ =
        std::make_unique<Safeguards>(alice_->remote, inventory_, change_, *evidence_, options_);
    GateRecord record;
    alice_safeguards_->lock_targets(record, "a1b2c3d4", 10min);
    return record;
  }

  std::optional<LockHolder> holder_of(const std::string& device) {
    DeviceLock lock(bob_->remote, options_.locks);
    auto current = lock.holder(*inventory_.find(device));
    EXPECT_TRUE(current.ok()) << current.error().message;
    return current.ok() ? *current : std::nullopt;
  }

  TempDir dir_{"fabgate-safeguards-test"};
  std::unique_ptr<SshdFixture> sshd_;
  SafeguardOptions options_;
  intent::Inventory inventory_;
  intent::Change change_;
  std::unique_ptr<SshSessions> alice_;
  std::unique_ptr<SshSessions> bob_;
  std::unique_ptr<EvidenceBundle> evidence_;
  std::unique_ptr<Safeguards> alice_safeguards_;
};

TEST_F(SafeguardsLockTest, LocksAreTakenInDeviceNameOrderAndARefusalStopsAtTheFirstHeldOne) {
  // Given bob holds d1 and alice's change lists d2 before d1, then alice is refused naming bob
  // and never touched d2's lock: she tried d1 first (name order) and stopped there, so a run
  // holding d1 can never find d2 taken by her.
  bob_holds("d1");
  auto record = alice_locks({"d2", "d1"});
  EXPECT_EQ(record.verdict, Verdict::fail);
  ASSERT_FALSE(record.details.empty());
  EXPECT_NE(record.details.front().find("d1: locked by run b0b0b0b0 (bob"), std::string::npos)
      << record.details.front();
  EXPECT_FALSE(alice_safeguards_->holds_locks());
  EXPECT_FALSE(std::filesystem::exists(dir_.file("locks") + "/d2.lock"))
      << "alice created a lock on d2 although she was refused at d1";
  for (const auto& event : alice_safeguards_->to_json()["events"])
    EXPECT_NE(event.value("device", ""), "d2") << event.dump();
}

TEST_F(SafeguardsLockTest, LocksTakenBeforeARefusalAreGivenBack) {
  // Given bob holds d2 and alice's change targets d1 and d2, then alice takes d1, is refused
  // at d2, and d1 is free again afterwards while bob keeps d2.
  bob_holds("d2");
  auto record = alice_locks({"d1", "d2"});
  EXPECT_EQ(record.verdict, Verdict::fail);
  EXPECT_FALSE(alice_safeguards_->holds_locks());
  EXPECT_FALSE(holder_of("d1").has_value()) << "d1 is still locked by the refused run";
  auto d2 = holder_of("d2");
  ASSERT_TRUE(d2.has_value());
  EXPECT_EQ(d2->run, "b0b0b0b0");
}

TEST_F(SafeguardsLockTest, FreeTargetsAreAllLockedAndReleasedTogether) {
  // Given nobody holds d1 or d2, then alice locks both (whatever order the change lists them
  // in) and releasing frees both.
  auto record = alice_locks({"d2", "d1"});
  EXPECT_EQ(record.verdict, Verdict::pass) << record.summary;
  for (const char* device : {"d1", "d2"}) {
    auto holder = holder_of(device);
    ASSERT_TRUE(holder.has_value()) << device;
    EXPECT_EQ(holder->run, "a1b2c3d4") << device;
  }
  alice_safeguards_->release_locks();
  EXPECT_FALSE(holder_of("d1").has_value());
  EXPECT_FALSE(holder_of("d2").has_value());
}

// ---- confirm timers before a rollback -----------------------------------------------------

// Passes commands to the real device until closed, then refuses every one before sending it,
// as the lease fence (FencedRemote) and a newer run's token (TokenFencedRemote) do.
class ClosableFence final : public Remote {
 public:
  explicit ClosableFence(Remote& through) : through_(through) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                   const std::string& command, Duration deadline,
                   std::string_view purpose) override {
    if (closed) {
      refused.insert(device.name);
      return ssh::SshFailure{ssh::SshFailure::Kind::rejected,
                             "not sent to " + device.name + ": the fence closed"};
    }
    return through_.run(device, role, command, deadline, purpose);
  }
  std::atomic<bool> closed{false};
  std::set<std::string> refused;

 private:
  Remote& through_;
};

class SafeguardsTimerTest : public SafeguardsLockTest {
 protected:
  void SetUp() override {
    SafeguardsLockTest::SetUp();
    if (IsSkipped()) return;
    options_.timers.base_dir = dir_.file("timers");
    options_.timers.command_deadline = 10s;
    change_.id = "c";
    change_.targets = {"d1", "d2"};
    change_.confirm_timeout = Duration{10 * 60'000};  // never fires during the test
    for (const char* device : {"d1", "d2"}) {
      intent::Step undo;
      undo.device = device;
      undo.run = "touch " + dir_.file(std::string(device) + ".undone");
      change_.rollback.push_back(undo);
    }
  }
  void TearDown() override {
    // No job may outlive the test: disarm whatever is still armed (another session).
    if (sshd_) {
      ConfirmTimer timers(bob_->remote, options_.timers);
      for (const char* device : {"d1", "d2"})
        (void)timers.disarm(*inventory_.find(device), "a1b2c3d4");
    }
  }
  TimerState state_of(const std::string& device) {
    ConfirmTimer timers(bob_->remote, options_.timers);
    auto status = timers.status(*inventory_.find(device), "a1b2c3d4");
    EXPECT_TRUE(status.ok()) << status.error().message;
    return status.ok() ? status->state : TimerState::absent;
  }
};

TEST_F(SafeguardsTimerTest, ARollbackCutShortLeavesTheTimersOfTheDevicesItNeverReachedArmed) {
  // Given timers armed on d1 and d2, both touched, and a rollback (d2 first: last touched
  // first) whose fence closes once d2's rollback ran, then d2's timer was disarmed right before
  // its rollback, d1's rollback and the disarm of its timer were both refused, and d1's timer
  // is still armed on the device (it will revert d1 by itself) and still counted as armed.
  ClosableFence fence(alice_->remote);
  Safeguards safeguards(fence, inventory_, change_, *evidence_, options_);
  GateRecord armed;
  safeguards.arm_timers(armed, "a1b2c3d4");
  ASSERT_EQ(armed.verdict, Verdict::pass) << armed.summary;

  GateRecord before_rollback;  // the confirm-disarm gate: both devices are rolled back later
  safeguards.disarm_timers_except(before_rollback, {"d1", "d2"});
  EXPECT_EQ(state_of("d1"), TimerState::armed);
  EXPECT_EQ(state_of("d2"), TimerState::armed);

  Executor executor(fence, inventory_, change_, evidence_.get(), 1, nullptr);
  GateRecord rollback;
  auto result = executor.rollback({"d1", "d2"}, [&](const std::string& device) {
    if (device == "d1") fence.closed = true;  // another controller took over after d2
    (void)safeguards.disarm_before_rollback_of(device, rollback);
    return BeforeDeviceRollback{};
  });
  EXPECT_TRUE(std::filesystem::exists(dir_.file("d2.undone")));
  EXPECT_FALSE(std::filesystem::exists(dir_.file("d1.undone")));
  EXPECT_FALSE(result.complete());
  EXPECT_EQ(state_of("d2"), TimerState::disarmed);
  EXPECT_EQ(state_of("d1"), TimerState::armed) << "d1 lost its timer and its rollback";
  EXPECT_TRUE(safeguards.timer_armed("d1"));
  EXPECT_FALSE(safeguards.timer_armed("d2"));
}

TEST_F(SafeguardsTimerTest, DevicesNotRolledBackHaveTheirTimersDisarmedBeforeTheRollback) {
  // Given timers armed on d1 and d2 and only d1 touched, then before the rollback d2's timer is
  // disarmed (it has nothing to undo) and d1's stays armed until its own rollback starts.
  Safeguards safeguards(alice_->remote, inventory_, change_, *evidence_, options_);
  GateRecord armed;
  safeguards.arm_timers(armed, "a1b2c3d4");
  ASSERT_EQ(armed.verdict, Verdict::pass) << armed.summary;
  GateRecord before_rollback;
  safeguards.disarm_timers_except(before_rollback, {"d1"});
  EXPECT_EQ(before_rollback.verdict, Verdict::pass);
  EXPECT_EQ(state_of("d2"), TimerState::disarmed);
  EXPECT_EQ(state_of("d1"), TimerState::armed);
  GateRecord rollback;
  EXPECT_EQ(safeguards.disarm_before_rollback_of("d1", rollback), std::nullopt);
  EXPECT_EQ(state_of("d1"), TimerState::disarmed);
  EXPECT_FALSE(safeguards.has_armed_timers());
}

}  // namespace
}  // namespace fabgate::pipeline
