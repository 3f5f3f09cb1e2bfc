#pragma once

// Runs a helper program (ssh-keygen, git) as a child process: argv only, never a shell, with
// a deadline, its output captured, and no way to hang on a prompt unless the caller lets it use
// the terminal.

#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"

namespace fabgate {

// Whether the child may talk to the user's terminal (a key passphrase prompt). `detached`
// starts it in a new session with stdin from /dev/null, so it has no terminal to prompt on.
enum class Terminal { detached, inherited };

struct ChildRequest {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  std::string input;              // written to stdin (detached only)
  Duration deadline{20'000};      // the child is killed when it runs longer
  Terminal terminal = Terminal::detached;
  std::vector<std::string> extra_env;  // "NAME=value" added to the environment
};

struct ChildResult {
  int exit_status = -1;  // -1 when killed by a signal
  bool timed_out = false;
  std::string out;
  std::string err;
};

// An Error only when the program could not be started (not found, no resources); a non-zero
// exit is a result.
Result<ChildResult> run_child(const ChildRequest& request);

}  // namespace fabgate
