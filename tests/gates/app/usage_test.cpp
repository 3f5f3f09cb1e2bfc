// Given a mistyped command or a request for help, then the CLI's words name what the user meant
// and every exit code of the contract.

#include "gates/app/usage.h"

#include <gtest/gtest.h>

namespace fabgate::app {
namespace {

const std::vector<std::string> kCommands = {
    "validate", "plan", "approve", "apply", "rehearse", "recover", "evidence", "diff", "snapshot"};

TEST(UnknownCommand, ATypoSuggestsTheNearestCommand) {
  EXPECT_EQ(unknown_command_message("aply", kCommands),
            "unknown command 'aply'; did you mean 'apply'?");
  EXPECT_EQ(unknown_command_message("valdiate", kCommands),
            "unknown command 'valdiate'; did you mean 'validate'?");
}

TEST(UnknownCommand, NothingCloseListsTheCommandsInstead) {
  auto message = unknown_command_message("frobnicate", kCommands);
  EXPECT_EQ(message.find("did you mean"), std::string::npos) << message;
  EXPECT_NE(message.find("commands: validate, plan"), std::string::npos) << message;
}

TEST(HelpFooter, ListsCommonOptionsAndEveryExitCode) {
  auto footer = common_help_footer();
  for (const char* flag : {"--repo DIR", "--ref REF", "--evidence DIR", "--json", "--junit FILE"})
    EXPECT_NE(footer.find(flag), std::string::npos) << flag;
  for (int code = 0; code <= 5; ++code)
    EXPECT_NE(footer.find("  " + std::to_string(code) + "  "), std::string::npos) << code;
  EXPECT_NE(footer.find("a human must act now"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::app
