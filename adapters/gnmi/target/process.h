#pragma once

// Runs a program (no shell) with a time limit and collects its output. fabgate-gnmid uses it
// for iproute2 and vtysh.

#include <chrono>
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
  Duration limit{0};  // the time limit it ran under (the caller's, or a CallerDeadline's)

  bool succeeded() const { return started && !timed_out && exit_status == 0; }
  // "exit 1: Error: mtu less than device minimum." / "timed out after 5s" / "not found".
  // `fallback` names the limit for an outcome that does not carry one.
  std::string describe_failure(Duration fallback) const;
};

// While one lives on a thread, the commands run on it are bounded by the deadline of the
// client's call being answered (less a margin for the reply) instead of their own limit: a
// client that gives a Get 10 s is not answered "timed out after 5s" by a vtysh that a busy
// switch took 6 s to start, and a client that gives 2 s is not answered after it gave up.
// At most kLongestCallerLimit, so a client with a day's deadline cannot hold a command that long.
class CallerDeadline {
 public:
  static constexpr Duration kReplyMargin{250};
  static constexpr Duration kLongestCallerLimit{60'000};
  explicit CallerDeadline(std::chrono::steady_clock::time_point deadline);
  ~CallerDeadline();
  CallerDeadline(const CallerDeadline&) = delete;
  CallerDeadline& operator=(const CallerDeadline&) = delete;

  // The limit for a command starting now: `own` outside any CallerDeadline.
  static Duration limit_for(Duration own);

 private:
  std::optional<std::chrono::steady_clock::time_point> previous_;
};

// The program starts with an empty signal mask, every signal at its default action and a
// process group of its own; past `limit` the whole group is killed (SIGKILL). It inherits the
// environment: fabgate-gnmid removes --credentials-env's variables from it at startup.
CommandOutcome run_command(const std::vector<std::string>& argv, Duration limit);

}  // namespace fabgate::gnmi::target
