// A tiny GoogleTest executable linked with the shared skip-aware main, for
// tests/support/skip_aware_main_test: one test that passes, one that skips with a two-line
// reason and one that fails when FABGATE_PROBE_FAIL is set. Not a test itself; the script chooses
// which of these run
// (--gtest_filter) and checks the exit status and the "fabgate-skipped:" lines.
#include <gtest/gtest.h>

#include <cstdlib>

TEST(Probe, Passes) {
  EXPECT_EQ(1 + 1, 2);
}

TEST(Probe, Skips) {
  GTEST_SKIP() << "the probe's reason\nsecond line";
}

TEST(Probe, FailsWhenAsked) {
  if (std::getenv("FABGATE_PROBE_FAIL") != nullptr) FAIL() << "asked to fail";
}
