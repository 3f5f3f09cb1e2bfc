#include "gates/pipeline/safety/safeguards.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::pipeline {
namespace {

// The fencing token is `fence_revision`: the evidence is redacted, and a member whose name ends
// in "token" is taken for a secret.
nlohmann::json holder_json(const LockHolder& holder) {
  return {{"run", holder.run},
          {"change", holder.change},
          {"operator", holder.operator_name},
          {"controller_host", holder.controller_host},
          {"controller_pid", holder.controller_pid},
          {"started", format_utc(holder.started)},
          {"expires", format_utc(holder.expires)},
          {"fence_revision", holder.fence_token}};
}

}  // namespace

Safeguards::Safeguards(Remote& remote, const intent::Inventory& inventory,
                       const intent::Change& change, EvidenceBundle& evidence,
                       SafeguardOptions options)
    : remote_(remote),
      inventory_(inventory),
      change_(change),
      evidence_(evidence),
      options_(std::move(options)),
      locks_(remote, options_.locks),
      timers_(remote, options_.timers) {}

void Safeguards::journal(const nlohmann::json& record) {
  nlohmann::json entry = record;
  entry["at"] = format_utc(now_utc());
  evidence_.append_journal(entry);
  log_.push_back(std::move(entry));
}

// A lock or a timer left on a device by a run that then dies is found by recover only through
// the journal, so these two actions, like a step, start only once their record is durable.
Status Safeguards::journal_ahead(const nlohmann::json& record) {
  nlohmann::json entry = record;
  entry["at"] = format_utc(now_utc());
  auto written = evidence_.write_ahead(entry);
  if (!written.ok())
    return Error::internal("its journal record could not be written (" + written.error().message +
                           ")");
  log_.push_back(std::move(entry));
  return Ok{};
}

void Safeguards::lock_targets(GateRecord& record, const std::string& run_id, Duration lease) {
  run_id_ = run_id;
  auto holder = LockHolder::for_this_controller(run_id, change_.id, options_.operator_name, lease);
  record.verdict = Verdict::pass;
  // One order for every run (device names, sorted) and a stop at the first lock not taken: of
  // two runs that share devices, the one that takes the first shared device takes all of them,
  // and the other takes none of them. In each change's own order, or going on after a refusal,
  // each run could hold one lock the other needs and both would refuse.
  std::vector<std::string> order = change_.targets;
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  for (const auto& name : order) {
    const intent::Device* device = inventory_.find(name);
    if (!device) continue;  // validation refuses unknown targets before any gate runs
    if (auto ahead = journal_ahead({{"event", "lock-acquire"}, {"device", name}, {"run", run_id}});
        !ahead.ok()) {
      record.verdict = Verdict::fail;
      record.details.push_back(name + ": lock not requested: " + ahead.error().message);
      break;
    }
    LockHolder with_token = holder;
    if (options_.fence_token) with_token.fence_token = options_.fence_token(name).value_or(0);
    auto outcome = locks_.acquire(*device, with_token, options_.take_over);
    if (!outcome.ok()) {
      journal({{"event", "lock-failed"}, {"device", name}, {"reason", outcome.error().message}});
      record.details.push_back(outcome.error().message);
      record.verdict = Verdict::no_evidence;
      break;
    }
    const auto& acquired = outcome.value();
    nlohmann::json entry = {{"event", "lock-" + std::string(to_string(acquired.kind))},
                            {"device", name},
                            {"holder", holder_json(acquired.holder)},
                            {"generation", acquired.generation}};
    if (acquired.kind == AcquireOutcome::Kind::stale_token)
      entry["newer_fence"] = {{"revision", acquired.newer_token}, {"run", acquired.newer_run}};
    if (acquired.taken_over_from) {
      entry["taken_over_from"] = holder_json(*acquired.taken_over_from);
      entry["dead_because"] = acquired.dead_because;
    }
    journal(entry);
    if (acquired.kind != AcquireOutcome::Kind::acquired) {
      record.verdict = Verdict::fail;
      record.details.push_back(acquired.message());
      break;
    }
    locked_.push_back(name);
    if (acquired.taken_over_from) record.details.push_back(acquired.message());
  }
  if (record.verdict != Verdict::pass) {
    // Give back what was taken before the refusal, so the run that holds the rest can finish.
    auto released = release_locks();
    record.summary = "not every target could be locked; nothing was touched";
    // A refusal because of someone else's lock names the holder first.
    std::stable_partition(
        record.details.begin(), record.details.end(),
        [](const std::string& line) { return line.find("locked by run") != std::string::npos; });
    return;
  }
  record.summary = "locked " + std::to_string(locked_.size()) + " target" +
                   (locked_.size() == 1 ? "" : "s") + " for run " + run_id;
}

std::vector<std::string> Safeguards::release_locks() {
  std::vector<std::string> lines;
  for (auto it = locked_.rbegin(); it != locked_.rend(); ++it) {
    const intent::Device* device = inventory_.find(*it);
    if (!device) continue;
    auto outcome = locks_.release(*device, run_id_);
    std::string line = outcome.ok()
                           ? *it + ": lock " + std::string(to_string(outcome->kind))
                           : outcome.error().message + " (the lock stays until its lease expires)";
    journal({{"event", "lock-release"}, {"device", *it}, {"outcome", line}});
    lines.push_back(std::move(line));
  }
  locked_.clear();
  return lines;
}

void Safeguards::arm_timers(GateRecord& record, const std::string& run_id) {
  run_id_ = run_id;
  record.verdict = Verdict::pass;
  std::size_t unsupported = 0;
  for (const auto& name : change_.targets) {
    const intent::Device* device = inventory_.find(name);
    if (!device) continue;
    if (auto ahead = journal_ahead({{"event", "confirm-arm"},
                                    {"device", name},
                                    {"run", run_id},
                                    {"timeout_ms", change_.confirm_timeout->count()}});
        !ahead.ok()) {
      record.verdict = Verdict::fail;
      record.details.push_back(name + ": confirm timer not armed: " + ahead.error().message);
      break;
    }
    auto armed = timers_.arm(*device, run_id, *change_.confirm_timeout, change_.rollback);
    if (!armed.ok()) {
      const auto& failure = armed.error();
      journal({{"event", "confirm-arm-failed"},
               {"device", name},
               {"kind", std::string(to_string(failure.kind))},
               {"reason", failure.message}});
      if (failure.kind == ConfirmTimerFailure::Kind::unsupported ||
          failure.kind == ConfirmTimerFailure::Kind::no_rollback) {
        ++unsupported;
        record.details.push_back(failure.message + " (no device-side timer for this device)");
        continue;
      }
      record.verdict =
          failure.kind == ConfirmTimerFailure::Kind::ssh ? Verdict::no_evidence : Verdict::fail;
      record.details.push_back(failure.message);
      continue;
    }
    journal({{"event", "confirm-armed"},
             {"device", name},
             {"pid", armed->pid},
             {"deadline", format_utc(armed->deadline)},
             {"directory", armed->directory}});
    armed_[name] = armed.value();
  }
  if (record.verdict != Verdict::pass) {
    // Nothing was sent yet: take back the timers that did arm, so none fires on an
    // untouched device.
    GateRecord cleanup;
    disarm_timers(cleanup);
    record.summary = "the confirm timer could not be armed on every target; nothing was touched";
    return;
  }
  if (armed_.empty()) {
    record.summary =
        "no target can have a device-side timer (gNMI rollback); the controller's "
        "rollback covers them";
    return;
  }
  record.summary = "armed on " + std::to_string(armed_.size()) + " device" +
                   (armed_.size() == 1 ? "" : "s") + ": each reverts by itself after " +
                   format_duration(*change_.confirm_timeout) + " unless confirmed" +
                   (unsupported ? " (" + std::to_string(unsupported) + " without a timer)" : "");
}

std::map<std::string, TimerState> Safeguards::disarm_timers(GateRecord& record) {
  return disarm_timers_except(record, {});
}

std::map<std::string, TimerState> Safeguards::disarm_timers_except(
    GateRecord& record, const std::set<std::string>& keep) {
  std::map<std::string, TimerState> fired;
  record.verdict = Verdict::pass;
  std::vector<std::string> devices;
  for (const auto& [device, timer] : armed_)
    if (!keep.contains(device)) devices.push_back(device);
  for (const auto& device : devices)
    if (auto state = disarm_one(device, record)) fired[device] = *state;
  record.summary = fired.empty() ? "every confirm timer disarmed"
                                 : std::to_string(fired.size()) +
                                       " device(s) had already fired their confirm timer";
  return fired;
}

std::optional<TimerState> Safeguards::disarm_before_rollback_of(const std::string& device,
                                                                GateRecord& record) {
  if (!armed_.contains(device)) return std::nullopt;
  return disarm_one(device, record);
}

std::optional<TimerState> Safeguards::disarm_one(const std::string& name, GateRecord& record) {
  const intent::Device* device = inventory_.find(name);
  journal({{"event", "confirm-disarm"}, {"device", name}, {"run", run_id_}});
  auto outcome = device ? timers_.disarm(*device, run_id_)
                        : TimerResult<DisarmOutcome>(ConfirmTimerFailure{
                              ConfirmTimerFailure::Kind::device, name + ": not found"});
  if (!outcome.ok()) {
    // The timer stays armed on the device and will revert it: say so, keep going.
    journal({{"event", "confirm-disarm-failed"},
             {"device", name},
             {"reason", outcome.error().message}});
    record.verdict = Verdict::fail;
    record.details.push_back(outcome.error().message +
                             " (the timer may still fire and revert this device)");
    return std::nullopt;
  }
  TimerStatus status = outcome->status;
  if (status.state == TimerState::firing && device) {
    // The device is running its rollback now: wait for it (bounded) rather than run the
    // rollback a second time alongside it.
    auto give_up = std::chrono::steady_clock::now() +
                   options_.timers.rollback_step_timeout * (change_.rollback.size() + 1);
    while (status.state == TimerState::firing && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      auto again = timers_.status(*device, run_id_);
      if (!again.ok()) break;
      status = again.value();
    }
  }
  std::string kind(to_string(outcome->kind));
  std::string state(to_string(status.state));
  journal({{"event", "confirm-" + kind}, {"device", name}, {"state", state}});
  armed_.erase(name);
  if (outcome->kind != DisarmOutcome::Kind::already_fired) return std::nullopt;
  record.details.push_back(name + ": the confirm timer had already fired (" + state + ")");
  return status.state;
}

void Safeguards::adopt_timers(const std::string& run_id, const std::vector<std::string>& devices) {
  run_id_ = run_id;
  for (const auto& device : devices) {
    ArmedTimer timer;
    timer.device = device;
    timer.run_id = run_id;
    armed_.emplace(device, std::move(timer));
  }
}

void Safeguards::adopt_locks(const std::string& run_id, const std::vector<std::string>& devices) {
  run_id_ = run_id;
  locked_ = devices;
}

nlohmann::json Safeguards::to_json() const {
  nlohmann::json armed = nlohmann::json::array();
  for (const auto& [device, timer] : armed_) armed.push_back(device);
  return {{"run", run_id_},
          {"locks_held", locked_},
          {"timers_still_armed", armed},
          {"take_over", options_.take_over == TakeOver::yes},
          {"events", log_}};
}

}  // namespace fabgate::pipeline
