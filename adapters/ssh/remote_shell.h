#pragma once

#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/ssh/command_result.h"
#include "adapters/ssh/ssh_failure.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::ssh {

// One logged-in session on one device that runs commands, one at a time.
//
// The seam exists so that gates (snapshot, probes, execute) can be unit-tested with a fake that
// returns canned outputs; the real implementation is LibsshShell (libssh_shell.h), which may be
// called from several threads (a snapshot and a probe on the same host): it runs one call at a
// time.
class RemoteShell {
 public:
  virtual ~RemoteShell() = default;

  // Runs `command` through the login shell. The deadline covers the whole run: when it passes,
  // the remote process is signalled, the channel closed and a `timeout` failure returned.
  virtual Expected<CommandResult, SshFailure> run(const std::string& command,
                                                  Duration deadline) = 0;

  // Runs every command of `commands`, each within its own deadline (counted from when it
  // starts), and returns their outcomes in the same order. The real shell runs them at once,
  // each on its own channel of this session (LibsshShell::kMaxConcurrentChannels at a time), so
  // a device's sources cost about one round trip instead of one per command; this default runs
  // them one by one (fakes in tests). A failure of one command never hides another's outcome.
  struct Request {
    std::string command;
    Duration deadline{0};
  };
  virtual std::vector<Expected<CommandResult, SshFailure>> run_each(
      const std::vector<Request>& commands) {
    std::vector<Expected<CommandResult, SshFailure>> results;
    results.reserve(commands.size());
    for (const auto& request : commands) results.push_back(run(request.command, request.deadline));
    return results;
  }
};

}  // namespace fabgate::ssh
