#include "gates/approval/approval_judge.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>

#include "adapters/core/text.h"
#include "adapters/core/time.h"
#include "gates/approval/allowed_signers.h"
#include "gates/approval/approval_copies.h"
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

// Why an approval is too old to count under approval.max_age, or nullopt when it may count.
// approved_at is signed by the approver, so a time in the future (beyond clock skew) is refused
// too: it would stretch the approval's life past the policy.
std::optional<std::string> age_problem(const std::string& approved_at,
                                       const std::optional<Duration>& max_age, TimePoint now) {
  if (!max_age) return std::nullopt;
  const std::string limit = "approval.max_age " + format_duration(*max_age);
  auto when = parse_iso8601(approved_at);
  if (!when)
    return "approved_at '" + approved_at + "' is not an ISO 8601 time, so its age under " + limit +
           " cannot be told";
  constexpr Duration kClockSkew{60'000};
  if (*when > now + kClockSkew)
    return "approved_at " + approved_at + " is in the future (now " + format_utc(now) +
           "), so its age under " + limit + " cannot be told";
  auto age = std::chrono::floor<std::chrono::seconds>(now - *when);
  if (age <= *max_age) return std::nullopt;
  return "approved " + approved_at + ", " + format_duration(age) + " ago: older than " + limit +
         "; approve the plan again";
}

// Who made the change, as the self-approval check knows them: the commit's author and
// committer e-mails, or, when approval.require_signed_commits is on, the principal whose key
// verifiably signed the commit (e-mails are whatever `git commit --author` was told).
// Every commit between the trusted ref's history and the change counts (the trusted policy
// lists them): a colleague's fix-up on top of the author's commit leaves the author an author.
struct ChangeMaker {
  std::string identity;
  std::string did;     // "authored", "committed", "signed"
  std::string commit;  // full id
};

std::vector<ChangeMaker> change_makers(const intent::IntentRepository& repository) {
  const auto& trusted = repository.trusted_policy;
  std::vector<ChangeMaker> makers;
  if (trusted && trusted->approval.require_signed_commits) {
    if (trusted->commit_signer.empty()) return {};
    makers.push_back({trusted->commit_signer, "signed", repository.commit.id});
  } else {
    makers.push_back({repository.commit.author_email, "authored", repository.commit.id});
    makers.push_back({repository.commit.committer_email, "committed", repository.commit.id});
  }
  // The other commits of the change: their e-mails are all that is known of them (with signed
  // commits only the change's own commit is verified; its other makers still may not approve).
  if (trusted)
    for (const auto& maker : trusted->change_makers)
      if (maker.commit != repository.commit.id)
        makers.push_back({maker.email, maker.did, maker.commit});
  return makers;
}

// Whether the approval comes from whoever made the change: by the principal it was signed as,
// by the very key that signed the commit, or, because one key may be listed under several
// principals, by its key also verifying for that person's principal. A failure means
// ssh-keygen could not answer, which proves neither.
Expected<std::optional<std::string>, SignatureFailure> own_change(
    const intent::IntentRepository& repository, const AllowedSigners& signers,
    const SignedApproval& approval, const std::string& approval_key, SignatureTool& tool) {
  const std::string short_commit = repository.commit.id.substr(0, 12);
  const auto people = change_makers(repository);
  for (const auto& [identity, did, made] : people)
    if (!identity.empty() && lower(approval.approver) == lower(identity))
      return std::optional<std::string>(
          approval.approver + " " + did + " commit " + made.substr(0, 12) +
          (made == repository.commit.id ? "" : " of this change (" + short_commit + ")") +
          " and cannot approve it");
  const auto& trusted = repository.trusted_policy;
  if (trusted && trusted->approval.require_signed_commits && !trusted->commit_signing_key.empty() &&
      approval_key == trusted->commit_signing_key)
    return std::optional<std::string>("the key " + approval_key + " that signed as " +
                                      approval.approver + " also signed commit " + short_commit +
                                      " (as " + trusted->commit_signer +
                                      "); a change's signer cannot approve it");
  for (const auto& principal : signers.principals()) {
    if (principal == approval.approver) continue;
    for (const auto& [identity, did, made] : people) {
      if (identity.empty() || lower(principal) != lower(identity)) continue;
      auto also =
          tool.verify(signers.usable_text(), principal, statement(approval), approval.signature);
      if (also.ok())
        return std::optional<std::string>(
            "the key " + also->key_fingerprint + " that signed as " + approval.approver +
            " is also listed for " + principal + ", who " + did + " commit " + made.substr(0, 12) +
            "; a change's author or committer cannot approve it under another name");
      if (also.error().kind != SignatureFailure::Kind::rejected) return also.error();
    }
  }
  return std::optional<std::string>();
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
  // The policy and allowed_signers come from the trusted ref when the command read one
  // (always, for apply and rehearse), never from the change's own commit.
  const auto& policy = repository.approval_policy();
  const auto& trusted = repository.trusted_policy;
  const std::string commit = repository.commit.id.substr(0, 12);
  const std::string policy_commit = trusted ? trusted->commit.substr(0, 12) : commit;
  std::optional<std::string> signers_file;
  if (trusted) {
    signers_file = trusted->allowed_signers;
  } else if (auto it = repository.policy_texts.find(policy.allowed_signers);
             it != repository.policy_texts.end()) {
    signers_file = it->second;
  }
  const bool has_signers = signers_file.has_value();
  const AllowedSigners signers(has_signers ? *signers_file : std::string());
  const TimePoint now = now_utc();

  pipeline::ApprovalJudgement judgement;
  std::map<std::string, std::string> counted;  // key fingerprint -> the principal it counted as
  bool tool_failed = false;
  for (const auto& file : approval_files(evidence_.approvals)) {
    pipeline::ApprovalRecord record;
    record.file = file;
    auto conclude = [&](const char* outcome, std::string reason) {
      record.outcome = outcome;
      record.reason = std::move(reason);
    };
    // Read once (no link followed); these bytes are judged, and they, never the file opened
    // again, are what the pipeline copies into the bundle (record.content).
    auto bytes = read_approval_bytes(file);
    auto approval =
        bytes.ok() ? parse_approval(file, bytes.value()) : Result<SignedApproval>(bytes.error());
    if (approval.ok()) record.content = bytes.value();
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
    std::optional<WildcardLine> wildcard;
    if (approval->signature_namespace != kSignatureNamespace) {
      conclude("bad-signature", "signed in namespace '" + approval->signature_namespace +
                                    "', not '" + kSignatureNamespace + "'");
    } else if (!has_signers) {
      conclude("unknown-signer", policy.allowed_signers + " is not in commit " + policy_commit +
                                     ", so no signer can be verified");
    } else if (!signers.lists(approval->approver) &&
               (wildcard = signers.wildcard_line_for(approval->approver))) {
      conclude("wildcard-signer",
               policy.allowed_signers + ":" + std::to_string(wildcard->line) +
                   ": principal pattern '" + wildcard->principals + "' at commit " + policy_commit +
                   " holds a wildcard (*, ? or !), which approvals do not accept; list " +
                   approval->approver + " by its exact principal");
    } else if (!signers.lists(approval->approver)) {
      conclude("unknown-signer", approval->approver + " is not listed in " +
                                     policy.allowed_signers + " at commit " + policy_commit);
    } else if (auto verified = tool_.verify(signers.usable_text(), approval->approver,
                                            statement(*approval), approval->signature);
               !verified.ok()) {
      bool rejected = verified.error().kind == SignatureFailure::Kind::rejected;
      tool_failed = tool_failed || !rejected;
      conclude(rejected ? "bad-signature" : "not-verified",
               (rejected ? "the signature does not verify for " + approval->approver + ": "
                         : std::string("could not verify: ")) +
                   verified.error().message);
    } else if (record.key = verified->key_fingerprint;  // proven: recorded whatever follows
               approval->digest != plan_digest) {
      conclude("stale", "the change was modified after approval: approved " +
                            short_digest(approval->digest) + " at commit " +
                            approval->commit.substr(0, 12) + ", this plan is " +
                            short_digest(plan_digest) + " at commit " + commit);
    } else if (auto too_old = age_problem(approval->approved_at, policy.max_age, now)) {
      conclude("expired", *too_old);
    } else if (trusted && !trusted->change_makers_problem.empty()) {
      conclude("not-verified", trusted->change_makers_problem);
    } else if (auto own = own_change(repository, signers, *approval, record.key, tool_);
               !own.ok()) {
      tool_failed = true;
      conclude("not-verified",
               "could not tell whether the signing key is the author's or "
               "committer's: " +
                   own.error().message);
    } else if (own->has_value()) {
      conclude("self-approval", **own);
    } else if (auto first = counted.find(record.key); first != counted.end()) {
      conclude("duplicate", "key " + record.key + " is already counted (as " + first->second +
                                "); one key approves once whatever principal it signs as");
    } else {
      counted.emplace(record.key, approval->approver);
      record.counted = true;
      conclude("valid", "signature by key " + record.key + " verified against " +
                            policy.allowed_signers + " at commit " + policy_commit + ", approved " +
                            approval->approved_at);
    }
    judgement.approvals.push_back(std::move(record));
  }

  // A change that edits the policy it is judged by needs at least one approval under the
  // trusted policy, unless that policy lists nobody who could give one (then nothing was
  // protected by approvals to begin with).
  const bool edits_policy = trusted && !trusted->edits.empty();
  int required = policy.min_approvals;
  if (edits_policy && has_signers && !signers.principals().empty())
    required = std::max(required, 1);
  const int valid = static_cast<int>(counted.size());
  bool approvals_ok = valid >= required;
  // With approval.require_signed_commits, an unsigned or unverified commit is refused whatever
  // its approvals: without a verified signer, self-approval cannot be told.
  const bool signature_ok = !trusted || trusted->signature_problem.empty();
  if (!signature_ok) judgement.details.push_back(trusted->signature_problem);
  if (edits_policy)
    judgement.details.push_back(
        "this change edits the approval policy it is judged by (" + join(trusted->edits, "; ") +
        "): it needs " + std::to_string(required) + " approval" + (required == 1 ? "" : "s") +
        " under the policy at " + trusted->source);
  for (const auto& record : judgement.approvals)
    judgement.details.push_back((record.approver.empty() ? record.file : record.approver) + ": " +
                                record.outcome + ": " + record.reason);
  for (auto& line : non_approvals_in_folders(evidence_.approvals))
    judgement.details.push_back(std::move(line));
  if (trusted) judgement.details.push_back("approval policy from " + trusted->source);
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
    // A rehearsal counts only from a bundle signed by a key these allowed signers list (the
    // signature is in the evidence namespace, not the approvals').
    SshKeygen evidence_keygen(Duration{20'000}, "ssh-keygen", kEvidenceNamespace);
    auto proof = check_rehearsal(evidence_.rehearsal, plan_digest, change.id,
                                 {signers.usable_text(), policy.allowed_signers}, evidence_keygen);
    rehearsal_ok = proof.accepted;
    judgement.details.push_back(proof.line);
    summary += rehearsal_ok ? "; rehearsal passed" : "; no passing rehearsal of this digest";
  }
  if (!signature_ok) summary = "the change's commit is not signed by a key in allowed_signers";
  if (approvals_ok && rehearsal_ok && signature_ok) {
    judgement.verdict = pipeline::Verdict::pass;
  } else {
    // When ssh-keygen itself could not run, approvals were not disproven but not proven either.
    judgement.verdict = tool_failed && rehearsal_ok && signature_ok ? pipeline::Verdict::no_evidence
                                                                    : pipeline::Verdict::fail;
    if (!approvals_ok) summary += " (plan digest " + short_digest(plan_digest) + ")";
  }
  // The blocking reason first, so it becomes the run's first disproven hypothesis.
  if (!rehearsal_ok && approvals_ok)
    std::rotate(judgement.details.begin(), judgement.details.end() - 1, judgement.details.end());
  judgement.summary = summary;
  return judgement;
}

}  // namespace fabgate::approval
