// The safeguards' journaling against a real sshd on 127.0.0.1: taking a lock and arming a
// confirm timer are write-ahead actions. If the record that announces one cannot be made
// durable, the action is not sent (recover, which learns what a dead run left on its devices
// from the journal alone, could never find it), and the gate fails, refusing the change.

#include "gates/pipeline/safety/safeguards.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/safety/journal.h"
#include "tests/gates/pipeline/sshd_device.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using namespace std::chrono_literals;
using testing::SshdFixture;

class SafeguardsJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = SshdFixture::start();
    ASSERT_TRUE(sshd_) << SshdFixture::last_error();
    sessions_ = std::make_unique<SshSessions>(*sshd_);
    inventory_.devices.push_back(device_on(*sshd_, "leaf1"));
    change_.id = "c";
    change_.targets = {"leaf1"};
    intent::Step undo;
    undo.device = "leaf1";
    undo.run = "true";
    change_.rollback.push_back(undo);
    change_.confirm_timeout = 60s;
    auto bundle = EvidenceBundle::create(dir_.file("evidence"), "c", now_utc(), "run1", Redactor{});
    ASSERT_TRUE(bundle.ok()) << bundle.error().message;
    evidence_ = std::move(bundle).value();
    SafeguardOptions options;
    options.locks.base_dir = dir_.file("locks");
    options.locks.command_deadline = 10s;
    options.timers.base_dir = dir_.file("timers");
    options.timers.command_deadline = 10s;
    options.operator_name = "alice";
    safeguards_ =
        std::make_unique<Safeguards>(sessions_->remote, inventory_, change_, *evidence_, options);
  }
  void TearDown() override {
    // Whatever a test armed must not fire after it: disarm is best effort and needs no journal.
    if (safeguards_ && safeguards_->has_armed_timers()) {
      GateRecord ignored;
      safeguards_->disarm_timers(ignored);
    }
  }

  // The journal can no longer be appended to: a folder stands where the file was (this works
  // for root too, unlike taking away write permission).
  void break_journal() {
    auto journal = evidence_->dir() / "journal.jsonl";
    std::filesystem::remove(journal);
    std::filesystem::create_directory(journal);
  }
  bool lock_exists_on_device() const {
    std::error_code ec;
    auto folder = std::filesystem::path(dir_.file("locks")) / "leaf1.lock";
    if (!std::filesystem::exists(folder, ec)) return false;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
      if (entry.path().filename().string().rfind("gen-", 0) == 0) return true;
    return false;
  }
  bool timer_exists_on_device() const {
    return std::filesystem::exists(std::filesystem::path(dir_.file("timers")) / "leaf1" / "run1");
  }

  testing::TempDir dir_{"fabgate-safeguards"};
  std::unique_ptr<SshdFixture> sshd_;
  std::unique_ptr<SshSessions> sessions_;
  intent::Inventory inventory_;
  intent::Change change_;
  std::unique_ptr<EvidenceBundle> evidence_;
  std::unique_ptr<Safeguards> safeguards_;
};

TEST_F(SafeguardsJournalTest, LockAndTimerAreJournaledBeforeTheyAreSent) {
  // Given a working journal, then the lock is taken and the timer armed on the device, and
  // each announcing record precedes the record of its outcome.
  GateRecord locks, timers;
  safeguards_->lock_targets(locks, "run1", 10min);
  ASSERT_EQ(locks.verdict, Verdict::pass) << locks.summary;
  safeguards_->arm_timers(timers, "run1");
  ASSERT_EQ(timers.verdict, Verdict::pass) << timers.summary;
  EXPECT_TRUE(lock_exists_on_device());
  EXPECT_TRUE(timer_exists_on_device());
  auto journal = read_journal(evidence_->dir() / "journal.jsonl");
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  ASSERT_NE(journal->first("lock-acquire"), nullptr);
  ASSERT_NE(journal->first("lock-acquired"), nullptr);
  ASSERT_NE(journal->first("confirm-arm"), nullptr);
  ASSERT_NE(journal->first("confirm-armed"), nullptr);
  EXPECT_LT(journal->first("lock-acquire")->sequence, journal->first("lock-acquired")->sequence);
  EXPECT_LT(journal->first("confirm-arm")->sequence, journal->first("confirm-armed")->sequence);
}

TEST_F(SafeguardsJournalTest, LockIsNotRequestedWhenItsRecordCannotBeWritten) {
  // Given a journal that cannot be appended to, then the device-locks gate fails naming the
  // device and the journal error, and no lock exists on the device.
  break_journal();
  GateRecord locks;
  safeguards_->lock_targets(locks, "run1", 10min);
  EXPECT_EQ(locks.verdict, Verdict::fail);
  ASSERT_FALSE(locks.details.empty());
  EXPECT_NE(locks.details[0].find("leaf1: lock not requested: its journal record could not be "
                                  "written"),
            std::string::npos)
      << locks.details[0];
  EXPECT_FALSE(lock_exists_on_device());
  EXPECT_FALSE(safeguards_->holds_locks());
}

TEST_F(SafeguardsJournalTest, TimerIsNotArmedWhenItsRecordCannotBeWritten) {
  // Given a journal that breaks after the locks were taken, then the confirm-arm gate fails
  // naming the device, and no timer was installed on the device.
  GateRecord locks;
  safeguards_->lock_targets(locks, "run1", 10min);
  ASSERT_EQ(locks.verdict, Verdict::pass) << locks.summary;
  break_journal();
  GateRecord timers;
  safeguards_->arm_timers(timers, "run1");
  EXPECT_EQ(timers.verdict, Verdict::fail);
  ASSERT_FALSE(timers.details.empty());
  EXPECT_NE(timers.details[0].find("leaf1: confirm timer not armed: its journal record could not "
                                   "be written"),
            std::string::npos)
      << timers.details[0];
  EXPECT_FALSE(timer_exists_on_device());
  EXPECT_FALSE(safeguards_->has_armed_timers());
  safeguards_->release_locks();
}

}  // namespace
}  // namespace fabgate::pipeline
