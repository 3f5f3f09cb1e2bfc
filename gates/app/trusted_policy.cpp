#include "gates/app/trusted_policy.h"

#include <optional>

#include "adapters/core/duration.h"
#include "adapters/core/text.h"
#include "adapters/git/commit_graph.h"
#include "adapters/git/git_repository.h"
#include "gates/approval/allowed_signers.h"
#include "gates/intent/settings_reader.h"

namespace fabgate::app {
namespace {

std::string short_id(const std::string& id) {
  return id.substr(0, 12);
}

// One commit's policy: its approval settings and the texts of the files they name.
struct PolicyAt {
  bool has_settings = false;  // fabgate.yaml is there
  intent::Settings settings;
  std::optional<std::string> allowed_signers;
  std::optional<std::string> exceptions;
  std::optional<std::string> budgets;
};

std::string exceptions_path(const intent::Settings& settings) {
  return settings.policies_dir + "/exceptions.yaml";
}

std::string budgets_path(const intent::Settings& settings) {
  return settings.policies_dir + "/budgets.yaml";
}

// The policy at `commit` in the intent folder the change uses. A commit without that folder or
// without fabgate.yaml has no policy (defaults: no approvals, no signers, no exceptions).
Result<PolicyAt> policy_at(const LoadedIntent& loaded, const std::string& commit,
                           const std::string& shown) {
  PolicyAt policy;
  auto tree = git::CommitTree::open(loaded.intent_dir, commit);
  if (!tree.ok()) {
    if (tree.error().kind == git::GitFailure::Kind::no_intent_root) return policy;
    return Error::invalid_input("approval policy at " + shown + ": " + tree.error().message);
  }
  auto settings = intent::load_settings_only(tree.value(), loaded.intent_root);
  if (!settings.present) return policy;
  if (!settings.settings)
    return Error::invalid_input("approval policy at " + shown +
                                    ": fabgate.yaml there is invalid, so the approval policy "
                                    "cannot be read from it",
                                settings.diagnostics.lines());
  policy.has_settings = true;
  policy.settings = std::move(*settings.settings);
  policy.allowed_signers = tree->read(policy.settings.approval.allowed_signers);
  policy.exceptions = tree->read(exceptions_path(policy.settings));
  policy.budgets = tree->read(budgets_path(policy.settings));
  return policy;
}

std::string optional_duration(const std::optional<Duration>& value) {
  return value ? format_duration(*value) : std::string("none");
}

// What `change` edits of the policy at `base`, one line each.
std::vector<std::string> policy_edits(const PolicyAt& base, const PolicyAt& change,
                                      const std::string& root) {
  std::vector<std::string> edits;
  const auto& was = base.settings.approval;
  const auto& now = change.settings.approval;
  auto field = [&](const char* name, const std::string& before, const std::string& after) {
    if (before != after)
      edits.push_back("fabgate.yaml approval." + std::string(name) + ": " + before + " -> " +
                      after);
  };
  auto yes_no = [](bool value) { return std::string(value ? "true" : "false"); };
  field("min_approvals", std::to_string(was.min_approvals), std::to_string(now.min_approvals));
  field("require_rehearsal", yes_no(was.require_rehearsal), yes_no(now.require_rehearsal));
  field("allowed_signers", was.allowed_signers, now.allowed_signers);
  field("max_age", optional_duration(was.max_age), optional_duration(now.max_age));
  field("policy_ref", was.policy_ref.empty() ? "(main)" : was.policy_ref,
        now.policy_ref.empty() ? "(main)" : now.policy_ref);
  field("require_signed_commits", yes_no(was.require_signed_commits),
        yes_no(now.require_signed_commits));
  if (base.settings.policies_dir != change.settings.policies_dir)
    edits.push_back("fabgate.yaml policies: " + base.settings.policies_dir + " -> " +
                    change.settings.policies_dir);

  auto shown = [&](const std::string& path) { return root.empty() ? path : root + "/" + path; };
  auto file = [&](const std::string& path, const std::optional<std::string>& before,
                  const std::optional<std::string>& after) {
    if (before == after) return;
    edits.push_back(shown(path) + ": " + (!before ? "added" : !after ? "removed" : "edited"));
  };
  file(now.allowed_signers, base.allowed_signers, change.allowed_signers);
  file(exceptions_path(change.settings), base.exceptions, change.exceptions);
  file(budgets_path(change.settings), base.budgets, change.budgets);
  if (!(base.settings.coordination == change.settings.coordination))
    edits.push_back("fabgate.yaml coordination: " +
                    std::string(!base.settings.coordination     ? "added"
                                : !change.settings.coordination ? "removed"
                                                                : "edited"));
  return edits;
}

// Verifies the change's commit signature against allowed_signers at the trusted commit.
void check_commit_signature(const LoadedIntent& loaded, intent::TrustedPolicy& trusted,
                            approval::SignatureTool& tool) {
  const std::string commit = "commit " + short_id(loaded.commit.id);
  const std::string why = "approval.require_signed_commits (policy from " + trusted.source + ")";
  if (loaded.commit_signature.empty()) {
    trusted.signature_problem = commit + " is not signed, and " + why +
                                " requires an SSH-signed commit (git config gpg.format ssh; "
                                "git commit -S)";
    return;
  }
  if (loaded.commit_signature.find("-----BEGIN SSH SIGNATURE-----") == std::string::npos) {
    trusted.signature_problem = commit + " carries an OpenPGP or X.509 signature, and " + why +
                                " accepts only SSH signatures verified against allowed_signers";
    return;
  }
  if (!trusted.allowed_signers) {
    trusted.signature_problem = commit + " is signed, but " + trusted.approval.allowed_signers +
                                " is not at " + trusted.source + ", so no signer can be verified";
    return;
  }
  const approval::AllowedSigners signers(*trusted.allowed_signers);
  auto principals = tool.find_principals(signers.usable_text(), loaded.commit_signature);
  if (!principals.ok()) {
    trusted.signature_problem =
        "could not verify the signature of " + commit + ": " + principals.error().message;
    return;
  }
  if (principals->empty()) {
    trusted.signature_problem = "the key that signed " + commit + " is not listed in " +
                                trusted.approval.allowed_signers + " at " + trusted.source;
    return;
  }
  std::string last_failure;
  for (const auto& principal : principals.value()) {
    auto verified = tool.verify(signers.usable_text(), principal, loaded.commit_signed_data,
                                loaded.commit_signature);
    if (verified.ok()) {
      trusted.commit_signer = principal;
      trusted.commit_signing_key = verified->key_fingerprint;
      return;
    }
    last_failure = verified.error().message;
  }
  trusted.signature_problem = "the signature of " + commit + " does not verify against " +
                              trusted.approval.allowed_signers + " at " + trusted.source + ": " +
                              last_failure;
}

}  // namespace

Result<intent::TrustedPolicy> read_trusted_policy(const CommonOptions& common,
                                                  const LoadedIntent& loaded,
                                                  approval::SignatureTool* commit_signatures) {
  auto graph = git::CommitGraph::open(loaded.intent_dir);
  if (!graph.ok()) return Error::invalid_input(graph.error().message);

  // The trusted ref: main, else master; approval.policy_ref as that branch has it.
  std::string branch, branch_id;
  for (const char* name : {"main", "master"}) {
    auto id = graph->resolve(std::string("refs/heads/") + name);
    if (!id.ok()) continue;
    branch = name;
    branch_id = id.value();
    break;
  }
  if (branch.empty())
    return Error::invalid_input(
        "approval.policy_ref: no trusted ref to read the approval policy from: the repository at " +
            common.repo + " has neither a 'main' nor a 'master' branch",
        {"fabgate reads approval.min_approvals, allowed_signers and the exceptions register from "
         "the main branch (or the ref approval.policy_ref names in fabgate.yaml there), never "
         "from the change's own commit",
         "create the branch from the reviewed history, e.g. git branch main origin/main"});
  auto at_branch = policy_at(loaded, branch_id, branch + " (" + short_id(branch_id) + ")");
  if (!at_branch.ok()) return std::move(at_branch).error();
  std::string ref = branch;
  std::string ref_id = branch_id;
  if (const auto& named = at_branch->settings.approval.policy_ref; !named.empty()) {
    auto id = graph->resolve(named);
    if (!id.ok())
      return Error::invalid_input("approval.policy_ref '" + named + "' (fabgate.yaml at " + branch +
                                  ") names no commit: " + id.error().message);
    ref = named;
    ref_id = id.value();
  }

  // The commit the policy is read from.
  const std::string& commit = loaded.commit.id;
  auto on_ref = graph->is_ancestor(commit, ref_id);
  if (!on_ref.ok()) return Error::invalid_input(on_ref.error().message);
  intent::TrustedPolicy trusted;
  std::string base;
  if (on_ref.value()) {
    auto parent = graph->first_parent(commit);
    if (!parent.ok()) return Error::invalid_input(parent.error().message);
    if (parent->has_value()) {
      base = **parent;
      trusted.source = ref + " at " + short_id(base) + " (the parent of " + short_id(commit) +
                       ", which is on " + ref + ")";
    } else {
      base = commit;
      trusted.source = ref + " at " + short_id(base) + " (the first commit of " + ref +
                       ", which brings its own policy)";
    }
  } else {
    auto merge_base = graph->merge_base(commit, ref_id);
    if (!merge_base.ok()) return Error::invalid_input(merge_base.error().message);
    if (!merge_base->has_value())
      return Error::invalid_input(
          "approval policy: commit " + short_id(commit) + " shares no history with " + ref +
              ", so its approval policy cannot be read from a trusted ref",
          {"the policy is read from the merge base of the change's commit with " + ref +
           " (approval.policy_ref), never from the change's own commit"});
    base = **merge_base;
    trusted.source = ref + " at " + short_id(base) + " (the merge base of " + short_id(commit) +
                     " with " + ref + ")";
  }
  trusted.commit = base;
  auto policy = policy_at(loaded, base, trusted.source);
  if (!policy.ok()) return std::move(policy).error();
  trusted.approval = policy->settings.approval;
  trusted.allowed_signers = policy->allowed_signers;
  trusted.exceptions_path = exceptions_path(policy->settings);
  trusted.exceptions = policy->exceptions;
  trusted.budgets_path = budgets_path(policy->settings);
  trusted.budgets = policy->budgets;
  trusted.coordination = policy->settings.coordination;
  if (base != commit) {
    auto own = policy_at(loaded, commit, "commit " + short_id(commit));
    if (!own.ok()) return std::move(own).error();
    trusted.edits = policy_edits(policy.value(), own.value(), loaded.intent_root);
  }
  if (trusted.approval.require_signed_commits && commit_signatures)
    check_commit_signature(loaded, trusted, *commit_signatures);
  return trusted;
}

}  // namespace fabgate::app
