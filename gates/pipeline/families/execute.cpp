#include "gates/pipeline/families/execute.h"
#include "gates/pipeline/safety/interruption.h"

#include <algorithm>
#include <mutex>

#include "adapters/ssh/fan_out.h"
#include "gates/pipeline/families/gnmi_steps.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::pipeline {
namespace {

std::vector<std::vector<std::string>> waves_of(const intent::Change& change) {
  if (!change.bounds.waves.empty()) return change.bounds.waves;
  return {change.targets};
}

std::vector<const intent::Step*> steps_for(const std::vector<intent::Step>& steps,
                                           const std::string& device) {
  std::vector<const intent::Step*> out;
  for (const auto& step : steps)
    if (step.device == device) out.push_back(&step);
  return out;
}

}  // namespace

std::string_view to_string(StepState state) {
  switch (state) {
    case StepState::not_started:
      return "not-started";
    case StepState::not_sent:
      return "not-sent";
    case StepState::succeeded:
      return "succeeded";
    case StepState::failed:
      return "failed";
    case StepState::timed_out:
      return "timed-out";
    case StepState::outcome_unknown:
      return "outcome-unknown";
    case StepState::in_flight:
      return "in-flight";
  }
  return "unknown";
}

nlohmann::json to_json(const StepRun& run) {
  return {{"device", run.device},
          {"index", run.index},
          {"phase", run.phase},
          {"command", run.command},
          {"state", std::string(to_string(run.state))},
          {"exit_status", run.exit_status},
          {"reason", run.reason},
          {"started_at", format_utc(run.started)},
          {"duration_ms", run.duration.count()},
          {"may_have_applied", run.may_have_applied()}};
}

Executor::Executor(Remote& remote, const intent::Inventory& inventory, const intent::Change& change,
                   EvidenceBundle* evidence, int parallelism, GnmiSteps* gnmi)
    : remote_(remote),
      inventory_(inventory),
      change_(change),
      evidence_(evidence),
      parallelism_(std::max(1, parallelism)),
      gnmi_(gnmi) {}

StepRun Executor::run_step(const intent::Step& step, int index, const std::string& phase,
                           Duration timeout, const std::string& timeout_cause) {
  StepRun run;
  run.device = step.device;
  run.index = index;
  run.phase = phase;
  run.command = step.run.empty() ? describe_gnmi_set(step.gnmi_set) : step.run;
  run.started = now_utc();
  // Write-ahead: the record that a step may reach the device is durable before the step is
  // sent, so `fabgate recover` knows to undo it. A step that cannot be journaled is not sent;
  // a rollback step is sent anyway (undoing the change matters more than recording it).
  std::optional<std::string> unjournaled;
  if (evidence_) {
    nlohmann::json start = {{"event", phase + "-start"},
                            {"device", step.device},
                            {"index", index},
                            {"command", run.command},
                            {"timeout_ms", timeout.count()},
                            {"at", format_utc(run.started)}};
    if (phase == "rollback") {
      evidence_->append_journal(start);
    } else if (auto journaled = evidence_->write_ahead(start); !journaled.ok()) {
      unjournaled = journaled.error().message;
    }
  }
  const intent::Device* device = inventory_.find(step.device);
  if (unjournaled) {
    run.state = StepState::not_sent;
    run.reason = "not sent: its journal record could not be written (" + *unjournaled + ")";
  } else if (!device) {
    run.state = StepState::not_sent;
    run.reason = "device '" + step.device + "' is not in the inventory";
  } else if (!step.run.empty()) {
    run_ssh_step(*device, step, timeout, timeout_cause, run);
  } else if (!gnmi_) {
    run.state = StepState::not_sent;
    run.reason = "gNMI steps are not executable without a gNMI client";
  } else {
    run_gnmi_step(*device, step, timeout, timeout_cause, run);
  }
  run.duration = std::chrono::duration_cast<Duration>(now_utc() - run.started);
  if (evidence_) {
    nlohmann::json end = {{"event", phase + "-end"},
                          {"device", step.device},
                          {"index", index},
                          {"state", std::string(to_string(run.state))},
                          {"exit_status", run.exit_status},
                          {"at", format_utc(now_utc())}};
    // Why a step whose outcome is unknown counts as applied, for recover's execution.json.
    if (run.state == StepState::outcome_unknown) end["reason"] = run.reason;
    evidence_->append_journal(end);
  }
  return run;
}

void Executor::run_ssh_step(const intent::Device& device, const intent::Step& step,
                            Duration timeout, const std::string& timeout_cause, StepRun& run) {
  auto result = remote_.run(device, ssh::CredentialRole::change, step.run, timeout, run.phase);
  if (result.ok()) {
    run.exit_status = result->exit_status;
    if (result->exit_status == 0) {
      run.state = StepState::succeeded;
    } else {
      run.state = StepState::failed;
      auto err = result->stderr_text.empty() ? result->stdout_text : result->stderr_text;
      while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
      auto newline = err.rfind('\n');
      if (newline != std::string::npos) err = err.substr(newline + 1);
      run.reason = "exit " + std::to_string(result->exit_status) + (err.empty() ? "" : ": " + err);
    }
    return;
  }
  const auto& failure = result.error();
  if (!failure.may_have_run()) {
    // Only a failure the adapter proved came before the exec request leaves the device as it
    // was (connect, host key, login, a channel the server would not open).
    run.state = StepState::not_sent;
    run.reason = describe_failure(device, step.run, failure);
    return;
  }
  switch (failure.kind) {
    case ssh::SshFailure::Kind::timeout:
    case ssh::SshFailure::Kind::output_too_large:
      run.state = StepState::timed_out;
      run.reason = (failure.kind == ssh::SshFailure::Kind::timeout
                        ? "timed out after " + format_duration(timeout) + " (" + timeout_cause + ")"
                        : failure.message);
      break;
    default:
      // Sent, then the session dropped or the server failed: nothing says whether it ran. A
      // step that bounces the management plane (ifreload, a daemon restart, an ACL) ends here
      // after it changed the device, so unknown is taken as applied.
      run.state = StepState::outcome_unknown;
      run.reason = describe_failure(device, step.run, failure) + "; " +
                   (failure.kind == ssh::SshFailure::Kind::unreachable ||
                            failure.kind == ssh::SshFailure::Kind::incomplete
                        ? "the session dropped after the command was sent"
                        : "its outcome is unknown") +
                   "; treated as applied";
  }
}

void Executor::run_gnmi_step(const intent::Device& device, const intent::Step& step,
                             Duration timeout, const std::string& timeout_cause, StepRun& run) {
  auto result = gnmi_->apply(device, step.gnmi_set, timeout, run.phase);
  if (result.ok()) {
    run.state = StepState::succeeded;
    run.exit_status = 0;  // no exit status in gNMI; 0 keeps reports uniform with SSH steps
    return;
  }
  const auto& failure = result.error();
  if (failure.delivery == gnmi::GnmiFailure::Delivery::not_sent) {
    // No channel, no handshake, no login, no answer to the connection check: the Set was never
    // written (GrpcGnmiSteps proves it before sending).
    run.state = StepState::not_sent;
    run.reason = failure.message;
    return;
  }
  switch (failure.kind) {
    case gnmi::GnmiFailure::Kind::unreachable:
    case gnmi::GnmiFailure::Kind::tls:
    case gnmi::GnmiFailure::Kind::auth:
      // The Set was written, then the connection went (UNAVAILABLE) or the target refused the
      // login: whether it applied is unknown, so it counts as applied.
      run.state = StepState::outcome_unknown;
      run.reason =
          failure.message + "; the connection failed after the Set was sent; treated as applied";
      break;
    case gnmi::GnmiFailure::Kind::rejected:
      // A refused Set applied nothing (gNMI Set is atomic), but "failed" keeps the device in
      // the rollback set: undoing a change that did not happen costs less than trusting a
      // target's atomicity we never verified.
      run.state = StepState::failed;
      run.reason = "rejected: " + failure.message;
      break;
    case gnmi::GnmiFailure::Kind::timeout:
      run.state = StepState::timed_out;
      run.reason = "timed out after " + format_duration(timeout) + " (" + timeout_cause + ")";
      break;
    case gnmi::GnmiFailure::Kind::internal:
      // The reply was lost or unreadable: whether the target applied the Set is unknown.
      run.state = StepState::outcome_unknown;
      run.reason = failure.message + "; no readable reply to the Set; treated as applied";
      break;
  }
}

Execution Executor::apply(std::chrono::steady_clock::time_point deadline) {
  Execution execution;
  std::mutex mutex;
  for (const auto& wave : waves_of(change_)) {
    std::vector<std::string> devices;
    for (const auto& name : wave)
      if (!steps_for(change_.steps, name).empty()) devices.push_back(name);
    bool wave_failed = false;
    // The step each device's worker was at (0: none yet), read after the workers joined: a
    // worker that threw may have sent it.
    std::vector<int> at_step(devices.size(), 0);
    auto threw = ssh::for_each_bounded(devices.size(), parallelism_, [&](std::size_t i) {
      const std::string& name = devices[i];
      int index = 0;
      for (const auto* step : steps_for(change_.steps, name)) {
        ++index;
        at_step[i] = index;
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (wave_failed) return;  // another device of this wave failed: stop before sending more
          if (Interruption::requested()) {
            // A signal: no further step is sent; what was sent is rolled back.
            wave_failed = true;
            if (!execution.failure)
              execution.failure = Interruption::first_name() + " received before step " +
                                  std::to_string(index) + " on " + name + " was sent";
            return;
          }
        }
        auto left =
            std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
        if (left <= Duration::zero()) {
          std::lock_guard<std::mutex> lock(mutex);
          wave_failed = true;
          if (!execution.failure)
            execution.failure = "deadline of " + format_duration(change_.bounds.deadline) +
                                " reached before step " + std::to_string(index) + " on " + name;
          return;
        }
        Duration limit = step->timeout.value_or(change_.bounds.step_timeout);
        std::string cause = "step timeout";
        if (left < limit) {
          limit = left;
          cause = "deadline of " + format_duration(change_.bounds.deadline);
        }
        StepRun run = run_step(*step, index, "step", limit, cause);
        std::lock_guard<std::mutex> lock(mutex);
        if (run.may_have_applied() && std::find(execution.touched.begin(), execution.touched.end(),
                                                name) == execution.touched.end())
          execution.touched.push_back(name);
        bool ok = run.state == StepState::succeeded;
        if (!ok && !execution.failure)
          execution.failure = "step " + std::to_string(index) + " on " + name + ": " + run.reason;
        execution.runs.push_back(std::move(run));
        if (!ok) {
          wave_failed = true;
          return;
        }
      }
    });
    for (const auto& failure : threw) {
      // An internal error on one device's worker: its step's fate is unknown, so it counts as
      // applied (rolled back), and the wave stops like after a failed step. The other devices'
      // runs are kept as they ended.
      const std::string& name = devices[failure.index];
      wave_failed = true;
      const std::string reason = "internal error while running the step: " + failure.what +
                                 "; its outcome is unknown; treated as applied";
      if (!execution.failure)
        execution.failure = "step " + std::to_string(at_step[failure.index]) + " on " + name +
                            ": " + reason;
      if (at_step[failure.index] == 0) continue;  // it threw before its first step was started
      StepRun run;
      run.device = name;
      run.index = at_step[failure.index];
      run.phase = "step";
      const auto* step = steps_for(change_.steps, name)[run.index - 1];
      run.command = step->run.empty() ? describe_gnmi_set(step->gnmi_set) : step->run;
      run.state = StepState::outcome_unknown;
      run.reason = reason;
      run.started = now_utc();
      execution.runs.push_back(std::move(run));
      if (std::find(execution.touched.begin(), execution.touched.end(), name) ==
          execution.touched.end())
        execution.touched.push_back(name);
    }
    if (wave_failed) break;
    ++execution.waves_completed;
  }
  return execution;
}

RollbackResult Executor::rollback(const std::vector<std::string>& touched,
                                  const BeforeEachRollback& before) {
  RollbackResult result;
  std::optional<std::string> stopped;  // why nothing more is sent
  for (auto it = touched.rbegin(); it != touched.rend(); ++it) {
    int index = 0;
    auto steps = steps_for(change_.rollback, *it);
    if (steps.empty()) {
      result.failed_devices.push_back(*it);
      continue;
    }
    if (!stopped && before) {
      auto decision = before(*it);
      if (decision.action == BeforeDeviceRollback::Action::skip) {
        result.skipped_devices.push_back(*it);
        continue;
      }
      if (decision.action == BeforeDeviceRollback::Action::stop) stopped = decision.why;
    }
    if (stopped) {
      StepRun left_out;
      left_out.device = *it;
      left_out.index = 1;
      left_out.phase = "rollback";
      left_out.command = steps.front()->run;
      left_out.state = StepState::not_started;
      left_out.reason = *stopped;
      left_out.started = now_utc();
      result.runs.push_back(std::move(left_out));
      result.failed_devices.push_back(*it);
      continue;
    }
    for (const auto* step : steps) {
      ++index;
      // A second signal does not stop the rollback: undoing the change matters more than
      // proving it, and each step is bounded (a third signal kills fabgate; the journal has
      // every rollback step that may have been sent, for `fabgate recover`).
      // A rollback step has its own, more patient bound (intent::Bounds::rollback_timeout).
      Duration limit = step->timeout.value_or(change_.bounds.effective_rollback_timeout());
      StepRun run = run_step(*step, index, "rollback", limit,
                             step->timeout ? "step timeout" : "rollback timeout");
      bool ok = run.state == StepState::succeeded;
      result.runs.push_back(std::move(run));
      if (!ok) {
        result.failed_devices.push_back(*it);
        break;
      }
    }
  }
  return result;
}

}  // namespace fabgate::pipeline
