#pragma once

// Runs a program (no shell) with a time limit and collects its output. fabgate-gnmid uses it
// for iproute2 and vtysh.

#include <optional>
#include <string>
#include <vector>

#include "adapters/core/duration.h"

namespace fabgate::gnmi::target {

struct CommandOutcome {
  bool started = false;    // false: the program could not be run (see `error`)
  bool timed_out = false;  // killed after the time limit
  int exit_status = -1;    // when it exited normally
  std::string out;
  std::string err;
  std::string error;  // why it did not start

  bool succeeded() const { return started && !timed_out && exit_status == 0; }
  // "exit 1: Error: mtu less than device minimum." / "timed out after 5s" / "not found".
  std::string describe_failure(Duration limit) const;
};

// The program starts with an empty signal mask, every signal at its default action and a
// process group of its own; past `limit` the whole group is killed (SIGKILL). It inherits the
// environment: fabgate-gnmid removes --credentials-env's variables from it at startup.
CommandOutcome run_command(const std::vector<std::string>& argv, Duration limit);

}  // namespace fabgate::gnmi::target
