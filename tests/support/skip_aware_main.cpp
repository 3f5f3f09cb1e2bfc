// The main() of every test executable. It differs from gtest_main in one way: a run in which
// nothing passed or failed and at least one test skipped exits with kSkippedExitCode, which
// CTest is told (SKIP_RETURN_CODE) to report as "Skipped" instead of "Passed". A suite that
// skips because root, sshd or FRR is missing must never read as a pass; its reason is in the
// test's output (GTEST_SKIP() << reason), which scripts/test prints for every skip.
#include <gtest/gtest.h>

#include "tests/support/skip_exit_code.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  if (failed != 0) return failed;
  const auto* unit = ::testing::UnitTest::GetInstance();
  if (unit->successful_test_count() == 0 && unit->skipped_test_count() > 0)
    return fabgate::testing::kSkippedExitCode;
  return 0;
}
