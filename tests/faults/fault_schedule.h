#pragma once

// A fault schedule: which controller applies which change when, and which faults strike, drawn
// from a seed so that any schedule can be run again exactly (scripts/bench-faults 1 --seed S).
// The fabric it runs against (tests/faults/fault_fabric.h): devices d1, d2 in pod p1 and d3, d4
// in pod p2, a budget of one device per pod in change at once, two controllers (ctl-a, ctl-b).

#include <cstdint>
#include <string>
#include <vector>

namespace fabgate::faults {

struct ChangePlan {
  std::string id;
  std::vector<std::string> targets;  // one step per target, in this order
};

// The changes every schedule's intent holds.
const std::vector<ChangePlan>& change_catalogue();
const ChangePlan& change_named(const std::string& id);

struct RunPlan {
  int controller = 0;  // 0: ctl-a, 1: ctl-b
  std::string change;
  double start_s = 0;   // after the schedule's start
  bool wait = false;    // --wait 20s: queue for the budget instead of being refused
  int stop_before_step = 0;  // FABGATE_FAULT_STOP_BEFORE_STEP for this run (0: unset)
};

enum class FaultKind {
  stop_past_lease,   // SIGSTOP (or the stop hook) beyond the run's lease, then SIGCONT
  cut_from_etcd,     // the run's process cannot reach any etcd member for a while
  kill_etcd_leader,  // the leading member SIGKILLed, restarted later
  kill_and_recover,  // SIGKILL, then `fabgate recover RUN` from the other controller
  drop_session,      // the step on a device kills its own SSH session after it ran
  slow_step,         // the step on a device takes longer than the run's lease
};

struct Fault {
  FaultKind kind = FaultKind::slow_step;
  int run = 0;          // the run it strikes (index in Schedule::runs); unused for the leader
  // When: for a fault on a run (stop, cut, kill), seconds after the run's first step reached a
  // device (the stop hook: -1, when it stopped itself); for the leader, after the schedule's start.
  double at_s = 0;
  double hold_s = 0;    // how long the stop, cut or member's absence lasts; the slow step's sleep
  bool recover_while_stopped = false;  // stop_past_lease: `recover RUN` elsewhere before SIGCONT
  bool wake_during_recover = false;    // ... and SIGCONT 1 s after that recover started, not after it
  std::string device;   // drop_session, slow_step
};

struct Schedule {
  std::uint64_t seed = 0;
  std::vector<RunPlan> runs;
  std::vector<Fault> faults;
};

Schedule make_schedule(std::uint64_t seed);
// One line: the seed, the runs and the faults, enough to read what happened beside the evidence.
std::string describe(const Schedule& schedule);
std::string controller_name(int controller);

}  // namespace fabgate::faults
