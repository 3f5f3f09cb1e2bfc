#pragma once

#include <string>

#include "adapters/core/duration.h"
#include "adapters/core/time.h"

namespace fabgate::ssh {

// What one remote command did. A command that ran to completion is a CommandResult whatever
// its exit status; failures to run it at all are SshFailure values.
struct CommandResult {
  int exit_status = -1;  // -1: the server sent no exit status (e.g. killed by a signal)
  std::string stdout_text;
  std::string stderr_text;
  bool stdout_truncated = false;  // output beyond the cap was read and discarded
  bool stderr_truncated = false;
  TimePoint started_at;
  Duration duration{0};
};

}  // namespace fabgate::ssh
