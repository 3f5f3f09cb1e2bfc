#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/intent/model.h"
#include "gates/pipeline/families/remote.h"

namespace fabgate::pipeline {

class EvidenceBundle;
class GnmiSteps;

enum class StepState {
  not_started,  // never sent
  not_sent,     // failed provably before the command was sent (connect, host key, login, a
                // channel refused before the exec, a gNMI channel that never connected):
                // nothing was applied
  succeeded,    // exit 0
  failed,       // non-zero exit: may have partly applied
  timed_out,    // stopped at its deadline: may have applied
  // Sent, then the outcome was lost: the session dropped or the server failed after the exec
  // request (or the gNMI Set) went out, so no exit status or reply says what happened. Treated
  // as applied: the device is rolled back and `fabgate recover` undoes it.
  outcome_unknown,
  in_flight,  // journaled as started, never as ended: the controller died; may have applied
};
std::string_view to_string(StepState state);

// One step or rollback step as it ran.
struct StepRun {
  std::string device;
  int index = 0;      // 1-based position in the device's list
  std::string phase;  // "step" or "rollback"
  std::string command;
  StepState state = StepState::not_started;
  int exit_status = -1;
  std::string reason;  // one line for anything but success
  TimePoint started;
  Duration duration{0};

  // A step that reached the device may have changed it, even when it failed or timed out.
  bool may_have_applied() const {
    return state == StepState::succeeded || state == StepState::failed ||
           state == StepState::timed_out || state == StepState::outcome_unknown ||
           state == StepState::in_flight;
  }
};
nlohmann::json to_json(const StepRun& run);

struct Execution {
  std::vector<StepRun> runs;           // in the order they started
  std::vector<std::string> touched;    // devices that may have changed, first touch first
  std::optional<std::string> failure;  // the first thing that went wrong, one line
  int waves_completed = 0;
};

struct RollbackResult {
  std::vector<StepRun> runs;
  std::vector<std::string> failed_devices;  // a rollback step failed or could not run there
  std::vector<std::string> skipped_devices;  // the caller said not to roll them back (skip)
  bool complete() const { return failed_devices.empty(); }
};

// What the controller decides just before it rolls one device back (Executor::rollback).
struct BeforeDeviceRollback {
  enum class Action {
    roll_back,  // send its rollback steps
    skip,       // it needs none (its confirm timer already restored it)
    stop,       // send nothing more to any device: this one and the rest are not rolled back
  };
  Action action = Action::roll_back;
  std::string why;  // for stop: the reason each device left out is given
};
using BeforeEachRollback = std::function<BeforeDeviceRollback(const std::string& device)>;

// Executes a change within its bounds: waves in order (devices of one wave in parallel, up to
// `parallelism`), each device's steps in order with the change credential, each step within
// min(step timeout, time left to the deadline). A failing wave stops the run after the wave's
// devices finish their current step. Every step is journaled before it is sent and after it
// returns, so a crash leaves a record of what may have been applied. Steps with `run` go over
// SSH through `remote`; steps with `gnmi_set` go to `gnmi` as one Set each. Without a `gnmi`
// (null), gNMI steps are not sent (the rollback-plan gate refuses such changes beforehand).
class Executor {
 public:
  Executor(Remote& remote, const intent::Inventory& inventory, const intent::Change& change,
           EvidenceBundle* evidence, int parallelism, GnmiSteps* gnmi = nullptr);

  Execution apply(std::chrono::steady_clock::time_point deadline);

  // Runs the rollback steps of every device in `touched`, last touched first, each device's
  // steps in order; a failing rollback step stops that device's rollback (later undo steps
  // assume the earlier ones worked) but not the others'. `before` (may be empty) is asked
  // right before each device's rollback: the controller disarms that device's confirm timer
  // there, and stops the rollback when it may not send anything more.
  RollbackResult rollback(const std::vector<std::string>& touched,
                          const BeforeEachRollback& before = nullptr);

 private:
  StepRun run_step(const intent::Step& step, int index, const std::string& phase, Duration timeout,
                   const std::string& timeout_cause);
  void run_ssh_step(const intent::Device& device, const intent::Step& step, Duration timeout,
                    const std::string& timeout_cause, StepRun& run);
  void run_gnmi_step(const intent::Device& device, const intent::Step& step, Duration timeout,
                     const std::string& timeout_cause, StepRun& run);

  Remote& remote_;
  const intent::Inventory& inventory_;
  const intent::Change& change_;
  EvidenceBundle* evidence_;
  int parallelism_;
  GnmiSteps* gnmi_;
};

}  // namespace fabgate::pipeline
