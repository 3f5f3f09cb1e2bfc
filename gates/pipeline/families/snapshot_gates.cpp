// Gates snapshot-pre, snapshot-post and snapshot-restored, and the identity check they share.

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
#include "gates/pipeline/families/held_snapshot.h"
#include "gates/pipeline/families/identity_check.h"
#include "gates/pipeline/safety/interruption.h"
#include "gates/pipeline/safety/run_budgets.h"
#include "gates/pipeline/families/monitoring.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/report_html.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/families/gate_support.h"

namespace fabgate::pipeline {

void Pipeline::take_snapshot(GateRecord& record, const std::string& label, HeldSnapshot& into) {
  record_snapshot(record, label,
                  with_.snapshotter.take(scope_, repository_.commit.id, &with_.observer), into);
}

void Pipeline::record_snapshot(GateRecord& record, const std::string& label, TakenSnapshot taken,
                               HeldSnapshot& into) {
  const auto& collected = scope_;
  std::vector<std::string> missing = std::move(taken.missing);
  into = hold(std::move(taken));
  auto written = write_snapshot_evidence(with_.evidence, "snapshots/" + label + ".json",
                                         into.document, into.routes);
  if (!written.ok()) {
    // A snapshot that is not on disk cannot be audited, and a missing pre.json leaves recover
    // without a baseline: it is absent evidence, whatever the devices answered.
    record.verdict = Verdict::no_evidence;
    record.summary = "snapshots/" + label + ".json could not be written";
    record.details.push_back("evidence: " + written.error().message);
    for (auto& line : missing) record.details.push_back(std::move(line));
    return;
  }
  if (label == "pre") outcome_.configs_captured = captured_configs(into.document);
  if (label != "pre") {
    for (auto& delta :
         config_deltas(pre_.document, into.document, label, with_.evidence.redactor()))
      outcome_.config_deltas.push_back(std::move(delta));
  }
  if (missing.empty()) {
    record.verdict = Verdict::pass;
    record.summary = count_of(collected.size(), "device") + ", every source collected";
  } else {
    record.verdict = Verdict::no_evidence;
    record.summary = count_of(missing.size(), "source") + " without evidence";
    for (auto& line : missing) record.details.push_back(std::move(line));
  }
  check_identity(record, label, into.document, collected);
}

void Pipeline::check_identity(GateRecord& record, const std::string& label,
                              const nlohmann::json& snapshot,
                              const std::vector<const intent::Device*>& devices) {
  // Every snapshot, not only the baseline: an address that answers as another device after the
  // change (or after a rollback) would make post and restored describe the wrong box.
  auto findings = check_identities(devices, snapshot);
  if (findings.empty()) return;
  std::size_t wrong = 0, unproven = 0;
  nlohmann::json document = nlohmann::json::array();
  std::vector<std::string> lines;
  for (const auto& finding : findings) {
    wrong += finding.verdict == Verdict::fail;
    unproven += finding.verdict == Verdict::no_evidence;
    if (finding.verdict != Verdict::pass) lines.push_back(finding.line);
    document.push_back(to_json(finding));
  }
  // Wrong identities first: they are the headline of the gate.
  std::stable_partition(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find(" answered as ") != std::string::npos;
  });
  record.details.insert(record.details.begin(), lines.begin(), lines.end());
  auto written = with_.evidence.write_json("snapshots/" + label + "-identity.json", document);
  if (!written.ok()) {
    record.details.push_back("evidence: " + written.error().message);
    if (record.verdict == Verdict::pass) record.verdict = Verdict::no_evidence;
  }
  if (wrong) {
    record.verdict = Verdict::fail;
    record.summary =
        count_of(wrong, "device identity") + " differ from the inventory; " + record.summary;
  } else if (unproven) {
    if (record.verdict == Verdict::pass) record.verdict = Verdict::no_evidence;
    record.summary =
        count_of(unproven, "declared identity field") + " not proven; " + record.summary;
  } else {
    record.summary += "; " + count_of(findings.size(), "declared identity field") + " match";
  }
}

void Pipeline::share_baseline(GateRecord& record) {
  if (!with_.budgets || !with_.budgets->shares_journal() || record.verdict != Verdict::pass) return;
  std::ifstream in(with_.evidence.dir() / "snapshots/pre.json", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    record.verdict = Verdict::no_evidence;
    record.summary = "snapshots/pre.json cannot be read back to share it in etcd";
    return;
  }
  auto shared = with_.budgets->share_baseline(bytes);
  if (!shared.ok()) {
    record.verdict = Verdict::no_evidence;
    record.details.insert(record.details.begin(), record.summary);
    record.summary = "the baseline cannot be copied beside the shared journal: " +
                     shared.error().message +
                     "; no step is sent that recover on another controller could not verify";
    return;
  }
  if (!shared->empty()) record.details.push_back(*shared);
}

}  // namespace fabgate::pipeline
