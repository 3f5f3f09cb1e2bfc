#include "gates/coordination/locks.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "adapters/core/foreign_json.h"
#include "adapters/core/time.h"
#include "gates/coordination/budgets.h"
#include "gates/coordination/run_record.h"
#include "gates/coordination/shared_journal.h"

namespace fabgate::coordination {

namespace {

using etcd::Compare;
using etcd::TxnOp;
using Kind = FleetLockFailure::Kind;

FleetLockFailure failure(Kind kind, std::string message) {
  return FleetLockFailure{kind, std::move(message), {}};
}

FleetLockFailure store_failure(const std::string& what, const etcd::EtcdFailure& etcd_failure) {
  return failure(Kind::store, "coordination: " + what + ": etcd " +
                                  std::string(etcd::to_string(etcd_failure.kind)) + ": " +
                                  etcd_failure.message);
}

std::string record_of(const RunIdentity& run) {
  nlohmann::json record = {{"run", run.run_id},
                           {"operator", run.operator_name},
                           {"change", run.change},
                           {"controller", run.controller},
                           {"lease", lease_hex(run.lease)},
                           {"since", format_utc(now_utc())}};
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A lock record another controller (perhaps another fabgate version) wrote, read with typed
// lookups: one without a string `run` is unreadable, and is never taken for a free device.
DeviceLockEntry entry_from(const etcd::KeyValue& kv, const std::string& device) {
  DeviceLockEntry entry;
  entry.device = device;
  entry.token = kv.mod_revision;  // the revision of the take that wrote it
  auto parsed = parse_foreign_json(kv.value);
  auto recorded = parsed.ok() ? recorded_run(parsed.document) : std::nullopt;
  if (!recorded || !plain_key_segment(recorded->run.run_id)) {
    entry.readable = false;
    return entry;
  }
  entry.holder = std::move(recorded->run);
  entry.since = std::move(recorded->since);
  auto lease = string_member(parsed.document, "lease").value_or("0");
  entry.holder.lease = static_cast<std::int64_t>(std::strtoull(lease.c_str(), nullptr, 16));
  return entry;
}

// Why a run may not be taken (again) or taken over: its alive key, or another recover's
// take-over, on a lease that is not `own_lease`; nullopt when neither stands in the way.
std::optional<FleetLockFailure> in_use(etcd::EtcdClient& client, const std::string& run_id,
                                       std::int64_t own_lease, const etcd::Range& alive,
                                       const etcd::Range& recovering) {
  auto seconds_left = [&](std::int64_t lease) -> std::string {
    if (lease == 0) return "";
    auto status = client.time_to_live(lease);
    if (!status || status->ttl < 0) return "";
    return "; its lease " + lease_hex(lease) + " has " + std::to_string(status->ttl) +
           " s left of " + std::to_string(status->granted_ttl) +
           " s (recover may run once it lapsed unrenewed)";
  };
  if (!alive.kvs.empty() && alive.kvs.front().lease != own_lease) {
    const auto& kv = alive.kvs.front();
    return failure(Kind::alive, "coordination: run " + run_id + " is alive: its controller (" +
                                    kv.value + ") still keeps its lease" + seconds_left(kv.lease) +
                                    "; a live run is not recovered under its feet");
  }
  if (!recovering.kvs.empty() && recovering.kvs.front().lease != own_lease) {
    const auto& kv = recovering.kvs.front();
    auto parsed = parse_foreign_json(kv.value);
    std::string who = parsed.ok() ? string_member(parsed.document, "controller").value_or("") : "";
    std::string by = parsed.ok() ? string_member(parsed.document, "operator").value_or("") : "";
    std::string since = parsed.ok() ? string_member(parsed.document, "since").value_or("") : "";
    return failure(Kind::recovering,
                   "coordination: run " + run_id + " is being recovered by controller " +
                       (who.empty() ? "(unknown)" : who) + (by.empty() ? "" : " (" + by + ")") +
                       (since.empty() ? "" : " since " + since) +
                       ", which took its device locks over first; only one recover may act");
  }
  return std::nullopt;
}

}  // namespace

std::string lease_hex(std::int64_t lease) {
  char text[24];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(lease));
  return text;
}

std::string DeviceLockEntry::describe() const {
  std::string text = device + ": locked by run ";
  if (!readable)
    return text + "(unknown): the lock record is unreadable (token " + std::to_string(token) +
           "); it is never taken for a free device";
  text += holder.run_id + " (";
  text += holder.operator_name.empty() ? "operator unknown" : holder.operator_name;
  if (!holder.change.empty()) text += ", change " + holder.change;
  if (!holder.controller.empty()) text += ", on " + holder.controller;
  text += alive ? ", alive"
                : ", dead: its lease is gone and the device is in an unknown state until "
                  "`fabgate recover " +
                      holder.run_id + "`";
  if (!since.empty()) text += ", since " + since;
  return text + ", token " + std::to_string(token) + ")";
}

LockLedger::LockLedger(etcd::EtcdClient& client, std::string prefix)
    : client_(client), prefix_(std::move(prefix)) {}

Expected<Ok, FleetLockFailure> LockLedger::read_liveness(std::vector<DeviceLockEntry>& entries) {
  std::map<std::string, bool> alive;
  for (auto& entry : entries) {
    if (!entry.readable) continue;
    if (!alive.contains(entry.holder.run_id)) {
      auto key = client_.get(prefix_ + "/runs/" + entry.holder.run_id + "/alive");
      if (!key)
        return store_failure("read whether run " + entry.holder.run_id + " is alive", key.error());
      alive[entry.holder.run_id] = !key->kvs.empty();
    }
    entry.alive = alive[entry.holder.run_id];
  }
  return Ok{};
}

Expected<std::map<std::string, std::int64_t>, FleetLockFailure> LockLedger::take(
    const RunIdentity& run, const std::vector<std::string>& devices) {
  if (!plain_key_segment(run.run_id))
    return failure(Kind::invalid,
                   "coordination: run id '" + run.run_id + "' cannot be a key segment");
  std::set<std::string> wanted(devices.begin(), devices.end());
  for (const auto& device : wanted)
    if (!plain_key_segment(device))
      return failure(Kind::invalid,
                     "coordination: device name '" + device + "' cannot be a key segment");
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    std::vector<Compare> guards;
    std::vector<TxnOp> writes;
    std::vector<DeviceLockEntry> others;
    // The run's alive key: absent (a new run, or a dead one being recovered) or on this run's
    // own lease. On another lease the run, or a recover of it, is alive and keeps its locks.
    auto alive = client_.get(alive_key(run.run_id));
    if (!alive) return store_failure("read whether run " + run.run_id + " is alive", alive.error());
    if (auto busy = in_use(client_, run.run_id, run.lease, *alive, etcd::Range{})) return *busy;
    guards.push_back(
        alive->kvs.empty()
            ? Compare::absent(alive_key(run.run_id))
            : Compare::mod_revision_is(alive_key(run.run_id), alive->kvs.front().mod_revision));
    for (const auto& device : wanted) {
      auto read = client_.get(key_of(device));
      if (!read) return store_failure("read the lock of " + device, read.error());
      if (read->kvs.empty()) {
        guards.push_back(Compare::absent(key_of(device)));
      } else {
        auto entry = entry_from(read->kvs.front(), device);
        if (!entry.readable || entry.holder.run_id != run.run_id) {
          others.push_back(std::move(entry));
          continue;
        }
        // Our own lock (a retried start, or recover of this run id): rewritten with the
        // current lease, and so with a newer token than the one it had.
        guards.push_back(Compare::mod_revision_is(key_of(device), read->kvs.front().mod_revision));
      }
      writes.push_back(TxnOp::put(key_of(device), record_of(run)));
    }
    if (!others.empty()) {
      if (auto liveness = read_liveness(others); !liveness) return liveness.error();
      std::string message;
      for (const auto& entry : others) message += (message.empty() ? "" : "; ") + entry.describe();
      return FleetLockFailure{Kind::held, message, std::move(others)};
    }
    if (run.lease != 0)
      writes.push_back(
          TxnOp::put(prefix_ + "/runs/" + run.run_id + "/alive", run.controller, run.lease));
    auto result = client_.txn(guards, writes);
    if (!result) return store_failure("lock the targets of run " + run.run_id, result.error());
    if (!result->succeeded) continue;  // a key changed between the read and the write
    // Every key was written by this transaction: its revision is each device's token.
    std::map<std::string, std::int64_t> tokens;
    for (const auto& device : wanted) tokens[device] = result->revision;
    return tokens;
  }
  return failure(Kind::contention, "coordination: run " + run.run_id +
                                       " lost the race for its device locks " +
                                       std::to_string(kMaxAttempts) + " times in a row");
}

Expected<std::map<std::string, std::int64_t>, FleetLockFailure> LockLedger::take_over(
    const RunIdentity& recoverer) {
  const std::string& run_id = recoverer.run_id;
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "coordination: run id '" + run_id + "' cannot be a key segment");
  if (recoverer.lease == 0)
    return failure(Kind::invalid, "coordination: a take-over of run " + run_id + " needs a lease");
  nlohmann::json claim = {{"controller", recoverer.controller},
                          {"operator", recoverer.operator_name},
                          {"pid", static_cast<long long>(::getpid())},
                          {"since", format_utc(now_utc())}};
  const std::string recovering_record =
      claim.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    // One consistent read of the run's alive key, its take-over key and every lock.
    const std::string end_key = run_end_key(prefix_, run_id);
    auto read = client_.txn({}, {TxnOp::get(alive_key(run_id)), TxnOp::get(recovering_key(run_id)),
                                 TxnOp::get_prefix(prefix_ + "/locks/"), TxnOp::get(end_key)});
    if (!read)
      return store_failure("read run " + run_id + "'s locks to take them over", read.error());
    if (read->reads.size() != 4)
      return failure(Kind::store, "coordination: read run " + run_id +
                                      "'s locks to take them over: etcd answered " +
                                      std::to_string(read->reads.size()) + " reads of 4");
    if (!read->reads[3].kvs.empty())
      return failure(Kind::ended, "coordination: run " + run_id + " recorded its end in the store (" +
                                      describe_run_end(read->reads[3].kvs.front().value) +
                                      "): its devices were in a known state then, and nothing of "
                                      "it is rolled back");
    const auto& alive = read->reads[0];
    const auto& recovering = read->reads[1];
    // A take-over is the recoverer's own only when made on its lease: a second call by the same
    // recover (a retry) passes, any other recover is refused.
    if (auto busy = in_use(client_, run_id, recoverer.lease, alive, recovering)) return *busy;
    std::vector<Compare> guards = {Compare::absent(alive_key(run_id)), Compare::absent(end_key)};
    guards.push_back(recovering.kvs.empty()
                         ? Compare::absent(recovering_key(run_id))
                         : Compare::mod_revision_is(recovering_key(run_id),
                                                    recovering.kvs.front().mod_revision));
    std::vector<TxnOp> writes;
    std::vector<std::string> devices;
    for (const auto& kv : read->reads[2].kvs) {
      const std::string device = kv.key.substr(prefix_.size() + 7);
      auto entry = entry_from(kv, device);
      if (!entry.readable || entry.holder.run_id != run_id) continue;
      guards.push_back(Compare::mod_revision_is(kv.key, kv.mod_revision));
      writes.push_back(TxnOp::put(kv.key, record_of(recoverer)));
      devices.push_back(device);
    }
    writes.push_back(TxnOp::put(recovering_key(run_id), recovering_record, recoverer.lease));
    auto result = client_.txn(guards, writes);
    if (!result) return store_failure("take over run " + run_id + "'s locks", result.error());
    if (!result->succeeded) continue;  // read again: the refusal then names who won
    std::map<std::string, std::int64_t> tokens;
    for (const auto& device : devices) tokens[device] = result->revision;
    return tokens;
  }
  return failure(Kind::contention, "coordination: the locks of run " + run_id +
                                       " kept changing while they were taken over");
}

Expected<Ok, FleetLockFailure> LockLedger::end_take_over(const std::string& run_id,
                                                         std::int64_t lease) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "coordination: run id '" + run_id + "' cannot be a key segment");
  auto read = client_.get(recovering_key(run_id));
  if (!read) return store_failure("end the take-over of run " + run_id, read.error());
  if (read->kvs.empty() || read->kvs.front().lease != lease) return Ok{};
  auto removed = client_.txn(
      {Compare::mod_revision_is(recovering_key(run_id), read->kvs.front().mod_revision)},
      {TxnOp::del(recovering_key(run_id))});
  if (!removed) return store_failure("end the take-over of run " + run_id, removed.error());
  return Ok{};
}

Expected<int, FleetLockFailure> LockLedger::release(const std::string& run_id) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "coordination: run id '" + run_id + "' cannot be a key segment");
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    auto range = client_.get_prefix(prefix_ + "/locks/");
    if (!range) return store_failure("read the device locks of run " + run_id, range.error());
    std::vector<Compare> guards;
    std::vector<TxnOp> deletes;
    for (const auto& kv : range->kvs) {
      auto entry = entry_from(kv, kv.key.substr(prefix_.size() + 7));
      if (!entry.readable || entry.holder.run_id != run_id) continue;
      guards.push_back(Compare::mod_revision_is(kv.key, kv.mod_revision));
      deletes.push_back(TxnOp::del(kv.key));
    }
    if (deletes.empty()) return 0;
    auto result = client_.txn(guards, deletes);
    if (!result) return store_failure("release the device locks of run " + run_id, result.error());
    if (result->succeeded) return static_cast<int>(deletes.size());
  }
  return failure(Kind::contention, "coordination: the device locks of run " + run_id +
                                       " kept changing while they were released");
}

Expected<std::vector<etcd::TxnOp>, FleetLockFailure> LockLedger::release_ops(
    const std::string& run_id) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "coordination: run id '" + run_id + "' cannot be a key segment");
  auto range = client_.get_prefix(prefix_ + "/locks/");
  if (!range) return store_failure("read the device locks of run " + run_id, range.error());
  std::vector<TxnOp> deletes;
  for (const auto& kv : range->kvs) {
    auto entry = entry_from(kv, kv.key.substr(prefix_.size() + 7));
    if (entry.readable && entry.holder.run_id == run_id) deletes.push_back(TxnOp::del(kv.key));
  }
  return deletes;
}

Expected<std::vector<DeviceLockEntry>, FleetLockFailure> LockLedger::list() {
  const std::string root = prefix_ + "/locks/";
  auto range = client_.get_prefix(root);
  if (!range) return store_failure("read the device locks", range.error());
  std::vector<DeviceLockEntry> entries;
  for (const auto& kv : range->kvs) entries.push_back(entry_from(kv, kv.key.substr(root.size())));
  if (auto liveness = read_liveness(entries); !liveness) return liveness.error();
  return entries;
}

}  // namespace fabgate::coordination
