#pragma once

// The fleet view (issue 32, `fabgate status`): what every controller is changing now, as the
// fabric's coordination store holds it. Read-only: it never writes a key, takes a lease or
// contacts a device.
//
// Read under the fabric's prefix P (docs/coordination.md):
//   P/runs/<run>/alive                        runs in flight, each on its run's lease
//   P/budgets/<budget>/<group>/claims/<run>   who holds which devices of which group
//   P/queue/<run>                             runs waiting for a budget (--wait), oldest first
//   P/locks/<device>                          device locks and their fencing tokens (locks.h)
//   P/service/out/<device>                    devices an accepted change left out of service
// Every record was written by another controller, perhaps another fabgate version: each is read
// with typed lookups and one that cannot be read is listed as unreadable, never thrown on.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/etcd/etcd_client.h"
#include "gates/coordination/budgets.h"
#include "gates/coordination/claims.h"
#include "gates/coordination/locks.h"

namespace fabgate::coordination {

// A run whose alive key exists: its controller keeps its lease alive, now.
struct RunInFlight {
  std::string run_id;
  std::string controller;        // the alive key's value
  std::int64_t lease = 0;        // 0: the key carries no lease (fabgate never writes one so)
  std::int64_t ttl_left_s = -1;  // seconds left on the lease; -1: none, or it expired since
  std::int64_t granted_ttl_s = 0;
};

// One budget group: its capacity from the budgets file and the inventory, and who holds it.
struct GroupView {
  BudgetGroup group;  // group "" for a budget without `per` (its key segment is "all")
  // False for claims under a budget or group the budgets file (or the inventory) does not have:
  // renamed or removed since the claim; size and capacity are then unknown (0).
  bool in_budgets_file = true;
  std::vector<Holder> holders;         // sorted by run id
  std::vector<std::string> in_change;  // distinct devices the readable holders hold, sorted
  // The group's members (by the inventory) out of service, sorted: they count as a claim does.
  std::vector<std::string> out_of_service;
  // An unreadable claim record counts as holding the whole group, as a claim does.
  bool full_by_unreadable() const;
  int headroom() const;  // devices that may still go into change; never negative
};

// A run that holds claims or device locks but whose alive key is gone: its controller died (or lost
// its lease) mid-change, its devices may still be changed, and only `fabgate recover` releases it.
struct DeadRun {
  std::string run_id;
  std::string operator_name;  // empty when its records are unreadable
  std::string change;
  std::string controller;
  std::vector<std::string> groups;   // BudgetGroup::describe() of every group it holds
  std::vector<std::string> devices;  // sorted, distinct: claimed or locked
  bool readable = true;              // false: a record of it could not be read
  bool journal_shared = false;       // its journal is in the store: any controller recovers it
  // Its end marker (shared_journal.h run_end_key), in words: the run ended in a known state and
  // died before its release finished; recover only releases what it left. Empty: none.
  std::string ended;
};

struct FleetView {
  std::string prefix;
  std::vector<RunInFlight> runs;       // sorted by run id
  std::vector<GroupView> groups;       // the budgets file's order, then claims the file lacks
  std::vector<QueuedRun> queue;        // oldest first (create_revision ascending): claims.h
  std::vector<DeadRun> dead;           // sorted by run id
  std::vector<DeviceLockEntry> locks;  // sorted by device
  std::vector<OutOfService> out_of_service;  // every device out of service, sorted by device
};

// The store could not be read (unreachable, timeout, refused login, an answer of another
// shape): there is no evidence of what is in change. Names the endpoint and the operation.
struct FleetFailure {
  std::string message;
};

// Reads the view. `budget_groups`: every group of the budgets file (groups_of), shown whether
// or not anything is claimed there.
Expected<FleetView, FleetFailure> read_fleet(etcd::EtcdClient& client, const std::string& prefix,
                                             const std::vector<BudgetGroup>& budget_groups);

}  // namespace fabgate::coordination
