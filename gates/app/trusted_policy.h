#pragma once

// Where the fleet settings come from (docs/security.md "Which ref each setting is read from"):
// never from the change's own commit, whose author may be anyone who can open a pull request,
// but from a trusted ref:
//   - the trusted ref is the repository's branch refs/heads/main, else refs/heads/master (both
//     present and different: an error, since which one is reviewed cannot be told), or the
//     reference approval.policy_ref names in fabgate.yaml at that branch's tip. policy_ref is
//     a full reference name (refs/heads/…, refs/remotes/…, refs/tags/…) resolved as written,
//     with no revision shorthand, so a tag cannot stand in for a branch of the same name; with
//     neither branch there is no trusted ref and commands that act on devices refuse (exit 2);
//   - every fleet setting is read at the TIP of that ref: fabgate.yaml (credentials' SSH config
//     and known_hosts, secrets.env names, monitoring and etcd endpoints with their token and CA
//     settings, evidence and lock folders, the approval policy), the inventory (devices,
//     addresses, credentials, gNMI TLS settings), allowed_signers, the exceptions register and
//     the redundancy budgets. Where the change branched from, which its author chooses, decides
//     nothing about them;
//   - the approval counting rules (min_approvals, require_rehearsal, max_age,
//     require_signed_commits) are the stricter of the tip's and the base's: the merge base of
//     the change with the ref, or, for a commit already on the ref, its parent, so a commit
//     that lowers them is still judged by the rules before it;
//   - what the change's commits edit of the fleet settings (relative to that base) is listed in
//     TrustedPolicy::edits: such a change needs an approval, and none of its edits is used
//     before it is merged into the trusted ref;
//   - everyone who authored or committed a commit between the base and the change is listed as
//     a change maker, and none of them may approve it;
//   - with approval.require_signed_commits, the commit's SSH signature is verified against
//     allowed_signers at the trusted ref.

#include "adapters/core/result.h"
#include "gates/app/intent_loading.h"
#include "gates/app/options.h"
#include "gates/approval/signature_tool.h"
#include "gates/intent/model.h"

namespace fabgate::app {

// `commit_signatures` verifies in the "git" namespace; nullptr: signatures are not checked
// (validate, which only reports where the policy would come from). An Error (exit 2) when no
// trusted ref exists, policy_ref is not a full reference name or names none, the change shares
// no history with the ref, the ref's tip has no fabgate.yaml in the intent folder, or the
// policy there is invalid.
Result<intent::TrustedPolicy> read_trusted_policy(const CommonOptions& common,
                                                  const LoadedIntent& loaded,
                                                  approval::SignatureTool* commit_signatures);

class RunIntent;

// The intent a run acts on: the change's intent (its change files and the policies that are
// not fleet settings) from the change's commit, and every fleet file (fabgate.yaml, the
// inventory, allowed_signers, the exceptions register, the budgets) from the trusted ref's tip,
// as `trusted` names them. The loader sees one tree, so validation names problems in either
// with file:line:column, and a change whose targets are not in the trusted inventory is
// invalid (the diagnostics are in loaded().outcome). When the intent is valid, `trusted` is set
// as its repository's trusted_policy.
Result<RunIntent> read_intent_under_trusted_ref(const CommonOptions& common,
                                                const intent::TrustedPolicy& trusted);

// An intent whose fleet settings come from the trusted ref: the type the collaborators that
// reach devices, hosts, monitoring and etcd are built from (RunSetup), so a LoadedIntent read
// from a change's own commit (read_intent) cannot be handed to a run. Made only by
// read_intent_under_trusted_ref, and by commit_only_for_recovery, whose name says at its one
// call site (recover) that the trusted ref could not be used.
class RunIntent {
 public:
  const LoadedIntent& loaded() const { return loaded_; }
  const intent::IntentRepository& repository() const { return *loaded_.outcome.repository; }
  // The loaded intent itself, for a command that only reads it (approve, snapshot, status).
  LoadedIntent take() && { return std::move(loaded_); }
  // recover of a run whose change is no longer valid under the trusted ref's fleet settings (or
  // whose clone has no trusted ref): the commit's own, which the run was approved with, said
  // loudly by the caller. Only a valid intent (outcome.repository set).
  static RunIntent commit_only_for_recovery(LoadedIntent loaded) {
    return RunIntent(std::move(loaded));
  }

 private:
  explicit RunIntent(LoadedIntent loaded) : loaded_(std::move(loaded)) {}
  friend Result<RunIntent> read_intent_under_trusted_ref(const CommonOptions& common,
                                                         const intent::TrustedPolicy& trusted);
  LoadedIntent loaded_;
};

// Refuses (invalid input, exit 2) fleet file paths that resolve inside the repository's work
// tree (known_hosts, ssh config, CA, client certificate and key files, identity files): the work
// tree is the change's checkout, so a pull request would choose their content. Fleet files live
// outside the repository (an absolute or ~/ path), on the controller.
Status refuse_fleet_files_in_work_tree(const LoadedIntent& loaded);

}  // namespace fabgate::app
