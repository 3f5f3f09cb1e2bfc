// Given real git repositories, then the fleet settings are read from the tip of the trusted ref
// (main, or the full reference approval.policy_ref names there), never from the change's own
// commit nor from an old merge base its author chose; the approval counting rules are the
// stricter of the tip's and the base's; what the change edits of the fleet settings is listed,
// every commit of the change has makers, and signed commits are verified with real ssh-keygen.

#include "gates/app/trusted_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "adapters/core/text.h"
#include "tests/support/git_repo.h"

namespace fabgate::app {
namespace {

using testing::GitRepo;

class TrustedPolicyTest : public ::testing::Test {
 protected:
  // A valid intent whose fabgate.yaml has `approval` as its approval block.
  void write_intent(const std::string& approval, const std::string& signers = "") {
    repo_.write("fabgate.yaml", "version: 1\napproval:\n" + approval);
    repo_.write("inventory.yaml",
                "credentials:\n  read: {user: ops}\n  change: {user: ops}\ndevices:\n"
                "  d1:\n    platform: linux\n    role: leaf\n    ssh: {host: 127.0.0.1}\n");
    repo_.write("changes/c.yaml",
                "id: c\ntitle: t\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: 10s, "
                "deadline: 1m}\nsteps:\n  - device: d1\n    run: 'true'\nrollback:\n  - device: "
                "d1\n    run: 'true'\n");
    if (!signers.empty()) repo_.write("policies/allowed_signers", signers);
  }
  void write_intent_change_only() {
    repo_.write("changes/c.yaml",
                "id: c\ntitle: t\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: 10s, "
                "deadline: 1m}\nsteps:\n  - device: d1\n    run: 'true'\nrollback:\n  - device: "
                "d1\n    run: 'true'\n");
  }
  std::string commit(const std::string& approval, const std::string& signers = "") {
    write_intent(approval, signers);
    repo_.commit_all("intent");
    return repo_.head();
  }

  Result<intent::TrustedPolicy> trusted(approval::SignatureTool* tool = nullptr) {
    CommonOptions options;
    options.repo = repo_.path();
    auto loaded = read_intent(options);
    if (!loaded.ok()) return std::move(loaded).error();
    if (!loaded->outcome.diagnostics.empty())
      return Error::internal("test intent invalid: " +
                             join(loaded->outcome.diagnostics.lines(), "; "));
    return read_trusted_policy(options, loaded.value(), tool);
  }

  GitRepo repo_;
  int commits_ = 0;
};

TEST_F(TrustedPolicyTest, ACommitOnMainIsJudgedByTheStricterRulesOfItsParent) {
  // Given min_approvals 1 committed on main, when the next commit on main sets it to 0, then
  // the fleet settings are main's tip, the counting rule is the parent's stricter 1 (said in
  // the source), and the edit is listed.
  std::string first = commit("  min_approvals: 1\n");
  std::string second = commit("  min_approvals: 0\n");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->approval.min_approvals, 1);
  EXPECT_EQ(policy->commit, second);
  EXPECT_EQ(policy->source, "main at " + second.substr(0, 12) +
                                " (its tip); the stricter rules of main at " + first.substr(0, 12) +
                                " (the parent of " + second.substr(0, 12) +
                                ", which is on main) apply: min_approvals 1 (tip: 0)");
  ASSERT_EQ(policy->edits.size(), 1u);
  EXPECT_EQ(policy->edits[0], "fabgate.yaml approval.min_approvals: 1 -> 0");
}

TEST_F(TrustedPolicyTest, ABranchFromBeforeThePolicyIsJudgedByTheTipNotItsOldMergeBase) {
  // Given main that first had no approval rule and then required one, when a branch starts
  // from the commit before the rule, then the policy is the tip's (1 approval), not the merge
  // base's defaults; the change's makers are the branch's commits only.
  std::string before = commit("  min_approvals: 0\n");
  std::string rule = commit("  min_approvals: 1\n");
  repo_.run("git checkout -q -b old " + before);
  repo_.write("changes/c.yaml",
              "id: c\ntitle: mine\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: 10s, "
              "deadline: 1m}\nsteps:\n  - device: d1\n    run: 'true'\nrollback:\n  - device: "
              "d1\n    run: 'true'\n");
  repo_.commit_all("my change");
  const std::string mine = repo_.head();
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->approval.min_approvals, 1);
  EXPECT_EQ(policy->commit, rule);
  EXPECT_EQ(policy->source.rfind("main at " + rule.substr(0, 12) + " (its tip)", 0), 0u)
      << policy->source;
  ASSERT_EQ(policy->change_makers.size(), 2u);
  EXPECT_EQ(policy->change_makers[0].commit, mine);
}

TEST_F(TrustedPolicyTest, CollectorProfilesAreTheTipsNotTheChangesOwn) {
  // Given a linux collector profile on main, when a branch's change rewrites it to run another
  // command, then the trusted policy holds main's profile text (what the twin runs on the
  // controller), not the branch's.
  const std::string mains =
      "platform: linux\nsources:\n  - category: interfaces\n    commands:\n"
      "      - run: ip -j link show\n";
  repo_.write("policies/collectors/linux.yaml", mains);
  commit("  min_approvals: 0\n");
  repo_.run("git checkout -q -b mine");
  repo_.write("policies/collectors/linux.yaml",
              "platform: linux\nsources:\n  - category: interfaces\n    commands:\n"
              "      - run: touch /tmp/owned\n");
  repo_.commit_all("my change");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->collectors_dir, "policies/collectors");
  ASSERT_EQ(policy->collector_profiles.size(), 1u);
  EXPECT_EQ(policy->collector_profiles.at("policies/collectors/linux.yaml"), mains);
}

TEST_F(TrustedPolicyTest, EveryCommitBetweenTheMergeBaseAndTheChangeHasMakers) {
  // Given alice's commit on a branch and bob's fix-up on top, then both are change makers, so
  // neither may approve; main's own commits are not.
  commit("  min_approvals: 1\n");
  repo_.run("git checkout -q -b feature");
  repo_.write("changes/c.yaml",
              "id: c\ntitle: alice's\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: "
              "10s, deadline: 1m}\nsteps:\n  - device: d1\n    run: 'true'\nrollback:\n  - "
              "device: d1\n    run: 'true'\n");
  repo_.run("git add -A && git -c user.email=alice@example.net commit -q -m alice");
  repo_.run(
      "sed -i 's/alice/bob/' changes/c.yaml && git add -A && git -c "
      "user.email=bob@example.net commit -q -m typo");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  std::vector<std::string> emails;
  for (const auto& maker : policy->change_makers) emails.push_back(maker.email);
  EXPECT_NE(std::find(emails.begin(), emails.end(), "alice@example.net"), emails.end());
  EXPECT_NE(std::find(emails.begin(), emails.end(), "bob@example.net"), emails.end());
  EXPECT_EQ(policy->change_makers.size(), 4u);
}

TEST_F(TrustedPolicyTest, ABranchIsJudgedByItsMergeBaseAndCannotNameItsOwnPolicyRef) {
  // Given main with min 1 and reviewer's key, when a branch adds a key of its own, waives a
  // check, sets min 0 and points approval.policy_ref at itself, then the policy still comes
  // from the merge base with main, and every edit is listed.
  std::string base = commit("  min_approvals: 1\n", "reviewer@example.net ssh-ed25519 AAAA1\n");
  repo_.run("git checkout -q -b feature");
  repo_.write("policies/exceptions.yaml", "exceptions: []\n");
  std::string change = commit("  min_approvals: 0\n  policy_ref: feature\n",
                              "reviewer@example.net ssh-ed25519 AAAA1\n"
                              "mallory@example.net ssh-ed25519 AAAA2\n");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->commit, base);
  EXPECT_EQ(policy->approval.min_approvals, 1);
  EXPECT_EQ(policy->allowed_signers, "reviewer@example.net ssh-ed25519 AAAA1\n");
  EXPECT_FALSE(policy->exceptions.has_value());
  EXPECT_EQ(policy->source, "main at " + base.substr(0, 12) + " (the merge base of " +
                                change.substr(0, 12) + " with main)");
  std::string edits = join(policy->edits, "\n");
  EXPECT_NE(edits.find("approval.min_approvals: 1 -> 0"), std::string::npos) << edits;
  EXPECT_NE(edits.find("approval.policy_ref: (main) -> feature"), std::string::npos) << edits;
  EXPECT_NE(edits.find("policies/allowed_signers: edited"), std::string::npos) << edits;
  EXPECT_NE(edits.find("policies/exceptions.yaml: added"), std::string::npos) << edits;
}

TEST_F(TrustedPolicyTest, PolicyRefIsHonouredAsMainHasItByItsFullName) {
  // Given main's fabgate.yaml naming approval.policy_ref: refs/heads/release, where release
  // has min 1, then the policy comes from release; deleted, the ref names nothing (exit 2).
  std::string first = commit("  min_approvals: 1\n");
  repo_.run("git branch release");
  commit("  min_approvals: 3\n  policy_ref: refs/heads/release\n");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->approval.min_approvals, 1);
  EXPECT_EQ(policy->source.rfind("refs/heads/release at " + first.substr(0, 12), 0), 0u)
      << policy->source;

  repo_.run("git branch -D release");
  auto missing = trusted();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(
      missing.error().message.find(
          "approval.policy_ref 'refs/heads/release' (fabgate.yaml at main) names no reference"),
      std::string::npos)
      << missing.error().message;
}

TEST_F(TrustedPolicyTest, ATagNamedLikeThePolicyBranchNeverStandsInForIt) {
  // Given release (min 1) named by main, when a tag 'release' points at a commit whose policy
  // is min 0, then a short policy_ref is refused (exit 2: a tag could shadow it), and the full
  // name reads the branch whatever the tag says.
  commit("  min_approvals: 1\n");
  repo_.run("git branch release");
  repo_.run("git checkout -q -b attacker");
  commit("  min_approvals: 0\n");
  repo_.run("git tag release && git checkout -q main");
  commit("  min_approvals: 1\n  policy_ref: release\n");
  repo_.run("git checkout -q attacker");
  auto short_name = trusted();
  ASSERT_FALSE(short_name.ok());
  EXPECT_EQ(short_name.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(short_name.error().message.find("is not a full reference name"), std::string::npos)
      << short_name.error().message;

  repo_.run("git checkout -q main");
  commit("  min_approvals: 1\n  policy_ref: refs/heads/release\n");
  repo_.run("git checkout -q attacker");
  auto full = trusted();
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_EQ(full->approval.min_approvals, 1);
  EXPECT_EQ(full->source.rfind("refs/heads/release at", 0), 0u) << full->source;
}

TEST_F(TrustedPolicyTest, MainAndMasterThatDifferAreRefused) {
  // Given both main and master, at different commits, then which one is reviewed cannot be
  // told: exit 2 naming both; at the same commit they are one trusted ref.
  commit("  min_approvals: 1\n");
  repo_.run("git branch master");
  commit("  min_approvals: 0\n");
  auto both = trusted();
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(both.error().message.find("has both 'main'"), std::string::npos)
      << both.error().message;
  repo_.run("git branch -f master main");
  EXPECT_TRUE(trusted().ok());
}

TEST_F(TrustedPolicyTest, TheRunReadsFleetSettingsFromTheTipAndTheChangeFromItsCommit) {
  // Given main whose fabgate.yaml has no SSH config and no secrets, when a branch sets
  // ssh.config to a file of its own, names a secret, adds a device and edits its change, then
  // the repository a run acts on has main's settings and inventory and the branch's change;
  // the branch's fleet edits are listed.
  commit("  min_approvals: 1\n");
  repo_.run("git checkout -q -b feature");
  repo_.write("fabgate.yaml",
              "version: 1\nssh:\n  config: proxy.conf\nsecrets:\n  env: [CI_TOKEN]\n"
              "approval:\n  min_approvals: 1\n");
  repo_.write("inventory.yaml",
              "credentials:\n  read: {user: ops}\n  change: {user: ops}\ndevices:\n"
              "  d1:\n    platform: linux\n    role: leaf\n    ssh: {host: evil.example.net}\n");
  repo_.write("changes/c.yaml",
              "id: c\ntitle: from the branch\ntargets: [d1]\nbounds: {max_targets: 1, "
              "step_timeout: 10s, deadline: 1m}\nsteps:\n  - device: d1\n    run: 'true'\n"
              "rollback:\n  - device: d1\n    run: 'true'\n");
  repo_.commit_all("mine");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  std::string edits = join(policy->edits, "\n");
  EXPECT_NE(edits.find("fabgate.yaml: edited"), std::string::npos) << edits;
  EXPECT_NE(edits.find("inventory.yaml: edited"), std::string::npos) << edits;
  CommonOptions options;
  options.repo = repo_.path();
  auto loaded = read_intent_under_trusted_ref(options, policy.value());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_TRUE(loaded->loaded().outcome.repository)
      << join(loaded->loaded().outcome.diagnostics.lines(), "\n");
  const auto& repository = loaded->repository();
  ASSERT_TRUE(repository.trusted_policy);
  EXPECT_EQ(repository.trusted_policy->commit, policy->commit);
  EXPECT_EQ(repository.settings.ssh.config, "");
  EXPECT_TRUE(repository.settings.secret_env.empty());
  ASSERT_EQ(repository.inventory.devices.size(), 1u);
  EXPECT_EQ(repository.inventory.devices[0].ssh.host, "127.0.0.1");
  ASSERT_EQ(repository.changes.size(), 1u);
  EXPECT_EQ(repository.changes[0].title, "from the branch");
  EXPECT_EQ(repository.commit.id, repo_.head());
}

TEST_F(TrustedPolicyTest, FleetFilesInsideTheWorkTreeAreRefused) {
  // Given main's fabgate.yaml naming an SSH config and known_hosts inside the repository, then
  // a run refuses them (exit 2, naming each): the work tree is the change's checkout.
  repo_.write("fabgate.yaml",
              "version: 1\nssh:\n  config: ssh/config\n  known_hosts: "
              "/etc/ssh/ssh_known_hosts\napproval:\n  min_approvals: 0\n");
  repo_.write("inventory.yaml",
              "credentials:\n  read: {user: ops, identity_file: keys/read}\n  change: {user: "
              "ops}\ndevices:\n  d1:\n    platform: linux\n    role: leaf\n    ssh: {host: "
              "127.0.0.1}\n");
  write_intent_change_only();
  repo_.commit_all("intent");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  CommonOptions options;
  options.repo = repo_.path();
  auto loaded = read_intent_under_trusted_ref(options, policy.value());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  auto refused = refuse_fleet_files_in_work_tree(loaded->loaded());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().exit_code, ExitCode::invalid_input);
  std::string all = refused.error().message + "\n" + join(refused.error().details, "\n");
  EXPECT_NE(all.find("ssh.config: ssh/config lies inside the repository"), std::string::npos)
      << all;
  EXPECT_NE(all.find("d1 read.identity_file: keys/read"), std::string::npos) << all;
  EXPECT_EQ(all.find("known_hosts"), std::string::npos) << all;
}

TEST_F(TrustedPolicyTest, TheFirstCommitOfMainBringsItsOwnPolicy) {
  std::string only = commit("  min_approvals: 2\n");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->approval.min_approvals, 2);
  EXPECT_TRUE(policy->edits.empty());
  EXPECT_NE(policy->source.find("the first commit of main"), std::string::npos) << policy->source;
}

TEST_F(TrustedPolicyTest, WithoutMainOrMasterThereIsNoTrustedRef) {
  // Given a repository whose only branch is 'trunk', then reading the policy is refused
  // (exit 2) naming the setting, never read from the change's commit.
  commit("  min_approvals: 0\n");
  repo_.run("git branch -m main trunk");
  auto policy = trusted();
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(policy.error().message.find("approval.policy_ref: no trusted ref"), std::string::npos)
      << policy.error().message;
  EXPECT_NE(policy.error().message.find("neither a 'main' nor a 'master' branch"),
            std::string::npos);

  repo_.run("git branch master");
  EXPECT_TRUE(trusted().ok());
}

TEST_F(TrustedPolicyTest, SignedCommitsAreVerifiedAgainstTheTrustedSigners) {
  // Given require_signed_commits and alice listed at main, then alice's SSH-signed commit on a
  // branch is verified as alice; an unsigned one and one signed by a key listed only in the
  // change's own commit are not.
  if (repo_.run("command -v ssh-keygen").exit_code != 0) GTEST_SKIP() << "ssh-keygen missing";
  auto key = [&](const std::string& name) {
    std::string path = repo_.file("keys/" + name);  // git-ignored
    EXPECT_EQ(
        repo_.run("mkdir -p keys && ssh-keygen -q -t ed25519 -N '' -C " + name + " -f " + path)
            .exit_code,
        0);
    return path;
  };
  repo_.write(".gitignore", "keys/\n");
  std::string alice = key("alice"), mallory = key("mallory");
  auto pub = [&](const std::string& path) { return repo_.run("cat " + path + ".pub").output; };
  commit("  min_approvals: 1\n  require_signed_commits: true\n", "alice@example.net " + pub(alice));
  repo_.run("git checkout -q -b feature");
  approval::SshKeygen git_signatures(Duration{20'000}, "ssh-keygen", "git");
  auto signed_by = [&](const std::string& signing_key, const std::string& signers) {
    write_intent("  min_approvals: 1\n  require_signed_commits: true\n", signers);
    repo_.write("changes/c.yaml", "id: c\ntitle: t" + std::to_string(++commits_) +
                                      "\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: "
                                      "10s, deadline: 1m}\nsteps:\n  - device: d1\n    run: "
                                      "'true'\nrollback:\n  - device: d1\n    run: 'true'\n");
    std::string sign = signing_key.empty()
                           ? std::string("")
                           : " -c gpg.format=ssh -c user.signingkey=" + signing_key + " commit -S";
    auto out =
        repo_.run("git add -A && git" + (signing_key.empty() ? " commit" : sign) + " -q -m change");
    EXPECT_EQ(out.exit_code, 0) << out.output;
    auto policy = trusted(&git_signatures);
    EXPECT_TRUE(policy.ok()) << policy.error().message;
    return policy.ok() ? policy.value() : intent::TrustedPolicy{};
  };
  auto by_alice = signed_by(alice, "alice@example.net " + pub(alice));
  EXPECT_EQ(by_alice.commit_signer, "alice@example.net") << by_alice.signature_problem;
  EXPECT_EQ(by_alice.commit_signing_key.rfind("SHA256:", 0), 0u);
  EXPECT_TRUE(by_alice.signature_problem.empty());

  auto unsigned_commit = signed_by("", "alice@example.net " + pub(alice));
  EXPECT_TRUE(unsigned_commit.commit_signer.empty());
  EXPECT_NE(unsigned_commit.signature_problem.find("is not signed"), std::string::npos)
      << unsigned_commit.signature_problem;

  auto by_mallory =
      signed_by(mallory, "alice@example.net " + pub(alice) + "alice@example.net " + pub(mallory));
  EXPECT_TRUE(by_mallory.commit_signer.empty());
  EXPECT_NE(by_mallory.signature_problem.find("is not listed in policies/allowed_signers at main"),
            std::string::npos)
      << by_mallory.signature_problem;
}

}  // namespace
}  // namespace fabgate::app
