#include "gates/app/trusted_policy.h"

#include <algorithm>
#include <map>
#include <filesystem>
#include <optional>
#include <set>

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
  std::optional<std::string> settings_text;  // fabgate.yaml
  std::optional<std::string> inventory;      // the inventory file it names
  std::optional<std::string> allowed_signers;
  std::optional<std::string> exceptions;
  std::optional<std::string> budgets;
  std::map<std::string, std::string> collector_profiles;  // by path
};

std::string exceptions_path(const intent::Settings& settings) {
  return settings.policies_dir + "/exceptions.yaml";
}

std::string budgets_path(const intent::Settings& settings) {
  return settings.policies_dir + "/budgets.yaml";
}

std::string collectors_dir(const intent::Settings& settings) {
  return settings.policies_dir + "/collectors";
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
  policy.settings_text = tree->read("fabgate.yaml");
  policy.inventory = tree->read(policy.settings.inventory);
  policy.allowed_signers = tree->read(policy.settings.approval.allowed_signers);
  policy.exceptions = tree->read(exceptions_path(policy.settings));
  policy.budgets = tree->read(budgets_path(policy.settings));
  for (const auto& path : tree->list(collectors_dir(policy.settings)))
    if (auto text = tree->read(path)) policy.collector_profiles[path] = std::move(*text);
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
  if (!(base.settings.twin == change.settings.twin))
    edits.push_back("fabgate.yaml twin: " + std::string(!base.settings.twin     ? "added"
                                                         : !change.settings.twin ? "removed"
                                                                                 : "edited"));
  // The rest of the fleet settings, file by file: fabgate.yaml beyond the lines above (SSH
  // config, secrets, monitoring, evidence and lock folders...) and the inventory.
  if (edits.empty() && base.settings_text != change.settings_text)
    edits.push_back(shown("fabgate.yaml") + ": " +
                    (!base.settings_text     ? "added"
                     : !change.settings_text ? "removed"
                                             : "edited"));
  file(change.settings.inventory, base.inventory, change.inventory);
  return edits;
}

// The stricter of two sets of approval counting rules: more approvals, a rehearsal if either
// wants one, the shorter approval lifetime, signed commits if either wants them. What is not a
// counting rule (allowed_signers' path, policy_ref) stays `tip`'s.
intent::ApprovalPolicy stricter(const intent::ApprovalPolicy& tip,
                                const intent::ApprovalPolicy& base) {
  intent::ApprovalPolicy out = tip;
  out.min_approvals = std::max(tip.min_approvals, base.min_approvals);
  out.require_rehearsal = tip.require_rehearsal || base.require_rehearsal;
  if (base.max_age && (!tip.max_age || *base.max_age < *tip.max_age)) out.max_age = base.max_age;
  out.require_signed_commits = tip.require_signed_commits || base.require_signed_commits;
  return out;
}

// What the base's rules add to the tip's, one phrase each ("min_approvals 2 (tip: 1)").
std::vector<std::string> stricter_than_tip(const intent::ApprovalPolicy& tip,
                                           const intent::ApprovalPolicy& applied) {
  std::vector<std::string> out;
  if (applied.min_approvals != tip.min_approvals)
    out.push_back("min_approvals " + std::to_string(applied.min_approvals) +
                  " (tip: " + std::to_string(tip.min_approvals) + ")");
  if (applied.require_rehearsal != tip.require_rehearsal)
    out.push_back("require_rehearsal true (tip: false)");
  if (applied.max_age != tip.max_age)
    out.push_back("max_age " + optional_duration(applied.max_age) +
                  " (tip: " + optional_duration(tip.max_age) + ")");
  if (applied.require_signed_commits != tip.require_signed_commits)
    out.push_back("require_signed_commits true (tip: false)");
  return out;
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

// The trusted ref: refs/heads/main, else refs/heads/master (both, and different: an error),
// then approval.policy_ref as that branch's tip has it, as a full reference name.
struct TrustedRef {
  std::string name;  // as shown: "main", "refs/heads/release"
  std::string tip;   // full commit id
};

Result<TrustedRef> find_trusted_ref(const git::CommitGraph& graph, const LoadedIntent& loaded,
                                    const CommonOptions& common) {
  std::optional<TrustedRef> found;
  for (const char* name : {"main", "master"}) {
    auto id = graph.resolve_full_ref(std::string("refs/heads/") + name);
    if (!id.ok()) return Error::invalid_input(id.error().message);
    if (!id->has_value()) continue;
    if (found && found->tip != **id)
      return Error::invalid_input("approval.policy_ref: the repository at " + common.repo +
                                      " has both 'main' (" + short_id(found->tip) +
                                      ") and 'master' (" + short_id(**id) +
                                      "), and they differ, so which one is the reviewed history "
                                      "cannot be told",
                                  {"delete the stale one, or point both at the reviewed commit"});
    if (!found) found = TrustedRef{name, **id};
  }
  if (!found)
    return Error::invalid_input(
        "approval.policy_ref: no trusted ref to read the approval policy from: the repository at " +
            common.repo + " has neither a 'main' nor a 'master' branch",
        {"fabgate reads the fleet settings (fabgate.yaml, the inventory, approval.min_approvals, "
         "allowed_signers, the exceptions register, budgets) from the main branch (or the ref "
         "approval.policy_ref names in fabgate.yaml there), never from the change's own commit",
         "create the branch from the reviewed history, e.g. git branch main origin/main"});
  auto at_branch = policy_at(loaded, found->tip, found->name + " (" + short_id(found->tip) + ")");
  if (!at_branch.ok()) return std::move(at_branch).error();
  const auto& named = at_branch->settings.approval.policy_ref;
  if (named.empty()) return *found;
  const bool full = named.starts_with("refs/heads/") || named.starts_with("refs/remotes/") ||
                    named.starts_with("refs/tags/");
  if (!full)
    return Error::invalid_input(
        "approval.policy_ref '" + named + "' (fabgate.yaml at " + found->name +
            ") is not a full "
            "reference name, and a short name could be a tag anyone who pushes one can create",
        {"write refs/heads/" + named + " for a branch (or refs/remotes/origin/" + named +
         " for a fetched one, refs/tags/" + named + " for a tag)"});
  auto id = graph.resolve_full_ref(named);
  if (!id.ok()) return Error::invalid_input(id.error().message);
  if (!id->has_value())
    return Error::invalid_input(
        "approval.policy_ref '" + named + "' (fabgate.yaml at " + found->name +
            ") names no reference in " + common.repo,
        {"fetch it first, e.g. git fetch origin +refs/heads/release:" + named});
  return TrustedRef{named, **id};
}

}  // namespace

Result<intent::TrustedPolicy> read_trusted_policy(const CommonOptions& common,
                                                  const LoadedIntent& loaded,
                                                  approval::SignatureTool* commit_signatures) {
  auto graph = git::CommitGraph::open(loaded.intent_dir);
  if (!graph.ok()) return Error::invalid_input(graph.error().message);
  auto ref = find_trusted_ref(graph.value(), loaded, common);
  if (!ref.ok()) return std::move(ref).error();
  const std::string& tip = ref->tip;

  // The base the change's own edits and the stricter counting rules are measured from: the
  // merge base with the ref, or, for a commit already on the ref, its parent.
  const std::string& commit = loaded.commit.id;
  auto on_ref = graph->is_ancestor(commit, tip);
  if (!on_ref.ok()) return Error::invalid_input(on_ref.error().message);
  std::string base, base_shown;
  if (on_ref.value()) {
    auto parent = graph->first_parent(commit);
    if (!parent.ok()) return Error::invalid_input(parent.error().message);
    if (parent->has_value()) {
      base = **parent;
      base_shown = ref->name + " at " + short_id(base) + " (the parent of " + short_id(commit) +
                   ", which is on " + ref->name + ")";
    } else {
      base = commit;
      base_shown = ref->name + " at " + short_id(base) + " (the first commit of " + ref->name +
                   ", which brings its own policy)";
    }
  } else {
    auto merge_base = graph->merge_base(commit, tip);
    if (!merge_base.ok()) return Error::invalid_input(merge_base.error().message);
    if (!merge_base->has_value())
      return Error::invalid_input("approval policy: commit " + short_id(commit) +
                                      " shares no history with " + ref->name +
                                      ", so its approval policy cannot be read from a trusted ref",
                                  {"the fleet settings are read from the tip of " + ref->name +
                                   " (approval.policy_ref), never from the change's own commit"});
    base = **merge_base;
    base_shown = ref->name + " at " + short_id(base) + " (the merge base of " + short_id(commit) +
                 " with " + ref->name + ")";
  }

  // Every fleet setting from the tip.
  intent::TrustedPolicy trusted;
  trusted.commit = tip;
  trusted.source = tip == base ? base_shown : ref->name + " at " + short_id(tip) + " (its tip)";
  auto at_tip = policy_at(loaded, tip, trusted.source);
  if (!at_tip.ok()) return std::move(at_tip).error();
  if (!at_tip->has_settings)
    return Error::invalid_input(
        "fleet settings: " +
            std::string(loaded.intent_root.empty() ? "" : loaded.intent_root + "/") +
            "fabgate.yaml is not at " + trusted.source +
            ", and fleet settings (the inventory, "
            "credentials, approval policy...) are read only from the trusted ref",
        {"merge the intent repository's fabgate.yaml and inventory into " + ref->name +
         " first; a change's own commit never supplies them"});
  trusted.approval = at_tip->settings.approval;
  trusted.allowed_signers = at_tip->allowed_signers;
  trusted.exceptions_path = exceptions_path(at_tip->settings);
  trusted.exceptions = at_tip->exceptions;
  trusted.budgets_path = budgets_path(at_tip->settings);
  trusted.budgets = at_tip->budgets;
  trusted.coordination = at_tip->settings.coordination;
  trusted.twin = at_tip->settings.twin;
  trusted.collectors_dir = collectors_dir(at_tip->settings);
  trusted.collector_profiles = at_tip->collector_profiles;

  // The counting rules: the stricter of the tip's and the base's.
  if (base != tip) {
    auto at_base = policy_at(loaded, base, base_shown);
    if (!at_base.ok()) return std::move(at_base).error();
    if (at_base->has_settings) {
      trusted.approval = stricter(at_tip->settings.approval, at_base->settings.approval);
      auto added = stricter_than_tip(at_tip->settings.approval, trusted.approval);
      if (!added.empty())
        trusted.source += "; the stricter rules of " + base_shown + " apply: " + join(added, ", ");
    }
    // What the change's commits edit of the fleet settings, relative to the base.
    if (base != commit) {
      auto own = policy_at(loaded, commit, "commit " + short_id(commit));
      if (!own.ok()) return std::move(own).error();
      trusted.edits = policy_edits(at_base.value(), own.value(), loaded.intent_root);
    }
  } else if (base != commit) {
    auto own = policy_at(loaded, commit, "commit " + short_id(commit));
    if (!own.ok()) return std::move(own).error();
    trusted.edits = policy_edits(at_tip.value(), own.value(), loaded.intent_root);
  }

  // Who made the change: every commit between the base and the change.
  constexpr std::size_t kMostCommits = 1000;
  if (base == commit) {
    trusted.change_makers = {{loaded.commit.author_email, "authored", commit},
                             {loaded.commit.committer_email, "committed", commit}};
  } else {
    auto range = graph->commits_between(base, commit, kMostCommits);
    if (!range.ok()) return Error::invalid_input(range.error().message);
    for (const auto& made : range->commits) {
      trusted.change_makers.push_back({made.author_email, "authored", made.id});
      trusted.change_makers.push_back({made.committer_email, "committed", made.id});
    }
    if (range->truncated)
      trusted.change_makers_problem =
          "more than " + std::to_string(kMostCommits) + " commits lie between " + base_shown +
          " and " + short_id(commit) + ", so who made the change cannot be told; rebase it";
  }

  if (trusted.approval.require_signed_commits && commit_signatures)
    check_commit_signature(loaded, trusted, *commit_signatures);
  return trusted;
}

namespace {

// The change's commit with every fleet file served from the trusted ref's tip.
class FleetOverlayTree final : public git::FileTree {
 public:
  FleetOverlayTree(const git::FileTree& change, const git::FileTree& trusted,
                   std::set<std::string> fleet_paths)
      : change_(change), trusted_(trusted), fleet_(std::move(fleet_paths)) {}

  std::optional<std::string> read(const std::string& path) const override {
    return fleet_.count(path) ? trusted_.read(path) : change_.read(path);
  }
  std::vector<std::string> list(const std::string& directory) const override {
    std::vector<std::string> out;
    for (auto& path : change_.list(directory))
      if (!fleet_.count(path)) out.push_back(std::move(path));
    const std::string prefix = directory.empty() ? "" : directory + "/";
    for (const auto& path : fleet_)
      if (path.starts_with(prefix) && trusted_.read(path)) out.push_back(path);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  const git::FileTree& change_;
  const git::FileTree& trusted_;
  std::set<std::string> fleet_;
};

bool inside(const std::filesystem::path& path, const std::filesystem::path& folder) {
  auto relative = path.lexically_relative(folder);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

Result<RunIntent> read_intent_under_trusted_ref(const CommonOptions& common,
                                                const intent::TrustedPolicy& trusted) {
  auto change_tree = git::CommitTree::open(common.repo, common.ref, "fabgate.yaml");
  if (!change_tree.ok()) return Error::invalid_input(change_tree.error().message);
  const std::filesystem::path intent_dir = change_tree->work_tree() / change_tree->intent_root();
  auto trusted_tree = git::CommitTree::open(intent_dir, trusted.commit);
  if (!trusted_tree.ok())
    return Error::invalid_input("fleet settings at " + trusted.source + ": " +
                                trusted_tree.error().message);
  auto settings = intent::load_settings_only(trusted_tree.value(), change_tree->intent_root());
  if (!settings.settings)
    return Error::invalid_input("fleet settings at " + trusted.source + ": fabgate.yaml is invalid",
                                settings.diagnostics.lines());
  const auto& fleet = *settings.settings;
  FleetOverlayTree overlay(change_tree.value(), trusted_tree.value(),
                           {"fabgate.yaml", fleet.inventory, fleet.approval.allowed_signers,
                            exceptions_path(fleet), budgets_path(fleet)});
  RunIntent run(read_intent_from(overlay, change_tree.value()));
  if (run.loaded_.outcome.repository) run.loaded_.outcome.repository->trusted_policy = trusted;
  return run;
}

Status refuse_fleet_files_in_work_tree(const LoadedIntent& loaded) {
  if (!loaded.outcome.repository) return Ok{};
  const auto& repository = *loaded.outcome.repository;
  std::filesystem::path top = loaded.intent_dir;
  for (auto part = std::filesystem::path(loaded.intent_root); !part.empty() && part != ".";
       part = part.parent_path())
    top = top.parent_path();
  top = std::filesystem::weakly_canonical(top);
  std::vector<std::string> problems;
  auto check = [&](const std::string& setting, const std::string& path) {
    if (path.empty() || path == "none") return;
    std::filesystem::path expanded = expand_home(path);
    std::vector<std::filesystem::path> candidates;
    if (expanded.is_absolute()) {
      candidates.push_back(expanded);
    } else {
      candidates.push_back(loaded.intent_dir / expanded);
      std::error_code ignored;
      candidates.push_back(std::filesystem::current_path(ignored) / expanded);
    }
    for (const auto& candidate : candidates) {
      auto resolved = std::filesystem::weakly_canonical(candidate);
      if (inside(resolved, top)) {
        problems.push_back(setting + ": " + path + " lies inside the repository's work tree (" +
                           top.string() + "), which the change's checkout decides");
        return;
      }
    }
  };
  const auto& settings = repository.settings;
  check("ssh.known_hosts", settings.ssh.known_hosts);
  check("ssh.config", settings.ssh.config);
  if (settings.monitoring.prometheus)
    check("monitoring.prometheus.ca_file", settings.monitoring.prometheus->endpoint.ca_file);
  if (settings.monitoring.alertmanager)
    check("monitoring.alertmanager.ca_file", settings.monitoring.alertmanager->endpoint.ca_file);
  if (settings.coordination) {
    check("coordination.ca_file", settings.coordination->ca_file);
    check("coordination.cert_file", settings.coordination->cert_file);
    check("coordination.key_file", settings.coordination->key_file);
  }
  for (const auto& device : repository.inventory.devices) {
    check(device.name + " read.identity_file", device.read.identity_file);
    check(device.name + " change.identity_file", device.change.identity_file);
    if (device.gnmi) {
      check(device.name + " gnmi.ca_file", device.gnmi->ca_file);
      check(device.name + " gnmi.cert_file", device.gnmi->cert_file);
      check(device.name + " gnmi.key_file", device.gnmi->key_file);
    }
  }
  if (problems.empty()) return Ok{};
  problems.push_back(
      "put them outside the repository on the controller (an absolute or ~/ path) in the fleet "
      "settings at the trusted ref");
  return Error::invalid_input(
      "fleet files inside the repository: a pull request could choose their content", problems);
}

}  // namespace fabgate::app
