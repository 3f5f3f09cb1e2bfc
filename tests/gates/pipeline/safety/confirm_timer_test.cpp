// The device-side confirm timer against a real sshd on 127.0.0.1. The "device" is that sshd;
// its configuration is a file in the test's temporary directory that the change left at
// "mtu 9100", and the rollback command writes "mtu 9000" back. Timer directories live in the
// temporary directory too (the base directory is an option), so nothing is left in /var/tmp.

#include "gates/pipeline/safety/confirm_timer.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "adapters/core/text.h"
#include "adapters/ssh/connection_cache.h"
#include "tests/gates/pipeline/sshd_device.h"
#include "tests/support/process.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using namespace std::chrono_literals;
using testing::SshdFixture;
using testing::TempDir;

using Controller = SshSessions;

intent::Step run_step(const std::string& device, const std::string& command) {
  intent::Step step;
  step.device = device;
  step.run = command;
  return step;
}

// Polls every 100 ms until `condition` holds or `limit` passes.
template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return condition();
}

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& line : lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

class ConfirmTimerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = SshdFixture::start();
    ASSERT_TRUE(sshd_) << SshdFixture::last_error();
    controller_ = std::make_unique<Controller>(*sshd_);
    options_.base_dir = dir_.file("confirm");
    options_.command_deadline = 10s;
    options_.rollback_step_timeout = 10s;
    leaf1_ = device_on(*sshd_, "leaf1");
    testing::write_file(config(), "mtu 9100\n");
  }

  // No job may outlive its test: kill any still running (each leads its own process group).
  void TearDown() override {
    std::error_code error;
    for (std::filesystem::recursive_directory_iterator it(dir_.path(), error), end;
         !error && it != end; it.increment(error)) {
      if (it->path().filename() != "pid") continue;
      long pid = std::atol(testing::read_file(it->path().string()).c_str());
      if (pid > 1 && testing::process_alive(static_cast<pid_t>(pid)))
        ::kill(-static_cast<pid_t>(pid), SIGKILL);
    }
  }

  std::string config() const { return dir_.file("leaf1.conf"); }
  std::string read_config() const { return testing::read_file(config()); }
  std::vector<intent::Step> restoring_rollback() const {
    return {run_step("leaf1", "printf 'mtu 9000\\n' > " + shell_quote(config()))};
  }
  ConfirmTimer timer() { return ConfirmTimer(controller_->remote, options_); }
  TimerState state_of(const std::string& run) {
    auto status = timer().status(leaf1_, run);
    EXPECT_TRUE(status.ok()) << status.error().message;
    return status.ok() ? status->state : TimerState::absent;
  }

  TempDir dir_{"fabgate-confirm-test"};
  std::unique_ptr<SshdFixture> sshd_;
  std::unique_ptr<Controller> controller_;
  ConfirmTimerOptions options_;
  intent::Device leaf1_;
};

TEST_F(ConfirmTimerTest, FiresAfterTheTimeoutAndRestoresEvenAfterTheConnectionClosed) {
  // Given a timer armed for 2 s whose controller then closes its SSH connection, then the
  // device runs the rollback by itself: the configuration is back to mtu 9000 and a new
  // session reads fired-restored with the command's exit status in the log.
  auto armed = timer().arm(leaf1_, "run1", 2s, restoring_rollback());
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  EXPECT_EQ(armed->deadline - armed->armed_at, 2s);
  EXPECT_EQ(armed->rollback_commands, 1u);
  EXPECT_TRUE(testing::process_alive(static_cast<pid_t>(armed->pid)));
  EXPECT_EQ(state_of("run1"), TimerState::armed);

  controller_.reset();  // every SSH session of this controller is closed here
  EXPECT_EQ(read_config(), "mtu 9100\n") << "fired before its timeout";
  EXPECT_TRUE(eventually([&] { return read_config() == "mtu 9000\n"; }, 15s))
      << "the device did not restore itself; config is " << read_config();

  controller_ = std::make_unique<Controller>(*sshd_);
  auto status = timer().status(leaf1_, "run1");
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_TRUE(eventually([&] { return state_of("run1") == TimerState::fired_restored; }, 10s));
  status = timer().status(leaf1_, "run1");
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_TRUE(contains(status->log, "command 1 exit 0")) << join(status->log, "\n");
  EXPECT_TRUE(contains(status->log, "rollback complete")) << join(status->log, "\n");
  EXPECT_FALSE(status->failed.has_value());
}

TEST_F(ConfirmTimerTest, FiresEvenWhenTheSshServerItselfIsGone) {
  // Given a timer armed for 1 s and then the SSH server stopped (the controller can no longer
  // reach the device at all), then the job still fires and restores the configuration.
  auto armed = timer().arm(leaf1_, "run1", 1s, restoring_rollback());
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  controller_.reset();
  sshd_->stop();
  EXPECT_TRUE(eventually([&] { return read_config() == "mtu 9000\n"; }, 15s))
      << "config is " << read_config();
  std::string result = armed->directory + "/result";
  EXPECT_TRUE(eventually([&] { return testing::file_exists(result); }, 5s));
  EXPECT_EQ(testing::read_file(result), "restored\n");
}

TEST_F(ConfirmTimerTest, DisarmBeforeTheTimeoutMeansItNeverFires) {
  // Given a 1 s timer disarmed right away, then disarm says it won, the job process ends, and
  // well past the timeout the configuration is untouched and the status is disarmed.
  auto armed = timer().arm(leaf1_, "run1", 1s, restoring_rollback());
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  auto disarmed = timer().disarm(leaf1_, "run1");
  ASSERT_TRUE(disarmed.ok()) << disarmed.error().message;
  EXPECT_EQ(disarmed->kind, DisarmOutcome::Kind::disarmed);
  EXPECT_EQ(disarmed->status.state, TimerState::disarmed);
  EXPECT_TRUE(
      eventually([&] { return !testing::process_alive(static_cast<pid_t>(armed->pid)); }, 5s))
      << "the disarmed job is still running";

  std::this_thread::sleep_for(2500ms);  // well past the 1 s timeout
  EXPECT_EQ(read_config(), "mtu 9100\n");
  auto status = timer().status(leaf1_, "run1");
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(status->state, TimerState::disarmed);
  EXPECT_FALSE(contains(status->log, "fired")) << join(status->log, "\n");
  EXPECT_TRUE(contains(status->log, "disarmed"));
}

TEST_F(ConfirmTimerTest, DisarmHoldsEvenWhenTheJobCannotBeSignalled) {
  // Given a disarm that cannot stop the job process (its pid file no longer names it), then
  // the job still wakes at its deadline, finds the claim taken by disarm, and runs nothing: the
  // decision is the claim on the device, not the kill.
  auto armed = timer().arm(leaf1_, "run1", 3s, restoring_rollback());
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  testing::write_file(armed->directory + "/pid", "1\n");
  auto disarmed = timer().disarm(leaf1_, "run1");
  ASSERT_TRUE(disarmed.ok()) << disarmed.error().message;
  EXPECT_EQ(disarmed->kind, DisarmOutcome::Kind::disarmed);
  EXPECT_TRUE(testing::process_alive(static_cast<pid_t>(armed->pid)));
  EXPECT_TRUE(
      eventually([&] { return !testing::process_alive(static_cast<pid_t>(armed->pid)); }, 10s))
      << "the job did not end after its deadline";
  EXPECT_EQ(read_config(), "mtu 9100\n");
  EXPECT_EQ(state_of("run1"), TimerState::disarmed);
}

TEST_F(ConfirmTimerTest, DisarmAfterFiringReportsThatItFiredAndItsResult) {
  // Given a timer that already fired and restored, then disarm reports already-fired with the
  // fired-restored result, and changes nothing.
  ASSERT_TRUE(timer().arm(leaf1_, "run1", 1s, restoring_rollback()).ok());
  ASSERT_TRUE(eventually([&] { return state_of("run1") == TimerState::fired_restored; }, 15s));
  auto disarmed = timer().disarm(leaf1_, "run1");
  ASSERT_TRUE(disarmed.ok()) << disarmed.error().message;
  EXPECT_EQ(disarmed->kind, DisarmOutcome::Kind::already_fired);
  EXPECT_EQ(disarmed->status.state, TimerState::fired_restored);
  EXPECT_EQ(state_of("run1"), TimerState::fired_restored);
}

TEST_F(ConfirmTimerTest, DisarmOfATimerThatIsNotArmedSaysSo) {
  // Given no timer, then disarm says not-armed and status absent; given one disarmed already,
  // then a second disarm says already-disarmed.
  auto none = timer().disarm(leaf1_, "never-armed");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->kind, DisarmOutcome::Kind::not_armed);
  EXPECT_EQ(state_of("never-armed"), TimerState::absent);

  ASSERT_TRUE(timer().arm(leaf1_, "run1", 30s, restoring_rollback()).ok());
  ASSERT_EQ(timer().disarm(leaf1_, "run1")->kind, DisarmOutcome::Kind::disarmed);
  auto again = timer().disarm(leaf1_, "run1");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->kind, DisarmOutcome::Kind::already_disarmed);
}

TEST_F(ConfirmTimerTest, StatusReadsAbsentArmedAndFiredRestoredFromTheDevice) {
  // Given a timer's life, then status reads absent, then armed with its pid and a deadline on
  // the device's clock, then fired-restored.
  EXPECT_EQ(state_of("run1"), TimerState::absent);
  auto armed = timer().arm(leaf1_, "run1", 2s, restoring_rollback());
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  auto status = timer().status(leaf1_, "run1");
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(status->state, TimerState::armed);
  EXPECT_EQ(status->pid, armed->pid);
  EXPECT_EQ(status->deadline, armed->deadline);
  ASSERT_TRUE(status->device_now.has_value());
  EXPECT_LE(*status->device_now, armed->deadline);
  EXPECT_TRUE(eventually([&] { return state_of("run1") == TimerState::fired_restored; }, 15s));
}

TEST_F(ConfirmTimerTest, AKilledJobIsReportedOrphanedBecauseItWillNotFire) {
  // Given a job killed on the device (as a reboot would), then status says orphaned rather
  // than armed: nothing will restore this device by itself.
  auto armed = timer().arm(leaf1_, "run1", 30s, restoring_rollback());
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  ASSERT_EQ(::kill(-static_cast<pid_t>(armed->pid), SIGKILL), 0);
  EXPECT_TRUE(eventually([&] { return state_of("run1") == TimerState::orphaned; }, 5s));
}

TEST_F(ConfirmTimerTest, AFailingRollbackCommandStopsTheJobAndIsReported) {
  // Given a rollback whose second command fails, then the job stops there (the third never
  // runs) and status says fired-failed naming command 2, its text and its exit status.
  std::string first = dir_.file("first-ran");
  std::string third = dir_.file("third-ran");
  std::vector<intent::Step> rollback = {run_step("leaf1", "touch " + shell_quote(first)),
                                        run_step("spine1", "echo other device"),
                                        run_step("leaf1", "echo broken >&2; exit 3"),
                                        run_step("leaf1", "touch " + shell_quote(third))};
  auto armed = timer().arm(leaf1_, "run1", 1s, rollback);
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  EXPECT_EQ(armed->rollback_commands, 3u);
  ASSERT_TRUE(eventually([&] { return state_of("run1") == TimerState::fired_failed; }, 15s));
  auto status = timer().status(leaf1_, "run1");
  ASSERT_TRUE(status.ok()) << status.error().message;
  ASSERT_TRUE(status->failed.has_value());
  EXPECT_EQ(status->failed->index, 2);
  EXPECT_EQ(status->failed->exit_status, 3);
  EXPECT_EQ(status->failed->command, "echo broken >&2; exit 3");
  EXPECT_TRUE(testing::file_exists(first));
  EXPECT_FALSE(testing::file_exists(third));
  EXPECT_TRUE(contains(status->log, "command 1 exit 0")) << join(status->log, "\n");
  EXPECT_TRUE(contains(status->log, "command 2 exit 3")) << join(status->log, "\n");
  EXPECT_FALSE(contains(status->log, "command 3")) << join(status->log, "\n");
}

TEST_F(ConfirmTimerTest, RollbackTextRunsExactlyAsWrittenAndCannotInjectIntoTheTimer) {
  // Given rollback text full of quotes, $(...) and backticks, and a base directory with a space
  // and a quote in its name, then the command runs with exactly its own meaning: nothing in it
  // is expanded while arming or writing the job.
  options_.base_dir = dir_.file("confirm dir 'quoted'");
  std::string out = dir_.file("out");
  std::string pwned = dir_.file("pwned");
  std::string command = "printf '%s\\n' \"it's\" '$(touch " + pwned + ")' '`touch " + pwned +
                        "`' > " + shell_quote(out);
  auto armed = timer().arm(leaf1_, "run1", 1s, {run_step("leaf1", command)});
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  ASSERT_TRUE(eventually([&] { return state_of("run1") == TimerState::fired_restored; }, 15s));
  EXPECT_EQ(testing::read_file(out), "it's\n$(touch " + pwned + ")\n`touch " + pwned + "`\n");
  EXPECT_FALSE(testing::file_exists(pwned));
}

TEST_F(ConfirmTimerTest, ADeviceWhoseRollbackIsGnmiCannotGetATimer) {
  // Given a gNMI rollback step for leaf1, then arm fails `unsupported`, names the device, and
  // nothing was installed on the device.
  intent::Step gnmi;
  gnmi.device = "leaf1";
  gnmi.gnmi_set = {{"replace", "/interfaces/interface[name=eth1]/config/mtu", "9000"}};
  auto armed = timer().arm(leaf1_, "run1", 1s, {restoring_rollback().front(), gnmi});
  ASSERT_FALSE(armed.ok());
  EXPECT_EQ(armed.error().kind, ConfirmTimerFailure::Kind::unsupported);
  EXPECT_NE(armed.error().message.find("leaf1: arm confirm timer (run run1)"), std::string::npos)
      << armed.error().message;
  EXPECT_NE(armed.error().message.find("gNMI"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(options_.base_dir));
}

TEST_F(ConfirmTimerTest, NoRollbackForTheDeviceOrAnUnsafeRunIdIsRefusedBeforeContactingIt) {
  // Given a rollback only for another device, or a run id that would escape the timer folder,
  // then arm fails with a typed reason and writes nothing.
  auto other = timer().arm(leaf1_, "run1", 1s, {run_step("spine1", "true")});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().kind, ConfirmTimerFailure::Kind::no_rollback);
  auto escape = timer().arm(leaf1_, "../../etc", 1s, restoring_rollback());
  ASSERT_FALSE(escape.ok());
  EXPECT_EQ(escape.error().kind, ConfirmTimerFailure::Kind::invalid_name);
  EXPECT_FALSE(std::filesystem::exists(options_.base_dir));
}

TEST_F(ConfirmTimerTest, ArmingTheSameRunTwiceIsRefused) {
  // Given a timer already armed for this run, then a second arm fails `already_armed` and the
  // first timer is still the one armed.
  auto armed = timer().arm(leaf1_, "run1", 30s, restoring_rollback());
  ASSERT_TRUE(armed.ok()) << armed.error().message;
  auto again = timer().arm(leaf1_, "run1", 30s, restoring_rollback());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ConfirmTimerFailure::Kind::already_armed);
  auto status = timer().status(leaf1_, "run1");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state, TimerState::armed);
  EXPECT_EQ(status->pid, armed->pid);
}

TEST_F(ConfirmTimerTest, DisarmRacingTheDeadlineHasExactlyOneWinner) {
  // Given disarms sent around the moment each 1 s timer fires, then every time exactly one
  // side won and the device agrees with what disarm said: disarmed means the rollback never
  // ran; already-fired means it ran to completion.
  // One SSH command's round trip: the job fires about 1 s after it started, which was during
  // the arm command; disarms are aimed from before to after that moment.
  auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(timer().status(leaf1_, "warm-up").ok());
  auto round_trip = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - sent);
  int disarm_won = 0;
  int fire_won = 0;
  for (int round = 0; round < 6; ++round) {
    std::string run = "race" + std::to_string(round);
    std::string file = dir_.file(run + ".conf");
    testing::write_file(file, "changed\n");
    auto armed = timer().arm(leaf1_, run, 1s,
                             {run_step("leaf1", "printf 'restored\\n' > " + shell_quote(file))});
    ASSERT_TRUE(armed.ok()) << armed.error().message;
    auto aim = 1000ms - round_trip + (round - 3) * 120ms;
    if (aim > 0ms) std::this_thread::sleep_for(aim);
    auto disarmed = timer().disarm(leaf1_, run);
    ASSERT_TRUE(disarmed.ok()) << disarmed.error().message;
    if (disarmed->kind == DisarmOutcome::Kind::disarmed) {
      std::this_thread::sleep_for(1500ms);
      EXPECT_EQ(testing::read_file(file), "changed\n") << run;
      EXPECT_EQ(state_of(run), TimerState::disarmed) << run;
    } else {
      ASSERT_EQ(disarmed->kind, DisarmOutcome::Kind::already_fired) << run;
      EXPECT_TRUE(eventually([&] { return state_of(run) == TimerState::fired_restored; }, 10s))
          << run;
      EXPECT_EQ(testing::read_file(file), "restored\n") << run;
    }
    ++(disarmed->kind == DisarmOutcome::Kind::disarmed ? disarm_won : fire_won);
  }
  std::cout << "disarm won " << disarm_won << " rounds, the job " << fire_won << "\n";
}

}  // namespace
}  // namespace fabgate::pipeline
