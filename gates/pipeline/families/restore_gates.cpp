// Gate settle-restored: the restore verification in rounds (snapshot, comparison, probes).

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

std::set<std::string> Pipeline::counter_categories() {
  std::set<std::string> categories;
  if (execution_.touched.empty() || !post_.has_devices()) return categories;
  auto rule_sets = rule_sets_for(repository_, change_);
  if (!rule_sets.ok()) return categories;  // compare-restored names the problem
  for (const auto& set : rule_sets.value())
    for (const auto& rule : set.rules)
      if (rule.op == compare::Operator::increase) categories.insert(rule.category());
  return categories;
}

Pipeline::CounterReread Pipeline::reread_counters(const std::set<std::string>& categories) {
  if (categories.empty()) return {};
  auto part = with_.snapshotter.take_counters(scope_, categories, repository_.commit.id);
  if (!part) return {};
  return counters_from(*part, categories);
}

Pipeline::CounterReread Pipeline::counters_from(const TakenSnapshot& part,
                                                const std::set<std::string>& categories) {
  CounterReread reread;
  auto written = write_snapshot_evidence(with_.evidence, "snapshots/rollback-end.json",
                                         part.document, part.routes);
  if (!written.ok()) {
    // Counters nobody can audit are no reference: compare-restored counts from post.
    reread.details.push_back("evidence: " + written.error().message);
    return reread;
  }
  // The post snapshot with each re-read category of each device replaced; a category a device
  // did not answer keeps its post value (counted from the fault's capture, as before).
  HeldSnapshot merged = post_;
  std::size_t count = 0, kept = 0;
  const auto* devices = part.document.is_object() && part.document.contains("devices")
                            ? &part.document["devices"]
                            : nullptr;
  for (const auto* device : scope_) {
    if (!merged.document["devices"].contains(device->name)) continue;
    const nlohmann::json* taken = devices && devices->is_object() && devices->contains(device->name)
                                      ? &(*devices)[device->name]
                                      : nullptr;
    for (const auto& category : categories) {
      const bool answered =
          taken && taken->is_object() &&
          holds_category(part.document, part.routes, device->name, category) &&
          taken->contains("sources") && (*taken)["sources"].is_object() &&
          (*taken)["sources"].contains(category) && (*taken)["sources"][category].is_object() &&
          (*taken)["sources"][category].value("status", "") == "ok";
      if (!answered) {
        kept += holds_category(merged.document, merged.routes, device->name, category);
        continue;
      }
      replace_category(merged, device->name, category, part.document, part.routes, false);
      ++count;
    }
  }
  reread.merged = std::move(merged);
  std::string line = "counters (" + join(std::vector<std::string>(categories.begin(),
                                                                    categories.end()),
                                         ", ") +
                     ") re-read when the rollback ended: " + std::to_string(count) +
                     " device categories (snapshots/rollback-end.json); compare-restored " +
                     "counts from there";
  if (kept > 0)
    line += ", and from the post snapshot for " + std::to_string(kept) + " not re-read";
  reread.details.push_back(line);
  for (const auto& missing : part.missing) reread.details.push_back("not re-read: " + missing);
  return reread;
}

void Pipeline::settle_restored(GateRecord& record) {
  // The restore is verified in rounds instead of after a fixed wait. Each round takes the
  // restored snapshot, compares it with the baseline and runs the probes on hosts at the same
  // time. Probes alone would not do: after spine1's rollback in the lab they passed over spine2
  // in 0.7 s while spine1's BGP routes were still missing. A round that does not hold is
  // followed by another after kSettlePollInterval, and the last one starts at the change's
  // settle bound, so a slow convergence still gets the time a fixed settle gave it.
  //
  // One matching round is one coincident sample: a session that came back and resets 3 s later
  // (or a link that renegotiates) would still read "baseline verified". So the first round that
  // holds starts a dwell (acceptance.restore_dwell): a second round this long after it must hold
  // too, and the telemetry streams must show no state change from the first round on
  // (telemetry-restored). A second round that does not hold starts the rounds again while the
  // settle bound allows; after it, that round is the one the restored gates judge (not held).
  const Duration bound = std::max(change_.acceptance.settle, Duration::zero());
  const Duration dwell = std::max(change_.acceptance.restore_dwell, Duration::zero());
  const auto start = Clock::now();
  ProbeContext at_bound = probe_context_;
  at_bound.concurrent_flows = true;  // a round lasts as long as its slowest part
  ProbeContext early = at_bound;
  early.flows_reply_timeout = kSettlePollReplyTimeout;
  // A round costs a full snapshot. First watch only what the fault changed, every
  // kSettlePollInterval, until it is back: the first round then starts about when the fabric
  // converged instead of before (a round at once after the rollback would not hold: routing
  // needs time to re-advertise). The watch's first look also re-reads the counters `increase`
  // rules judge, now that the rollback ended.
  counters_after_rollback_ = {};
  const auto counter_set = counter_categories();
  CounterReread counters;
  const std::string watched = watch_fault_footprint(start, bound, counter_set, counters);
  // No look took them (nothing to watch, no settle time): they are re-read alone.
  if (counters.details.empty()) counters = reread_counters(counter_set);
  counters_after_rollback_ = std::move(counters.merged);
  record.details.insert(record.details.end(), counters.details.begin(), counters.details.end());
  std::vector<std::string> not_held;
  std::optional<RestoreRound> first_held;  // the round that started the dwell
  std::size_t rounds = 0, first_held_number = 0;
  restore_held_at_.reset();
  restore_first_held_.reset();
  for (;;) {
    if (Interruption::abandoned()) {
      record.verdict = Verdict::fail;
      record.summary = "abandoned by a second signal before a round held";
      return;  // no round: the restored gates say the restore is not verified
    }
    const bool last = since(start) >= bound;
    RestoreRound round = restore_round(last ? at_bound : early, start);
    ++rounds;
    const bool held = round.not_held.empty();
    if (held && !first_held) restore_first_held_ = Clock::now();  // the restore's second part ends
    if (held && !first_held && dwell > Duration::zero()) {
      // The first round that holds: keep it and look again after the dwell.
      restore_held_at_ = now_utc();
      first_held = std::move(round);
      first_held_number = rounds;
      // Like the rounds' own waits, only a second signal ends it (abandoned, above).
      (void)Interruption::sleep_unless(dwell, 1);
      continue;
    }
    if (held) {
      if (!first_held) restore_held_at_ = now_utc();  // no dwell: this round is the verification
      restore_round_ = std::move(round);
      break;
    }
    if (first_held) {
      // It held, then did not: the state is still moving. Name both rounds.
      not_held.push_back(round_line(first_held_number, *first_held) + "held; the round " +
                         format_duration(dwell) + " later did not");
      first_held.reset();
      restore_held_at_.reset();
      restore_first_held_.reset();
    }
    // Only a round that started at the bound or later is the last. A round that started
    // before it and ended after it (a snapshot that takes longer than a short settle) is
    // followed by one more, started now, with the probes' own reply timeout: judging the
    // early round would report a restore as failed that had no round at the bound at all.
    if (last) {
      restore_round_ = std::move(round);
      break;
    }
    not_held.push_back(round_line(rounds, round));
    const Duration left = bound - since(start);
    if (left > Duration::zero())
      (void)Interruption::sleep_unless(std::min(kSettlePollInterval, left), 1);
  }
  const RestoreRound& kept = *restore_round_;
  outcome_.restore_dwell = dwell;
  record.verdict = Verdict::pass;
  if (kept.not_held.empty()) {
    const RestoreRound& verified_first = first_held ? *first_held : kept;
    outcome_.settle_restored = verified_first.started_after;
    record.summary = "the restore held in round " +
                     std::to_string(first_held ? first_held_number : rounds) + ", started " +
                     format_duration(verified_first.started_after) + " after the rollback";
    if (first_held)
      record.summary += ", and again in round " + std::to_string(rounds) + " " +
                        format_duration(kept.started_after - first_held->started_after) +
                        " later (dwell " + format_duration(dwell) + ")";
    else
      record.summary += " (no dwell: acceptance.restore_dwell is 0 s)";
    record.summary += "; settle bound " + format_duration(bound);
  } else {
    record.summary =
        "no round held within the settle bound of " + format_duration(bound) +
        (dwell > Duration::zero() ? " and stayed held for the dwell of " + format_duration(dwell)
                                  : std::string()) +
        "; the last round, started at +" + format_duration(kept.started_after) +
        ", is judged by the restored gates";
    not_held.push_back(round_line(rounds, kept));
  }
  // Rounds that did not hold are progress, not failures: name the first and the last.
  if (!not_held.empty()) record.details.push_back(not_held.front());
  if (not_held.size() > 2)
    record.details.push_back("(" + std::to_string(not_held.size() - 2) + " more rounds)");
  if (not_held.size() > 1) record.details.push_back(not_held.back());
  if (kept.not_held.empty()) {
    if (first_held)
      record.details.push_back(round_line(first_held_number, *first_held) +
                               "snapshot, comparison and probes held");
    record.details.push_back(round_line(rounds, kept) + "snapshot, comparison and probes held" +
                             (first_held ? " after the dwell" : ""));
  }
  if (!watched.empty()) record.details.insert(record.details.begin(), watched);
}

std::map<std::string, std::set<std::string>> Pipeline::differing_parts(
    const HeldSnapshot& snapshot) {
  std::map<std::string, std::set<std::string>> parts;
  std::vector<std::string> problems;
  auto report = compare_with_pre(snapshot.document, snapshot.routes, "restored", false, problems);
  if (!report) return parts;
  for (const auto& result : report->results) {
    if (result.verdict != compare::Verdict::fail && result.verdict != compare::Verdict::no_evidence)
      continue;
    // devices.<device>.<category>...: the category is the snapshot part to watch.
    const std::string prefix = "devices." + result.device + ".";
    if (result.device.empty() || result.path.rfind(prefix, 0) != 0) continue;
    const std::string rest = result.path.substr(prefix.size());
    parts[result.device].insert(rest.substr(0, rest.find('.')));
  }
  return parts;
}

std::string Pipeline::watch_fault_footprint(Clock::time_point settle_started, Duration bound,
                                            const std::set<std::string>& counters,
                                            CounterReread& reread) {
  if (!post_.has_devices()) return {};
  const auto footprint = differing_parts(post_);
  if (footprint.empty()) return {};
  std::vector<const intent::Device*> devices;
  std::set<std::string> categories;
  std::vector<std::string> names;
  for (const auto* device : scope_) {
    auto found = footprint.find(device->name);
    if (found == footprint.end()) continue;
    devices.push_back(device);
    categories.insert(found->second.begin(), found->second.end());
    names.push_back(device->name + " " + join({found->second.begin(), found->second.end()}, "/"));
  }
  if (devices.empty()) return {};
  const auto watch_started = Clock::now();
  std::size_t polls = 0;
  bool back = false;
  std::string unwatchable;
  while (!back && since(settle_started) < bound && !Interruption::abandoned()) {
    if (polls > 0) (void)Interruption::sleep_unless(kSettlePollInterval, 1);
    ++polls;
    std::optional<TakenSnapshot> first_look;
    if (polls == 1 && !counters.empty()) {
      // The first look: the footprint on its devices and the counters on every device, in one
      // partial snapshot (each device's commands in one batch, its vtysh ones in one vtysh).
      std::set<std::string> both = categories;
      both.insert(counters.begin(), counters.end());
      first_look = with_.snapshotter.take_counters(scope_, both, repository_.commit.id);
      if (first_look) reread = counters_from(*first_look, counters);
    }
    TakenSnapshot part =
        first_look ? std::move(*first_look)
                   : with_.snapshotter.take_categories(devices, categories, repository_.commit.id);
    if (!part.missing.empty() || !part.document.contains("devices")) continue;
    // The post snapshot with the watched parts replaced: only those can still differ.
    HeldSnapshot merged = post_;
    for (const auto* device : devices) {
      const auto& taken = part.document["devices"][device->name];
      for (const auto& category : footprint.at(device->name)) {
        // A part no source of its own collects (derived from another's output) cannot be
        // watched alone: waiting for it would last until the bound. The rounds take over.
        if (!taken.contains("sources") || !taken["sources"].contains(category)) {
          unwatchable = device->name + " " + category;
          break;
        }
        replace_category(merged, device->name, category, part.document, part.routes, true);
      }
      if (!unwatchable.empty()) break;
    }
    if (!unwatchable.empty()) break;
    auto still = differing_parts(merged);
    back = std::none_of(footprint.begin(), footprint.end(), [&](const auto& entry) {
      auto now = still.find(entry.first);
      return now != still.end() &&
             std::any_of(entry.second.begin(), entry.second.end(),
                         [&](const auto& c) { return now->second.contains(c); });
    });
  }
  if (polls == 0) return {};  // no settle time: the one round starts at once
  if (!unwatchable.empty())
    return "what the fault changed (" + join(names, ", ") + ") was not watched: " + unwatchable +
           " has no source of its own to collect alone; the rounds started at once";
  return "watched what the fault changed (" + join(names, ", ") + "): " + std::to_string(polls) +
         " partial snapshot" + (polls == 1 ? "" : "s") + " in " +
         format_duration(since(watch_started)) +
         (back ? ", until it matched the baseline; then the rounds"
               : ", without a match within the settle bound; then the last round");
}

Pipeline::RestoreRound Pipeline::restore_round(const ProbeContext& context,
                                               Clock::time_point settle_started) {
  RestoreRound round;
  round.started_after = since(settle_started);
  if (telemetry_) round.telemetry_mark = telemetry_->mark();
  // The probes on hosts run on another thread while the snapshot is taken; they have SSH
  // sessions of their own (ssh::SessionLane), so neither waits for the other on a host.
  const auto on_hosts = host_probes();
  const auto probes_started = Clock::now();
  auto probes = std::async(std::launch::async, [&] {
    auto outcomes = run_probes(with_.remote, context, on_hosts, "restored");
    return std::make_pair(std::move(outcomes), since(probes_started));
  });
  round.snapshot = with_.snapshotter.take(scope_, repository_.commit.id, &with_.observer);
  round.snapshot_took = since(probes_started);
  std::tie(round.probes, round.probes_took) = probes.get();
  round.not_held = why_round_does_not_hold(round);
  return round;
}

std::string Pipeline::why_round_does_not_hold(const RestoreRound& round) {
  if (!round.snapshot.missing.empty())
    return "snapshot: " + round.snapshot.missing.front() +
           (round.snapshot.missing.size() > 1
                ? " (+" + std::to_string(round.snapshot.missing.size() - 1) + " more)"
                : "");
  for (const auto& finding : check_identities(scope_, round.snapshot.document))
    if (finding.verdict != Verdict::pass) return "identity: " + finding.line;
  if (pre_.document.is_null()) return "no baseline to compare with";
  std::vector<std::string> problems;
  auto report = compare_with_pre(round.snapshot.document, round.snapshot.routes, "restored", false,
                                 problems);
  if (!report)
    return "comparison: " + (problems.empty() ? std::string("could not run") : problems.front());
  if (!report->accepted()) {
    std::size_t differing = report->failed;
    std::string first = report->first_disproven && !report->results.empty()
                            ? check_line(report->results[*report->first_disproven])
                            : compare::summary_line(*report);
    return "compare: " + first +
           (differing > 1 ? " (+" + std::to_string(differing - 1) + " more)" : "");
  }
  auto exceptions = exceptions_for(repository_);
  for (const auto& outcome : round.probes)
    if (outcome.verdict != Verdict::pass && !waiver_of(exceptions, outcome))
      return "probe " + outcome.name + " on " + outcome.host + ": " +
             std::string(to_string(outcome.verdict)) + ": " + outcome.reason;
  return {};
}

}  // namespace fabgate::pipeline
