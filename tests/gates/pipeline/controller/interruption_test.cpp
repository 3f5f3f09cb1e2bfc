// The run controller's signal handling: a signal is counted, never fatal while the handler is
// installed; the second one means "abandon"; waits end early when told to.

#include "gates/pipeline/safety/interruption.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

namespace fabgate::pipeline {
namespace {

using namespace std::chrono_literals;

TEST(Interruption, SignalsAreCountedInsteadOfEndingTheProcess) {
  // Given the handler installed, then SIGTERM and SIGINT do not end this process: the first
  // asks the run to stop, the second abandons the rollback, and the first one's name is kept.
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

}  // namespace
}  // namespace fabgate::pipeline
