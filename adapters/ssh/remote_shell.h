#pragma once

#include <string>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/ssh/command_result.h"
#include "adapters/ssh/ssh_failure.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::ssh {

// One logged-in session on one device that runs commands, one at a time.
//
// The seam exists so that gates (snapshot, probes, execute) can be unit-tested with a fake that
// returns canned outputs; the real implementation is LibsshShell (libssh_shell.h). A shell is
// used by one thread at a time.
class RemoteShell {
 public:
  virtual ~RemoteShell() = default;

  // Runs `command` through the login shell. The deadline covers the whole run: when it passes,
  // the remote process is signalled, the channel closed and a `timeout` failure returned.
  virtual Expected<CommandResult, SshFailure> run(const std::string& command,
                                                  Duration deadline) = 0;
};

}  // namespace fabgate::ssh
