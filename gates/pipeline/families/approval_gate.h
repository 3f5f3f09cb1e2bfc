#pragma once

// The seam between the pipeline's approval gate and whatever proves approvals. The pipeline
// only knows the plan digest and the policy; the real judge (gates/approval) verifies signed
// approval files with ssh-keygen and checks a rehearsal record, and unit tests use fakes.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/intent/model.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

// What the approval gate concluded about one approval file. Every file given is listed, the
// ones that did not count with the reason, in the gate's details and in manifest.json.
struct ApprovalRecord {
  std::string file;         // as given on the command line
  std::string approver;     // the principal it claims ("" when unreadable)
  std::string digest;       // the digest it approves
  std::string approved_at;  // as signed
  std::string key;          // "SHA256:..." of the key that made the signature, once verified
  bool counted = false;     // counted toward approval.min_approvals
  std::string outcome;      // valid | unreadable | bad-signature | unknown-signer |
                            // wildcard-signer | not-verified | stale | expired | self-approval |
                            // duplicate
  std::string reason;       // in words, for people
  // The copy of the file, signature included, in the run's evidence bundle
  // ("approvals/1-alice@example.net.json"), so the bundle proves its approvals after the file
  // given is gone; "" when the file was not read as an approval (unreadable, a symbolic link,
  // not an approval): such files are listed, never copied.
  std::string bundle_copy;
  // The file's bytes exactly as the judge read and judged them, set only when they parsed as an
  // approval: the copy in the bundle is written from these bytes, never from the file opened
  // again (it may have been swapped since). Not part of to_json(): the copy is the record.
  std::string content;

  nlohmann::json to_json() const {
    return {{"file", file},
            {"approver", approver},
            {"digest", digest},
            {"approved_at", approved_at},
            {"key", key},
            {"counted", counted},
            {"outcome", outcome},
            {"reason", reason},
            {"bundle_copy", bundle_copy}};
  }
};

struct ApprovalJudgement {
  Verdict verdict = Verdict::fail;
  std::string summary;
  std::vector<std::string> details;
  std::vector<ApprovalRecord> approvals;
};

// Whether the judge also checks the rehearsal record that approval.require_rehearsal asks for:
// a rehearsal itself is what produces that record, so it is not asked for one.
enum class RehearsalCheck { per_policy, not_applicable };

class ApprovalJudge {
 public:
  virtual ~ApprovalJudge() = default;
  // Judges approvals (and, when the policy asks for it, a rehearsal record) for the change at
  // `plan_digest`.
  virtual ApprovalJudgement judge(const intent::IntentRepository& repository,
                                  const intent::Change& change, const std::string& plan_digest,
                                  RehearsalCheck rehearsal) = 0;
};

}  // namespace fabgate::pipeline
