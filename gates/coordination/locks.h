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
// alive key. The key's create_revision is the run's FENCING TOKEN for that device: etcd's
// revisions only grow, so whoever locks the device later gets a larger token. The device-side
// lock records the newest token it saw and refuses older ones (gates/pipeline/safety/
// device_lock.h, docs/coordination.md "Fencing tokens").

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
  std::int64_t token = 0;  // the key's create_revision: the holder's fencing token
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
  // still the run's own record as read (retaking is idempotent: a retried start, or `fabgate
  // recover` of the same run id, keeps the key and so its token). With run.lease the run's
  // alive key is written in the same transaction. Returns each device's fencing token. Any
  // device held by another run refuses the whole request and writes nothing.
  Expected<std::map<std::string, std::int64_t>, FleetLockFailure> take(
      const RunIdentity& run, const std::vector<std::string>& devices);

  // Removes every lock `run_id` holds; how many. Each delete is conditional on the key being
  // unchanged since it was read, so a lock another run took meanwhile is never removed.
  Expected<int, FleetLockFailure> release(const std::string& run_id);

  // Every device lock, sorted by device, with its holder's liveness (the fleet view).
  Expected<std::vector<DeviceLockEntry>, FleetLockFailure> list();

 private:
  std::string key_of(const std::string& device) const { return prefix_ + "/locks/" + device; }
  Expected<Ok, FleetLockFailure> read_liveness(std::vector<DeviceLockEntry>& entries);

  etcd::EtcdClient& client_;
  std::string prefix_;
};

// A lease id as etcdctl writes it (hex): `etcdctl lease timetolive ID` takes it as printed.
std::string lease_hex(std::int64_t lease);

}  // namespace fabgate::coordination
