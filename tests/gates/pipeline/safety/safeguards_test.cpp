// The device-locks gate (Safeguards::lock_targets) against a real sshd on 127.0.0.1: in which
// order a run takes its targets' locks, where it stops, and what it gives back when refused.
// Another controller (its own SSH session) holds the lock the run runs into.

#include "gates/pipeline/safety/safeguards.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>

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

}  // namespace
}  // namespace fabgate::pipeline
