#pragma once

// The approval gate's real judge: signed approval files verified with ssh-keygen against the
// allowed_signers file at the intent commit, counted under the repository's approval policy,
// and the rehearsal record when the policy requires one.

#include <string>
#include <vector>

#include "gates/approval/signature_tool.h"
#include "gates/pipeline/families/approval_gate.h"

namespace fabgate::approval {

struct ApprovalEvidence {
  std::vector<std::string> approvals;  // approval files, or folders of *.json approval files
  std::string rehearsal;               // rehearsal.json or its bundle folder; "" when none
};

// Counting rules (docs/approvals.md):
//   - the signature must verify for its principal under allowed_signers at the intent commit;
//     a principal that file does not list exactly is an unknown signer, and lines whose
//     principal pattern holds a wildcard (*, ? or !) are refused (wildcard-signer);
//   - an approval of another digest is stale ("the change was modified after approval");
//   - one signed longer ago than approval.max_age (when set) has expired;
//   - the commit's author or committer cannot approve it, by principal or by a key that is also
//     listed for them (self-approval);
//   - a key counts once, whatever principals it signs as.
class SignedApprovalJudge final : public pipeline::ApprovalJudge {
 public:
  SignedApprovalJudge(ApprovalEvidence evidence, SignatureTool& tool);
  pipeline::ApprovalJudgement judge(const intent::IntentRepository& repository,
                                    const intent::Change& change, const std::string& plan_digest,
                                    pipeline::RehearsalCheck rehearsal) override;

 private:
  ApprovalEvidence evidence_;
  SignatureTool& tool_;
};

// Approval files named by `given`: files as they are, folders expanded to their *.json files
// in name order; a path that does not exist is kept, so the judge reports it as unreadable.
std::vector<std::string> approval_files(const std::vector<std::string>& given);

}  // namespace fabgate::approval
