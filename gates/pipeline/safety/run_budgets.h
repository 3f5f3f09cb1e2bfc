#pragma once

// The "budgets" gate and what it leaves behind (docs/coordination.md): before the first step a
// run claims, in the fabric's etcd, the redundancy-budget units its targets need, so that two
// controllers draining both spines of one pod cannot both proceed. The budgets file and the
// coordination settings come from the trusted policy ref (gates/app/trusted_policy.h).
//
// The claims carry no lease; the run's alive key does, kept alive every third of its TTL on a
// thread of its own. A run that ends with its devices restored or untouched releases its
// claims; one that ends NOT RESTORED, or dies, keeps them (its devices may still be changed)
// until `fabgate recover` releases them. When the lease may have expired (renewals failing for
// its TTL), fence() closes and the run sends nothing more to any device (docs/coordination.md
// "Lease loss").

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/etcd/etcd_client.h"
#include "gates/coordination/claims.h"
#include "gates/intent/model.h"
#include "gates/pipeline/safety/journal_mirror.h"
#include "gates/pipeline/safety/lease_fence.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

class EvidenceBundle;

struct BudgetSetup {
  std::optional<std::string> budgets_text;  // the budgets file at the trusted ref; none: none
  std::string budgets_file;                 // its path in the intent folder, for messages
  std::string source;  // where it was read: "main at 1a2b3c4d5e6f (the parent of ...)"
  std::optional<intent::CoordinationSettings> coordination;
  std::filesystem::path intent_dir;  // relative ca/cert/key paths are relative to it
  // --wait: how long a claim that does not fit waits in the fabric's queue; 0: refuse at once.
  Duration wait{0};
  // The name this controller's claims, locks and queue entries carry (--controller,
  // $FABGATE_CONTROLLER); empty: the host name.
  std::string controller;
};

class RunBudgets {
 public:
  RunBudgets(BudgetSetup setup, const intent::Inventory& inventory, const intent::Change& change,
             EvidenceBundle& evidence);
  ~RunBudgets();  // stops the keepalive thread; never releases (see release())
  RunBudgets(const RunBudgets&) = delete;
  RunBudgets& operator=(const RunBudgets&) = delete;

  // Whether the gate has anything to judge: a budgets file at the trusted ref.
  bool wanted() const { return setup_.budgets_text.has_value(); }

  // Gate "budgets". Fails when the budgets file is invalid, the change's own targets exceed a
  // budget, or (with coordination) the claim does not fit beside the runs in flight, naming
  // their run, operator, change and controller; no-evidence when etcd cannot be asked. Without
  // coordination it checks the change's own targets only, and says so.
  void claim(GateRecord& record, const std::string& run_id, const std::string& operator_name);

  // Whether the run coordinates through a store (`coordination:` at the trusted ref).
  bool coordinated() const { return setup_.coordination.has_value(); }

  // Gate "fleet-locks" (with coordination, before the device-side locks): takes the run's
  // lease (kept alive from then on, and its fence armed) and locks every target in the store
  // in one transaction (gates/coordination/locks.h). Fails when another run holds a target,
  // alive or dead, naming its run, operator, change and controller; no-evidence when etcd
  // cannot be asked. The locks' revisions are the run's fencing tokens (fence_token()).
  void lock_devices(GateRecord& record, const std::string& run_id,
                    const std::string& operator_name);
  // The fencing token of a device this run locked in the store; nullopt otherwise.
  std::optional<std::int64_t> fence_token(const std::string& device) const;

  // Takes every claim of `run_id` off the fabric (its own end, or `fabgate recover` of a run
  // that died), and ends its lease. Lines for the report; empty without coordination. A
  // failure is named in the lines and leaves the claims for recover.
  // `fate`: whether the change stays on the devices (an apply accepted): then the same
  // transaction records the change's out_of_service targets as out of service and takes its
  // back_in_service targets off that list (docs/coordination.md "Devices out of service").
  // `exit_code`: how the run ends, for its end marker.
  // With a lease, the run first records its end in the store (shared_journal.h run_end_key) in
  // a transaction conditional on its alive key still being on its lease: that is the instant
  // its end is decided. Until then another controller may take it over; after it no take-over
  // can roll it back. Then locks, claims, alive key, queue entry, service records and the
  // shared journal go in ONE transaction under the same condition. A run whose fence closed,
  // or whose alive key is gone when it records its end, releases nothing: taken_over() says
  // why (docs/coordination.md "Release").
  enum class ChangeFate { kept, not_kept };
  // `sent_anything`: whether any step reached (or may have reached) a device. A run that sent
  // nothing has nothing anyone could recover, so when it may have been taken over it still
  // releases what it holds, without the lease condition (its own take-over, if any, is a
  // recover of an untouched run, which only releases too).
  std::vector<std::string> release(const std::string& run_id,
                                   ChangeFate fate = ChangeFate::not_kept, int exit_code = 0,
                                   bool sent_anything = true);
  // The run hands off NOT RESTORED (exit 5): it keeps its claims, locks and shared journal
  // for `fabgate recover`, and ends its lease now, so that other controllers see it dead at
  // once and its recover does not wait out the TTL (nor find it "alive").
  void hand_off();
  // Why this run may have been taken over by another controller before it could record its
  // end (its lease lapsed or may have); empty when it recorded it, or holds no lease.
  const std::string& taken_over() const { return taken_over_; }
  bool released_ok() const { return release_ok_; }
  // What release() recorded about the devices' service state, one line each ("spine2 out of
  // service in /fabgate/pod-a: counted by the budgets until ..."); empty when nothing.
  const std::vector<std::string>& service_changes() const { return service_changes_; }
  // Why release() left the run's shared journal in etcd; empty when it did not.
  const std::string& journal_erase_problem() const { return journal_erase_problem_; }
  // For `fabgate recover`: the crashed run (same run id) may hold claims this process did not
  // take; release() then takes them off too. Its shared journal continues with recover's
  // records (best effort: recover must work when etcd does not answer; coordination.json says).
  // `shared`: whether the crashed run's own journal says it shared its journal in etcd.
  // Returns why recover must not touch the devices: the run shared its journal, and etcd now
  // holds none, so another controller recovered the run (or it ended) and erased it, and other
  // runs may have changed its devices since; nullopt otherwise (also when etcd cannot be asked:
  // the fleet-locks gate then judges).
  enum class JournalShared { yes, no };
  std::optional<std::string> adopt(const std::string& run_id,
                                   JournalShared shared = JournalShared::no);

  // The shared journal (gates/coordination/shared_journal.h): once the claim is held, every
  // journal record is copied into etcd too, so that recover works from another controller;
  // the evidence names where (coordination.json "journal"). Whether this run shares one.
  bool shares_journal() const { return mirror_ != nullptr; }
  // Copies the pre-change snapshot (snapshots/pre.json as written) beside the journal. An
  // error when etcd did not take it: the run must not start then. A snapshot too large for
  // etcd is not copied and not an error: the returned line says so (recover on another
  // controller then cannot verify the baseline).
  Result<std::string> share_baseline(const std::string& bytes);
  // Claims or device locks of this run may be in the store (taken here, or adopted from a
  // crashed run).
  bool holds() const { return claimed_ || adopted_ || locked_; }

  // Closes when this run's lease may have expired (lease_fence.h): from then on the run sends
  // nothing more to any device. Never closes for a run without a lease.
  const LeaseFence& fence() const { return fence_; }

  // Everything done, for coordination.json.
  nlohmann::json to_json() const;

 private:
  // This controller's name in the store: the setup's, else the host name.
  std::string controller_name() const;
  // How a release that failed at the run's end is finished.
  std::string release_later() const;
  Expected<etcd::EtcdClient, etcd::EtcdFailure> open_client() const;
  // Opens the store and takes the run's lease (keepalive thread, fence armed), once; the
  // problem when it cannot.
  std::optional<std::string> start_lease();
  // Ends the lease of a run that got nothing in the store (refused before the first step).
  void end_unused_lease();
  void keep_alive(std::int64_t lease, Duration every);
  // Claims, waiting in the queue up to setup_.wait while the claim does not fit.
  Expected<std::int64_t, coordination::ClaimFailure> claim_or_wait(
      coordination::BudgetLedger& ledger, const coordination::RunIdentity& identity,
      const std::vector<coordination::Demand>& demands, GateRecord& record);
  void stop_keepalive();
  // Attaches the journal mirror for `run_id`, the store holding `stored_up_to` of its records.
  Status share_journal(const std::string& run_id, std::uint64_t stored_up_to);
  // Records the run's end in the store while its lease holds (retried while the fence is
  // open); false when it could not: taken_over_ says why.
  bool record_end(const std::string& run_id, ChangeFate fate, int exit_code);
  // The release itself: one transaction (more only past etcd's operation limit) conditional
  // on the run's lease; a line naming a failure, or nullopt. `released` counts the claims.
  std::optional<std::string> release_in_store(const std::string& run_id,
                                              const coordination::ServiceTransition& transition,
                                              bool on_own_lease, int& released);

  BudgetSetup setup_;
  const intent::Inventory& inventory_;
  const intent::Change& change_;
  EvidenceBundle& evidence_;
  std::optional<etcd::EtcdClient> client_;
  std::int64_t lease_ = 0;
  std::string operator_name_;  // who runs it, for the records release() writes
  std::vector<std::string> service_changes_;
  bool claimed_ = false;
  std::vector<coordination::Demand> claimed_demands_;  // what this run's own claim holds
  bool adopted_ = false;
  bool locked_ = false;  // device locks of this run are in the store
  std::int64_t lease_ttl_s_ = 0;
  std::map<std::string, std::int64_t> tokens_;  // device -> fencing token; guarded by mutex_
  bool release_ok_ = true;
  nlohmann::json record_ = nlohmann::json::object();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  int keepalive_failures_ = 0;
  std::string last_keepalive_problem_;
  std::thread keepalive_;
  LeaseFence fence_;
  std::unique_ptr<EtcdJournalMirror> mirror_;
  std::string journal_erase_problem_;
  std::string taken_over_;
};

}  // namespace fabgate::pipeline
