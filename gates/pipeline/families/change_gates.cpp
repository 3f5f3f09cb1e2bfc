// Gates execute, settle and rollback: the only gates that send changes to devices.

#include "gates/pipeline/controller/pipeline.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <set>
#include <thread>
#include "adapters/core/text.h"
#include "gates/compare/default_rules.h"
#include "gates/compare/engine.h"
#include "gates/compare/exception_register.h"
#include "gates/compare/rule_set.h"
#include "gates/compare/snapshot.h"
#include "gates/compat/check.h"
#include "gates/compat/matrix.h"
#include "gates/pipeline/families/gate_support.h"
#include "gates/pipeline/families/identity_check.h"
#include "gates/pipeline/families/monitoring.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/report_html.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/safety/interruption.h"

namespace fabgate::pipeline {

void Pipeline::execute(GateRecord& record) {
  Executor executor(with_.remote, repository_.inventory, change_, &with_.evidence,
                    options_.parallelism, with_.gnmi);
  auto deadline = started_ + change_.bounds.deadline;
  try {
    execution_ = executor.apply(deadline);
  } catch (...) {
    // What was sent before the throw is in the journal (every step is write-ahead): the
    // rollback undoes exactly that.
    adopt_journaled_steps();
    throw;
  }
  outcome_.steps = execution_.runs;
  outcome_.change_started = !execution_.runs.empty();
  std::size_t ok = 0;
  for (const auto& run : execution_.runs) {
    if (run.state == StepState::succeeded)
      ++ok;
    else
      record.details.push_back(run.device + " step " + std::to_string(run.index) + ": " +
                               run.reason);
  }
  if (execution_.failure && record.details.empty()) record.details.push_back(*execution_.failure);
  record.verdict = execution_.failure ? Verdict::fail : Verdict::pass;
  record.summary = std::to_string(ok) + "/" + std::to_string(change_.steps.size()) +
                   " steps succeeded on " + count_of(execution_.touched.size(), "device");
}

void Pipeline::settle(GateRecord& record) {
  // The change's own settle is bounded by its deadline; after a rollback the full settle time
  // is given, since verifying the restore matters more than the change's deadline.
  auto left = change_.bounds.deadline - since(started_);
  Duration wait = failure_detected_ ? change_.acceptance.settle
                                    : std::min<Duration>(change_.acceptance.settle,
                                                         std::max(left, Duration::zero()));
  const auto waiting = Clock::now();
  // In slices, so that a lease lost while waiting stops the run within one slice.
  for (;;) {
    auto left = wait - since(waiting);
    if (left <= Duration::zero()) break;
    if (!Interruption::sleep_unless(std::min(left, Duration{100}), 0)) {
      note_interruption(record);
      record.summary =
          "interrupted after " + format_duration(since(waiting)) + " of " + format_duration(wait);
      return;
    }
    if (auto why = lease_lost()) {
      record.verdict = Verdict::fail;
      record.summary = "stopped after " + format_duration(since(waiting)) + " of " +
                       format_duration(wait) + ": the run's coordination lease may have expired";
      record.details.push_back(*why);
      return;
    }
  }
  if (wait < change_.acceptance.settle) {
    // Acceptance after a shortened settle would judge a fabric that may still be converging:
    // the probes' pass would prove less than declared, so the settle itself has no evidence.
    record.verdict = Verdict::no_evidence;
    record.summary = "settled " + format_duration(wait) + " of the declared " +
                     format_duration(change_.acceptance.settle) + ": the change's deadline of " +
                     format_duration(change_.bounds.deadline) + " left no more";
    return;
  }
  record.verdict = Verdict::pass;
  record.summary = "waited " + format_duration(wait) + " for the fabric to converge";
}

void Pipeline::roll_back(GateRecord& record) {
  Executor executor(with_.remote, repository_.inventory, change_, &with_.evidence,
                    options_.parallelism, with_.gnmi);
  std::vector<std::string> to_undo;
  for (const auto& device : execution_.touched)
    if (!reverted_by_timer_.count(device)) to_undo.push_back(device);
  // Right before each device's rollback: nothing more once the run may have lost its lease
  // (another controller may be recovering the devices: the timers of the devices not reached
  // stay armed and revert them), else that device's confirm timer is disarmed, and a device
  // its timer already restored is not rolled back twice.
  auto before_each = [&](const std::string& device) -> BeforeDeviceRollback {
    if (auto why = lease_lost())
      return {BeforeDeviceRollback::Action::stop,
              "not sent: the run's coordination lease may have expired (" + *why +
                  "); its confirm timer, if armed, stays armed and reverts it"};
    if (with_.safeguards) {
      auto fired = with_.safeguards->disarm_before_rollback_of(device, record);
      if (fired == TimerState::fired_restored) {
        reverted_by_timer_.insert(device);
        return {BeforeDeviceRollback::Action::skip, ""};
      }
    }
    // The executor sends this device's rollback next (devices are rolled back one at a time).
    if (!rollback_sent_) rollback_sent_ = Clock::now();
    return {};
  };
  rollback_ = executor.rollback(to_undo, before_each);
  to_undo.erase(std::remove_if(to_undo.begin(), to_undo.end(),
                               [&](const std::string& device) {
                                 return reverted_by_timer_.count(device) > 0;
                               }),
                to_undo.end());
  for (const auto& device : reverted_by_timer_)
    record.details.push_back(device +
                             ": already reverted by its confirm timer; not rolled back "
                             "twice (the restore is still verified below)");
  outcome_.rollback_steps = rollback_.runs;
  for (const auto& run : rollback_.runs)
    if (run.state != StepState::succeeded)
      record.details.push_back(run.device + " rollback step " + std::to_string(run.index) + ": " +
                               run.reason);
  for (const auto& device : rollback_.failed_devices)
    if (std::none_of(rollback_.runs.begin(), rollback_.runs.end(),
                     [&](const StepRun& r) { return r.device == device; }))
      record.details.push_back(device + ": no rollback steps declared");
  record.verdict = rollback_.complete() ? Verdict::pass : Verdict::fail;
  if (execution_.touched.empty()) {
    record.summary = "no device was changed; nothing to roll back";
    return;
  }
  std::vector<std::string> parts;
  if (!to_undo.empty())
    parts.push_back("rolled back " +
                    join(std::vector<std::string>(to_undo.rbegin(), to_undo.rend()), ", ") +
                    (rollback_.complete() ? "" : " (INCOMPLETE)"));
  if (!reverted_by_timer_.empty())
    parts.push_back(
        join(std::vector<std::string>(reverted_by_timer_.begin(), reverted_by_timer_.end()), ", ") +
        " already reverted by its confirm timer");
  record.summary = join(parts, "; ");
}

}  // namespace fabgate::pipeline
