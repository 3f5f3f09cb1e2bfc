#include "gates/approval/approval_judge.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "adapters/core/text.h"
#include "gates/approval/approval_file.h"
#include "gates/approval/rehearsal_record.h"

namespace fabgate::approval {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string short_digest(const std::string& digest) {
  return digest.size() > 19 ? digest.substr(0, 19) + "…" : digest;
}

}  // namespace

std::vector<std::string> approval_files(const std::vector<std::string>& given) {
  std::vector<std::string> files;
  for (const auto& path : given) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& entry : std::filesystem::directory_iterator(path, error))
      if (entry.is_regular_file() && entry.path().extension() == ".json")
        inside.push_back(entry.path().string());
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

SignedApprovalJudge::SignedApprovalJudge(ApprovalEvidence evidence, SignatureTool& tool)
    : evidence_(std::move(evidence)), tool_(tool) {}

pipeline::ApprovalJudgement SignedApprovalJudge::judge(const intent::IntentRepository& repository,
                                                       const intent::Change& change,
                                                       const std::string& plan_digest,
                                                       pipeline::RehearsalCheck rehearsal) {
  const auto& policy = repository.settings.approval;
  const std::string commit = repository.commit.id.substr(0, 12);
  auto signers = repository.policy_texts.find(policy.allowed_signers);
  const bool has_signers = signers != repository.policy_texts.end();

  pipeline::ApprovalJudgement judgement;
  std::set<std::string> counted;
  bool tool_failed = false;
  for (const auto& file : approval_files(evidence_.approvals)) {
    pipeline::ApprovalRecord record;
    record.file = file;
    auto conclude = [&](const char* outcome, std::string reason) {
      record.outcome = outcome;
      record.reason = std::move(reason);
    };
    auto approval = read_approval_file(file);
    if (!approval.ok()) {
      conclude("unreadable",
               approval.error().message + (approval.error().details.empty()
                                               ? ""
                                               : ": " + join(approval.error().details, "; ")));
      judgement.approvals.push_back(std::move(record));
      continue;
    }
    record.approver = approval->approver;
    record.digest = approval->digest;
    record.approved_at = approval->approved_at;
    if (approval->signature_namespace != kSignatureNamespace) {
      conclude("bad-signature", "signed in namespace '" + approval->signature_namespace +
                                    "', not '" + kSignatureNamespace + "'");
    } else if (!has_signers) {
      conclude("unknown-signer", policy.allowed_signers + " is not in commit " + commit +
                                     ", so no signer can be verified");
    } else if (!lists_principal(signers->second, approval->approver)) {
      conclude("unknown-signer", approval->approver + " is not listed in " +
                                     policy.allowed_signers + " at commit " + commit);
    } else if (auto verified = tool_.verify(signers->second, approval->approver,
                                            statement(*approval), approval->signature);
               !verified.ok()) {
      bool rejected = verified.error().kind == SignatureFailure::Kind::rejected;
      tool_failed = tool_failed || !rejected;
      conclude(rejected ? "bad-signature" : "not-verified",
               (rejected ? "the signature does not verify for " + approval->approver + ": "
                         : std::string("could not verify: ")) +
                   verified.error().message);
    } else if (approval->digest != plan_digest) {
      conclude("stale", "the change was modified after approval: approved " +
                            short_digest(approval->digest) + " at commit " +
                            approval->commit.substr(0, 12) + ", this plan is " +
                            short_digest(plan_digest) + " at commit " + commit);
    } else if (lower(approval->approver) == lower(repository.commit.author_email)) {
      conclude("self-approval",
               approval->approver + " authored commit " + commit + " and cannot approve it");
    } else if (counted.count(lower(approval->approver))) {
      conclude("duplicate", approval->approver + " is already counted once");
    } else {
      counted.insert(lower(approval->approver));
      record.counted = true;
      conclude("valid", "signature verified against " + policy.allowed_signers + " at commit " +
                            commit + ", approved " + approval->approved_at);
    }
    judgement.approvals.push_back(std::move(record));
  }

  const int required = policy.min_approvals;
  const int valid = static_cast<int>(counted.size());
  bool approvals_ok = valid >= required;
  for (const auto& record : judgement.approvals)
    judgement.details.push_back((record.approver.empty() ? record.file : record.approver) + ": " +
                                record.outcome + ": " + record.reason);
  if (!approvals_ok && judgement.approvals.empty())
    judgement.details.push_back(
        "no approval was given: a reviewer runs `fabgate approve <plan.json> --key <key>` and "
        "apply takes the file with --approval");
  std::string summary = required == 0 && judgement.approvals.empty()
                            ? "policy requires no approvals"
                            : std::to_string(valid) + " valid approval" + (valid == 1 ? "" : "s") +
                                  " of " + std::to_string(required) + " required";

  bool rehearsal_ok = true;
  if (rehearsal == pipeline::RehearsalCheck::per_policy && policy.require_rehearsal) {
    auto proof = check_rehearsal(evidence_.rehearsal, plan_digest, change.id);
    rehearsal_ok = proof.accepted;
    judgement.details.push_back(proof.line);
    summary += rehearsal_ok ? "; rehearsal passed" : "; no passing rehearsal of this digest";
  }
  if (approvals_ok && rehearsal_ok) {
    judgement.verdict = pipeline::Verdict::pass;
  } else {
    // When ssh-keygen itself could not run, approvals were not disproven but not proven either.
    judgement.verdict =
        tool_failed && rehearsal_ok ? pipeline::Verdict::no_evidence : pipeline::Verdict::fail;
    if (!approvals_ok) summary += " (plan digest " + short_digest(plan_digest) + ")";
  }
  // The blocking reason first, so it becomes the run's first disproven hypothesis.
  if (!rehearsal_ok && approvals_ok)
    std::rotate(judgement.details.begin(), judgement.details.end() - 1, judgement.details.end());
  judgement.summary = summary;
  return judgement;
}

}  // namespace fabgate::approval
