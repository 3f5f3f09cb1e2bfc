#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/exit_code.h"
#include "adapters/core/progress.h"
#include "adapters/etcd/etcd_client.h"
#include "adapters/prom/alertmanager_client.h"
#include "adapters/prom/prometheus_client.h"
#include "gates/compare/report.h"
#include "gates/compare/snapshot.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/approval_gate.h"
#include "gates/pipeline/families/execute.h"
#include "gates/pipeline/families/load_spread.h"
#include "gates/pipeline/families/probes.h"
#include "gates/pipeline/families/remote.h"
#include "gates/pipeline/families/snapshots.h"
#include "gates/pipeline/families/telemetry_layer.h"
#include "gates/pipeline/reporting/change_listing.h"
#include "gates/pipeline/reporting/config_diff.h"
#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/run_outcome.h"
#include "gates/pipeline/safety/run_budgets.h"
#include "gates/pipeline/safety/safeguards.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

struct ReportContext;

// How long settle-restored waits after a round of the restore verification that did not hold
// before it starts the next one.
inline constexpr Duration kSettlePollInterval{100};
// How long a flows probe of an early settle-restored round waits for each echo; the round that
// starts at the settle bound uses fabgate-probe's own 1 s. A shorter wait can only turn a pass
// into a fail, so a round that held under it holds under the longer one too.
inline constexpr Duration kSettlePollReplyTimeout{200};

// The test-only fault hook of the run controller: when FABGATE_FAULT_THROW_IN_GATE=NAME[,NAME]
// is set, each gate named there throws as it starts, so tests can prove that an exception in any
// gate takes the run's one way out (tests/cmd/fabgate/run_controller_e2e_test.cpp).
inline constexpr const char* kFaultThrowInGate = "FABGATE_FAULT_THROW_IN_GATE";

// Where a run's intent and evidence come from. Journaled in the run-start record with the
// commit, change, mode, operator and run id, so `fabgate recover` can rebuild the run.
struct RunOrigin {
  std::string repo;           // absolute --repo
  std::string ref;            // --ref as given
  std::string intent_root;    // the intent folder inside the work tree
  std::string evidence_root;  // absolute evidence root
};

struct PipelineOptions {
  Mode mode = Mode::apply;
  std::string operator_name;
  int parallelism = 64;
  TimePoint now = now_utc();  // the clock for the maintenance window (tests move it)
  // Called just before the manifest is written, to add what only the caller knows (host keys
  // accepted on first use, approvals...).
  std::function<void(EvidenceBundle&, nlohmann::json& manifest)> annotate;
  // Proves the approvals (and rehearsal) the policy asks for. Null: only a policy that needs
  // no approval and no rehearsal passes the approval gate.
  ApprovalJudge* approval_judge = nullptr;
  RunOrigin origin;  // journaled in run-start for `fabgate recover`
  // plan only: a rehearsal bundle (or its rehearsal.json) whose configuration diffs review.md
  // shows, when that rehearsal is of this plan's digest.
  std::string rehearsal_for_review;
};

// Live progress for people: the terminal shows each gate as it starts and ends, and what a
// running gate waits for (progress(): "6/8 devices", from the snapshotter and the probes,
// possibly from worker threads).
class GateObserver : public ProgressSink {
 public:
  virtual void gate_started(const std::string& /*name*/) {}
  virtual void gate_finished(const GateRecord& /*record*/) {}
  void progress(std::size_t /*done*/, std::size_t /*total*/, std::string_view /*unit*/) override {}
};

// The gate pipeline of DESIGN.md for one committed change. Collaborators are injected so the
// same code runs against real SSH targets and against fakes in unit tests.
class Pipeline {
 public:
  struct Collaborators {
    Remote& remote;
    Snapshotter& snapshotter;
    EvidenceBundle& evidence;
    GateObserver& observer;
    GnmiSteps* gnmi = nullptr;  // sends gNMI steps; null: changes with gNMI steps are refused
    // Device locks and confirm timers (apply, rehearse, recover). Null: neither is used, for
    // unit tests of the gate logic with fakes.
    Safeguards* safeguards = nullptr;
    // Things the connections noticed while a gate ran that a reader of that gate must see
    // (a slow remote login shell); called after each gate, returns only new lines. Empty: none.
    std::function<std::vector<std::string>()> session_notes;
    // The monitoring stack (docs/monitoring.md). Null while fabgate.yaml configures it: its
    // gates are no-evidence.
    const prom::PrometheusClient* prometheus = nullptr;
    const prom::AlertmanagerClient* alertmanager = nullptr;
    // Opens gNMI clients for the during-change telemetry layer. Empty: no telemetry streams.
    GnmiConnector gnmi_connect;
    // Redundancy budgets and their claims in the fabric's etcd (apply, rehearse, recover).
    // Null: no budgets gate.
    RunBudgets* budgets = nullptr;
  };

  Pipeline(const intent::IntentRepository& repository, const intent::Change& change,
           Collaborators collaborators, PipelineOptions options);

  RunOutcome run();
  // Finishes a run that died (`fabgate recover`), in the same evidence bundle: rolls back every
  // device the journal says may have changed (last touched first), then proves the baseline
  // with the recovery gates of run() against the run's snapshots/pre.json. Exit 4 or 5.
  RunOutcome recover(const CrashedRun& crashed, const std::string& recovered_by);

 private:
  // Runs one gate: times it, records it, tells the observer. `body` fills in the verdict.
  GateRecord& gate(const std::string& name, const std::function<void(GateRecord&)>& body);
  GateRecord& skip(const std::string& name, const std::string& why);
  // A gate blocked, or a signal arrived (recorded here as the failed gate "interrupted"), or
  // the run's coordination lease may have expired (the failed gate "coordination-lease").
  bool stopped();
  // Why the run may send nothing more to any device (its lease fence closed); nullopt while
  // it may (docs/coordination.md "Lease loss").
  std::optional<std::string> lease_lost() const;
  // After the first step, with the lease lost: no rollback is sent; the devices are left to
  // their confirm timers, and the run ends NOT RESTORED naming them.
  void hand_off_after_lease_loss(const std::string& why);
  // The record of a gate whose body threw: failed, with the cause first in its details.
  void fail_on_internal_error(GateRecord& record, const std::string& what);
  // The record of the gate in which a signal was noticed.
  void note_interruption(GateRecord& record);
  // Hands the signal handler the `fabgate recover` command of this run's bundle.
  void name_recover_command_for_signals();

  // The exit path (run controller): run() and recover() wrap these, so that nothing leaves a
  // run but through write_outputs().
  void run_gates();
  void recover_gates(const CrashedRun& crashed, const std::string& recovered_by);
  // After a failed gate (or a rehearsal's forced rollback): stop the watch, disarm, roll back,
  // verify the restore.
  void roll_back_after_failure(bool forced);
  // A throw that escaped the gates: refused when nothing was sent, else the rollback path;
  // NOT RESTORED when it came from the rollback path itself.
  void escaped(const std::string& what);
  // Devices and steps the journal says were sent, for a run whose execute gate threw.
  void adopt_journaled_steps();

  void check_window(GateRecord& record);
  // Snapshots every device in scope into `into` and evidence.
  void take_snapshot(GateRecord& record, const std::string& label, HeldSnapshot& into);
  // Copies snapshots/pre.json beside the shared journal (run_budgets.h); a copy etcd refused
  // leaves the gate without evidence, so no step is sent that recover elsewhere could not judge.
  void share_baseline(GateRecord& record);
  // Records a snapshot already taken as snapshots/<label>.json and judges it (take_snapshot).
  void record_snapshot(GateRecord& record, const std::string& label, TakenSnapshot taken,
                       HeldSnapshot& into);
  // The inventory's declared identities against what a snapshot collected (identity_check.h).
  void check_identity(GateRecord& record, const std::string& label, const nlohmann::json& snapshot,
                      const std::vector<const intent::Device*>& devices);
  void check_compat(GateRecord& record);
  // Monitoring gates (monitoring.h): freshness of the series, alerts before and after the
  // change, and the change-window silence, which expire_silence() ends whatever the outcome.
  void check_freshness(GateRecord& record, const std::string& phase);
  void check_alerts(GateRecord& record, const std::string& phase);
  void create_silence(GateRecord& record);
  void expire_silence();
  void probe_promql(const intent::Probe& probe, const std::string& phase,
                    std::vector<ProbeOutcome>& outcomes);
  std::vector<const intent::Device*> targets() const;
  void note_telemetry(const std::string& phase, Verdict verdict);
  void check_rollback_plan(GateRecord& record);
  // plan --rehearsal: the rehearsal bundle's configuration diffs for review.md.
  void read_rehearsal_config_diffs();
  void check_approval(GateRecord& record);
  // Whether the twin gate runs: always for `fabgate twin`, else when fabgate.yaml (the trusted
  // ref's) has an enabled `twin:` section (docs/twin.md).
  bool twin_wanted() const;
  void rehearse_on_twin(GateRecord& record);
  // approvals/<n>-<file name> in the bundle for every approval file judged (docs/approvals.md).
  void copy_approvals_into_bundle(GateRecord& record);
  void probe(GateRecord& record, const std::string& phase);
  // The declared probes that run on hosts (all but promql).
  std::vector<intent::Probe> host_probes() const;
  // Judges outcomes of host probes already run (adds promql probes, waivers, evidence).
  void judge_probes(GateRecord& record, const std::string& phase,
                    std::vector<ProbeOutcome> outcomes);
  // Load spread (spread_gates.cpp): the udp flows probes with the window's flow count, whether
  // the gates apply (such a probe and an equal-cost group in the baseline), and one window.
  std::vector<intent::Probe> spread_probes() const;
  bool spread_applies() const;
  void measure_spread(GateRecord& record, const std::string& phase);
  void execute(GateRecord& record);
  void settle(GateRecord& record);
  // One round of the restore verification: the restored snapshot, its comparison with the
  // baseline and the probes on hosts, taken together.
  struct RestoreRound {
    TakenSnapshot snapshot;
    std::vector<ProbeOutcome> probes;
    Duration probes_took{0};
    Duration snapshot_took{0};
    Duration started_after{0};  // since settle-restored began
    std::string not_held;       // empty: everything held; else the first thing that did not
    // The telemetry streams' deliveries when the round began (empty without telemetry):
    // telemetry-restored ends the window once each stream has a sample since then.
    TelemetrySession::DeliveryMark telemetry_mark;
  };
  // The counters re-read when a rollback ended (counter_categories() below).
  struct CounterReread {
    HeldSnapshot merged;  // post_ with the re-read categories; a null document: nothing re-read
    std::vector<std::string> details;
  };
  // settle-restored: rounds of the restore verification until one holds; the last round starts
  // at the change's settle bound. Leaves the round the restored gates record in
  // restore_round_.
  void settle_restored(GateRecord& record);
  RestoreRound restore_round(const ProbeContext& context,
                             std::chrono::steady_clock::time_point settle_started);
  // The parts of `document` (device -> snapshot categories) that do not match the baseline
  // under compare-restored's rules; waived results match.
  std::map<std::string, std::set<std::string>> differing_parts(const HeldSnapshot& snapshot);
  // Before the rounds: re-collects only the parts the post snapshot found different from the
  // baseline (the fault's footprint), every kSettlePollInterval, until they match again or the
  // settle bound passes. It proves nothing (the rounds do); it only saves a round taken before
  // the fabric converged. Returns a line for the record; empty when there was nothing to watch.
  // Its first look also re-reads `counters` on every device in scope (one partial snapshot
  // instead of two that would take turns on the same sessions) into `reread`, which stays
  // empty when no look took them (nothing to watch, no settle time).
  std::string watch_fault_footprint(std::chrono::steady_clock::time_point settle_started,
                                    Duration bound, const std::set<std::string>& counters,
                                    CounterReread& reread);
  // Why a round's evidence does not prove the baseline (empty: it does), with the same rules
  // the restored gates apply.
  std::string why_round_does_not_hold(const RestoreRound& round);
  // The comparison of a snapshot with pre under the run's rule sets and exceptions; null with
  // `problems` filled when it cannot run.
  std::optional<compare::Report> compare_with_pre(const nlohmann::json& after,
                                                  const DeviceRouteTables& after_routes,
                                                  const std::string& label,
                                                  bool with_expected_differences,
                                                  std::vector<std::string>& problems);
  void compare(GateRecord& record, const HeldSnapshot& after, const std::string& label,
               bool with_expected_differences);
  void roll_back(GateRecord& record);
  // Re-reads the categories `increase` rules judge (BFD flaps, drops) once the rollback ended:
  // compare-restored counts from there (counters_after_rollback_), so a flap the rollback
  // itself caused on its way back is not read as a restore that did not hold. The re-read is
  // the first look of settle-restored's watch (watch_fault_footprint()), or alone without one.
  std::set<std::string> counter_categories();
  // The re-read alone, and the reference taken from a partial snapshot that holds them.
  CounterReread reread_counters(const std::set<std::string>& categories);
  CounterReread counters_from(const TakenSnapshot& part, const std::set<std::string>& categories);
  void start_watch(GateRecord& record);
  void stop_watch(GateRecord& record);
  // The telemetry layer: streams from before the first step; the during window ends after
  // acceptance. When the run already goes the rollback way the streams keep running, and a
  // rollback window ends after restored-probes; otherwise they close after acceptance, and a
  // rollback decided later (compare, rehearse, recover) opens fresh streams before rolling back.
  enum class AfterAcceptance { close_streams, keep_streaming };
  void start_telemetry(GateRecord& record);
  void stop_telemetry(GateRecord& record, AfterAcceptance then);
  void begin_rollback_telemetry();
  void stop_rollback_telemetry(GateRecord& record);

  void note_first_failure(const GateRecord& record);
  void diagnose();
  // Ends the run (silence, safeguards, diagnosis), writes the reports and seals the bundle;
  // never throws, never leaves exit 0 with a bundle that lacks a file or its manifest.
  void write_outputs(RunOutcome& outcome);
  void end_run(RunOutcome& outcome);
  ReportContext write_reports(RunOutcome& outcome);
  // Exit 5: which devices may still be changed and the `fabgate recover` command.
  void name_the_way_back(RunOutcome& outcome);
  // The recovery gates (rollback, settle, restored snapshot, compare with pre, probes); sets
  // exit code and device state; true when the baseline was proven.
  bool restore_and_verify();
  // Exit code and device state from the recovery gates' verdicts.
  bool conclude_restore();
  // The device-locks gate (not in plan): no two runs touch one device at once.
  void lock_devices();
  // Before the controller rolls back: disarm the confirm timers; a device that already
  // reverted by its timer is not rolled back a second time.
  void disarm_before_rollback();
  // Releases the locks unless the devices were left NOT RESTORED: then they stay locked, so no
  // other run piles a change onto a broken device before a human looks.
  void finish_safeguards(RunOutcome& outcome);
  void finish_budgets(RunOutcome& outcome);

  const intent::IntentRepository& repository_;
  const intent::Change& change_;
  Collaborators with_;
  PipelineOptions options_;

  RunOutcome outcome_;
  // What coordination cost the run, for its manifest: etcd's calls counted from here (the run
  // starts with the pipeline) to the manifest, on every thread and on the run's own.
  const etcd::CallTally etcd_in_process_at_start_ = etcd::calls_in_process();
  const etcd::CallTally etcd_on_thread_at_start_ = etcd::calls_on_this_thread();
  const std::chrono::steady_clock::time_point constructed_ = std::chrono::steady_clock::now();
  std::vector<const intent::Device*> scope_;  // devices snapshotted and compared
  HeldSnapshot pre_, post_, restored_;
  HeldSnapshot counters_after_rollback_;  // post_ with the counter categories re-read
  Execution execution_;
  RollbackResult rollback_;
  std::set<std::string> reverted_by_timer_;  // devices whose confirm timer restored them
  ProbeContext probe_context_;
  std::unique_ptr<WatchSession> watch_;
  // spread-baseline's groups and shares; empty when it measured nothing usable.
  std::optional<std::vector<GroupSpread>> spread_baseline_;
  std::unique_ptr<TelemetrySession> telemetry_;
  std::optional<TimePoint> rollback_telemetry_started_;  // the rollback window's mark
  std::chrono::steady_clock::time_point started_;
  std::optional<std::chrono::steady_clock::time_point> failure_detected_;
  // When the first rollback command was handed to its device, and when the first restore round
  // that held ended (reset if a later round did not hold): the restore's parts.
  std::optional<std::chrono::steady_clock::time_point> rollback_sent_;
  std::optional<std::chrono::steady_clock::time_point> restore_first_held_;
  std::optional<RestoreRound> restore_round_;  // the round the restored gates record
  // When the first round of the restore verification that held (and stayed held) ended: from
  // then on, a state change on the telemetry streams is a departure from the restored state.
  std::optional<TimePoint> restore_held_at_;
  // Gates skipped because the change does not want them (intent not_wanted): restored-probes
  // skipped so does not leave the restore unverified.
  std::set<std::string> not_wanted_gates_;
  // pre_ as the comparison reads it, parsed on first use (pre_ does not change after that).
  std::shared_ptr<Result<compare::Snapshot>> pre_parsed_;
  TimePoint run_started_at_ = now_utc();  // the change window's start for promql and alerts
  std::string silence_id_;                // the change-window silence while it is active
  std::set<std::string> fault_gates_;     // kFaultThrowInGate's gates; empty: no fault
  bool interruption_noted_ = false;       // a gate has recorded the signal
  bool lease_loss_noted_ = false;         // a gate has recorded the lease fence closing
  bool rollback_started_ = false;         // restore_and_verify() began
  nlohmann::json layer_recovery_;         // report.html's model, for the manifest
};

}  // namespace fabgate::pipeline
