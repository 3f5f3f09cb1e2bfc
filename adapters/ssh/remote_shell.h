#pragma once

#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/ssh/command_result.h"
#include "adapters/ssh/ssh_failure.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::ssh {

// The exec request of run_via_stdin(): the login shell becomes the account's shell reading a
// script from standard input.
inline constexpr const char* kStdinScriptCommand = "exec \"${SHELL:-/bin/sh}\" -s";

// What run_via_stdin() writes: `command` as one brace group, so the shell has read all of it
// before anything runs (a command that reads standard input cannot swallow the rest of the
// script), with standard input /dev/null.
inline std::string stdin_script(const std::string& command) {
  return "{\n" + command + "\n} </dev/null\n";
}

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

  // Runs `command` like run(), but its text never appears in the device's process list (`ps`
  // there shows the argv of the exec request): the exec request is the fixed kStdinScriptCommand
  // and the text goes on the channel's standard input, which is then closed. The shell reads
  // the whole text before running it (stdin_script()), and the command's own standard input is
  // /dev/null. For commands that carry secrets (docs/ssh.md). Shells that cannot deliver input
  // (fakes) refuse.
  virtual Expected<CommandResult, SshFailure> run_via_stdin(const std::string& command,
                                                            Duration deadline) {
    (void)command;
    (void)deadline;
    return SshFailure{SshFailure::Kind::rejected, "this shell cannot send a command on stdin"};
  }

  // Runs every command of `commands`, each within its own deadline (counted from when it
  // starts), and returns their outcomes in the same order. The real shell runs them at once,
  // each on its own channel of this session (LibsshShell::kMaxConcurrentChannels at a time), so
  // a device's sources cost about one round trip instead of one per command; this default runs
  // them one by one (fakes in tests). A failure of one command never hides another's outcome.
  struct Request {
    std::string command;
    Duration deadline{0};
    // Written to the command's standard input, which is then closed; empty: nothing is written
    // and standard input stays open.
    std::string input;
    // Standard output kept for this command instead of the session's `output_cap` (a route
    // table of a million routes is ~150 MB); above the session's `output_limit` it raises the
    // command's limit to match. 0: the session's.
    std::size_t output_cap = 0;
  };
  virtual std::vector<Expected<CommandResult, SshFailure>> run_each(
      const std::vector<Request>& commands) {
    std::vector<Expected<CommandResult, SshFailure>> results;
    results.reserve(commands.size());
    for (const auto& request : commands) results.push_back(run(request.command, request.deadline));
    return results;
  }

  // Runs `commands` in order in ONE exec of a POSIX sh script that frames each command's
  // stdout and stderr with a per-run nonce (batch_frames.h), and returns every command's
  // outcome in order: output, exit status, and start and duration as the controller saw its
  // frames arrive. Each command's deadline counts from the end of the previous one (the first's
  // from the exec); when one passes, the shell is sent KILL, that command is a `timeout` and
  // the ones after it are `incomplete`, while the ones before keep their results. A shell that
  // ends early leaves the command it was in and every later one `incomplete`. Requests' `input`
  // is not supported (standard input is /dev/null). Costs the device one session channel and
  // one shell instead of one per command; needs a login shell that can run `exec /bin/sh -s`.
  // This default hands them to run_each() (fakes in tests answer each command on its own).
  virtual std::vector<Expected<CommandResult, SshFailure>> run_batch(
      const std::vector<Request>& commands) {
    return run_each(commands);
  }

  // True once the session's transport was lost (a command killed its own session, the device's
  // management plane bounced): every later command would fail unsent, so a ConnectionCache
  // opens a new session instead. Safe to call from any thread.
  virtual bool connection_lost() const { return false; }
};

}  // namespace fabgate::ssh
