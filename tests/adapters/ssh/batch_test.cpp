// One exec per device (RemoteShell::run_batch): the frame reader on its own, then LibsshShell
// against a real sshd on 127.0.0.1 (SshdFixture).

#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "adapters/ssh/batch_frames.h"
#include "adapters/ssh/libssh_shell.h"
#include "tests/support/sshd_fixture.h"

namespace fabgate::ssh {
namespace {

using testing::SshdFixture;

// ---- the frame reader, fed byte by byte -----------------------------------------------------

TEST(BatchFrames, ReadsEveryCommandWhenTheStreamArrivesOneByteAtATime) {
  // Given a stdout stream with login noise, two framed commands (the first without a trailing
  // newline) and noise after the last frame, fed one byte at a time, then each command's output
  // and exit status come back exactly and the noise belongs to no command.
  const std::string n = "0123456789abcdef0123456789abcdef";
  const std::string stream = "motd\n\n" + n + " B 0\nabc\n" + n + " E 0 0\n\n" + n +
                             " B 1\nline\n\n" + n + " E 1 7\nstray";
  FrameReader reader(n, 2, FrameReader::Stream::stdout_stream, 1024);
  std::size_t events = 0;
  for (char c : stream) events += reader.feed(std::string_view(&c, 1)).size();
  EXPECT_EQ(events, 4u);
  ASSERT_EQ(reader.ended(), 2u);
  EXPECT_EQ(reader.output(0).text, "abc");
  EXPECT_EQ(reader.output(0).exit_status, 0);
  EXPECT_EQ(reader.output(1).text, "line\n");
  EXPECT_EQ(reader.output(1).exit_status, 7);
}

TEST(BatchFrames, ABadEndFrameStopsTheReaderAndLeavesTheCommandUnended) {
  // Given an end frame whose status is not a number, then the reader says so and the command
  // is not ended (no evidence), rather than guessing a status.
  const std::string n = "0123456789abcdef0123456789abcdef";
  FrameReader reader(n, 1, FrameReader::Stream::stdout_stream, 1024);
  reader.feed("\n" + n + " B 0\nx\n" + n + " E 0 zz\n");
  EXPECT_TRUE(reader.malformed());
  EXPECT_EQ(reader.ended(), 0u);
}

TEST(BatchFrames, CapsAPerCommandOutputAndCountsTheRest) {
  // Given 100 bytes of output and a cap of 10, then 10 are kept, 100 counted, truncated set.
  const std::string n = "0123456789abcdef0123456789abcdef";
  FrameReader reader(n, 1, FrameReader::Stream::stderr_stream, 10);
  reader.feed("\n" + n + " B 0\n" + std::string(100, 'x') + "\n" + n + " E 0\n");
  ASSERT_EQ(reader.ended(), 1u);
  EXPECT_EQ(reader.output(0).text, std::string(10, 'x'));
  EXPECT_EQ(reader.output(0).seen, 100u);
  EXPECT_TRUE(reader.output(0).truncated);
}

TEST(BatchFrames, NoncesDiffer) {
  // Given two runs, then their nonces differ and are 32 hex digits (unguessable per run).
  auto a = batch_nonce(), b = batch_nonce();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(BatchFrames, OnlyCommandsThatCannotChangeTheShellSkipTheSubshell) {
  // Given the shipped profiles' kind of command (programs with plain or single-quoted
  // arguments, pipelines of them), then they run in the framing shell itself; given anything
  // that could change that shell or that this reading cannot vouch for, then it keeps its
  // subshell.
  for (const char* plain : {"hostname", "ip -j -s link show", "vtysh -c 'show bgp summary json'",
                            "/usr/sbin/ethtool -S eth0 | grep -e rx_", "lldpctl -f json0",
                            "cat /sys/class/net/eth0/mtu", "env LC_ALL=C uname -r",
                            "  uname   -a  "}) {
    EXPECT_TRUE(runs_without_subshell(plain)) << plain;
  }
  for (const char* shell_changing :
       {"cd /tmp", "exit 3", "set -e", "X=1", "X=1 uname", "exec >/dev/null", "trap '' INT",
        "echo a; cd /", "uname && cd /", "uname || true", "ls | cd /", "uname | X=1 cat",
        "'cd' /", "c'd' /", "unset PATH", ". ./env", "source env", "umask 077", "alias x=y",
        "f() { :; }", "echo $HOME", "echo `id`", "uname > /tmp/x", "uname &", "echo \"x\"",
        "cat *", "uname 'unclosed", "uname |", "| uname", "", "   ", "uname\nexit 3", "printf x",
        "echo x", "export X", "readonly X", "local x", "typeset x", "read x", "shift",
        "getopts a x", "wait", "ulimit -n 1", "hash -r", "command cd /", "builtin cd /",
        "eval cd", "time uname", "while true", "kill -9 $$"}) {
    EXPECT_FALSE(runs_without_subshell(shell_changing)) << shell_changing;
  }
}

TEST(BatchFrames, APlainCommandIsNotWrappedInASubshellAndAnyOtherIs) {
  // Given a plain command and a `cd`, then the script runs the first with eval in the framing
  // shell and the second in a subshell (the fork a plain command is spared).
  const std::string script = batch_script({"uname -r", "cd /tmp"}, std::string(32, 'a'));
  EXPECT_NE(script.find("\neval 'uname -r'\n"), std::string::npos) << script;
  EXPECT_EQ(script.find("(eval 'uname -r'"), std::string::npos) << script;
  EXPECT_NE(script.find("(eval 'cd /tmp'\n)"), std::string::npos) << script;
}

// ---- LibsshShell::run_batch against sshd ------------------------------------------------------

class LibsshShellBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = SshdFixture::start();
    ASSERT_TRUE(sshd_) << SshdFixture::last_error();
    auto shell = LibsshShell::connect(sshd_->device("leaf1"), CredentialRole::read,
                                      sshd_->options());
    ASSERT_TRUE(shell) << shell.error().message << "\n" << sshd_->log();
    shell_ = std::move(shell.value());
  }

  std::unique_ptr<SshdFixture> sshd_;
  std::unique_ptr<LibsshShell> shell_;
};

TEST_F(LibsshShellBatch, KeepsEachCommandsOutputStreamsAndExitStatusWhateverTheyPrint) {
  // Given commands that print frame-looking lines (with a made-up nonce and with the real
  // frame's shape), binary bytes, output without a trailing newline, a non-zero exit, stderr
  // only, and a syntax error, then each comes back byte for byte with its own exit status and
  // every later command still runs.
  const Duration ten{10'000};
  auto results = shell_->run_batch({
      {"printf '\\n0123456789abcdef0123456789abcdef E 0 0\\nafter\\n'", ten},
      {"printf 'a\\000b\\377\\001'", ten},
      {"printf 'no newline'", ten},
      {"echo out; echo err >&2; exit 7", ten},
      {"echo only-stderr >&2", ten},
      {"if then fi (", ten},
      {"echo last", ten},
  });
  ASSERT_EQ(results.size(), 7u);
  for (const auto& result : results) ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(results[0]->stdout_text, "\n0123456789abcdef0123456789abcdef E 0 0\nafter\n");
  EXPECT_EQ(results[0]->exit_status, 0);
  EXPECT_EQ(results[1]->stdout_text, std::string("a\0b\377\001", 5));
  EXPECT_EQ(results[2]->stdout_text, "no newline");
  EXPECT_EQ(results[3]->stdout_text, "out\n");
  EXPECT_EQ(results[3]->stderr_text, "err\n");
  EXPECT_EQ(results[3]->exit_status, 7);
  EXPECT_EQ(results[4]->stdout_text, "");
  EXPECT_EQ(results[4]->stderr_text, "only-stderr\n");
  EXPECT_EQ(results[4]->exit_status, 0);
  EXPECT_NE(results[5]->exit_status, 0) << "a syntax error fails that command only";
  EXPECT_EQ(results[6]->stdout_text, "last\n");
}

TEST_F(LibsshShellBatch, RunsEveryCommandInOneShellOverOneLogin) {
  // Given three commands that print their shell's pid ($$ is the batch shell's in a subshell),
  // then all three ran under one shell: one exec for the device, not one per command.
  auto results = shell_->run_batch(
      {{"echo $$", Duration{10'000}}, {"echo $$", Duration{10'000}}, {"echo $$", Duration{10'000}}});
  std::set<std::string> shells;
  for (const auto& result : results) {
    ASSERT_TRUE(result) << result.error().message;
    shells.insert(result->stdout_text);
  }
  EXPECT_EQ(shells.size(), 1u);
}

TEST_F(LibsshShellBatch, TimesEachCommand) {
  // Given a quick command, one that sleeps 0.6 s and another quick one, then each has its own
  // start and duration: the sleeper's covers its sleep, the quick ones' do not, and starts
  // follow the order.
  auto results = shell_->run_batch({{"true", Duration{10'000}},
                                    {"sleep 0.6", Duration{10'000}},
                                    {"true", Duration{10'000}}});
  for (const auto& result : results) ASSERT_TRUE(result) << result.error().message;
  EXPECT_GE(results[1]->duration.count(), 550);
  EXPECT_LT(results[1]->duration.count(), 5'000);
  EXPECT_LT(results[0]->duration.count(), 500);
  EXPECT_LT(results[2]->duration.count(), 500);
  EXPECT_LE(results[0]->started_at, results[1]->started_at);
  EXPECT_GE(results[2]->started_at - results[1]->started_at, std::chrono::milliseconds(550));
}

TEST_F(LibsshShellBatch, AHangingCommandTimesOutEarlierOnesKeepEvidenceLaterOnesAreIncomplete) {
  // Given a quick command, one that hangs past its 1 s deadline, and one after it, then the
  // first keeps its output, the hung one is a timeout within seconds (not its 30 s), the last
  // is incomplete (never a result), and the session still serves the next batch.
  const auto started = std::chrono::steady_clock::now();
  auto results = shell_->run_batch({{"echo before", Duration{10'000}},
                                    {"sleep 30", Duration{1'000}},
                                    {"echo after", Duration{10'000}}});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  ASSERT_TRUE(results[0]) << results[0].error().message;
  EXPECT_EQ(results[0]->stdout_text, "before\n");
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().kind, SshFailure::Kind::timeout);
  EXPECT_NE(results[1].error().message.find("timed out after 1 s"), std::string::npos)
      << results[1].error().message;
  ASSERT_FALSE(results[2]);
  EXPECT_EQ(results[2].error().kind, SshFailure::Kind::incomplete);
  EXPECT_NE(results[2].error().message.find("sleep 30"), std::string::npos)
      << results[2].error().message;

  auto next = shell_->run_batch({{"echo again", Duration{10'000}}});
  ASSERT_TRUE(next[0]) << next[0].error().message;
  EXPECT_EQ(next[0]->stdout_text, "again\n");
}

TEST_F(LibsshShellBatch, ACommandThatKillsTheShellLeavesItAndTheRestIncomplete) {
  // Given a command that kills the batch's shell (kill -9 $$) between two others, then the
  // first keeps its evidence and the killer and the one after are incomplete, never a pass.
  auto results = shell_->run_batch({{"echo first", Duration{10'000}},
                                    {"kill -9 $$", Duration{10'000}},
                                    {"echo never", Duration{10'000}}});
  ASSERT_TRUE(results[0]) << results[0].error().message;
  EXPECT_EQ(results[0]->stdout_text, "first\n");
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().kind, SshFailure::Kind::incomplete);
  EXPECT_NE(results[1].error().message.find("ended while this command was running"),
            std::string::npos)
      << results[1].error().message;
  ASSERT_FALSE(results[2]);
  EXPECT_EQ(results[2].error().kind, SshFailure::Kind::incomplete);
}

TEST_F(LibsshShellBatch, AnExitInACommandIsThatCommandsStatusOnly) {
  // Given `exit 3` as a command (it would end a plain batched shell), then it is that
  // command's exit status 3 and the next command still runs: each runs in its own subshell.
  auto results = shell_->run_batch({{"exit 3", Duration{10'000}}, {"echo next", Duration{10'000}}});
  ASSERT_TRUE(results[0]) << results[0].error().message;
  EXPECT_EQ(results[0]->exit_status, 3);
  ASSERT_TRUE(results[1]) << results[1].error().message;
  EXPECT_EQ(results[1]->stdout_text, "next\n");
}

TEST_F(LibsshShellBatch, PlainCommandsAndShellChangingOnesMixWithoutLeaking) {
  // Given plain commands (run in the framing shell) between commands that change directory,
  // an option and a variable (run in subshells), then every plain command sees the shell as
  // it was: the login directory, `set -e` off (a failing plain command does not end the
  // batch), the variable unset; and each command's status is its own.
  const Duration ten{10'000};
  auto results = shell_->run_batch({
      {"pwd -P", ten},  // `pwd` is a builtin: a subshell, the reference directory
      {"cd /tmp", ten},
      {"env PWD=x /bin/pwd -P", ten},
      {"set -e", ten},
      {"false-command-that-does-not-exist", ten},
      {"X=leaked", ten},
      {"echo ${X-unset}", ten},
      {"uname -s", ten},
  });
  ASSERT_EQ(results.size(), 8u);
  for (const auto& result : results) ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(results[2]->stdout_text, results[0]->stdout_text) << "cd reached a later command";
  EXPECT_EQ(results[4]->exit_status, 127);
  EXPECT_EQ(results[6]->stdout_text, "unset\n");
  EXPECT_EQ(results[7]->exit_status, 0) << "set -e reached the framing shell";
  EXPECT_EQ(results[7]->stdout_text, "Linux\n");
}

TEST_F(LibsshShellBatch, AHugeOutputIsCappedAndTheNextCommandStillRuns) {
  // Given a command writing 5 MiB (over the 4 MiB cap) and one after it, then the first is
  // kept up to the cap and marked truncated, and the second's output is intact.
  auto results = shell_->run_batch(
      {{"head -c 5242880 /dev/zero", Duration{30'000}}, {"echo tail", Duration{10'000}}});
  ASSERT_TRUE(results[0]) << results[0].error().message;
  EXPECT_TRUE(results[0]->stdout_truncated);
  EXPECT_EQ(results[0]->stdout_text.size(), 4u << 20);
  ASSERT_TRUE(results[1]) << results[1].error().message;
  EXPECT_EQ(results[1]->stdout_text, "tail\n");
}

}  // namespace
}  // namespace fabgate::ssh
