#pragma once

#include <string>

namespace fabgate::testing {

struct CommandOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line (sh -c) with stdin closed, capturing stdout and stderr. Tests build
// command lines from paths they control; quote them with shell_quoted().
CommandOutput run_shell(const std::string& command_line);
std::string shell_quoted(const std::string& text);

}  // namespace fabgate::testing
