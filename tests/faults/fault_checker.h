#pragma once

// The invariants a fault schedule must keep (docs/reliability.md "Fault schedules"), judged from
// what the devices themselves recorded and how every controller process ended. Nothing here
// trusts a controller's own account of what it sent: a device's log line is written by the
// command the device accepted, inside the device-side fence, and names the fencing token and run
// the device held when it ran it.
//
// Each device line (written by the step or rollback command on the device, one per accepted
// command, in the order the device ran them):
//   <unix time ns> step|rollback <fence token> <run> <fence generation> <change> sent=<token>
// `sent` is the token the sending run's guard carried ("?" when the guard did not say).
// Each device's configuration file holds its baseline lines and one line "<change> <run>" per
// step, which a rollback of that run removes (it restores the copy taken before the run's step).

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabgate::faults {

inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

struct DeviceObservation {
  std::string name;
  std::string group;                   // the budget group it belongs to ("pod=p1")
  std::vector<std::string> baseline;   // its configuration's lines before the schedule
  std::vector<std::string> log;        // its own log, one accepted command a line
  std::vector<std::string> final_config;  // its configuration's lines after the epilogue
};

struct RunObservation {
  std::string run;         // the run id (the one device lines name)
  std::string controller;  // the controller that ran it
  std::string change;
  std::vector<std::string> targets;
  int exit_code = -1;  // 0, 3, 4, 5; 137 when the schedule SIGKILLed it; -1 when it hung
  std::int64_t ended_ns = kNever;  // when the process ended (unix ns)
  // When its claims and locks were released in etcd (the first `budget-release` record of its
  // journal, the run's own or its recover's), kNever when no journal says so.
  std::int64_t released_ns = kNever;
  // The `fabgate recover` that took the run over (in the schedule or the epilogue), if any.
  std::optional<int> recover_exit;
  std::int64_t recover_ended_ns = kNever;
  std::vector<std::string> exit_5_devices;  // the devices its exit-5 hand-off named
};

struct Observation {
  std::vector<DeviceObservation> devices;
  std::vector<RunObservation> runs;
  std::map<std::string, int> budget_of_group;  // group -> max devices in change at once
};

struct Violation {
  int invariant = 0;  // 1..4 (docs/reliability.md), 0: the evidence itself is unreadable
  std::string what;
  std::vector<std::string> evidence;  // device log lines (prefixed with the device) and facts
};

// Every violation of the four invariants in `observed`; empty when it kept them all.
std::vector<Violation> check(const Observation& observed);

// One violation as text: "invariant N: what" and its evidence, one line each, indented.
std::string describe(const Violation& violation);

}  // namespace fabgate::faults
