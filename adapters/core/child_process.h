#pragma once

// Runs a helper program (ssh-keygen, git) as a child process: argv only, never a shell, with
// a deadline, its output captured, and no way to hang on a prompt unless the caller lets it use
// the terminal.

#include <cstddef>
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
  // The most bytes kept and read from each of stdout and stderr; a child that writes more is
  // killed and the result says so (output_too_large). 0: no limit (the helpers whose output is
  // small by construction).
  std::size_t max_output = 0;
};

struct ChildResult {
  int exit_status = -1;  // -1 when killed by a signal
  bool timed_out = false;
  bool output_too_large = false;  // killed for writing past max_output on either stream
  std::string out;
  std::string err;
};

// An Error only when the program could not be started (not found, no resources); a non-zero
// exit is a result.
Result<ChildResult> run_child(const ChildRequest& request);

}  // namespace fabgate
