#pragma once

// Where the approval policy comes from (docs/approvals.md "Where the policy comes from"): never
// from the change's own commit, whose author could lower it in the same commit, but from a
// trusted ref:
//   - the trusted ref is the repository's `main` branch, else `master`, or the ref named by
//     approval.policy_ref in fabgate.yaml at the tip of that branch; with neither branch there
//     is no trusted ref and commands that act on devices refuse (exit 2);
//   - the policy is read from the merge base of the change's commit with that ref; when the
//     commit is already on the ref, from its first parent, so a commit that edits the policy
//     is judged by the policy before it (the ref's first commit has none before it and brings
//     its own);
//   - what the change's commit edits of that policy (fabgate.yaml's approval block,
//     allowed_signers, the exceptions register) is listed in TrustedPolicy::edits;
//   - the redundancy budgets (policies/budgets.yaml) and fabgate.yaml's coordination block
//     come from the same commit, and edits of them are listed too: a change must not raise its
//     own budget or point coordination at an empty etcd (docs/coordination.md);
//   - with approval.require_signed_commits (at the trusted ref), the commit's SSH signature is
//     verified against allowed_signers there.

#include "adapters/core/result.h"
#include "gates/app/intent_loading.h"
#include "gates/app/options.h"
#include "gates/approval/signature_tool.h"
#include "gates/intent/model.h"

namespace fabgate::app {

// `commit_signatures` verifies in the "git" namespace; nullptr: signatures are not checked
// (validate, which only reports where the policy would come from). An Error (exit 2) when no
// trusted ref exists, the change shares no history with it, or the policy there is invalid.
Result<intent::TrustedPolicy> read_trusted_policy(const CommonOptions& common,
                                                  const LoadedIntent& loaded,
                                                  approval::SignatureTool* commit_signatures);

}  // namespace fabgate::app
