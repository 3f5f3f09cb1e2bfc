#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gates/app/options.h"

namespace fabgate::app {

// Text the CLI shows around its parsed options, kept here (not in cmd/) so it is testable and
// so the man pages and completion are generated from the same words as --help.

// "unknown command 'aply'; did you mean 'apply'?" — the suggestion only when a command is close
// enough to be a plausible typo.
std::string unknown_command_message(std::string_view word,
                                    const std::vector<std::string>& commands);

// One option every subcommand accepts (DESIGN.md CLI contract).
struct CommonOptionHelp {
  const char* flag;   // "--repo"
  const char* value;  // "DIR", or "" for a flag
  const char* help;
};
const std::vector<CommonOptionHelp>& common_option_help();

// One exit code and what it means (DESIGN.md CLI contract).
struct ExitCodeHelp {
  int code;
  const char* meaning;
};
const std::vector<ExitCodeHelp>& exit_code_help();

// The footer every subcommand's --help ends with: the common options and the exit codes.
std::string common_help_footer();

// The change ids of the intent at --repo/--ref, for shell completion; empty on any error (no
// repository, invalid intent): completion stays silent.
std::vector<std::string> change_ids_at(const CommonOptions& common);

}  // namespace fabgate::app
