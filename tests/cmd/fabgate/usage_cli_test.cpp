// Runs the built fabgate binary with mistyped commands and --help, as a user at a terminal would.

#include <gtest/gtest.h>

#include "tests/support/git_repo.h"

namespace fabgate {
namespace {

using testing::run_shell;
using testing::shell_quoted;

const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";

TEST(FabgateUsage, MistypedCommandSuggestsTheNearestAndExitsTwo) {
  // Given `fabgate aply`, then stderr suggests apply and the exit code is invalid input.
  auto out = run_shell(shell_quoted(kFabgate) + " aply 2>&1 >/dev/null");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("fabgate: error: unknown command 'aply'; did you mean 'apply'?"),
            std::string::npos)
      << out.output;
}

TEST(FabgateUsage, MistypedCommandAfterCommonOptionsIsStillNamed) {
  auto out = run_shell(shell_quoted(kFabgate) + " --repo . --json valdate 2>&1");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("unknown command 'valdate'; did you mean 'validate'?"),
            std::string::npos)
      << out.output;
}

TEST(FabgateUsage, NothingCloseGetsNoSuggestionButTheCommandList) {
  auto out = run_shell(shell_quoted(kFabgate) + " frobnicate 2>&1");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.output.find("did you mean"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("unknown command 'frobnicate'; commands: validate"), std::string::npos)
      << out.output;
}

TEST(FabgateUsage, EverySubcommandHelpListsCommonOptionsAndExitCodes) {
  for (const char* command : {"validate", "plan", "approve", "apply", "rehearse", "recover",
                              "evidence", "evidence verify", "diff", "snapshot", "status"}) {
    auto out = run_shell(shell_quoted(kFabgate) + " " + command + " --help");
    EXPECT_EQ(out.exit_code, 0) << command;
    for (const char* flag : {"--repo DIR", "--ref REF", "--evidence DIR", "--json", "--junit FILE"})
      EXPECT_NE(out.output.find(flag), std::string::npos) << command << " lacks " << flag;
    EXPECT_NE(out.output.find("Exit codes:"), std::string::npos) << command;
    EXPECT_NE(out.output.find("  5  rollback failed"), std::string::npos) << command;
  }
}

}  // namespace
}  // namespace fabgate
