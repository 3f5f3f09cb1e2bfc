// Gates rollback-plan and approval, and review.md's rehearsal diffs (plan --rehearsal).

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

void Pipeline::check_rollback_plan(GateRecord& record) {
  std::set<std::string> stepped, undone;
  for (const auto& step : change_.steps) stepped.insert(step.device);
  for (const auto& step : change_.rollback) undone.insert(step.device);
  for (const auto& device : stepped)
    if (!undone.count(device))
      record.details.push_back(device + " has steps but no rollback steps");
  if (!with_.gnmi)
    for (const auto* list : {&change_.steps, &change_.rollback})
      for (const auto& step : *list)
        if (step.run.empty())
          record.details.push_back(step.device +
                                   ": gNMI steps are not executable without a gNMI client");
  record.verdict = record.details.empty() ? Verdict::pass : Verdict::fail;
  record.summary = record.details.empty() ? count_of(change_.rollback.size(), "rollback step") +
                                                " for " + count_of(stepped.size(), "device")
                                          : "the change cannot be undone as written";
}

void Pipeline::check_approval(GateRecord& record) {
  // The policy from the trusted ref (docs/approvals.md), not from the change's own commit.
  const auto& policy = repository_.approval_policy();
  const auto& trusted = repository_.trusted_policy;
  // plan only says what apply will need; approvals are proven when something is about to run.
  if (options_.mode == Mode::plan) {
    record.verdict = Verdict::pass;
    record.summary =
        policy.min_approvals == 0
            ? "policy requires no approvals"
            : "policy requires " +
                  count_of(static_cast<std::size_t>(policy.min_approvals), "approval") +
                  " of this plan's digest (needed before apply)";
    if (policy.min_approvals == 0 && trusted && !trusted->edits.empty())
      record.summary =
          "this change edits the approval policy: apply needs an approval of this plan's digest";
    if (policy.require_rehearsal) record.summary += "; a passing rehearsal is required";
    record.details.push_back("plan digest: " + plan_digest(repository_, change_));
    if (trusted) {
      record.details.push_back("approval policy from " + trusted->source);
      if (!trusted->edits.empty())
        record.details.push_back(
            "this change edits the approval policy it is judged by (" + join(trusted->edits, "; ") +
            "): apply needs at least one approval under the policy at " + trusted->source);
      if (!trusted->signature_problem.empty())
        record.details.push_back(trusted->signature_problem + " (apply will refuse it)");
    }
    return;
  }
  if (options_.approval_judge) {
    auto judgement = options_.approval_judge->judge(
        repository_, change_, plan_digest(repository_, change_),
        options_.mode == Mode::rehearse || options_.mode == Mode::twin
            ? RehearsalCheck::not_applicable
                                        : RehearsalCheck::per_policy);
    record.verdict = judgement.verdict;
    record.summary = std::move(judgement.summary);
    record.details = std::move(judgement.details);
    outcome_.approvals = std::move(judgement.approvals);
    copy_approvals_into_bundle(record);
    return;
  }
  bool needs_rehearsal = policy.require_rehearsal && options_.mode == Mode::apply;
  if (policy.min_approvals == 0 && !needs_rehearsal) {
    record.verdict = Verdict::pass;
    record.summary = "policy requires no approvals";
    return;
  }
  record.verdict = Verdict::fail;
  record.summary = "policy requires approvals or a rehearsal, and nothing can prove them";
  record.details.push_back("approvals required: " + std::to_string(policy.min_approvals) +
                           ", valid: 0" + (needs_rehearsal ? "; rehearsal required: none" : ""));
}

void Pipeline::copy_approvals_into_bundle(GateRecord& record) {
  // Approvals are copied as they are, signature included: the manifest then lists and hashes
  // them, and the bundle still proves what was approved after the file given (often in /tmp)
  // is gone. What is copied is the content the judge read and judged (ApprovalRecord::content),
  // never the file opened again by its path: a file swapped after it was judged cannot put
  // another file into the evidence. A file that did not parse as an approval has no content
  // and is not copied; the judge already recorded why it did not count.
  std::size_t index = 0;
  for (auto& approval : outcome_.approvals) {
    ++index;
    if (approval.content.empty()) continue;
    std::string name = std::filesystem::path(approval.file).filename().string();
    if (name.empty() || name.front() == '.') name = "approval" + name;
    const std::string copy = "approvals/" + std::to_string(index) + "-" + name;
    auto written = with_.evidence.write_signed_copy(copy, approval.content);  // byte for byte
    if (!written.ok()) {
      record.details.push_back("evidence: " + written.error().message);
      continue;
    }
    approval.bundle_copy = copy;
  }
}

void Pipeline::read_rehearsal_config_diffs() {
  std::filesystem::path given = options_.rehearsal_for_review;
  std::filesystem::path bundle = std::filesystem::is_directory(given) ? given : given.parent_path();
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  };
  nlohmann::json record = read(bundle / "rehearsal.json");
  if (!record.is_object() || !record.contains("digest")) {
    outcome_.config_deltas_refused =
        (bundle / "rehearsal.json").string() + " is missing or not a rehearsal record";
    return;
  }
  std::string digest = plan_digest(repository_, change_);
  if (record["digest"] != digest) {
    outcome_.config_deltas_refused = "the rehearsal in " + bundle.string() + " is of " +
                                     record["digest"].dump() + ", not of this plan (" + digest +
                                     "): its diffs are not shown";
    return;
  }
  nlohmann::json pre = read(bundle / "snapshots/pre.json");
  if (!pre.is_object()) {
    outcome_.config_deltas_refused = (bundle / "snapshots/pre.json").string() + " is unreadable";
    return;
  }
  for (const char* later : {"post", "restored"}) {
    nlohmann::json snapshot = read(bundle / ("snapshots/" + std::string(later) + ".json"));
    for (auto& delta : config_deltas(pre, snapshot.is_object() ? snapshot : nlohmann::json(), later,
                                     with_.evidence.redactor()))
      outcome_.config_deltas.push_back(std::move(delta));
  }
  outcome_.config_deltas_from = "rehearsal " + bundle.string();
}

}  // namespace fabgate::pipeline
