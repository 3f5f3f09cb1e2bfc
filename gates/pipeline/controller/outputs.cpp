// The end of every run: silence and safeguards, the diagnosis, the reports and the seal. Nothing
// here throws out of write_outputs().

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
#include "gates/pipeline/families/identity_check.h"
#include "gates/pipeline/safety/interruption.h"
#include "gates/pipeline/families/monitoring.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/report_html.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/families/gate_support.h"

namespace fabgate::pipeline {

void Pipeline::finish_safeguards(RunOutcome& outcome) {
  if (!with_.safeguards) return;
  if (outcome.exit_code != ExitCode::not_restored && with_.safeguards->has_armed_timers()) {
    // A run refused after arming (the watch could not start) sent no step: a timer left
    // armed would run the rollback on an untouched device.
    GateRecord last_try;
    with_.safeguards->disarm_timers(last_try);
    if (with_.safeguards->has_armed_timers()) {
      // A timer still armed may revert its device later, after another run changed it: the
      // lock stays, so no other run starts there, and a human must look.
      outcome.exit_code = ExitCode::not_restored;
      outcome.device_state = "NOT RESTORED: a confirm timer could not be disarmed (" +
                             join(last_try.details, "; ") +
                             "); it may still revert its device, so the targets stay locked";
    }
  }
  if (outcome.exit_code == ExitCode::not_restored) {
    if (with_.safeguards->holds_locks())
      outcome.diagnosis.push_back(
          lease_lost().has_value()
              ? "the targets' device-side locks were left as they were when this run lost its "
                "coordination lease; another controller may have recovered the run since and "
                "other runs taken the devices: `fabgate status` shows who holds them now"
              : "the targets stay locked by this run because they are NOT RESTORED; once a human "
                "has repaired them, `fabgate recover` or a run with --take-over-locks takes the "
                "lock over");
  } else {
    // A run whose lease fence closed (before its first step: it lost its lease while queued)
    // sends nothing more, not even the release of its own device-side locks: say that they
    // stay, rather than let "nothing was touched" hide a lock that refuses the next run.
    const bool fenced = with_.safeguards->holds_locks() && lease_lost().has_value();
    auto released = with_.safeguards->release_locks();
    if (fenced)
      outcome.diagnosis.push_back(
          "the targets' device-side locks stay held by this run: it lost its coordination "
          "lease, after which it sends nothing to any device, not even a lock's release (" +
          join(released, "; ") + "); " +
          (outcome.exit_code == ExitCode::refused
               ? "no step was sent, so the next run there may take them over with "
                 "--take-over-locks"
               : "the next run there is refused until it takes them over with "
                 "--take-over-locks"));
  }
  (void)with_.evidence.write_json("safeguards.json", with_.safeguards->to_json());
}

void Pipeline::finish_budgets(RunOutcome& outcome) {
  if (!with_.budgets) return;
  const std::string run_id = with_.evidence.run_id();
  if (outcome.exit_code == ExitCode::not_restored) {
    with_.budgets->hand_off();
    if (with_.budgets->holds() && lease_lost().has_value())
      // Its lease lapsed: from then on other controllers saw it dead and may have recovered it
      // (recover releases the claims and locks and erases the shared journal).
      outcome.diagnosis.push_back(
          "the run's claims and device locks stay in the coordination store unless another "
          "controller recovered this run after its lease lapsed (`fabgate status` shows "
          "whether run " +
          run_id + " still holds them); while they stay, other runs that need those devices or "
          "budget groups are refused until `fabgate recover " +
          run_id + "` releases them");
    else if (with_.budgets->holds())
      outcome.diagnosis.push_back(
          "the run's claims and device locks stay in the coordination store because its "
          "targets are NOT RESTORED: other runs that need those devices or budget groups are "
          "refused until `fabgate recover " +
          run_id + "` releases them" +
          (with_.budgets->shares_journal()
               ? " (from any controller: the run's journal is shared in etcd)"
               : ""));
  } else {
    // An accepted apply leaves its change on the devices: its out_of_service targets stay
    // counted by the budgets (a drained spine), its back_in_service ones no longer are.
    const auto fate = outcome.exit_code == ExitCode::accepted && options_.mode == Mode::apply
                          ? RunBudgets::ChangeFate::kept
                          : RunBudgets::ChangeFate::not_kept;
    const bool sent_anything = !execution_.touched.empty();
    for (const auto& line :
         with_.budgets->release(run_id, fate, to_int(outcome.exit_code), sent_anything))
      if (!with_.budgets->released_ok()) outcome.device_state += "; " + line;
    // A run that may have been taken over cannot vouch for its devices: another controller
    // may have rolled them back (or be doing so) with a newer token. Once it sent anything it
    // hands off (exit 5), whatever it had concluded; a run that sent nothing changed nothing.
    if (!with_.budgets->taken_over().empty() && sent_anything) {
      with_.budgets->hand_off();
      outcome.exit_code = ExitCode::not_restored;
      outcome.device_state = "NOT RESTORED (may have been taken over: " +
                             with_.budgets->taken_over() +
                             "); what the devices hold now depends on what that controller did";
      outcome.diagnosis.push_back("the run's claims and device locks were left in the "
                                  "coordination store: `fabgate status` shows whether another "
                                  "controller is recovering run " + run_id + " or it still "
                                  "holds them, and `fabgate recover " + run_id +
                                  "` finishes it");
    }
    for (const auto& line : with_.budgets->service_changes()) outcome.device_state += "; " + line;
    if (!with_.budgets->journal_erase_problem().empty())
      outcome.diagnosis.push_back(with_.budgets->journal_erase_problem());
  }
  if (with_.budgets->wanted() || with_.budgets->holds() || with_.budgets->coordinated())
    (void)with_.evidence.write_json("coordination.json", with_.budgets->to_json());
}

// Says in words what the layers mean together, for the cases operators get burned by.
void Pipeline::diagnose() {
  auto verdict_of = [&](const std::string& phase, const std::string& layer) -> std::string {
    if (!outcome_.layers.contains(phase) || !outcome_.layers[phase].contains(layer)) return "";
    return outcome_.layers[phase][layer].get<std::string>();
  };
  bool forwarding_failed = verdict_of("acceptance", "forwarding") == "fail" ||
                           verdict_of("during", "forwarding") == "fail";
  bool transport_failed = verdict_of("acceptance", "transport") == "fail";
  std::string control = verdict_of("post-compare", "control-plane");
  std::string link = verdict_of("post-compare", "link");
  if ((forwarding_failed || transport_failed) && control == "pass") {
    outcome_.diagnosis.push_back(
        std::string("control plane held while ") +
        (forwarding_failed ? "forwarding" : "transport") +
        " failed: every BGP session check held (no session or prefix count changed beyond what "
        "the change declared)" +
        (link == "pass" ? " and so did every link check" : "") +
        ", yet traffic was lost. A dashboard of sessions and links would have shown green.");
  }
  // Load spread: every packet arrived and every session held, yet the group's load now rides
  // on one member (spread_gates.cpp).
  for (const auto& gate : outcome_.gates)
    if (gate.name == "spread" && gate.verdict == Verdict::fail)
      outcome_.diagnosis.push_back(
          "every probe's packets arrived, but not spread as before: " + gate.summary +
          ". Routes list the same next hops; a next-hop weight or the hash decides where flows "
          "go, and a workload that relied on the spread runs on part of the fabric.");
  // The overlay: EVPN routes being present say nothing about frames crossing VXLAN. Only an
  // overlay probe proves the overlay; without one the report says so.
  std::string overlay = verdict_of("acceptance", "overlay");
  std::string evpn = verdict_of("post-compare", "evpn");
  if (!evpn.empty() && overlay.empty())
    outcome_.diagnosis.push_back(
        "the overlay was not probed: EVPN state (" + evpn +
        ") shows what the control plane advertises, not that frames cross VXLAN; declare a "
        "flows probe with layer: overlay to prove it.");
  if (overlay == "fail" && control == "pass") {
    bool small_passed = false, full_size_failed = false;
    for (const auto& probe : outcome_.probes) {
      if (probe.phase != "acceptance") continue;
      int size = probe.detail.is_object() && probe.detail.contains("size") &&
                         probe.detail["size"].is_number_integer()
                     ? probe.detail["size"].get<int>()
                     : 0;
      if (probe.verdict == Verdict::pass && size < 1400) small_passed = true;
      if (probe.layer == "overlay" && probe.verdict == Verdict::fail && size >= 1400)
        full_size_failed = true;
    }
    if (small_passed && full_size_failed)
      outcome_.diagnosis.push_back(
          "control plane and small packets held while full-size overlay frames were lost: "
          "every BGP, BFD and EVPN check held and small probes crossed, yet full-size frames "
          "with don't-fragment set did not cross the overlay. That is an MTU black hole: "
          "VXLAN adds 50 bytes, so the underlay must carry more than the hosts' MTU.");
    else
      outcome_.diagnosis.push_back(
          "control plane held while the overlay failed: every BGP, BFD and EVPN check held, "
          "yet frames did not cross the overlay. EVPN routes present are not a working "
          "overlay.");
  }
  if (verdict_of("restored-compare", "control-plane") == "pass" &&
      verdict_of("restored", "forwarding") == "fail")
    outcome_.diagnosis.push_back(
        "after rollback the sessions are back but forwarding is not: the baseline is NOT "
        "restored.");
}

void Pipeline::write_outputs(RunOutcome& outcome) {
  // Never throws: each part that fails is named, and the manifest is still attempted.
  auto attempt = [&](const std::string& what, const std::function<void()>& part) {
    try {
      part();
    } catch (const std::exception& error) {
      outcome.internal_errors.push_back(what + ": " + error.what());
    } catch (...) {
      outcome.internal_errors.push_back(what + ": an exception of unknown type");
    }
  };
  attempt("ending the run", [&] { end_run(outcome); });
  std::optional<ReportContext> context;
  attempt("reports", [&] { context.emplace(write_reports(outcome)); });
  // Files that could not be written: an accepted run never exits 0 with a bundle that lacks
  // them (exits 3, 4 and 5 already ask for attention and stand).
  for (auto& failure : with_.evidence.take_failed_writes())
    outcome.evidence_not_written.push_back(std::move(failure));
  if (!outcome.evidence_not_written.empty() && outcome.exit_code == ExitCode::accepted) {
    outcome.exit_code = ExitCode::internal_error;
    outcome.device_state += "; the evidence bundle is incomplete (" +
                            outcome.evidence_not_written.front() + ")";
  }
  with_.evidence.append_journal({{"event", "run-end"},
                                 {"exit_code", to_int(outcome.exit_code)},
                                 {"at", format_utc(now_utc())}});
  Status sealed = Error::internal("the manifest could not be rendered");
  attempt("manifest", [&] {
    if (!context) return;
    auto manifest = render_manifest(*context, outcome);
    manifest["layer_recovery"] = std::move(layer_recovery_);  // `fabgate evidence show` prints it
    if (!outcome.internal_errors.empty()) manifest["internal_errors"] = outcome.internal_errors;
    if (!outcome.evidence_not_written.empty())
      manifest["evidence_not_written"] = outcome.evidence_not_written;
    // A coordinated run says what coordination cost it (docs/coordination.md "Cost of a run").
    const auto in_process = etcd::calls_in_process() - etcd_in_process_at_start_;
    if (in_process.calls > 0) {
      const auto on_thread = etcd::calls_on_this_thread() - etcd_on_thread_at_start_;
      auto ms = [](std::chrono::microseconds us) {
        return static_cast<double>(us.count() / 10) / 100.0;  // 0.01 ms
      };
      manifest["etcd"] = {
          {"calls", in_process.calls},
          {"failed_calls", in_process.failed},
          {"waited_ms", ms(in_process.waited)},
          {"on_the_run_thread", {{"calls", on_thread.calls}, {"waited_ms", ms(on_thread.waited)}}},
          {"run_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - constructed_)
                         .count()}};
    }
    if (options_.annotate) options_.annotate(with_.evidence, manifest);
    sealed = with_.evidence.finish(manifest);
  });
  outcome.sealed = sealed.ok();
  if (!sealed.ok()) {
    outcome.evidence_not_written.push_back("manifest.json: " + sealed.error().message);
    if (outcome.exit_code == ExitCode::accepted) outcome.exit_code = ExitCode::internal_error;
    outcome.device_state += "; the evidence bundle is NOT sealed (" + sealed.error().message + ")";
  }
}

void Pipeline::name_the_way_back(RunOutcome& outcome) {
  // Exit 5 is a hand-off to a human: say which devices may still hold the change, and the
  // command that finishes the job once they are reachable again.
  outcome.may_still_be_changed = execution_.touched;
  outcome.recover_command = "fabgate recover " + shell_quote(with_.evidence.dir().string());
  if (!outcome.may_still_be_changed.empty())
    outcome.device_state +=
        "; may still be changed: " + join(outcome.may_still_be_changed, ", ");
  outcome.device_state += "; finish with: " + outcome.recover_command;
  // With the journal shared in etcd, a controller without this disk can finish it too.
  if (with_.budgets && with_.budgets->shares_journal())
    outcome.device_state += " (or, from any controller with the intent repository: fabgate "
                            "recover " + with_.evidence.run_id() + ")";
}

void Pipeline::end_run(RunOutcome& outcome) {
  watch_.reset();  // a continuous probe still running on its host is stopped
  expire_silence();  // whatever the outcome
  // A silence fabgate could not expire keeps the targets' alerts from paging anyone until its
  // end time. An accepted run then exits 1, so CI does not read it as a clean success; exits
  // 3, 4 and 5 stand (they already ask for attention) and name the silence too.
  if (!silence_id_.empty()) {
    std::string left = "silence " + silence_id_ +
                       " could not be expired and hides the targets' alerts until its end time: "
                       "expire it by hand";
    if (outcome.exit_code == ExitCode::accepted) outcome.exit_code = ExitCode::internal_error;
    outcome.device_state += "; " + left;
  }
  finish_safeguards(outcome);
  finish_budgets(outcome);
  if (outcome.exit_code == ExitCode::not_restored) name_the_way_back(outcome);
  diagnose();
}

ReportContext Pipeline::write_reports(RunOutcome& outcome) {
  ReportContext context{repository_,
                        change_,
                        options_.mode,
                        options_.operator_name,
                        with_.evidence.run_id(),
                        with_.evidence.redactor()};
  nlohmann::json execution = {{"steps", nlohmann::json::array()},
                              {"rollback", nlohmann::json::array()}};
  for (const auto& run : outcome.steps) execution["steps"].push_back(to_json(run));
  for (const auto& run : outcome.rollback_steps) execution["rollback"].push_back(to_json(run));
  (void)with_.evidence.write_json("execution.json", execution);
  (void)with_.evidence.write("report.md", render_report_markdown(context, outcome));
  // report.html: every value redacted before it was escaped, so the markup is written as it is.
  auto page = render_bundle_report(context, outcome, with_.evidence.dir(), pre_.document);
  (void)with_.evidence.write_redacted("report.html", page.html);
  (void)with_.evidence.write_redacted("junit.xml", render_junit(context, outcome));
  if (options_.mode == Mode::plan) {
    (void)with_.evidence.write("review.md", render_review_markdown(context, outcome));
    (void)with_.evidence.write_json("plan.json", render_plan_json(context, outcome));
  }
  if (options_.mode == Mode::rehearse)
    (void)with_.evidence.write_json("rehearsal.json", render_rehearsal_json(context, outcome));
  layer_recovery_ = to_json(page.layers);
  return context;
}

}  // namespace fabgate::pipeline
