// The run controller's signal handling: a signal is counted, never fatal while the handler is
// installed; the first prints the run's `fabgate recover` command at once; the second means
// "finish now" (the restore verification is skipped); the handler leaves errno as it found it;
// a write to a closed pipe is an EPIPE, never a SIGPIPE; waits end early when told to.

#include "gates/pipeline/safety/interruption.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>

namespace fabgate::pipeline {
namespace {

using namespace std::chrono_literals;

TEST(Interruption, SignalsAreCountedInsteadOfEndingTheProcess) {
  // Given the handler installed, then SIGTERM and SIGINT do not end this process: the first
  // asks the run to stop, the second abandons the restore verification, and the first one's
  // name is kept.
  Interruption::Installed installed;
  EXPECT_FALSE(Interruption::requested());
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_TRUE(Interruption::requested());
  EXPECT_FALSE(Interruption::abandoned());
  EXPECT_EQ(Interruption::first_name(), "SIGTERM");
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_TRUE(Interruption::abandoned());
  EXPECT_EQ(Interruption::first_name(), "SIGTERM");
  EXPECT_EQ(Interruption::count(), 2);
}

TEST(Interruption, TheHandlerEndsWithItsGuardAndCountsAfreshWhenInstalledAgain) {
  // Given a signal counted under one guard, then a new guard starts from zero, and after it
  // ends SIGHUP has its previous disposition again (here: ignored, set by this test).
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGHUP, &ignore, &before), 0);
  {
    Interruption::Installed installed;
    ASSERT_EQ(::raise(SIGHUP), 0);
    EXPECT_EQ(Interruption::count(), 1);
  }
  {
    Interruption::Installed again;
    EXPECT_EQ(Interruption::count(), 0);
  }
  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGHUP, &before, &after), 0);
  EXPECT_EQ(after.sa_handler, SIG_IGN);
}

TEST(Interruption, AWaitEndsEarlyOnlyOnceMoreSignalsArrivedThanItAllows) {
  // Given one signal already counted, then a wait that allows one runs to its end, and a wait
  // that allows none ends at once.
  Interruption::Installed installed;
  Interruption::simulate(SIGTERM);
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(Interruption::sleep_unless(50ms, 1));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 50ms);
  EXPECT_FALSE(Interruption::sleep_unless(10s, 0));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

// stderr sent into a pipe for the life of this object; read() gives what was written since.
// The pipe's reader can be closed to make every write to stderr fail with EPIPE.
class CapturedStderr {
 public:
  CapturedStderr() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_NONBLOCK), 0);
    read_end_ = fds[0];
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
  }
  ~CapturedStderr() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    if (read_end_ >= 0) ::close(read_end_);
  }
  std::string read() {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(read_end_, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
    return text;
  }
  void close_reader() {
    ::close(read_end_);
    read_end_ = -1;
  }

 private:
  int read_end_ = -1;
  int saved_ = -1;
};

TEST(Interruption, TheFirstSignalPrintsTheRecoverCommandAtOnceAndTheSecondRepeatsIt) {
  // Given a run that named its recover command, then the first signal's own output (before
  // the controller has looked at the count) already names it, and so does the second's, for a
  // CI runner whose SIGKILL follows within seconds.
  Interruption::Installed installed;
  Interruption::set_recover_command("fabgate recover '/evidence/c/run 1'");
  CapturedStderr captured;
  ASSERT_EQ(::raise(SIGINT), 0);
  std::string first = captured.read();
  EXPECT_NE(first.find("finish it with: fabgate recover '/evidence/c/run 1'\n"),
            std::string::npos)
      << first;
  ASSERT_EQ(::raise(SIGTERM), 0);
  std::string second = captured.read();
  EXPECT_NE(second.find("second signal"), std::string::npos) << second;
  EXPECT_NE(second.find("fabgate recover '/evidence/c/run 1'"), std::string::npos) << second;
  EXPECT_EQ(Interruption::recover_command(), "fabgate recover '/evidence/c/run 1'");
}

TEST(Interruption, ANewGuardForgetsTheRecoverCommandOfTheRunBefore) {
  // Given a guard whose run named a recover command, then a signal under the next guard
  // names none (it would send the operator to another run's bundle).
  {
    Interruption::Installed installed;
    Interruption::set_recover_command("fabgate recover /old");
  }
  Interruption::Installed installed;
  CapturedStderr captured;
  ASSERT_EQ(::raise(SIGHUP), 0);
  EXPECT_EQ(captured.read().find("fabgate recover"), std::string::npos);
  EXPECT_EQ(Interruption::recover_command(), "");
}

TEST(Interruption, TheHandlerLeavesErrnoAsTheInterruptedCodeSetIt) {
  // Given stderr a pipe nobody reads any more (so the handler's write fails with EPIPE) and
  // errno set by the code the signal interrupts, then after the handler errno is unchanged.
  Interruption::ignore_broken_pipes();
  Interruption::Installed installed;
  CapturedStderr captured;
  captured.close_reader();
  errno = EDOM;
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_EQ(errno, EDOM);
  EXPECT_EQ(Interruption::count(), 1);
}

TEST(Interruption, AWriteToAPipeWithoutReaderIsAnErrorNotASignal) {
  // Given broken pipes ignored for the process, then writing to a pipe whose reader is gone
  // returns EPIPE and this process lives on (by default SIGPIPE would end it).
  Interruption::ignore_broken_pipes();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  errno = 0;
  EXPECT_EQ(::write(fds[1], "x", 1), -1);
  EXPECT_EQ(errno, EPIPE);
  ::close(fds[1]);
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
}

}  // namespace
}  // namespace fabgate::pipeline
