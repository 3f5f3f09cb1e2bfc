#pragma once

// Device locks in etcd (issue 32, "fenced locks"): with `coordination:`, a run takes the lock of
// every target in the fabric's store before it takes the device-side locks, in one transaction,
// so that runs of every controller exclude each other on a device through one place that also
// says who holds what (`fabgate status`).
//
// Keys, under the fabric's prefix P:
//   P/locks/<device>     the holder's record (JSON: run, operator, change, controller, lease,
//                        since); no lease
//   P/runs/<run>/alive   on the run's lease (claims.h)
//
// A lock key carries no lease, like a budget claim: a run that dies keeps its locks (its
// devices may still be changed) until `fabgate recover` releases them; its liveness is its
// alive key. The revision of the transaction that last wrote the key (its mod_revision) is the
// holder's FENCING TOKEN for that device: etcd's revisions only grow, and every take, take-over
// included, rewrites the key, so whoever holds the device later has a strictly larger token
// than every earlier holder. (etcd refuses a delete and a put of one key in one transaction, so
// a take-over cannot recreate the key atomically; rewriting it under guards gives the same
// token order.) The device-side lock records the current token and refuses every other one
// (gates/pipeline/safety/device_lock.h, docs/coordination.md "Fencing tokens").
//
// A TAKE-OVER (`fabgate recover` of a dead run, from any controller) first takes over the run's
// locks in one transaction guarded by the run's alive key being absent (its lease lapsed: the
// run is dead), by no other take-over of it being in progress, and by each lock still being the
// record read: it rewrites them (newer tokens) and writes
//   P/recovering/<run>   the recovering controller (JSON: controller, operator, pid, since), on
//                        the recover's own lease
// so of two recovers at once exactly one proceeds; the other is refused naming the winner.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/etcd/etcd_client.h"
#include "gates/coordination/claims.h"

namespace fabgate::coordination {

// A device's lock as the store holds it (another controller may have written it).
struct DeviceLockEntry {
  std::string device;
  RunIdentity holder;      // lease as recorded (0: none or unreadable)
  std::string since;       // ISO 8601 UTC, as the holder wrote it
  std::int64_t token = 0;  // the key's mod_revision: the holder's fencing token
  bool alive = false;      // the holder's alive key exists
  bool readable = true;    // false: a record this version cannot read (never taken as free)

  // "d1: locked by run 1a2b (alice, change drain-d1, on ci-7, alive, since ..., token 42)"
  std::string describe() const;
};

struct FleetLockFailure {
  enum class Kind {
    held,        // another run (alive or dead) holds a device: `holders`
    contention,  // other runs kept changing the keys between read and write
    store,       // etcd failed or answered something unreadable
    invalid,     // a run id or device name that cannot be a key segment
    alive,       // take / take_over: the run's alive key is held on another lease (the run, or
                 // a recover of it, is alive): `message` names its controller
    recovering,  // take_over: another controller is taking the run over: `message` names it
    ended,       // take_over: the run recorded its end in the store (shared_journal.h
                 // run_end_key) before it died: its devices are in a known state
  };
  Kind kind = Kind::store;
  std::string message;
  std::vector<DeviceLockEntry> holders;  // held
};

class LockLedger {
 public:
  static constexpr int kMaxAttempts = 16;

  LockLedger(etcd::EtcdClient& client, std::string prefix);

  // Locks every device for `run` in one transaction conditional on each key being absent, or
  // still the run's own record as read, and on the run's alive key being absent or on this
  // run's lease (a run alive on another lease is never retaken: `alive`). Every key is written,
  // so each device's fencing token is the transaction's revision, newer than any earlier
  // holder's, a retake by the same run id (`fabgate recover`) included. With run.lease the
  // run's alive key is written in the same transaction. Returns each device's fencing token.
  // Any device held by another run refuses the whole request and writes nothing.
  Expected<std::map<std::string, std::int64_t>, FleetLockFailure> take(
      const RunIdentity& run, const std::vector<std::string>& devices);

  // Takes a dead run over for `fabgate recover`: `recoverer.run_id` is the dead run's id,
  // `recoverer.lease` the recover's own lease (required), its controller and operator who
  // recovers. In ONE transaction guarded by the run's alive key being absent, by
  // P/recovering/<run> being absent, and by every lock of the run being the record read, it
  // rewrites those locks for the recoverer (newer fencing tokens) and writes
  // P/recovering/<run> on the recoverer's lease. Also guarded by the run's end marker being
  // absent: a run that recorded its end (its devices verified) is never rolled back by a take-
  // over that read its journal earlier (refused as `ended`). Refused as `alive` while the run's alive key
  // exists (naming its controller and the seconds its lease has left), as `recovering` when
  // another recover won (naming its controller); other runs' locks are left alone. Returns the
  // new tokens of the run's devices (empty when it held no lock).
  Expected<std::map<std::string, std::int64_t>, FleetLockFailure> take_over(
      const RunIdentity& recoverer);
  // Ends a take-over: removes P/recovering/<run> if it is still the recoverer's (its lease).
  Expected<Ok, FleetLockFailure> end_take_over(const std::string& run_id, std::int64_t lease);

  // Removes every lock `run_id` holds; how many. Each delete is conditional on the key being
  // unchanged since it was read, so a lock another run took meanwhile is never removed.
  Expected<int, FleetLockFailure> release(const std::string& run_id);
  // The deletes of every lock `run_id` holds now, for a caller whose own transaction is
  // guarded by the run's lease (while it holds, no other run can have rewritten them).
  Expected<std::vector<etcd::TxnOp>, FleetLockFailure> release_ops(const std::string& run_id);

  // Every device lock, sorted by device, with its holder's liveness (the fleet view).
  Expected<std::vector<DeviceLockEntry>, FleetLockFailure> list();

 private:
  std::string key_of(const std::string& device) const { return prefix_ + "/locks/" + device; }
  std::string alive_key(const std::string& run_id) const {
    return prefix_ + "/runs/" + run_id + "/alive";
  }
  std::string recovering_key(const std::string& run_id) const {
    return prefix_ + "/recovering/" + run_id;
  }
  Expected<Ok, FleetLockFailure> read_liveness(std::vector<DeviceLockEntry>& entries);

  etcd::EtcdClient& client_;
  std::string prefix_;
};

// A lease id as etcdctl writes it (hex): `etcdctl lease timetolive ID` takes it as printed.
std::string lease_hex(std::int64_t lease);

}  // namespace fabgate::coordination
