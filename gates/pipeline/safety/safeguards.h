#pragma once

// What keeps a run safe when two engineers work at once or the controller dies: the per-device
// locks and the device-side confirm timers of one run, as the pipeline's gates use them. Every
// lock and timer action is journaled before it is sent and its outcome after, and all of them
// end up in safeguards.json of the evidence. Taking a lock and arming a timer are write-ahead
// like a step (nothing is sent unless the record is durable; the gate fails instead); a
// release or a disarm is journaled best effort, because undoing matters more than recording.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/intent/model.h"
#include "gates/pipeline/families/remote.h"
#include "gates/pipeline/safety/confirm_timer.h"
#include "gates/pipeline/safety/device_lock.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

class EvidenceBundle;

struct SafeguardOptions {
  DeviceLockOptions locks;
  ConfirmTimerOptions timers;
  TakeOver take_over = TakeOver::no;  // --take-over-locks: take locks whose holder is dead
  std::string operator_name;
  // With `coordination:`: this run's fencing token for a device (its etcd lock's revision),
  // written into the device-side lock, which refuses it when it saw a newer one. Empty or
  // nullopt: no token.
  std::function<std::optional<std::int64_t>(const std::string& device)> fence_token;
};

class Safeguards {
 public:
  Safeguards(Remote& remote, const intent::Inventory& inventory, const intent::Change& change,
             EvidenceBundle& evidence, SafeguardOptions options);

  // Gate "device-locks": takes the lock of every target, in sorted device-name order, and
  // stops at the first it cannot take. Passes only when every lock is held by this run; a live
  // holder fails the gate naming it, a dead one too unless take-over was asked for (then it is
  // taken and listed); an unreachable device is no-evidence. Locks already taken are released
  // again when the gate does not pass. Of two runs sharing devices, exactly one gets them all.
  void lock_targets(GateRecord& record, const std::string& run_id, Duration lease);

  // Releases every lock this run holds. Returns one line per device for the report.
  std::vector<std::string> release_locks();
  bool holds_locks() const { return !locked_.empty(); }

  // Gate "confirm-arm": before the first step, arm each target's device-side timer with the
  // change's confirm_timeout. A target whose rollback is gNMI cannot have one (listed, not a
  // failure: the limit is documented); any other failure to arm fails the gate, which refuses
  // the change before a step is sent.
  void arm_timers(GateRecord& record, const std::string& run_id);

  // Disarms every armed timer. Before the controller rolls back (so the device and the
  // controller never run the rollback at the same time) and after acceptance. Returns the
  // devices whose timer had already fired, with how it ended (fired-restored devices need no
  // second rollback; any fired timer means the change is no longer in place there).
  std::map<std::string, TimerState> disarm_timers(GateRecord& record);
  // As disarm_timers(), but the timers of `keep` stay armed: before a rollback, the devices
  // the controller is about to roll back keep theirs until their own turn comes
  // (disarm_before_rollback_of).
  std::map<std::string, TimerState> disarm_timers_except(GateRecord& record,
                                                         const std::set<std::string>& keep);
  // Disarms `device`'s timer right before the controller rolls that device back: device by
  // device, never all at once, so that the device and the controller never both run its
  // rollback while a rollback cut short (the lease fence closed, a newer run took the devices)
  // leaves every device it never reached with its timer armed, to revert by itself. Nothing
  // when `device` has no armed timer, or it was disarmed; the timer's state when it had
  // already fired (fired-restored: the device needs no second rollback). A disarm that fails
  // (unreachable, refused by the fence) is in `record`, and the timer stays counted as armed.
  std::optional<TimerState> disarm_before_rollback_of(const std::string& device,
                                                      GateRecord& record);
  bool has_armed_timers() const { return !armed_.empty(); }
  bool timer_armed(const std::string& device) const { return armed_.contains(device); }
  // For `recover`: the timers a crashed run may have armed (its targets), so that
  // disarm_timers() finds them on the devices.
  void adopt_timers(const std::string& run_id, const std::vector<std::string>& devices);
  // For `recover` of a run that sent nothing: the locks it may hold, so release_locks() gives
  // them back (release only removes a lock this run id holds).
  void adopt_locks(const std::string& run_id, const std::vector<std::string>& devices);

  // Everything done, for safeguards.json.
  nlohmann::json to_json() const;

 private:
  void journal(const nlohmann::json& record);
  // Disarms one armed timer (journaled); the fired state as disarm_before_rollback_of().
  std::optional<TimerState> disarm_one(const std::string& device, GateRecord& record);

  Status journal_ahead(const nlohmann::json& record);
  Remote& remote_;
  const intent::Inventory& inventory_;
  const intent::Change& change_;
  EvidenceBundle& evidence_;
  SafeguardOptions options_;
  DeviceLock locks_;
  ConfirmTimer timers_;
  std::string run_id_;
  std::vector<std::string> locked_;          // devices whose lock this run holds
  std::map<std::string, ArmedTimer> armed_;  // device -> timer not yet disarmed
  nlohmann::json log_ = nlohmann::json::array();
};

}  // namespace fabgate::pipeline
