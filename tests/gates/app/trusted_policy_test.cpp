// Given real git repositories, then the approval policy is read from the trusted ref (main, or
// what approval.policy_ref says there): from the merge base of a branch with it, from the
// parent of a commit already on it, and never from the change's own commit; what the change
// edits of that policy is listed, and signed commits are verified with real ssh-keygen.

#include "gates/app/trusted_policy.h"

#include <gtest/gtest.h>

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

TEST_F(TrustedPolicyTest, ACommitOnMainIsJudgedByThePolicyOfItsParent) {
  // Given min_approvals 1 committed on main, when the next commit on main sets it to 0, then
  // the policy is 1, read from the parent, and the edit is listed.
  std::string first = commit("  min_approvals: 1\n");
  std::string second = commit("  min_approvals: 0\n");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->approval.min_approvals, 1);
  EXPECT_EQ(policy->commit, first);
  EXPECT_EQ(policy->source, "main at " + first.substr(0, 12) + " (the parent of " +
                                second.substr(0, 12) + ", which is on main)");
  ASSERT_EQ(policy->edits.size(), 1u);
  EXPECT_EQ(policy->edits[0], "fabgate.yaml approval.min_approvals: 1 -> 0");
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

TEST_F(TrustedPolicyTest, PolicyRefIsHonouredAsMainHasIt) {
  // Given main's fabgate.yaml naming approval.policy_ref: release, where release has min 1,
  // then the policy comes from release.
  std::string first = commit("  min_approvals: 1\n");
  repo_.run("git branch release");
  std::string second = commit("  min_approvals: 3\n  policy_ref: release\n");
  auto policy = trusted();
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->approval.min_approvals, 1);
  EXPECT_EQ(policy->source.rfind("release at " + first.substr(0, 12), 0), 0u) << policy->source;

  repo_.run("git branch -D release");
  auto missing = trusted();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(missing.error().message.find("approval.policy_ref 'release' (fabgate.yaml at main)"),
            std::string::npos)
      << missing.error().message;
  (void)second;
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
