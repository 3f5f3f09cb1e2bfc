#pragma once

// Budget claims in etcd (issue 32): a run claims the groups its targets fall into, atomically,
// before its first step, and releases them when it ends or is recovered.
//
// Keys, under the fabric's prefix P:
//   P/guards/<budget>/<group>                  bumped by every claim and release in the group
//                                              (apart from the claims, so reading every claim
//                                              does not read every group's guard)
//   P/budgets/<budget>/<group>/claims/<run>    the holder's record (JSON); no lease
//   P/runs/<run>/alive                         on the run's lease, when it has one
//   P/queue/<run>                              a run waiting for its groups (--wait), on
//                                              its lease; queue order is create_revision
//   P/service/out/<device>                     a device an accepted change left out of
//                                              service (`out_of_service:`); no lease
//   P/service/guard                            bumped by every change of P/service/out/
// <group> is "pod=p3" for a budget with `per: pod`, "all" for one without.
//
// A budget counts the devices of a group that are in change (claimed by runs in flight) or out
// of service (left out by an accepted change, until a change that declares them
// `back_in_service:` is accepted): a drained spine uses up its pod's budget after the drain's
// run has ended. Out-of-service records are kept per device, not per group, and every claim
// counts them by the inventory it reads, so a budget added later counts them too.
//
// A claim reads every group it needs, counts the devices other runs hold there, and writes
// all its claim keys in one transaction conditional on every group's guard being unchanged
// since that read: two controllers claiming the last unit of a group at once cannot both
// succeed. Claims carry no lease: a run that dies keeps its claims (its devices may still be
// changed) until `release` (fabgate recover) takes them off; `holders` shows it as dead once
// its alive key's lease has expired.
//
// The queue is about fairness, not safety (the guards are the safety): a claim yields to every
// run queued before it (every queued run, when it is not queued itself) that waits for one of
// its groups, so a stream of newcomers cannot starve a waiter. Entries live on the waiter's
// lease: a waiter that dies leaves the queue by itself. docs/coordination.md.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/etcd/etcd_client.h"
#include "gates/coordination/budgets.h"

namespace fabgate::coordination {

// Who holds (or asks for) a claim.
struct RunIdentity {
  std::string run_id;  // a plain key segment ([A-Za-z0-9._-])
  std::string operator_name;
  std::string change;
  std::string controller;  // the machine (or CI runner) the run executes on
  std::int64_t lease = 0;  // the run's etcd lease; 0: none (the claim then shows no liveness)
};

struct Holder {
  RunIdentity run;                   // lease left 0
  std::vector<std::string> devices;  // the devices it holds in this group
  std::string claimed_at;            // ISO 8601 UTC, as the holder wrote it
  bool alive = false;                // its alive key still exists (its lease is kept)
  bool readable = true;              // false: a record this version cannot read; counted full
  std::string key;

  std::string describe() const;  // "run 1a2b (alice, change drain-spine2, on ci-7, alive)"
};

// A device an accepted change left out of service, as the store holds it.
struct OutOfService {
  std::string device;  // from the key: known even when the record cannot be read
  RunIdentity run;     // the run that left it out (lease left 0)
  std::string since;   // ISO 8601 UTC: when that run ended
  bool readable = true;
  std::string key;

  // "spine2 (out of service since ..., left out by run 1a2b: bob, change drain-spine2, on ci-7)"
  std::string describe() const;
};

// What an accepted change does to the devices' service state when its run releases its claims
// (intent: `out_of_service:` and `back_in_service:`). Empty for every other ending: a run
// rolled back, refused, rehearsed or recovered leaves service as it found it.
struct ServiceTransition {
  RunIdentity by;                 // the run, for the records it writes
  std::vector<std::string> out;   // devices it leaves out of service
  std::vector<std::string> back;  // devices it returns to service
  bool empty() const { return out.empty() && back.empty(); }
};

struct GroupClaims {
  std::string budget;
  std::string group;  // "pod=p3", or "all"
  std::vector<Holder> holders;
};

// A run in the queue, as another controller wrote it.
struct QueuedRun {
  RunIdentity run;                  // lease left 0
  std::vector<std::string> groups;  // "<budget>/<group>" it waits for
  std::string since;                // ISO 8601 UTC
  std::string until;                // when it gives up, ISO 8601 UTC
  std::int64_t create_revision = 0;
  bool readable = true;  // false: a record this version cannot read (it blocks no one)
  std::string problem;   // why it cannot be read: "not JSON", "field 'groups' is missing"...
  std::string key;

  std::string describe() const;  // "run 1a2b (bob, change drain-spine2, on ci-7, queued since ...)"
};

// The key segment a group is claimed under: its `per` value ("pod=p3"), "all" without `per`.
std::string group_segment(const BudgetGroup& group);
// "<budget>/<group segment>": how the queue names a group.
std::string queue_group_name(const BudgetGroup& group);

struct ClaimFailure {
  enum class Kind {
    over_budget,  // the budget does not allow it now: `group`, `holders`, `wanted` say why
    queued,       // runs queued before this one wait for one of its groups: `queued` names them
    contention,   // other claims kept changing the groups: every retry lost its race
    store,        // etcd failed or answered something unreadable
    invalid,      // a run id or prefix that cannot be a key segment
  };
  Kind kind = Kind::store;
  std::string message;
  std::optional<BudgetGroup> group;          // over_budget
  std::vector<Holder> holders;               // over_budget: who holds the group now
  std::vector<std::string> wanted;           // over_budget: what this run asked for there
  std::vector<QueuedRun> queued;             // queued: the runs ahead of this one
  std::vector<OutOfService> out_of_service;  // over_budget: the group's devices out of service
};

class BudgetLedger {
 public:
  static constexpr int kMaxAttempts = 16;
  // Reads again because groups of other budgets were found holding a wanted group's devices
  // (their guards join the read); at most this many, then `contention`.
  static constexpr int kMaxDiscoveries = 8;

  // `prefix`: the fabric's key prefix ("/fabgate/fabric-a"), without a trailing '/'.
  BudgetLedger(etcd::EtcdClient& client, std::string prefix);

  // Claims every demand for `run` in one transaction (retried while other claims race it, at
  // most kMaxAttempts times); the store's revision after it. A claim the run already holds is
  // replaced, so claiming again is harmless. With run.lease, the run's alive key is written in
  // the same transaction.
  Expected<std::int64_t, ClaimFailure> claim(const RunIdentity& run,
                                             const std::vector<Demand>& demands);

  // Removes every claim `run_id` holds, in every group, and its alive key (fabgate recover, or
  // the run's own end); how many claims it removed. Releasing a run that holds nothing is 0.
  // With a transition (an accepted change), the same transaction records its devices left out
  // of service and removes those it returned, so no other claim can see the claims gone before
  // the drained devices are counted. With `claimed` (the demands the run's own claim was
  // granted for), only those groups are released, in one call; without it the run's claims
  // are looked for in every group first (fabgate recover).
  Expected<int, ClaimFailure> release(const std::string& run_id,
                                      const ServiceTransition& transition = {},
                                      const std::vector<Demand>* claimed = nullptr);

  // What release() writes, for a caller that puts it into a transaction of its own (a run's
  // end releases its locks, claims and shared journal at once, conditional on its lease).
  // With `claimed`, each claim key is read by a get op in `ops` (count the non-empty reads);
  // without it they were looked up first and `found` counts them.
  struct ReleaseOps {
    std::vector<etcd::TxnOp> ops;
    int found = 0;
  };
  Expected<ReleaseOps, ClaimFailure> release_ops(const std::string& run_id,
                                                 const ServiceTransition& transition = {},
                                                 const std::vector<Demand>* claimed = nullptr);

  // Every device out of service, sorted by device.
  Expected<std::vector<OutOfService>, ClaimFailure> out_of_service();

  // Puts `run` (which must have a lease) in the queue for the groups of `demands`, until
  // `until`; a run already queued keeps its place.
  Expected<Ok, ClaimFailure> enqueue(const RunIdentity& run, const std::vector<Demand>& demands,
                                     TimePoint until);
  // Takes `run_id` out of the queue (nothing when it is not in it).
  Expected<Ok, ClaimFailure> dequeue(const std::string& run_id);
  // The queue, first come first.
  Expected<std::vector<QueuedRun>, ClaimFailure> queue();

  // Every group with claims, sorted by budget and group (the fleet view).
  Expected<std::vector<GroupClaims>, ClaimFailure> groups();

 private:
  std::string group_prefix(const std::string& budget, const std::string& group) const;
  // P/guards/<budget>/<group> for the group at `group` (a group_prefix).
  std::string guard_of(const std::string& group) const;
  // The out-of-service records read from P/service/, and the revision of their guard (0: never
  // written).
  std::pair<std::vector<OutOfService>, std::int64_t> service_from(const etcd::Range& range) const;
  // The queue read from P/queue/, first come first.
  std::vector<QueuedRun> queue_from(const etcd::Range& range) const;
  // Sets each holder's `alive` from its run's alive key.
  Expected<Ok, ClaimFailure> read_liveness(std::vector<Holder>& holders);

  etcd::EtcdClient& client_;
  std::string prefix_;
};

}  // namespace fabgate::coordination
