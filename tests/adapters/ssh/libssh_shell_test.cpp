// Integration tests of the libssh adapter against a real sshd on 127.0.0.1 (SshdFixture).

#include "adapters/ssh/libssh_shell.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "adapters/ssh/connection_cache.h"
#include "adapters/ssh/fan_out.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::ssh {
namespace {

using testing::SshdFixture;

class LibsshShellTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = SshdFixture::start();
    ASSERT_TRUE(sshd_) << SshdFixture::last_error();
  }

  std::unique_ptr<LibsshShell> connect_or_fail(const SshDevice& device, const SshOptions& options) {
    auto shell = LibsshShell::connect(device, CredentialRole::read, options);
    if (!shell) {
      ADD_FAILURE() << to_string(shell.error().kind) << ": " << shell.error().message << "\n"
                    << sshd_->log();
      return nullptr;
    }
    return std::move(shell.value());
  }

  int accepted_logins() const {
    std::string log = sshd_->log();
    int count = 0;
    for (auto at = log.find("Accepted publickey"); at != std::string::npos;
         at = log.find("Accepted publickey", at + 1)) {
      ++count;
    }
    return count;
  }

  std::unique_ptr<SshdFixture> sshd_;
};

TEST_F(LibsshShellTest, RunsACommandAndReturnsItsOutputAndExitStatus) {
  // Given a reachable server with a known key, then stdout, stderr and exit status come back.
  auto shell = connect_or_fail(sshd_->device("leaf1"), sshd_->options());
  ASSERT_TRUE(shell);
  auto result = shell->run("echo hello; echo oops >&2; exit 0", Duration{10'000});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->stdout_text, "hello\n");
  EXPECT_EQ(result->stderr_text, "oops\n");
  EXPECT_EQ(result->exit_status, 0);
  EXPECT_FALSE(result->stdout_truncated);
}

// Whether `text` appears in any process's argv on this host (the test sshd runs here), checked
// every 50 ms while `running` is true.
bool seen_in_process_list(const std::string& text, const std::atomic<bool>& running) {
  bool seen = false;
  while (running && !seen) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      // A process that exits while its cmdline is read fails the read (ESRCH), which
      // libstdc++'s stream buffer throws: that process is gone, so it holds nothing.
      std::string args;
      try {
        std::ifstream in(entry.path() / "cmdline", std::ios::binary);
        args.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      } catch (const std::ios_base::failure&) {
        continue;
      }
      if (args.find(text) != std::string::npos &&
          entry.path().filename() != std::to_string(::getpid()))
        seen = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return seen;
}

TEST_F(LibsshShellTest, ACommandSentOnStdinIsNotInTheDevicesProcessList) {
  // Given a command holding a secret that runs for 2 s, then sent by run() its text is in the
  // process list of the host while it runs (the exposure run_via_stdin() avoids), and sent by
  // run_via_stdin() it is not, while its output, exit status and a /dev/null stdin are the
  // same as a command's.
  auto shell = connect_or_fail(sshd_->device("leaf1"), sshd_->options());
  ASSERT_TRUE(shell);
  for (bool via_stdin : {false, true}) {
    std::string secret = via_stdin ? "Canary-stdin-7Q" : "Canary-argv-7Q";
    std::atomic<bool> running{true};
    bool seen = false;
    std::thread watcher([&] { seen = seen_in_process_list(secret, running); });
    std::string command = ": " + secret + "; sleep 2; cat; echo done; exit 3";
    auto result = via_stdin ? shell->run_via_stdin(command, Duration{20'000})
                            : shell->run("{ " + command + "\n} </dev/null", Duration{20'000});
    running = false;
    watcher.join();
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->stdout_text, "done\n");
    EXPECT_EQ(result->exit_status, 3);
    EXPECT_EQ(seen, !via_stdin) << (via_stdin ? "run_via_stdin" : "run") << " and " << secret;
  }
}

TEST_F(LibsshShellTest, ReportsANonZeroExitAsAResultNotAFailure) {
  // Given a command that exits 7, then the result carries exit status 7.
  auto shell = connect_or_fail(sshd_->device("leaf1"), sshd_->options());
  ASSERT_TRUE(shell);
  auto result = shell->run("echo partial; exit 7", Duration{10'000});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_status, 7);
  EXPECT_EQ(result->stdout_text, "partial\n");
}

TEST_F(LibsshShellTest, RefusesAChangedHostKeyAndSendsNothing) {
  // Given known_hosts holding a different key for the server, then the connect fails with a
  // host-key failure naming the file, no login happens and the marker command never runs.
  auto options = sshd_->options();
  options.known_hosts_file = sshd_->changed_known_hosts();
  LibsshConnector connector(options);
  ConnectionCache cache(connector);
  const std::string marker = sshd_->file("marker");
  auto shell = cache.shell(sshd_->device("leaf1"), CredentialRole::read);
  if (shell) (void)shell.value()->run("touch " + marker, Duration{5'000});
  ASSERT_FALSE(shell);
  EXPECT_EQ(shell.error().kind, SshFailure::Kind::host_key);
  EXPECT_NE(shell.error().message.find("CHANGED"), std::string::npos);
  EXPECT_NE(shell.error().message.find(sshd_->changed_known_hosts()), std::string::npos);
  EXPECT_NE(shell.error().message.find("SHA256:"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(testing::file_exists(marker));
  EXPECT_EQ(accepted_logins(), 0) << sshd_->log();
}

TEST_F(LibsshShellTest, RefusesAnUnknownHostByDefault) {
  // Given an empty known_hosts and the default policy, then the connect fails (host-key) and
  // nobody logs in.
  auto options = sshd_->options();
  options.known_hosts_file = sshd_->empty_known_hosts();
  auto shell = LibsshShell::connect(sshd_->device("leaf1"), CredentialRole::read, options);
  ASSERT_FALSE(shell);
  EXPECT_EQ(shell.error().kind, SshFailure::Kind::host_key);
  EXPECT_NE(shell.error().message.find("--accept-new-host-keys"), std::string::npos);
  EXPECT_EQ(accepted_logins(), 0);
}

TEST_F(LibsshShellTest, AcceptsAnUnknownHostOnlyWhenAllowedAndRecordsTheKey) {
  // Given an empty known_hosts and accept_and_record, then the connect succeeds, the accepted
  // key is reported with its fingerprint and saved, and the next strict connect trusts it.
  auto options = sshd_->options();
  options.known_hosts_file = sshd_->empty_known_hosts();
  options.unknown_host_keys = UnknownHostKeys::accept_and_record;
  LibsshConnector connector(options);
  {
    ConnectionCache cache(connector);
    auto shell = cache.shell(sshd_->device("leaf1"), CredentialRole::read);
    ASSERT_TRUE(shell) << shell.error().message;
  }
  auto accepted = connector.accepted_host_keys();
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0].device, "leaf1");
  EXPECT_EQ(accepted[0].key_type, "ssh-ed25519");
  EXPECT_EQ(accepted[0].fingerprint.rfind("SHA256:", 0), 0u);
  EXPECT_TRUE(accepted[0].saved);

  options.unknown_host_keys = UnknownHostKeys::refuse;
  auto again = LibsshShell::connect(sshd_->device("leaf1"), CredentialRole::read, options);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(again.value()->accepted_host_key());
}

TEST_F(LibsshShellTest, RefusesAKeyTheServerDoesNotAuthorize) {
  // Given a user key missing from authorized_keys, then the connect fails with an auth failure.
  auto device = sshd_->device("leaf1");
  device.read.identity_file = sshd_->stranger_key();
  auto shell = LibsshShell::connect(device, CredentialRole::read, sshd_->options());
  ASSERT_FALSE(shell);
  EXPECT_EQ(shell.error().kind, SshFailure::Kind::auth);
  EXPECT_NE(shell.error().message.find("refused"), std::string::npos);
}

TEST_F(LibsshShellTest, AReadUsesTheReadLoginAndAChangeTheChangeLogin) {
  // Given a device whose read key is authorized but whose change key is not, then a read
  // session works and a change session is refused: the two logins are never mixed up.
  auto device = sshd_->device("leaf1");
  device.change.identity_file = sshd_->stranger_key();
  LibsshConnector connector(sshd_->options());
  ConnectionCache cache(connector);
  EXPECT_TRUE(cache.shell(device, CredentialRole::read));
  auto change = cache.shell(device, CredentialRole::change);
  ASSERT_FALSE(change);
  EXPECT_EQ(change.error().kind, SshFailure::Kind::auth);
}

TEST_F(LibsshShellTest, HonoursTheSshConfigHostAliasPortUserAndIdentityFile) {
  // Given only a Host alias (no port, user or key in the inventory), then the SSH config's
  // HostName, Port, User and IdentityFile are enough to log in.
  SshDevice device{"leaf1", SshdFixture::alias(), 0, SshLogin{"", "", true}, SshLogin{}};
  auto shell = connect_or_fail(device, sshd_->options());
  ASSERT_TRUE(shell);
  auto result = shell->run("id -un", Duration{10'000});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->stdout_text, sshd_->user() + "\n");
}

TEST(LibsshShellDeadline, StopsACommandAtItsDeadlineAndTheRemoteProcessIsGone) {
  // Given a non-root login running a command that sleeps 30 s with a 1 s deadline, then run()
  // returns a timeout within the deadline plus a small margin, the remote process no longer
  // runs, and the session still serves the next command.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run sshd with an unprivileged test login";
  auto sshd = SshdFixture::start({.unprivileged_login = true});
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  auto connected =
      LibsshShell::connect(sshd->device("leaf1"), CredentialRole::read, sshd->options());
  ASSERT_TRUE(connected) << connected.error().message << "\n" << sshd->log();
  auto& shell = connected.value();
  const std::string pid_file = sshd->home() + "/sleeper.pid";
  auto started = std::chrono::steady_clock::now();
  auto result = shell->run("sh -c 'echo $$ > " + pid_file + "; exec sleep 30'", Duration{1'000});
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, SshFailure::Kind::timeout);
  EXPECT_NE(result.error().message.find("timed out after 1 s"), std::string::npos);
  // Stopped at its 1 s timeout, not by the 30 s sleep ending; the bound is the sleep's, since
  // on a busy machine the channel's close may add scheduling delay to the timeout.
  EXPECT_LT(took, std::chrono::seconds(10));

  pid_t pid = std::stoi(testing::read_file(pid_file));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !testing::process_alive(pid);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "remote process " << pid << " still runs after the deadline\n"
                    << sshd->log();

  auto next = shell->run("echo still-here", Duration{10'000});
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(next->stdout_text, "still-here\n");
}

TEST_F(LibsshShellTest, CapsLargeOutputAndSaysItWasTruncated) {
  // Given 8 MiB of output and a 1 MiB cap, then 1 MiB is kept, truncation is reported and the
  // command still completes with its exit status.
  auto options = sshd_->options();
  options.output_cap = 1u << 20;
  auto shell = connect_or_fail(sshd_->device("leaf1"), options);
  ASSERT_TRUE(shell);
  auto result = shell->run("head -c 8388608 /dev/zero; echo done >&2", Duration{20'000});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->stdout_text.size(), 1u << 20);
  EXPECT_TRUE(result->stdout_truncated);
  EXPECT_EQ(result->stderr_text, "done\n");
  EXPECT_FALSE(result->stderr_truncated);
  EXPECT_EQ(result->exit_status, 0);
}

TEST_F(LibsshShellTest, ARequestMayKeepMoreThanTheSessionsCapOnItsOwnStandardOutput) {
  // Given a session with a 1 MiB cap and 2 MiB hard limit, and two commands printing 3 MiB, one
  // asking to keep 4 MiB: then, one exec for both and on a channel each, that one's whole output
  // is kept (its limit raised with its cap) and the other's is cut at 1 MiB and stopped at the
  // session's limit.
  auto options = sshd_->options();
  options.output_cap = 1u << 20;
  options.output_limit = 2u << 20;
  auto shell = connect_or_fail(sshd_->device("leaf1"), options);
  ASSERT_TRUE(shell);
  RemoteShell::Request large{"head -c 3145728 /dev/zero", Duration{20'000}};
  large.output_cap = 4u << 20;
  RemoteShell::Request plain{"head -c 3145728 /dev/zero", Duration{20'000}};
  for (const bool batch : {true, false}) {
    SCOPED_TRACE(batch ? "run_batch" : "run_each");
    auto results = batch ? shell->run_batch({large, plain}) : shell->run_each({large, plain});
    ASSERT_EQ(results.size(), 2u);
    ASSERT_TRUE(results[0]) << results[0].error().message;
    EXPECT_EQ(results[0]->stdout_text.size(), 3u << 20);
    EXPECT_FALSE(results[0]->stdout_truncated);
    ASSERT_FALSE(results[1]);
    EXPECT_EQ(results[1].error().kind, SshFailure::Kind::output_too_large);
  }
}

TEST_F(LibsshShellTest, StopsACommandThatWritesPastTheHardLimit) {
  // Given a command that writes endlessly and a 2 MiB hard limit, then it is stopped with an
  // output-too-large failure long before its deadline.
  auto options = sshd_->options();
  options.output_cap = 1u << 20;
  options.output_limit = 2u << 20;
  auto shell = connect_or_fail(sshd_->device("leaf1"), options);
  ASSERT_TRUE(shell);
  auto started = std::chrono::steady_clock::now();
  auto result = shell->run("exec cat /dev/zero", Duration{30'000});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, SshFailure::Kind::output_too_large);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST_F(LibsshShellTest, ReportsAClosedPortAsUnreachable) {
  // Given a port nobody listens on, then the connect fails quickly as unreachable.
  auto device = sshd_->device("leaf1");
  sshd_->stop();
  auto started = std::chrono::steady_clock::now();
  auto shell = LibsshShell::connect(device, CredentialRole::read, sshd_->options());
  ASSERT_FALSE(shell);
  EXPECT_EQ(shell.error().kind, SshFailure::Kind::unreachable);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(6));
}

TEST_F(LibsshShellTest, ACommandThatDropsItsOwnSessionAfterActingFailsAsSentNotAsNotSent) {
  // Given a command that changes the device (creates a file) and then kills the sshd process
  // serving its session, as a step that bounces the management plane does, then the file
  // exists, the failure says the command was sent (its outcome unknown) and the session is
  // lost; the next command on that session fails as provably not sent.
  auto shell = connect_or_fail(sshd_->device("leaf1"), sshd_->options());
  ASSERT_TRUE(shell);
  const std::string marker = sshd_->home() + "/vlan-100";
  auto result = shell->run("touch '" + marker + "'; kill -9 $PPID; sleep 5", Duration{20'000});
  ASSERT_FALSE(result) << "exit " << result->exit_status << "\n" << sshd_->log();
  EXPECT_TRUE(std::filesystem::exists(marker)) << "the command did not run";
  EXPECT_EQ(result.error().delivery, SshFailure::Delivery::sent)
      << to_string(result.error().kind) << ": " << result.error().message;
  EXPECT_TRUE(result.error().may_have_run());
  EXPECT_EQ(result.error().kind, SshFailure::Kind::unreachable) << result.error().message;
  EXPECT_NE(result.error().message.find("after the command was sent"), std::string::npos)
      << result.error().message;
  EXPECT_TRUE(shell->connection_lost());

  auto next = shell->run("touch '" + marker + ".next'", Duration{10'000});
  ASSERT_FALSE(next);
  EXPECT_EQ(next.error().delivery, SshFailure::Delivery::not_sent) << next.error().message;
  EXPECT_FALSE(std::filesystem::exists(marker + ".next"));
}

TEST_F(LibsshShellTest, FailuresBeforeTheExecAreProvenNotSent) {
  // Given a host key that does not match and a key the server refuses, then both connects fail
  // as not sent: no command of the caller's can have run.
  auto changed = sshd_->options();
  changed.known_hosts_file = sshd_->changed_known_hosts();
  auto refused_key = LibsshShell::connect(sshd_->device("leaf1"), CredentialRole::read, changed);
  ASSERT_FALSE(refused_key);
  EXPECT_EQ(refused_key.error().kind, SshFailure::Kind::host_key);
  EXPECT_EQ(refused_key.error().delivery, SshFailure::Delivery::not_sent);

  auto stranger = sshd_->device("leaf1");
  stranger.read.identity_file = sshd_->stranger_key();
  stranger.read.use_agent = false;
  auto refused_login = LibsshShell::connect(stranger, CredentialRole::read, sshd_->options());
  ASSERT_FALSE(refused_login);
  EXPECT_EQ(refused_login.error().kind, SshFailure::Kind::auth);
  EXPECT_EQ(refused_login.error().delivery, SshFailure::Delivery::not_sent);
}

TEST_F(LibsshShellTest, TheConnectionCacheOpensANewSessionAfterOneWasLost) {
  // Given a device whose session a command dropped, then the next command through the run's
  // connection cache logs in again and runs (the device's rollback can reach it).
  LibsshConnector connector(sshd_->options());
  ConnectionCache cache(connector);
  auto device = sshd_->device("leaf1");
  auto first = cache.shell(device, CredentialRole::change);
  ASSERT_TRUE(first) << first.error().message;
  auto dropped = first.value()->run("kill -9 $PPID; sleep 5", Duration{20'000});
  ASSERT_FALSE(dropped);
  EXPECT_TRUE(dropped.error().may_have_run());

  auto again = cache.shell(device, CredentialRole::change);
  ASSERT_TRUE(again) << again.error().message;
  auto undo = again.value()->run("echo rolled-back", Duration{10'000});
  ASSERT_TRUE(undo) << undo.error().message << "\n" << sshd_->log();
  EXPECT_EQ(undo->stdout_text, "rolled-back\n");
  EXPECT_EQ(accepted_logins(), 2);
}

TEST(LibsshShellConcurrency, ServesManyTargetsInParallelWithOneSessionEach) {
  // Given 60 targets, 3 ordered commands each and 16 workers, then every command succeeds,
  // each target's commands ran in order, and the server saw exactly one login per target.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = SshdFixture::start({.max_startups = 100, .max_sessions = 10});
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  constexpr std::size_t kTargets = 60;
  LibsshConnector connector(sshd->options());
  ConnectionCache cache(connector);
  std::vector<std::string> outputs(kTargets);
  std::vector<std::string> failures(kTargets);
  (void)for_each_bounded(kTargets, 16, [&](std::size_t index) {
    auto device = sshd->device("t" + std::to_string(index));
    for (int step = 0; step < 3; ++step) {
      auto shell = cache.shell(device, CredentialRole::read);
      if (!shell) {
        failures[index] = shell.error().message;
        return;
      }
      auto result = shell.value()->run("echo " + std::to_string(step), Duration{20'000});
      if (!result) {
        failures[index] = result.error().message;
        return;
      }
      outputs[index] += result->stdout_text;
    }
  });
  cache.close_all();
  for (std::size_t i = 0; i < kTargets; ++i) {
    EXPECT_EQ(failures[i], "") << "target " << i;
    EXPECT_EQ(outputs[i], "0\n1\n2\n") << "target " << i;
  }
  std::string log = sshd->log();
  int logins = 0;
  for (auto at = log.find("Accepted publickey"); at != std::string::npos;
       at = log.find("Accepted publickey", at + 1)) {
    ++logins;
  }
  EXPECT_EQ(logins, static_cast<int>(kTargets));
}

}  // namespace
}  // namespace fabgate::ssh

namespace fabgate::ssh {
namespace {

using testing::SshdFixture;

std::unique_ptr<SshdFixture> start_with_slow_shell(int seconds) {
  SshdFixture::Options options;
  options.slow_shell_seconds = seconds;
  return SshdFixture::start(options);
}

TEST(LibsshShellStartup, ReportsASlowLoginShellByDeviceAndCause) {
  // Given a device whose login shell spends 2 s in its start-up files before every command,
  // then the connector records the session's start-up as slow and says where to look.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = start_with_slow_shell(2);
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  SshOptions options = sshd->options();
  options.slow_shell_startup = Duration{1'000};
  LibsshConnector connector(options);
  ConnectionCache cache(connector);
  auto shell = cache.shell(sshd->device("leaf1"), CredentialRole::read);
  ASSERT_TRUE(shell) << shell.error().message << "\n" << sshd->log();
  auto result = shell.value()->run("echo ok", Duration{10'000});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->stdout_text, "ok\n");

  auto startups = connector.shell_startups();
  ASSERT_EQ(startups.size(), 1u);
  EXPECT_EQ(startups[0].device, "leaf1");
  EXPECT_TRUE(startups[0].slow);
  EXPECT_GE(startups[0].took.count(), 2'000);
  EXPECT_NE(startups[0].note().find("remote shell start-up on leaf1 took 2."), std::string::npos)
      << startups[0].note();
  EXPECT_NE(startups[0].note().find("start-up files"), std::string::npos);
  EXPECT_TRUE(connector.shell_startups(1).empty()) << "entries already seen are not repeated";
}

TEST(LibsshShellStartup, AShellThatDoesNotStartInTimeFailsTheConnectionWithThatCause) {
  // Given a login shell that needs 5 s to start and a start-up limit of 1 s, then connecting
  // fails as a timeout whose message names the device and the shell start-up, not a command.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = start_with_slow_shell(5);
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  SshOptions options = sshd->options();
  options.shell_startup_timeout = Duration{1'000};
  const auto start = std::chrono::steady_clock::now();
  auto shell = LibsshShell::connect(sshd->device("leaf1"), CredentialRole::read, options);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(shell);
  EXPECT_EQ(shell.error().kind, SshFailure::Kind::timeout);
  EXPECT_NE(shell.error().message.find("remote shell start-up on leaf1 took more than 1 s"),
            std::string::npos)
      << shell.error().message;
  EXPECT_LT(took, std::chrono::seconds(4)) << "the start-up limit bounds the wait";
}

TEST(LibsshShellStartup, ACommandTimeoutSaysTheCommandWasRunningAndMentionsASlowShell) {
  // Given a 2 s login shell and a command that outlives its 3 s deadline, then the timeout
  // names the phase (the command was running) and adds how long the shell alone took.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = start_with_slow_shell(2);
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  auto shell = LibsshShell::connect(sshd->device("leaf1"), CredentialRole::read, sshd->options());
  ASSERT_TRUE(shell) << shell.error().message;
  auto result = shell.value()->run("sleep 20", Duration{3'000});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, SshFailure::Kind::timeout);
  EXPECT_NE(result.error().message.find("while the command was running"), std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("the remote shell's start-up alone took 2."),
            std::string::npos)
      << result.error().message;
}

TEST_F(LibsshShellTest, RunEachRunsADevicesCommandsAtOnceOnOneSession) {
  // Given three commands where the first waits for a file that only the third creates, then
  // run_each() runs them at once over one login: the first sees the file (exit 0, where in
  // sequence it would give up with exit 9), and every result comes back in the given order
  // with its own exit status and output.
  testing::TempDir scratch("fabgate-run-each");
  const std::string flag = scratch.file("flag");
  auto shell = connect_or_fail(sshd_->device("leaf1"), sshd_->options());
  ASSERT_TRUE(shell);
  auto results = shell->run_each({{"for i in $(seq 100); do [ -e " + flag +
                                       " ] && echo seen && exit 0; sleep 0.05; done; exit 9",
                                   Duration{20'000}},
                                  {"echo two; exit 3", Duration{20'000}},
                                  {"touch " + flag, Duration{20'000}}});
  ASSERT_EQ(results.size(), 3u);
  for (const auto& result : results) ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(results[0]->exit_status, 0);
  EXPECT_EQ(results[0]->stdout_text, "seen\n");
  EXPECT_EQ(results[1]->exit_status, 3);
  EXPECT_EQ(results[1]->stdout_text, "two\n");
  EXPECT_EQ(results[2]->exit_status, 0);
  EXPECT_EQ(accepted_logins(), 1);
}

TEST_F(LibsshShellTest, RunEachTimesOutOnlyTheCommandPastItsDeadline) {
  // Given a command that outlives its 1 s deadline next to a quick one, then only the slow one
  // is a timeout failure; the quick one's result is intact.
  auto shell = connect_or_fail(sshd_->device("leaf1"), sshd_->options());
  ASSERT_TRUE(shell);
  auto results = shell->run_each({{"sleep 30", Duration{1'000}}, {"echo ok", Duration{10'000}}});
  ASSERT_EQ(results.size(), 2u);
  ASSERT_FALSE(results[0]);
  EXPECT_EQ(results[0].error().kind, SshFailure::Kind::timeout);
  ASSERT_TRUE(results[1]) << results[1].error().message;
  EXPECT_EQ(results[1]->stdout_text, "ok\n");
  // The session stays usable after a timed-out channel.
  auto after = shell->run("echo still", Duration{10'000});
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->stdout_text, "still\n");
}

TEST(LibsshShellChannels, RunEachWaitsForAChannelWhenTheServerAllowsFewer) {
  // Given a server that allows 2 channels per connection (MaxSessions 2), then 7 commands sent
  // at once all complete, in order: a refused channel waits for a running one to finish.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  SshdFixture::Options options;
  options.max_sessions = 2;
  auto sshd = SshdFixture::start(options);
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  auto shell = LibsshShell::connect(sshd->device("leaf1"), CredentialRole::read, sshd->options());
  ASSERT_TRUE(shell) << shell.error().message;
  std::vector<RemoteShell::Request> requests;
  for (int i = 0; i < 7; ++i)
    requests.push_back({"sleep 0.2; echo " + std::to_string(i), Duration{20'000}});
  auto results = shell.value()->run_each(requests);
  ASSERT_EQ(results.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(results[i]) << i << ": " << results[i].error().message;
    EXPECT_EQ(results[i]->stdout_text, std::to_string(i) + "\n");
    EXPECT_EQ(results[i]->exit_status, 0);
  }
}

TEST(LibsshShellStartup, AFastShellIsMeasuredAndNotReported) {
  // Given the fixture's plain /bin/sh login, then the start-up is measured, fast, not slow.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = SshdFixture::start();
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  LibsshConnector connector(sshd->options());
  ConnectionCache cache(connector);
  ASSERT_TRUE(cache.shell(sshd->device("leaf1"), CredentialRole::read));
  auto startups = connector.shell_startups();
  ASSERT_EQ(startups.size(), 1u);
  EXPECT_FALSE(startups[0].slow) << startups[0].note();
}

TEST(LibsshShellBatchStartup, TheFirstBatchTimesTheShellStartUpWithoutAnExtraExec) {
  // Given a login shell that spends 2 s in start-up files and on_first_use, then connecting
  // runs nothing, the first batch records a slow start-up of about 2 s with the connector, and
  // the commands still succeed.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = start_with_slow_shell(2);
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  SshOptions options = sshd->options();
  options.shell_startup_check = ShellStartupCheck::on_first_use;
  LibsshConnector connector(options);
  ConnectionCache cache(connector);
  auto shell = cache.shell(sshd->device("leaf1"), CredentialRole::read);
  ASSERT_TRUE(shell) << shell.error().message;
  EXPECT_TRUE(connector.shell_startups().empty()) << "nothing ran at connect";
  auto results = shell.value()->run_batch({{"echo ok", Duration{10'000}}});
  ASSERT_TRUE(results[0]) << results[0].error().message;
  EXPECT_EQ(results[0]->stdout_text, "ok\n");
  auto startups = connector.shell_startups();
  ASSERT_EQ(startups.size(), 1u);
  EXPECT_TRUE(startups[0].slow);
  EXPECT_GE(startups[0].took.count(), 2'000);
}

TEST(LibsshShellBatchStartup, AShellThatDoesNotStartFailsTheBatchWithThatCause) {
  // Given a login shell that needs 5 s and a start-up limit of 1 s with on_first_use, then the
  // batch's commands fail as a timeout naming the shell start-up, within seconds.
  if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = start_with_slow_shell(5);
  ASSERT_TRUE(sshd) << SshdFixture::last_error();
  SshOptions options = sshd->options();
  options.shell_startup_check = ShellStartupCheck::on_first_use;
  options.shell_startup_timeout = Duration{1'000};
  auto shell = LibsshShell::connect(sshd->device("leaf1"), CredentialRole::read, options);
  ASSERT_TRUE(shell) << shell.error().message;
  const auto started = std::chrono::steady_clock::now();
  auto results =
      shell.value()->run_batch({{"echo a", Duration{10'000}}, {"echo b", Duration{10'000}}});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(4));
  ASSERT_FALSE(results[0]);
  EXPECT_EQ(results[0].error().kind, SshFailure::Kind::timeout);
  EXPECT_NE(results[0].error().message.find("remote shell start-up on leaf1 took more than 1 s"),
            std::string::npos)
      << results[0].error().message;
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().kind, SshFailure::Kind::incomplete);
}

}  // namespace
}  // namespace fabgate::ssh
