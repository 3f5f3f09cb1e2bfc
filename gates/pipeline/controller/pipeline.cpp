// The run controller: the ordered gate list (run_gates), the recovery path (restore_and_verify)
// and the one way out of a run (run, recover, escaped). Each gate's body lives with its family
// in gates/pipeline/families/; the outputs are written in outputs.cpp.

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
#include "gates/pipeline/families/held_snapshot.h"
#include "gates/pipeline/families/identity_check.h"
#include "gates/pipeline/families/monitoring.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/report_html.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/safety/interruption.h"

namespace fabgate::pipeline {

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::plan:
      return "plan";
    case Mode::apply:
      return "apply";
    case Mode::rehearse:
      return "rehearse";
    case Mode::twin:
      return "twin";
  }
  return "apply";
}

Pipeline::Pipeline(const intent::IntentRepository& repository, const intent::Change& change,
                   Collaborators collaborators, PipelineOptions options)
    : repository_(repository),
      change_(change),
      with_(collaborators),
      options_(std::move(options)),
      probe_context_{repository.inventory, repository.settings.probes} {
  for (const auto& device : repository_.inventory.devices) scope_.push_back(&device);
  if (const char* gates = std::getenv(kFaultThrowInGate)) {
    std::string list = gates;
    std::replace(list.begin(), list.end(), ',', '\n');
    for (const auto& name : split_lines(list)) fault_gates_.insert(std::string(trim(name)));
  }
}

GateRecord& Pipeline::gate(const std::string& name, const std::function<void(GateRecord&)>& body) {
  GateRecord record;
  record.name = name;
  record.started = now_utc();
  auto start = Clock::now();
  // Nothing a gate body throws leaves the run: it is this gate failing, and the run goes on
  // down the path any failed gate takes (refused before the first step, rolled back after it).
  try {
    with_.observer.gate_started(name);
    with_.evidence.append_journal(
        {{"event", "gate-start"}, {"gate", name}, {"at", format_utc(record.started)}});
    if (fault_gates_.count(name))
      throw std::runtime_error(std::string("fault injected by ") + kFaultThrowInGate);
    body(record);
    if (with_.session_notes)
      for (auto& note : with_.session_notes()) record.details.push_back(std::move(note));
  } catch (const std::exception& error) {
    fail_on_internal_error(record, error.what());
  } catch (...) {
    fail_on_internal_error(record, "an exception of unknown type");
  }
  // A verdict is only as good as the evidence kept for it: a file this gate could not write
  // (a full disk, an I/O error) leaves it without evidence, whatever its checks said. Undoing
  // is the exception: the rollback and the disarm go ahead unrecorded (undoing matters more
  // than recording it), their verdicts rest on the devices' answers, and the restore is proven
  // by the gates after them.
  const bool records_best_effort = name == "rollback" || name == "confirm-disarm";
  for (auto& failure : with_.evidence.take_failed_writes()) {
    if (!blocks(record.verdict) && !records_best_effort) {
      record.verdict = Verdict::no_evidence;
      record.summary = "its evidence could not be written to the bundle";
    }
    record.details.push_back("evidence not kept: " + failure);
  }
  record.duration = since(start);
  with_.evidence.append_journal({{"event", "gate-end"},
                                 {"gate", name},
                                 {"verdict", std::string(to_string(record.verdict))},
                                 {"at", format_utc(now_utc())}});
  outcome_.gates.push_back(std::move(record));
  note_first_failure(outcome_.gates.back());
  if (outcome_.change_started && !failure_detected_ && blocks(outcome_.gates.back().verdict))
    failure_detected_ = Clock::now();
  try {
    with_.observer.gate_finished(outcome_.gates.back());
  } catch (...) {
    // The terminal could not show it; the record is kept and the report shows it.
  }
  return outcome_.gates.back();
}

void Pipeline::fail_on_internal_error(GateRecord& record, const std::string& what) {
  record.verdict = Verdict::fail;
  record.summary = "stopped on an internal error; treated as a failed gate";
  record.details.insert(record.details.begin(), "internal error: " + what);
  outcome_.internal_errors.push_back(record.name + ": " + what);
}

void Pipeline::note_interruption(GateRecord& record) {
  interruption_noted_ = true;
  record.verdict = Verdict::fail;
  std::string how = Interruption::first_name() + " received";
  record.details.push_back(how + ": " +
                           (outcome_.change_started || !execution_.touched.empty()
                                ? "the change is rolled back and the restore verified"
                                : "the run stops before any step is sent"));
  outcome_.interrupted_by = Interruption::first_name();
  // The handler printed the way back already; the journal keeps it too, for whoever reads the
  // bundle of a run that a SIGKILL ended a few seconds later (a CI cancel).
  const std::string recover_with = Interruption::recover_command();
  if (recover_with.empty()) return;
  record.details.push_back("if fabgate is killed before this run ends, finish it with: " +
                           recover_with);
  with_.evidence.append_journal({{"event", "interrupted"},
                                 {"signal", Interruption::first_name()},
                                 {"recover_with", recover_with},
                                 {"at", format_utc(now_utc())}});
}

void Pipeline::name_recover_command_for_signals() {
  // Formatted before any signal can need it: the handler may only copy it out.
  // plan and twin change nothing in production: nothing to recover
  if (options_.mode == Mode::plan || options_.mode == Mode::twin) return;
  Interruption::set_recover_command("fabgate recover " +
                                    shell_quote(with_.evidence.dir().string()));
}

GateRecord& Pipeline::skip(const std::string& name, const std::string& why) {
  GateRecord record;
  record.name = name;
  record.verdict = Verdict::skipped;
  record.summary = why;
  record.started = now_utc();
  outcome_.gates.push_back(std::move(record));
  with_.observer.gate_finished(outcome_.gates.back());
  return outcome_.gates.back();
}

bool Pipeline::stopped() {
  // A signal stops the run at the next gate boundary (a wait inside a gate notices it sooner):
  // it is recorded as a failed gate of its own, so the run takes the failed-gate path.
  if (Interruption::requested() && !interruption_noted_)
    gate("interrupted", [&](GateRecord& r) {
      note_interruption(r);
      r.summary = "the operator or the CI runner asked the run to stop";
    });
  // A run that may have lost its lease cannot know whether another controller now acts on
  // its devices: it stops here, and sends nothing more (FencedRemote refuses every command).
  if (auto why = lease_lost(); why && !lease_loss_noted_)
    gate("coordination-lease", [&](GateRecord& r) {
      lease_loss_noted_ = true;
      r.verdict = Verdict::fail;
      r.summary =
          "this run's lease in the coordination store may have expired: it sends "
          "nothing more to any device";
      r.details.push_back(*why);
    });
  return std::any_of(outcome_.gates.begin(), outcome_.gates.end(),
                     [](const GateRecord& record) { return blocks(record.verdict); });
}

std::optional<std::string> Pipeline::lease_lost() const {
  if (!with_.budgets) return std::nullopt;
  return with_.budgets->fence().closed();
}

void Pipeline::hand_off_after_lease_loss(const std::string& why) {
  // Nothing may be sent, so nothing is undone here: a rollback sent on a lease another
  // controller may now hold could undo that controller's recovery, or race it. The devices'
  // own confirm timers (confirm_timeout) revert them; `fabgate recover` finishes the job.
  if (watch_) gate("disruption", [&](GateRecord& r) { stop_watch(r); });
  for (const char* name :
       {"rollback", "settle-restored", "snapshot-restored", "compare-restored", "restored-probes"})
    skip(name, "not sent: the run's coordination lease may have expired");
  std::string timers;
  if (with_.safeguards && with_.safeguards->has_armed_timers())
    timers = "their confirm timers (armed for " +
             format_duration(change_.confirm_timeout.value_or(Duration::zero())) +
             ") revert them on the devices";
  else
    timers = "no confirm timer was armed: they keep the change until recovered";
  outcome_.exit_code = ExitCode::not_restored;
  outcome_.device_state =
      "NOT RESTORED: this run lost its coordination lease and sent nothing "
      "after that (" +
      why + "); " + timers;
}

void Pipeline::note_first_failure(const GateRecord& record) {
  if (!outcome_.first_disproven.empty() || !blocks(record.verdict)) return;
  outcome_.first_disproven =
      record.name + ": " + (record.details.empty() ? record.summary : record.details.front());
}

RunOutcome Pipeline::run() {
  // The only way out of a run: whatever happens below, the outputs are written and sealed
  // (write_outputs() never throws), and a throw that escaped the gates still ends in a rollback
  // or a loud NOT RESTORED naming `fabgate recover`.
  name_recover_command_for_signals();
  try {
    run_gates();
  } catch (const std::exception& error) {
    escaped(error.what());
  } catch (...) {
    escaped("an exception of unknown type");
  }
  write_outputs(outcome_);
  return outcome_;
}

void Pipeline::escaped(const std::string& what) {
  gate("controller", [&](GateRecord& r) { fail_on_internal_error(r, what); });
  if (execution_.touched.empty()) adopt_journaled_steps();
  if (rollback_started_) {
    // The exit path itself failed: what the devices hold now is unknown.
    outcome_.exit_code = ExitCode::not_restored;
    outcome_.device_state =
        "NOT RESTORED: the rollback or its verification stopped on an internal error (" + what +
        ")";
    return;
  }
  if (execution_.touched.empty()) {
    outcome_.exit_code = ExitCode::refused;
    outcome_.device_state = "untouched: no step was sent";
    return;
  }
  if (auto why = lease_lost()) {
    hand_off_after_lease_loss(*why);
    return;
  }
  try {
    roll_back_after_failure(false);
  } catch (const std::exception& again) {
    outcome_.exit_code = ExitCode::not_restored;
    outcome_.device_state =
        std::string("NOT RESTORED: the rollback stopped on an internal error (") + again.what() +
        ")";
  } catch (...) {
    outcome_.exit_code = ExitCode::not_restored;
    outcome_.device_state = "NOT RESTORED: the rollback stopped on an internal error";
  }
}

void Pipeline::adopt_journaled_steps() {
  auto journal = read_journal(with_.evidence.dir() / "journal.jsonl");
  if (!journal.ok()) return;
  auto crashed = read_crashed_run(journal.value());
  if (!crashed.ok()) return;
  for (const auto& device : crashed->touched)
    if (std::find(execution_.touched.begin(), execution_.touched.end(), device) ==
        execution_.touched.end())
      execution_.touched.push_back(device);
  if (execution_.runs.empty()) {
    execution_.runs = crashed->steps;
    outcome_.steps = crashed->steps;
  }
  if (!execution_.touched.empty()) outcome_.change_started = true;
}

void Pipeline::run_gates() {
  started_ = Clock::now();
  run_started_at_ = now_utc();
  // Everything `fabgate recover` needs to rebuild this run if the controller dies.
  RunStart start{options_.origin.repo,
                 options_.origin.ref,
                 repository_.commit.id,
                 options_.origin.intent_root,
                 change_.id,
                 std::string(to_string(options_.mode)),
                 options_.operator_name,
                 options_.origin.evidence_root,
                 with_.evidence.run_id(),
                 options_.parallelism};
  auto start_record = start.to_json();
  start_record["at"] = format_utc(now_utc());
  with_.evidence.append_journal(start_record);

  // Read-only gates: each must prove its point or the run stops before anything is touched.
  // 1. window: refuse outside the change's maintenance window.
  gate("window", [&](GateRecord& r) { check_window(r); });
  // 1b. device-locks: no other run may touch these devices until this one is finished.
  const bool touches_production = options_.mode != Mode::plan && options_.mode != Mode::twin;
  if (!stopped() && touches_production) lock_devices();
  // 1c. budgets: the fabric's redundancy budgets leave room for these targets now, counting
  //     the runs of every controller in flight (docs/coordination.md); claimed until the run
  //     ends, kept while its devices are not restored.
  if (!stopped() && touches_production && with_.budgets && with_.budgets->wanted())
    gate("budgets", [&](GateRecord& r) {
      with_.budgets->claim(r, with_.evidence.run_id(), options_.operator_name);
    });
  // 2. snapshot(pre): the baseline, from every device in the inventory.
  //    With a shared journal, the baseline is copied beside it in etcd, so that recover on
  //    another controller can verify it came back.
  if (!stopped())
    gate("snapshot-pre", [&](GateRecord& r) {
      take_snapshot(r, "pre", pre_);
      share_baseline(r);
    });
  // 3. compat: the targets' identity is known (versions are checked against it).
  if (!stopped()) gate("compat", [&](GateRecord& r) { check_compat(r); });
  // 4. rollback-plan: every device that will change can be changed back.
  if (!stopped()) gate("rollback-plan", [&](GateRecord& r) { check_rollback_plan(r); });
  // 5. approval: the plan was approved as policy requires (plan only reports it).
  if (!stopped()) gate("approval", [&](GateRecord& r) { check_approval(r); });
  // 5a. twin: the change tried first on an emulated copy of the fabric around its targets,
  //     built on the controller from the pre snapshot (docs/twin.md); a change the twin
  //     disproves never reaches production. After approval: the twin runs the change's steps
  //     on the controller, which only an approved change may do.
  if (!stopped() && twin_wanted())
    gate("twin", [&](GateRecord& r) { rehearse_on_twin(r); });
  if (options_.mode == Mode::twin) {
    outcome_.exit_code = stopped() ? ExitCode::refused : ExitCode::accepted;
    outcome_.device_state = "untouched: the change was tried on a twin only";
    return;
  }
  // 5b. freshness-pre: the monitoring observes every target now (scraped, fresh samples, the
  //     source reports the inventory's identity); otherwise its silence proves nothing.
  const auto& monitoring = repository_.settings.monitoring;
  if (!stopped() && monitoring.prometheus)
    gate("freshness-pre", [&](GateRecord& r) { check_freshness(r, "pre"); });
  // 5c. alerts-pre: no firing, unsilenced alert on a target's failure domain: a change on a
  //     device that is already alarming would be blamed for it, or hide it.
  if (!stopped() && monitoring.alertmanager)
    gate("alerts-pre", [&](GateRecord& r) { check_alerts(r, "pre"); });
  // 6. baseline-probes: the service works before the change; otherwise we would be blamed
  //    for, or hide, an existing fault.
  if (!stopped()) gate("baseline-probes", [&](GateRecord& r) { probe(r, "baseline"); });
  // 6'. spread-baseline: how the probes' packets divide over each equal-cost group they
  //     cross, read from the members' counters around a window of udp flows probes alone;
  //     recorded, not judged (an uneven spread may be the fabric's design). Only where a udp
  //     flows probe and an equal-cost group exist.
  const bool spread = options_.mode != Mode::plan && spread_applies();
  if (!stopped() && spread)
    gate("spread-baseline", [&](GateRecord& r) { measure_spread(r, "baseline"); });

  // 6a. silence: the targets' alerts are silenced for the change window (journaled; expired
  //     when the run ends, or by `fabgate recover`).
  if (!stopped() && options_.mode != Mode::plan && monitoring.alertmanager &&
      monitoring.alertmanager->silence)
    gate("silence", [&](GateRecord& r) { create_silence(r); });

  // 6b. confirm-arm: like a confirmed commit, each target gets a device-side job that rolls it
  //     back by itself unless this run confirms the change: a controller that dies or loses
  //     the device cannot leave the change behind unverified.
  if (!stopped() && options_.mode != Mode::plan && with_.safeguards && change_.confirm_timeout)
    gate("confirm-arm",
         [&](GateRecord& r) { with_.safeguards->arm_timers(r, with_.evidence.run_id()); });

  // 7. watch: a continuous probe that measures the disruption the change causes.
  if (!stopped() && options_.mode != Mode::plan && change_.acceptance.during)
    gate("watch-start", [&](GateRecord& r) { start_watch(r); });

  // 7b. telemetry-start: a gNMI stream of interface state from every target and neighbour with
  //     a gnmi endpoint, open before the first step, so a flap or an error burst the change
  //     causes is seen at the device's own timestamps (telemetry_layer.h).
  if (!stopped() && options_.mode != Mode::plan && with_.gnmi_connect) {
    auto subjects = telemetry_subjects(repository_.inventory, change_.targets, pre_.document);
    if (std::any_of(subjects.begin(), subjects.end(),
                    [](const TelemetrySubject& subject) { return subject.device->gnmi; })) {
      telemetry_ = std::make_unique<TelemetrySession>(with_.gnmi_connect, std::move(subjects),
                                                      Duration{1000}, telemetry_rules(change_));
      gate("telemetry-start", [&](GateRecord& r) { start_telemetry(r); });
    }
  }

  if (options_.mode == Mode::plan && !options_.rehearsal_for_review.empty())
    read_rehearsal_config_diffs();

  if (stopped() || options_.mode == Mode::plan) {
    outcome_.exit_code = stopped() ? ExitCode::refused : ExitCode::accepted;
    outcome_.device_state = "untouched: no step was sent";
    watch_.reset();  // stops the continuous probe on its hosts
    return;
  }

  // Change gates: from here on, any failure rolls the change back.
  // 7. execute: waves of steps within the bounds, journaled.
  gate("execute", [&](GateRecord& r) { execute(r); });
  // 8. settle: give routing time to converge before judging it.
  if (!stopped()) gate("settle", [&](GateRecord& r) { settle(r); });
  // 9. acceptance: the same probes as the baseline must pass again, and the disruption seen
  //    during the change stays within max_disruption. The post snapshot (10.) is taken on
  //    another thread meanwhile: it describes the same settled state, and when the probes
  //    fail it is the fault capture the rollback waits for.
  std::future<TakenSnapshot> post_taking;
  if (!stopped()) {
    post_taking = std::async(std::launch::async, [&] {
      return with_.snapshotter.take(scope_, repository_.commit.id, nullptr);
    });
    gate("acceptance", [&](GateRecord& r) { probe(r, "acceptance"); });
  }
  if (watch_) gate("disruption", [&](GateRecord& r) { stop_watch(r); });
  // 9'. spread: the same window after the change (the watch stopped, so only these probes
  //     send); a group the baseline saw spread that now puts nearly everything on one member,
  //     or whose shares moved far, fails at the forwarding layer unless the change declares it
  //     (compare.expected {device, path: spread}).
  if (!stopped() && spread) gate("spread", [&](GateRecord& r) { measure_spread(r, "acceptance"); });
  // 9a. telemetry: the during window ends. A run that already failed is rolled back, so its
  //     streams keep running to show what the rollback does (telemetry-restored).
  if (telemetry_)
    gate("telemetry", [&](GateRecord& r) {
      stop_telemetry(r,
                     stopped() ? AfterAcceptance::keep_streaming : AfterAcceptance::close_streams);
    });
  // 9b. freshness-post and alerts-acceptance: the monitoring still observes the targets, and
  //     no alert started firing on them during the change (silenced or not).
  if (!stopped() && monitoring.prometheus)
    gate("freshness-post", [&](GateRecord& r) { check_freshness(r, "post"); });
  if (!stopped() && monitoring.alertmanager)
    gate("alerts-acceptance", [&](GateRecord& r) { check_alerts(r, "acceptance"); });
  // 10. snapshot(post) and 11. compare: everything not declared as expected must hold. They
  //     run even when an earlier gate failed, to capture the fault before rolling back: the
  //     report then says which layers held while which failed (BGP up, flows dropped).
  //     The post snapshot covers every device in scope, also when the change already failed:
  //     a fault shows where it shows (a withdrawn VNI is missed on the other leaf, which shares
  //     no subnet with the target).
  //     An interrupted run goes straight to the rollback: no new snapshot is started for it.
  stopped();
  const bool send_nothing_more = Interruption::requested() || lease_lost();
  if (post_taking.valid() || !send_nothing_more) {
    auto& post_snapshot = gate("snapshot-post", [&](GateRecord& r) {
      if (post_taking.valid())
        record_snapshot(r, "post", post_taking.get(), post_);
      else
        take_snapshot(r, "post", post_);
    });
    if (!blocks(post_snapshot.verdict))
      gate("compare", [&](GateRecord& r) { compare(r, post_, "post", true); });
    else
      skip("compare", "the post-change snapshot lacks evidence, so nothing can be compared");
  } else {
    const std::string why = Interruption::requested() ? "interrupted" : "coordination lease lost";
    skip("snapshot-post", why + ": no new snapshot is started");
    skip("compare", why + ": nothing to compare");
  }

  bool forced = options_.mode == Mode::rehearse && !stopped();
  // 12. confirm: the change is proven, so the device-side timers must not revert it. A timer
  //     that cannot be disarmed will revert the device: then the change is not confirmed and
  //     goes the rollback way.
  if (!stopped() && !forced && with_.safeguards && with_.safeguards->has_armed_timers())
    gate("confirm", [&](GateRecord& r) {
      for (const auto& [device, state] : with_.safeguards->disarm_timers(r)) {
        // Too late: the device already rolled itself back (or tried to), so the change is
        // not in place there any more.
        r.verdict = Verdict::fail;
        r.details.push_back(device + ": the confirm timer fired (" + std::string(to_string(state)) +
                            ") before the change was confirmed; confirm_timeout is too short "
                            "for this change");
        if (state == TimerState::fired_restored) reverted_by_timer_.insert(device);
      }
    });
  if (!stopped() && !forced) {
    outcome_.exit_code = ExitCode::accepted;
    outcome_.device_state = "changed as intended and verified";
    return;
  }
  roll_back_after_failure(forced);
}

void Pipeline::roll_back_after_failure(bool forced) {
  stopped();  // records a lease loss noticed since the last gate
  if (auto why = lease_lost()) {
    hand_off_after_lease_loss(*why);
    return;
  }
  // The watch must stop before the rollback, whatever failed. (The telemetry streams, if
  // still running, go on through the rollback: restore_and_verify() ends them.)
  if (watch_) gate("disruption", [&](GateRecord& r) { stop_watch(r); });

  // Recovery: undo exactly what may have been applied, then prove the baseline came back at
  // every layer with the same evidence that admitted the change.
  if (!failure_detected_) failure_detected_ = Clock::now();  // a rehearsal's forced rollback
  disarm_before_rollback();
  bool restored = restore_and_verify();
  // A rehearsal passes when the change was accepted and its forced rollback was proven: exit 0,
  // the same code as an accepted apply, because that is what CI waits for.
  if (forced && restored) {
    outcome_.exit_code = ExitCode::accepted;
    outcome_.device_state =
        "rehearsed: the change was accepted, then rolled back; baseline verified at every layer";
  }
}

bool Pipeline::restore_and_verify() {
  rollback_started_ = true;
  // Telemetry through the rollback: the streams still running since before the change, or
  // fresh ones (rehearse, recover, a failure found after acceptance); ended below.
  begin_rollback_telemetry();
  // 12. rollback: the devices touched, last touched first.
  gate("rollback", [&](GateRecord& r) { roll_back(r); });
  // 13. settle-restored: the restore verification in rounds (settle_restored()), each a
  //     restored snapshot and the probes on hosts taken together, until one holds or the last
  //     one, started at the settle bound, was taken.
  restore_round_.reset();
  if (Interruption::abandoned())
    skip("settle-restored", "abandoned by a second signal: the restore is not verified");
  else if (!execution_.touched.empty())
    gate("settle-restored", [&](GateRecord& r) { settle_restored(r); });
  else
    restore_round_ = restore_round(probe_context_, Clock::now());  // nothing to wait for
  if (!restore_round_) {
    // No round to judge (abandoned, or the verification itself failed): nothing proves the
    // baseline, so the restore is not verified.
    for (const char* name : {"snapshot-restored", "compare-restored", "restored-probes"})
      skip(name, "no round of the restore verification was completed");
    return conclude_restore();
  }
  RestoreRound& round = *restore_round_;
  // 14. snapshot(restored) and compare restored vs pre, with no expected differences: the
  //     kept round's snapshot, recorded and judged as any snapshot is.
  auto& restored_snapshot = gate("snapshot-restored", [&](GateRecord& r) {
    record_snapshot(r, "restored", std::move(round.snapshot), restored_);
  });
  if (pre_.document.is_null())  // recover found no baseline in the bundle
    skip("compare-restored",
         "no baseline: snapshots/pre.json is missing or unreadable, so the restore cannot be "
         "verified");
  else if (!blocks(restored_snapshot.verdict))
    gate("compare-restored", [&](GateRecord& r) { compare(r, restored_, "restored", false); });
  else
    skip("compare-restored", "the restored snapshot lacks evidence, so nothing can be compared");
  // 15. probes again: forwarding restored is proven by traffic, not by sessions being up.
  gate("restored-probes", [&](GateRecord& r) {
    judge_probes(r, "restored", std::move(round.probes));
    r.details.push_back("the probes on hosts ran alongside the restored snapshot and took " +
                        format_duration(round.probes_took));
  });
  return conclude_restore();
}

bool Pipeline::conclude_restore() {
  // telemetry-restored: what the streams saw from the rollback's start (or acceptance) until
  // now. It shows the rollback's own flaps and when things came back; the gates below prove
  // the baseline. A state change after the restore verification first held (a session that
  // came back and dropped again, a link that flapped) is a departure from the restored state:
  // it fails this gate and the restore. A window the streams did not cover (no-evidence) is
  // reported only: the snapshots and probes are the proof.
  if (telemetry_) gate("telemetry-restored", [&](GateRecord& r) { stop_rollback_telemetry(r); });
  bool restored = true;
  std::vector<std::string> still_different;
  for (const auto& record : outcome_.gates) {
    bool recovery_gate = record.name == "rollback" || record.name == "snapshot-restored" ||
                         record.name == "compare-restored" || record.name == "restored-probes";
    bool departed = record.name == "telemetry-restored" && record.verdict == Verdict::fail;
    bool unverified = blocks(record.verdict) || (record.verdict == Verdict::skipped &&
                                                 !not_wanted_gates_.contains(record.name));
    if ((recovery_gate && unverified) || departed) {
      restored = false;
      for (const auto& detail : record.details)
        still_different.push_back(record.name + ": " + detail);
      if (record.details.empty()) still_different.push_back(record.name + ": " + record.summary);
    }
  }
  if (rollback_sent_ && failure_detected_ && *rollback_sent_ >= *failure_detected_)
    outcome_.detection_to_rollback_sent =
        std::chrono::duration_cast<Duration>(*rollback_sent_ - *failure_detected_);
  if (restored) {
    outcome_.detection_to_restore = since(*failure_detected_);
    if (rollback_sent_ && restore_first_held_ && *restore_first_held_ >= *rollback_sent_)
      outcome_.rollback_sent_to_verified =
          std::chrono::duration_cast<Duration>(*restore_first_held_ - *rollback_sent_);
  }
  outcome_.exit_code = restored ? ExitCode::rolled_back : ExitCode::not_restored;
  outcome_.device_state =
      restored ? "rolled back; baseline verified at every layer"
               : "NOT RESTORED: " + (still_different.empty() ? std::string("see report")
                                                             : still_different.front());
  return restored;
}

RunOutcome Pipeline::recover(const CrashedRun& crashed, const std::string& recovered_by) {
  // The same single way out as run(): recover is a rollback, so anything that escapes it
  // leaves the devices NOT RESTORED, said loudly, with the bundle sealed.
  name_recover_command_for_signals();
  try {
    recover_gates(crashed, recovered_by);
  } catch (const std::exception& error) {
    rollback_started_ = true;
    escaped(error.what());
  } catch (...) {
    rollback_started_ = true;
    escaped("an exception of unknown type");
  }
  write_outputs(outcome_);
  return outcome_;
}

void Pipeline::recover_gates(const CrashedRun& crashed, const std::string& recovered_by) {
  started_ = Clock::now();
  failure_detected_ = started_;  // the crash is the failure; recover starts restoring at once
  nlohmann::json torn = nullptr;
  if (crashed.torn)
    torn = {
        {"line", crashed.torn->line}, {"bytes", crashed.torn->bytes}, {"why", crashed.torn->why}};
  with_.evidence.append_journal({{"event", "recover-start"},
                                 {"after_record", crashed.last_sequence},
                                 {"last_event", crashed.last_event},
                                 {"torn_record_discarded", torn},
                                 {"devices", crashed.touched},
                                 {"operator", recovered_by},
                                 {"at", format_utc(now_utc())}});
  outcome_.change_started = true;
  outcome_.steps = crashed.steps;
  outcome_.first_disproven = "controller: the run died after journal record " +
                             std::to_string(crashed.last_sequence) + " (" + crashed.last_event +
                             "); finished by fabgate recover";
  execution_.touched = crashed.touched;
  // Its claims and its shared journal are this run's too (same run id). A run whose shared
  // journal is gone was recovered elsewhere (or ended): its devices are not its own any more.
  if (with_.budgets && !with_.budgets->coordinated()) {
    (void)with_.budgets->adopt(crashed.start.run_id);
  } else if (with_.budgets) {
    std::optional<std::string> gone;
    auto& journal = gate("shared-journal", [&](GateRecord& r) {
      gone = with_.budgets->adopt(crashed.start.run_id, crashed.shared_in_store
                                                            ? RunBudgets::JournalShared::yes
                                                            : RunBudgets::JournalShared::no);
      r.verdict = gone ? Verdict::fail : Verdict::pass;
      r.summary = gone ? *gone
                       : (with_.budgets->shares_journal()
                              ? "the run's journal in etcd continues with recover's records"
                              : "no journal of the run in etcd to continue");
    });
    if (gone) {
      outcome_.exit_code = ExitCode::not_restored;
      outcome_.device_state =
          "NOT RESTORED: recover did not touch the devices: " + journal.name + ": " + *gone;
      return;
    }
  }
  if (with_.safeguards) {
    // The crashed run's locks are this run's (same run id); the timers it armed are found on
    // the devices: one that already fired means the device reverted by itself.
    lock_devices();
    auto blocked = std::find_if(outcome_.gates.begin(), outcome_.gates.end(),
                                [](const GateRecord& record) { return blocks(record.verdict); });
    if (blocked != outcome_.gates.end()) {
      // Another run holds a target (in etcd or on the device), or the store could not be
      // asked: recover touches nothing it does not hold.
      outcome_.exit_code = ExitCode::not_restored;
      outcome_.device_state = "NOT RESTORED: recover did not touch the devices: " +
                              blocked->name + ": " + blocked->summary;
      return;
    }
    with_.safeguards->adopt_timers(with_.evidence.run_id(), change_.targets);
    disarm_before_rollback();
  }
  // The baseline is the run's own pre-change snapshot, as written to the bundle before any step,
  // read back with its route tables apart (a million routes as a JSON tree would cost ~700 MB).
  pre_ = read_baseline(with_.evidence.dir() / "snapshots/pre.json");
  restore_and_verify();
}

void Pipeline::lock_devices() {
  if (!with_.safeguards) return;
  // The lease outlives the longest this run can take: the change's deadline, two settles
  // (after the change and after a rollback), the confirm timer, and time for the restore
  // verification. A holder past its lease is judged dead.
  Duration lease = change_.bounds.deadline + 2 * change_.acceptance.settle +
                   change_.confirm_timeout.value_or(Duration::zero()) + Duration{15 * 60'000};
  // With coordination the targets are locked in the fabric's etcd first, under the run's
  // lease: one place where every controller's runs exclude each other, and the lock's revision
  // is the fencing token the device-side lock then records (docs/coordination.md).
  if (with_.budgets && with_.budgets->coordinated()) {
    auto& fleet = gate("fleet-locks", [&](GateRecord& r) {
      with_.budgets->lock_devices(r, with_.evidence.run_id(), options_.operator_name);
    });
    if (blocks(fleet.verdict)) return;
  }
  gate("device-locks",
       [&](GateRecord& r) { with_.safeguards->lock_targets(r, with_.evidence.run_id(), lease); });
}

void Pipeline::disarm_before_rollback() {
  if (!with_.safeguards || !with_.safeguards->has_armed_timers()) return;
  // Only the timers of devices the controller will not roll back are disarmed here (they have
  // nothing to undo). A device to be rolled back keeps its timer until its own rollback starts
  // (roll_back(): disarmed device by device), so that a rollback cut short, by the lease fence
  // or a newer run's token, leaves every device it never reached to revert by itself.
  const std::set<std::string> rolled_back_later(execution_.touched.begin(),
                                                execution_.touched.end());
  gate("confirm-disarm", [&](GateRecord& r) {
    for (const auto& [device, state] : with_.safeguards->disarm_timers_except(r, rolled_back_later))
      if (state == TimerState::fired_restored) reverted_by_timer_.insert(device);
    std::vector<std::string> kept;
    for (const auto& device : execution_.touched)
      if (with_.safeguards->timer_armed(device)) kept.push_back(device);
    if (!kept.empty())
      r.summary += "; kept armed until its own rollback starts: " + join(kept, ", ");
  });
}

}  // namespace fabgate::pipeline
