#pragma once

// The device-side confirm timer: like a confirmed commit, a job on the device that runs the
// device's rollback commands by itself after a timeout unless the controller disarms it first.
// It protects the fabric when the controller dies or loses SSH access in the middle of a
// change: the device does not wait for a controller that will never come back.
//
// Device-side layout, one directory per device and run (devices of the lab share one
// filesystem, so the device name is part of the path):
//   <base>/<device>/<run>/job.sh         the job (rollback commands shell-quoted inside)
//   <base>/<device>/<run>/deadline       epoch seconds on the device's clock (informative)
//   <base>/<device>/<run>/pid            the job's pid (leader of its own session)
//   <base>/<device>/<run>/claim.armed    the claim token; exactly one of the renames
//                                        claim.armed -> claim.fired (the job) or
//                                        claim.armed -> claim.disarmed (disarm) succeeds
//   <base>/<device>/<run>/log            timestamps and each rollback command's exit status
//   <base>/<device>/<run>/output         the rollback commands' output (stays on the device)
//   <base>/<device>/<run>/result         "restored", or "failed", index, exit status, command

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/remote.h"

namespace fabgate::pipeline {

struct ConfirmTimerOptions {
  // Production default; tests point this at a temporary directory.
  std::string base_dir = "/var/tmp/fabgate-confirm";
  // Deadline of each SSH command the timer sends (arm, disarm, status).
  Duration command_deadline{15'000};
  // Bound of one rollback command run by the job when its Step has no timeout of its own (the
  // caller passes the change's step_timeout). Enforced with timeout(1) when the device has it.
  Duration rollback_step_timeout{60'000};
};

// Why the timer could not be armed, disarmed or read. `message` names the device and the
// operation: "leaf1: arm confirm timer (run r1): rollback step 2 is a gNMI set; ...".
struct ConfirmTimerFailure {
  enum class Kind {
    unsupported,    // the device's rollback has a gNMI step: no device-side job can run it
    no_rollback,    // the change has no rollback step for this device: nothing to arm
    invalid_name,   // device or run id unusable as a path component
    already_armed,  // a timer directory for this device and run exists already
    ssh,            // the command could not be run (unreachable, auth, timeout, ...)
    device,         // the command ran but failed or answered something unexpected
  };
  Kind kind = Kind::device;
  std::string message;
};

std::string_view to_string(ConfirmTimerFailure::Kind kind);

template <class T>
using TimerResult = Expected<T, ConfirmTimerFailure>;

// A timer running on the device. Times are on the device's clock, in whole seconds:
// deadline = armed_at + timeout; the job fires within about a second after it, never before.
struct ArmedTimer {
  std::string device;
  std::string run_id;
  std::string directory;
  long pid = 0;
  TimePoint armed_at;
  TimePoint deadline;
  std::size_t rollback_commands = 0;
};

enum class TimerState {
  absent,             // no timer for this device and run
  armed,              // the job is waiting for its deadline
  orphaned,           // claim still armed but the job is gone (device rebooted, killed): it
                      // will NOT fire
  firing,             // the job claimed the timer and is running the rollback
  fired_restored,     // the job ran every rollback command successfully
  fired_failed,       // a rollback command failed; later ones were not run
  fired_interrupted,  // the job claimed the timer but died before finishing the rollback
  disarmed,           // disarmed before it fired
};

// "absent", "armed", "orphaned", "firing", "fired-restored", "fired-failed",
// "fired-interrupted", "disarmed".
std::string_view to_string(TimerState state);

struct FailedRollbackCommand {
  int index = 0;  // 1-based among this device's rollback commands
  int exit_status = 0;
  std::string command;
};

// What the device says about one timer.
struct TimerStatus {
  TimerState state = TimerState::absent;
  std::optional<long> pid;
  std::optional<TimePoint> deadline;            // device clock
  std::optional<TimePoint> device_now;          // device clock when this was read
  std::optional<FailedRollbackCommand> failed;  // fired_failed only
  std::vector<std::string> log;                 // the job's log lines (no command output)
};

// Exactly one of disarm and fire wins; disarm says which happened.
struct DisarmOutcome {
  enum class Kind {
    disarmed,          // this call stopped the timer before it fired
    already_fired,     // the job fired first; `status` holds its result (or firing)
    already_disarmed,  // an earlier disarm won
    not_armed,         // no timer for this device and run
  };
  Kind kind = Kind::not_armed;
  TimerStatus status;  // read right after the decision, in the same command
};

std::string_view to_string(DisarmOutcome::Kind kind);

class ConfirmTimer {
 public:
  explicit ConfirmTimer(Remote& remote, ConfirmTimerOptions options = {})
      : remote_(remote), options_(std::move(options)) {}

  // Installs the job with the change credential: after `timeout` it runs `device`'s rollback
  // steps (those of `rollback` whose device is `device.name`), in order, stopping at the first
  // failure. The job is detached from the SSH session (own session, fds on /dev/null), so it
  // survives the connection closing or the controller dying. It never fires before `timeout`
  // (rounded up to whole seconds) has passed. Fails `unsupported` if any of the device's
  // rollback steps is a gNMI set, `no_rollback` if it has none. After an `ssh` failure the job
  // may or may not have been installed: read status() or disarm() before assuming either.
  TimerResult<ArmedTimer> arm(const intent::Device& device, const std::string& run_id,
                              Duration timeout, const std::vector<intent::Step>& rollback);

  // Stops the timer unless it already fired; atomic with respect to firing.
  TimerResult<DisarmOutcome> disarm(const intent::Device& device, const std::string& run_id);

  // Reads the timer's state from the device (for `recover`: "the device restored itself").
  TimerResult<TimerStatus> status(const intent::Device& device, const std::string& run_id);

  // The device-side directory of one timer.
  std::string directory(const std::string& device, const std::string& run_id) const;

  // The shell commands of `device`'s rollback steps, in order; `unsupported` if one is gNMI.
  static TimerResult<std::vector<std::string>> device_rollback_commands(
      const intent::Device& device, const std::string& run_id,
      const std::vector<intent::Step>& rollback);

 private:
  TimerResult<ssh::CommandResult> send(const intent::Device& device, const std::string& what,
                                       const std::string& command);

  Remote& remote_;
  ConfirmTimerOptions options_;
};

// True if `name` can be used as one path component on the device: letters, digits, '.', '_',
// '-', not starting with '.'. Device names and run ids are checked before any command is built.
bool is_safe_path_component(std::string_view name);

}  // namespace fabgate::pipeline
