// Gates baseline-probes, acceptance, restored-probes, watch-start and disruption.

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
#include "gates/pipeline/families/identity_check.h"
#include "gates/pipeline/families/monitoring.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/report_html.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/safety/interruption.h"

namespace fabgate::pipeline {

std::vector<intent::Probe> Pipeline::host_probes() const {
  // promql probes ask Prometheus; every other kind runs on its host.
  std::vector<intent::Probe> on_hosts;
  for (const auto& declared : change_.acceptance.probes)
    if (declared.kind != "promql") on_hosts.push_back(declared);
  return on_hosts;
}

void Pipeline::probe(GateRecord& record, const std::string& phase) {
  ProbeContext context = probe_context_;
  // Acceptance fails fast: a probe that failed (and is not waived by the register) decides the
  // gate, so the rollback starts now instead of after the slowest probe left (a collective's
  // timeout). The baseline runs every probe: its report is what a reader compares against.
  auto exceptions = exceptions_for(repository_);
  if (phase == "acceptance")
    context.stop_after = [&](const ProbeOutcome& outcome) {
      return outcome.verdict == Verdict::fail && !waiver_of(exceptions, outcome);
    };
  judge_probes(record, phase,
               run_probes(with_.remote, context, host_probes(), phase, &with_.observer));
}

void Pipeline::judge_probes(GateRecord& record, const std::string& phase,
                            std::vector<ProbeOutcome> outcomes) {
  for (const auto& declared : change_.acceptance.probes)
    if (declared.kind == "promql") probe_promql(declared, phase, outcomes);
  nlohmann::json document = nlohmann::json::array();
  std::size_t passed = 0;
  record.verdict = Verdict::pass;
  // A probe that failed or had no evidence may be waived by the exceptions register, with a
  // scope naming the host and `rule: probe:<name>` (e.g. no RDMA device on a host in RMA). The
  // waiver is listed wherever the probe is.
  auto exceptions = exceptions_for(repository_);
  std::size_t waived = 0;
  for (auto& outcome : outcomes) {
    if (const auto* entry = waiver_of(exceptions, outcome)) {
      outcome.waived_by = entry->id;
      record.details.push_back("[" + outcome.layer + "] " + outcome.name + " on " + outcome.host +
                               ": " + std::string(to_string(outcome.verdict)) + " WAIVED by " +
                               entry->id + " (" + entry->owner + ", until " +
                               format_utc(entry->expiry) + "): " + outcome.reason);
      if (std::find(outcome_.exceptions_used.begin(), outcome_.exceptions_used.end(), entry->id) ==
          outcome_.exceptions_used.end())
        outcome_.exceptions_used.push_back(entry->id);
    }
    document.push_back(to_json(outcome));
    if (outcome.verdict == Verdict::pass || !outcome.waived_by.empty()) {
      ++passed;
      waived += !outcome.waived_by.empty();
    } else {
      if (record.verdict != Verdict::fail) record.verdict = outcome.verdict;
      record.details.push_back("[" + outcome.layer + "] " + outcome.name + " on " + outcome.host +
                               ": " + std::string(to_string(outcome.verdict)) + ": " +
                               outcome.reason);
    }
    auto& layer = outcome_.layers[phase][outcome.layer];
    bool counts_as_pass = outcome.verdict == Verdict::pass || !outcome.waived_by.empty();
    if (layer.is_null() || (!counts_as_pass && layer != "fail"))
      layer = counts_as_pass ? "pass" : std::string(to_string(outcome.verdict));
    outcome_.probes.push_back(outcome);
  }
  auto written = with_.evidence.write_json("probes/" + phase + ".json", document);
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
  const std::size_t real = passed - waived;  // probes that passed by themselves
  record.summary =
      std::to_string(passed) + "/" + std::to_string(outcomes.size()) + " probes passed" +
      (waived ? " (" + std::to_string(waived) + " waived, " + std::to_string(real) + " real)" : "");
  if (outcomes.empty()) {
    // A change without probes proves nothing about the service: refused rather than passed,
    // unless the change says on purpose that it has no service to probe.
    auto not_wanted = change_.not_wanted.find("probes");
    if (not_wanted != change_.not_wanted.end()) {
      record.verdict = Verdict::skipped;
      record.summary = "not wanted by the change: " + not_wanted->second + " (0 probes run)";
      not_wanted_gates_.insert(record.name);
      return;
    }
    record.verdict = Verdict::no_evidence;
    record.summary = "no probes declared: the service cannot be proven";
    record.details.push_back("no acceptance.probes: 0 real checks of the service");
    record.details.push_back(
        "declare acceptance.probes (docs/probes.md), or say why the change has no service to "
        "probe: not_wanted: {probes: \"...\"}");
  } else if (real == 0 && record.verdict == Verdict::pass) {
    // Waivers excuse probes that could not pass; they do not prove the service. With every
    // probe waived nothing was observed.
    record.verdict = Verdict::no_evidence;
    record.summary += ": every probe was waived, so no real check passed";
  }
}

void Pipeline::start_watch(GateRecord& record) {
  watch_ = std::make_unique<WatchSession>(with_.remote, probe_context_, *change_.acceptance.during);
  // The watch stops by itself after this long even if fabgate never stops it; stopping before
  // the disruption gate asks it to leaves the rest of the window unwatched (no evidence).
  const Duration needed = watch_must_outlast(change_);
  const Duration longest = std::min(needed, kWatchLimit);
  if (auto failed = watch_->start(longest)) {
    record.verdict = Verdict::no_evidence;
    record.summary = "the continuous probe could not start";
    record.details.push_back(failed->reason);
    watch_.reset();
    return;
  }
  record.verdict = Verdict::pass;
  record.summary = std::to_string(change_.acceptance.during->flows) + " flows from " +
                   change_.acceptance.during->host + " to " + change_.acceptance.during->target +
                   ", resolution " + std::to_string(change_.acceptance.during->interval.count()) +
                   " ms, stops by itself after " + format_duration(longest);
  if (longest < needed)
    record.details.push_back("the change may take " + format_duration(needed) +
                             " until the disruption gate, more " +
                             "than fabgate-probe watch's limit of " + format_duration(kWatchLimit) +
                             ": if it does, the disruption verdict is no evidence");
}

void Pipeline::stop_watch(GateRecord& record) {
  // Out of the run first: whatever stop() does, this session is stopped once (its destructor
  // ends what still runs on the hosts).
  auto watch = std::move(watch_);
  ProbeOutcome outcome = watch->stop();
  (void)with_.evidence.write_json("probes/during.json", to_json(outcome));
  outcome_.probes.push_back(outcome);
  outcome_.layers["during"]["forwarding"] = std::string(to_string(outcome.verdict));
  record.verdict = outcome.verdict;
  record.summary = outcome.reason;
  if (blocks(outcome.verdict)) record.details.push_back("[forwarding] " + outcome.reason);
}

}  // namespace fabgate::pipeline
