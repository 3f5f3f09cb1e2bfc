#include "tests/faults/fault_schedule.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <stdexcept>

namespace fabgate::faults {
namespace {

// Uniform in [low, high], rounded to tenths so that the description replays exactly.
double tenths(std::mt19937_64& random, double low, double high) {
  std::uniform_int_distribution<int> pick(static_cast<int>(low * 10), static_cast<int>(high * 10));
  return pick(random) / 10.0;
}
int between(std::mt19937_64& random, int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(random);
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1fs", s);
  return text;
}

}  // namespace

const std::vector<ChangePlan>& change_catalogue() {
  // One device per pod at most (the budget allows no more), overlapping so that runs meet both
  // on the budget (same pod) and on device locks (same device).
  static const std::vector<ChangePlan> changes = {
      {"c", {"d1", "d3"}}, {"pb", {"d2", "d4"}}, {"pc", {"d1"}},
      {"pd", {"d4"}},      {"pe", {"d2", "d3"}}, {"pf", {"d3"}},
  };
  return changes;
}

const ChangePlan& change_named(const std::string& id) {
  for (const auto& change : change_catalogue())
    if (change.id == id) return change;
  throw std::invalid_argument("no change " + id);
}

std::string controller_name(int controller) { return controller == 0 ? "ctl-a" : "ctl-b"; }

Schedule make_schedule(std::uint64_t seed) {
  std::mt19937_64 random(seed);
  Schedule schedule;
  schedule.seed = seed;
  const auto& changes = change_catalogue();
  // Two or three runs; a controller applies a change at most once per schedule (its bundle
  // folder names the run).
  const int runs = between(random, 2, 3);
  std::set<std::pair<int, std::string>> taken;
  for (int i = 0; i < runs; ++i) {
    RunPlan run;
    run.controller = i < 2 ? i : between(random, 0, 1);
    do {
      run.change = changes[between(random, 0, static_cast<int>(changes.size()) - 1)].id;
    } while (!taken.insert({run.controller, run.change}).second);
    run.start_s = i < 2 ? tenths(random, 0, 1.5) : tenths(random, 3, 8);
    // Mostly queued for the budget (so that the runs overlap in time), sometimes refused.
    run.wait = between(random, 0, 3) != 0;
    schedule.runs.push_back(run);
  }
  // One fault, sometimes two, on runs drawn at random.
  const int faults = between(random, 0, 3) == 0 ? 2 : 1;
  std::set<FaultKind> used;
  for (int i = 0; i < faults; ++i) {
    Fault fault;
    do {
      fault.kind = static_cast<FaultKind>(between(random, 0, 5));
    } while (!used.insert(fault.kind).second);
    fault.run = between(random, 0, runs - 1);
    auto& run = schedule.runs[fault.run];
    const auto& targets = change_named(run.change).targets;
    switch (fault.kind) {
      case FaultKind::stop_past_lease:
        // Half the time at a step (the hook: after the lease fence let the step pass), else by
        // a signal at a random instant.
        if (between(random, 0, 1) == 1) {
          run.stop_before_step = between(random, 1, static_cast<int>(targets.size()));
          fault.at_s = -1;
        } else {
          fault.at_s = tenths(random, 0, 2.5);
        }
        fault.hold_s = tenths(random, 4, 7);
        fault.recover_while_stopped = between(random, 0, 1) == 1;
        // The stale run woken while its recover is still at work (drawn last, so that the
        // schedules drawn before this choice existed stay the same).
        fault.wake_during_recover = fault.recover_while_stopped && between(random, 0, 1) == 1;
        break;
      case FaultKind::cut_from_etcd:
        fault.at_s = tenths(random, 0, 2.5);
        fault.hold_s = tenths(random, 2, 6);
        break;
      case FaultKind::kill_etcd_leader:
        fault.at_s = tenths(random, 0.5, 6);
        fault.hold_s = tenths(random, 1, 4);
        break;
      case FaultKind::kill_and_recover:
        fault.at_s = tenths(random, 0, 2.5);
        break;
      case FaultKind::drop_session:
      case FaultKind::slow_step:
        fault.device = targets[between(random, 0, static_cast<int>(targets.size()) - 1)];
        fault.hold_s = fault.kind == FaultKind::slow_step ? tenths(random, 2, 5) : 0;
        break;
    }
    schedule.faults.push_back(fault);
  }
  return schedule;
}

std::string describe(const Schedule& schedule) {
  std::string text = "seed " + std::to_string(schedule.seed) + ":";
  for (std::size_t i = 0; i < schedule.runs.size(); ++i) {
    const auto& run = schedule.runs[i];
    text += " run" + std::to_string(i) + "=" + controller_name(run.controller) + " apply " +
            run.change + (run.wait ? " --wait 20s" : "") + " at " + seconds(run.start_s);
    if (run.stop_before_step != 0)
      text += " (FABGATE_FAULT_STOP_BEFORE_STEP=" + std::to_string(run.stop_before_step) + ")";
    text += ";";
  }
  for (const auto& fault : schedule.faults) {
    const std::string run = "run" + std::to_string(fault.run);
    switch (fault.kind) {
      case FaultKind::stop_past_lease:
        text += " SIGSTOP " + run +
                (fault.at_s < 0 ? std::string(" at its stop hook")
                                : " " + seconds(fault.at_s) + " after its first step") +
                (fault.recover_while_stopped
                     ? std::string(", once its lease lapsed `recover RUN` from the other "
                                   "controller, SIGCONT ") +
                           (fault.wake_during_recover ? "1.0s after that recover started"
                                                      : "when that recover ended")
                     : ", SIGCONT " + seconds(fault.hold_s) + " later (once its lease lapsed)");
        break;
      case FaultKind::cut_from_etcd:
        text += " " + run + " cut from etcd " + seconds(fault.at_s) + " after its first step, for " +
                seconds(fault.hold_s);
        break;
      case FaultKind::kill_etcd_leader:
        text += " etcd leader SIGKILLed at " + seconds(fault.at_s) + ", restarted " +
                seconds(fault.hold_s) + " later";
        break;
      case FaultKind::kill_and_recover:
        text += " SIGKILL " + run + " " + seconds(fault.at_s) + " after its first step" +
                ", `recover RUN` from the other controller once its lease lapsed";
        break;
      case FaultKind::drop_session:
        text += " the first step on " + fault.device + " (" + run +
                "'s target) kills its SSH session after it ran";
        break;
      case FaultKind::slow_step:
        text += " the first step on " + fault.device + " (" + run + "'s target) takes " +
                seconds(fault.hold_s) + " more";
        break;
    }
    text += ";";
  }
  text.pop_back();
  return text;
}

}  // namespace fabgate::faults
