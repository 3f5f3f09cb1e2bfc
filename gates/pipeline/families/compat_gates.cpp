// Gates window and compat: the maintenance window and the software/firmware matrix.

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

void Pipeline::check_window(GateRecord& record) {
  if (!change_.window) {
    record.verdict = Verdict::pass;
    record.summary = "no maintenance window declared";
    return;
  }
  const auto& window = *change_.window;
  bool inside = options_.now >= window.start && options_.now < window.end;
  record.verdict = inside ? Verdict::pass : Verdict::fail;
  record.summary = std::string(inside ? "inside" : "outside") + " the window " +
                   format_utc(window.start) + " .. " + format_utc(window.end) + " (now " +
                   format_utc(options_.now) + ")";
}

void Pipeline::check_compat(GateRecord& record) {
  // Judges the identity the pre-change snapshot collected for every target against the
  // compatibility matrix committed at <policies>/compat.yaml (docs/compat.md). A target without
  // identity is no-evidence with or without a matrix: a version gate without identity would be
  // a pass without evidence. Identity counts only when its source collected it, and with a
  // matrix a target whose platform it does not list is no-evidence too: nobody said which
  // versions that platform is qualified with.
  const std::string matrix_path = repository_.settings.policies_dir + "/compat.yaml";
  std::optional<compat::Matrix> matrix;
  if (auto text = repository_.policy_texts.find(matrix_path);
      text != repository_.policy_texts.end()) {
    auto loaded = compat::load_matrix(text->second, matrix_path);
    if (!loaded.ok()) {
      // validate, plan and apply reject a bad matrix before the pipeline (exit 2); should one
      // get here anyway, nothing was proven.
      record.verdict = Verdict::no_evidence;
      record.summary = loaded.error().message;
      record.details = loaded.error().details;
      return;
    }
    matrix = std::move(loaded.value());
  }
  static const nlohmann::json kNoDevices = nlohmann::json::object();
  const auto& devices = pre_.has_devices() ? pre_.document.at("devices") : kNoDevices;
  std::size_t without_identity = 0, checked_targets = 0, outside = 0, unproven = 0;
  std::map<std::string, std::vector<std::string>> unlisted;  // platform -> targets
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& target : change_.targets) {
    auto entry = devices.find(target);
    if (entry == devices.end() || !compat::identity_collected(*entry)) {
      ++without_identity;
      record.details.push_back(target + ": no identity collected (hostname, OS, versions)");
      continue;
    }
    if (!matrix) continue;
    const intent::Device* device = repository_.inventory.find(target);
    std::string platform = device ? device->platform : std::string();
    if (!matrix->find(platform)) {
      unlisted[platform].push_back(target);
      continue;
    }
    ++checked_targets;
    for (const auto& finding :
         compat::check_identity(*matrix, target, platform, entry->at("identity"))) {
      outside += finding.verdict == compat::FindingVerdict::fail;
      unproven += finding.verdict == compat::FindingVerdict::no_evidence;
      if (finding.verdict != compat::FindingVerdict::pass)
        record.details.push_back(finding.to_line());
      findings.push_back(compat::to_json(finding));
    }
  }
  const bool without_evidence = unproven || without_identity || !unlisted.empty();
  record.verdict = outside            ? Verdict::fail
                   : without_evidence ? Verdict::no_evidence
                                      : Verdict::pass;
  if (!matrix) {
    // Identity collected is not a version checked: without a matrix this gate makes no real
    // check, and that proves nothing unless the change says on purpose that it wants none.
    auto not_wanted = change_.not_wanted.find("compat");
    if (not_wanted != change_.not_wanted.end()) {
      record.verdict = Verdict::skipped;
      record.summary = "not wanted by the change: " + not_wanted->second + " (0 versions checked)";
      return;
    }
    if (!outside) record.verdict = Verdict::no_evidence;
    for (const auto& target : change_.targets)
      if (devices.contains(target) && compat::identity_collected(devices.at(target)))
        record.details.push_back(target + ": no version checked: no compatibility matrix (" +
                                 matrix_path + ")");
    record.summary = without_identity
                         ? "identity missing on " + count_of(without_identity, "target")
                         : "identity collected for " + count_of(change_.targets.size(), "target");
    record.summary +=
        "; no compatibility matrix (" + matrix_path + "), so no version was checked: 0 real checks";
    record.details.push_back(
        "add " + matrix_path +
        " (docs/compat.md), or say why the change needs none: not_wanted: {compat: \"...\"}");
    return;
  }
  if (change_.not_wanted.contains("compat"))
    record.details.push_back("not_wanted.compat does not apply: " + matrix_path +
                             " exists, and a change does not set aside the repository's policy");
  std::vector<std::string> parts;
  if (outside) parts.push_back(count_of(outside, "version") + " outside " + matrix_path);
  if (unproven) parts.push_back(count_of(unproven, "required version") + " without evidence");
  if (without_identity)
    parts.push_back("identity missing on " + count_of(without_identity, "target"));
  // A platform the matrix does not list was never qualified: listing it with nothing under it
  // is how a matrix says that nothing is required of it.
  nlohmann::json unlisted_json = nlohmann::json::object();
  for (const auto& [platform, targets] : unlisted) {
    std::string name = platform.empty() ? std::string("(none)") : platform;
    parts.push_back("platform " + name + " is not in " + matrix_path + " (" + join(targets, ", ") +
                    ")");
    for (const auto& target : targets)
      record.details.push_back(target + ": platform " + name + " is not in " + matrix_path +
                               ", so no version of it is qualified (list `" + name +
                               ":` with nothing under it to require nothing)");
    unlisted_json[platform] = targets;
  }
  if (parts.empty() && findings.empty()) {
    // Every target's platform is listed with nothing under it: the matrix says on purpose
    // that nothing is required of them. Said as what it is, not as versions within bounds.
    std::set<std::string> platforms;
    for (const auto& target : change_.targets)
      if (const intent::Device* device = repository_.inventory.find(target))
        platforms.insert(device->platform);
    parts.push_back("0 real checks: " + matrix_path + " requires nothing of platform " +
                    join({platforms.begin(), platforms.end()}, ", ") + " (" +
                    count_of(checked_targets, "target") + ")");
  } else if (parts.empty()) {
    parts.push_back(count_of(findings.size(), "version") + " on " +
                    count_of(checked_targets, "target") + " within " + matrix_path);
  }
  record.summary = join(parts, "; ");
  auto written = with_.evidence.write_json(
      "compat.json",
      {{"matrix", matrix_path}, {"findings", findings}, {"unlisted_platforms", unlisted_json}});
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
}

}  // namespace fabgate::pipeline
