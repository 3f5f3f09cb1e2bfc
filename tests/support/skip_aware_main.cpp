// The main() of every test executable. It differs from gtest_main in three ways:
// - a run in which nothing passed or failed and at least one test skipped exits with
//   kSkippedExitCode, which CTest is told (SKIP_RETURN_CODE) to report as "Skipped" instead of
//   "Passed". A suite that skips because root, sshd or FRR is missing must never read as a pass;
// - after the run it prints one line per skipped test, "fabgate-skipped: Suite.Name: REASON"
//   (the GTEST_SKIP() message on one line), which scripts/check-skips reads from CTest's log;
// - with FABGATE_STRICT_SKIPS=1 in its environment (CI, .ci/run) a run without failures in which
//   any test skipped exits kSkippedExitCode too, so a WHOLE_SUITE executable of which only some
//   tests skipped reads as "Skipped" and its reasons reach the allow-list check, never "Passed".
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/support/skip_exit_code.h"

namespace {

// The message of the first skip recorded in `result`, or "" when none carries one.
std::string skip_message(const ::testing::TestResult& result) {
  for (int i = 0; i < result.total_part_count(); ++i) {
    const auto& part = result.GetTestPartResult(i);
    if (part.skipped() && part.message() != nullptr && *part.message() != '\0')
      return part.message();
  }
  return "";
}

// Why `test` skipped, on one line: its own GTEST_SKIP() message, else its suite's (a GoogleTest
// that skips the tests of a suite whose SetUpTestSuite skipped gives them no message of their
// own; 1.12, Debian 12's, runs them instead).
std::string skip_reason(const ::testing::TestSuite& suite, const ::testing::TestInfo& test) {
  std::string reason = skip_message(*test.result());
  if (reason.empty()) reason = skip_message(suite.ad_hoc_test_result());
  if (reason.empty()) reason = "(no reason given)";
  for (char& c : reason)
    if (c == '\n' || c == '\r') c = ' ';
  return reason;
}

// Prints a "fabgate-skipped:" line per skipped test; returns how many there were.
int report_skips(const ::testing::UnitTest& unit) {
  int count = 0;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const auto* suite = unit.GetTestSuite(i);
    for (int j = 0; j < suite->total_test_count(); ++j) {
      const auto* test = suite->GetTestInfo(j);
      if (!test->should_run() || !test->result()->Skipped()) continue;
      std::printf("fabgate-skipped: %s.%s: %s\n", suite->name(), test->name(),
                  skip_reason(*suite, *test).c_str());
      ++count;
    }
  }
  std::fflush(stdout);
  return count;
}

bool strict_skips() {
  const char* value = std::getenv("FABGATE_STRICT_SKIPS");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  const auto* unit = ::testing::UnitTest::GetInstance();
  const int skipped = report_skips(*unit);
  if (failed != 0) return failed;
  if (skipped > 0 && (strict_skips() || unit->successful_test_count() == 0))
    return fabgate::testing::kSkippedExitCode;
  return 0;
}
