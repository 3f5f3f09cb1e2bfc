// The approval gate's judge with real ssh-keygen and keys made here: which approvals count and
// why the others do not, and the rehearsal record the policy can require, on real evidence
// bundles.

#include "gates/approval/approval_judge.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "adapters/core/text.h"
#include "gates/approval/approval_file.h"
#include "gates/approval/evidence_signature.h"
#include "gates/pipeline/reporting/evidence.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace fabgate::approval {
namespace {

using pipeline::RehearsalCheck;
using pipeline::Verdict;
using testing::read_file;
using testing::run_shell;
using testing::shell_quoted;

const std::string kDigest = "sha256:" + std::string(64, 'a');

class ApprovalJudgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run_shell("command -v ssh-keygen").exit_code != 0) GTEST_SKIP() << "ssh-keygen missing";
    alice_ = key("alice");
    bob_ = key("bob");
    author_ = key("author");
    repository_.commit.id = "0123456789abcdef0123456789abcdef01234567";
    repository_.commit.author_email = "Author@Example.net";
    repository_.settings.approval.min_approvals = 2;
    repository_.policy_texts["policies/allowed_signers"] =
        // alice's line restricts her key to fabgate's namespace, as docs/approvals.md suggests.
        "# reviewers\n" + line("alice@example.net namespaces=\"fabgate-plan\"", alice_) +
        line("bob@example.net", bob_) + line("author@example.net", author_);
    change_.id = "c";
  }

  std::string key(const std::string& name) {
    std::string path = dir_.file(name);
    auto made =
        run_shell("ssh-keygen -q -t ed25519 -N '' -C " + name + " -f " + shell_quoted(path));
    EXPECT_EQ(made.exit_code, 0) << made.output;
    return path;
  }
  static std::string line(const std::string& principal, const std::string& key) {
    return principal + " " + read_file(key + ".pub");
  }
  // The key's fingerprint as `ssh-keygen -lf` prints it ("SHA256:...").
  static std::string fingerprint(const std::string& key) {
    auto listed = run_shell("ssh-keygen -lf " + shell_quoted(key + ".pub"));
    EXPECT_EQ(listed.exit_code, 0) << listed.output;
    auto start = listed.output.find("SHA256:");
    return start == std::string::npos
               ? std::string()
               : listed.output.substr(start, listed.output.find(' ', start) - start);
  }
  void add_signer(const std::string& principal, const std::string& key) {
    repository_.policy_texts["policies/allowed_signers"] += line(principal, key);
  }

  // Signs an approval of `digest` as `principal` with `key` and writes it to a file.
  std::string approval(const std::string& principal, const std::string& key,
                       const std::string& digest = kDigest,
                       const std::string& approved_at = "2026-01-01T00:00:00.000Z") {
    SignedApproval approval{principal,           digest, "c", repository_.commit.id, approved_at,
                            kSignatureNamespace, ""};
    auto signature = keygen_.sign(key, statement(approval), Prompt::never);
    EXPECT_TRUE(signature.ok()) << (signature.ok() ? "" : signature.error().message);
    if (signature.ok()) approval.signature = signature.value();
    std::string file = dir_.file(principal + "-" + std::to_string(++files_) + ".json");
    std::ofstream(file) << to_json(approval).dump(2);
    return file;
  }

  pipeline::ApprovalJudgement judge(std::vector<std::string> files, std::string rehearsal = "",
                                    RehearsalCheck check = RehearsalCheck::per_policy) {
    SignedApprovalJudge judge({std::move(files), std::move(rehearsal)}, keygen_);
    return judge.judge(repository_, change_, kDigest, check);
  }

  testing::TempDir dir_{"fabgate-approval"};
  SshKeygen keygen_;
  intent::IntentRepository repository_;
  intent::Change change_;
  std::string alice_, bob_, author_;
  int files_ = 0;
};

// Verifies with ssh-keygen, then replaces every approval file on disk with another text: the
// judge has read the file by then, so what the bundle gets must not change.
class SwappingTool final : public SignatureTool {
 public:
  explicit SwappingTool(SignatureTool& real) : real_(real) {}
  Expected<std::string, SignatureFailure> sign(const std::string& key_file,
                                               std::string_view message, Prompt prompt) override {
    return real_.sign(key_file, message, prompt);
  }
  Expected<VerifiedSignature, SignatureFailure> verify(std::string_view allowed_signers,
                                                       const std::string& principal,
                                                       std::string_view message,
                                                       std::string_view signature) override {
    for (const auto& file : files) std::ofstream(file) << "{\"swapped\": true}\n";
    return real_.verify(allowed_signers, principal, message, signature);
  }
  Expected<std::vector<std::string>, SignatureFailure> find_principals(
      std::string_view allowed_signers, std::string_view signature) override {
    return real_.find_principals(allowed_signers, signature);
  }
  std::vector<std::string> files;

 private:
  SignatureTool& real_;
};

TEST_F(ApprovalJudgeTest, TheBundleGetsTheBytesJudgedAndOnlyApprovals) {
  // Given alice's approval and a JSON file that is no approval, when both are replaced on disk
  // while the judge verifies, then alice's record carries the bytes that were judged (not the
  // file as it is now) and the other record carries nothing, so nothing of it is copied.
  const std::string file = approval("alice@example.net", alice_);
  const std::string judged = read_file(file);
  const std::string other = dir_.file("plan.json");
  std::ofstream(other) << "{\"format\": \"fabgate.plan/1\"}\n";
  SwappingTool tool(keygen_);
  tool.files = {file, other};
  repository_.settings.approval.min_approvals = 1;
  SignedApprovalJudge judge({{file, other}, ""}, tool);
  auto judgement = judge.judge(repository_, change_, kDigest, RehearsalCheck::per_policy);
  ASSERT_EQ(judgement.approvals.size(), 2u);
  EXPECT_EQ(judgement.approvals[0].outcome, "valid") << judgement.approvals[0].reason;
  EXPECT_EQ(judgement.approvals[0].content, judged);
  EXPECT_NE(read_file(file), judged);
  EXPECT_EQ(judgement.approvals[1].outcome, "unreadable");
  EXPECT_EQ(judgement.approvals[1].content, "");
}

TEST_F(ApprovalJudgeTest, TwoDistinctReviewersMeetAPolicyOfTwo) {
  auto judgement =
      judge({approval("alice@example.net", alice_), approval("bob@example.net", bob_)});
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;
  EXPECT_EQ(judgement.summary, "2 valid approvals of 2 required");
  ASSERT_EQ(judgement.approvals.size(), 2u);
  EXPECT_TRUE(judgement.approvals[0].counted);
  EXPECT_EQ(judgement.approvals[1].outcome, "valid");
}

TEST_F(ApprovalJudgeTest, TheSameReviewerTwiceCountsOnce) {
  auto judgement =
      judge({approval("alice@example.net", alice_), approval("alice@example.net", alice_)});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_EQ(judgement.approvals[1].outcome, "duplicate");
  EXPECT_EQ(judgement.summary.rfind("1 valid approval of 2 required", 0), 0u) << judgement.summary;
}

TEST_F(ApprovalJudgeTest, OneKeySigningAsTwoPrincipalsCountsOnce) {
  // Given alice's key listed under two principals and a policy of two, when she approves as
  // both, then one approval counts, the second is a duplicate naming her key, the gate fails,
  // and each record carries the fingerprint ssh-keygen -lf gives for her key.
  add_signer("alice.alt@example.net", alice_);
  auto judgement =
      judge({approval("alice@example.net", alice_), approval("alice.alt@example.net", alice_)});
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.summary;
  ASSERT_EQ(judgement.approvals.size(), 2u);
  EXPECT_EQ(judgement.approvals[0].outcome, "valid");
  EXPECT_EQ(judgement.approvals[1].outcome, "duplicate");
  const std::string key = fingerprint(alice_);
  ASSERT_FALSE(key.empty());
  EXPECT_EQ(judgement.approvals[0].key, key);
  EXPECT_EQ(judgement.approvals[1].key, key);
  EXPECT_NE(judgement.approvals[1].reason.find("key " + key +
                                               " is already counted (as "
                                               "alice@example.net)"),
            std::string::npos)
      << judgement.approvals[1].reason;
  EXPECT_EQ(judgement.summary.rfind("1 valid approval of 2 required", 0), 0u) << judgement.summary;
  EXPECT_EQ(judgement.approvals[0].to_json()["key"], key);
}

TEST_F(ApprovalJudgeTest, WildcardPrincipalLinesAreRefusedAndNamedByLine) {
  // Given allowed_signers lines 5 and 6 that list mallory's key by wildcard patterns, then her
  // approval as a name only a pattern matches is refused naming the file and line, her approval
  // as alice (listed exactly with alice's key) is a bad signature rather than verified through
  // the pattern, a name the pattern negates is unknown, and nothing counts.
  repository_.settings.approval.min_approvals = 1;
  std::string mallory = key("mallory");
  add_signer("*@ops.example.net,!eve@ops.example.net", mallory);
  add_signer("alice@example.ne?", mallory);
  auto judgement =
      judge({approval("dave@ops.example.net", mallory), approval("alice@example.net", mallory),
             approval("eve@ops.example.net", mallory), approval("alice@example.neu", mallory)});
  EXPECT_EQ(judgement.verdict, Verdict::fail) << judgement.summary;
  ASSERT_EQ(judgement.approvals.size(), 4u);
  EXPECT_EQ(judgement.approvals[0].outcome, "wildcard-signer");
  EXPECT_NE(judgement.approvals[0].reason.find(
                "policies/allowed_signers:5: principal pattern "
                "'*@ops.example.net,!eve@ops.example.net' at commit 0123456789ab holds a wildcard"),
            std::string::npos)
      << judgement.approvals[0].reason;
  EXPECT_EQ(judgement.approvals[1].outcome, "bad-signature");
  EXPECT_EQ(judgement.approvals[2].outcome, "unknown-signer");
  EXPECT_EQ(judgement.approvals[3].outcome, "wildcard-signer");
  EXPECT_NE(judgement.approvals[3].reason.find("policies/allowed_signers:6:"), std::string::npos)
      << judgement.approvals[3].reason;
  for (const auto& record : judgement.approvals) EXPECT_FALSE(record.counted);
}

TEST_F(ApprovalJudgeTest, TheCommitterCannotApproveEither) {
  // Given bob committed the change that another person authored, then bob's approval is a
  // self-approval and does not count.
  repository_.settings.approval.min_approvals = 1;
  repository_.commit.committer_email = "bob@example.net";
  auto judgement = judge({approval("bob@example.net", bob_)});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_EQ(judgement.approvals[0].outcome, "self-approval");
  EXPECT_NE(judgement.approvals[0].reason.find("committed commit 0123456789ab"), std::string::npos)
      << judgement.approvals[0].reason;
}

TEST_F(ApprovalJudgeTest, TheAuthorsKeyUnderAnotherPrincipalIsStillSelfApproval) {
  // Given the author's key also listed as release@example.net, when the author approves as
  // release@example.net, then it is a self-approval naming the key and the author's principal;
  // a reviewer whose key is listed only for themselves still counts.
  repository_.settings.approval.min_approvals = 1;
  add_signer("release@example.net", author_);
  auto judgement =
      judge({approval("release@example.net", author_), approval("bob@example.net", bob_)});
  ASSERT_EQ(judgement.approvals.size(), 2u);
  EXPECT_EQ(judgement.approvals[0].outcome, "self-approval");
  EXPECT_NE(judgement.approvals[0].reason.find("the key " + fingerprint(author_) +
                                               " that signed as release@example.net is also "
                                               "listed for author@example.net, who authored"),
            std::string::npos)
      << judgement.approvals[0].reason;
  EXPECT_FALSE(judgement.approvals[0].counted);
  EXPECT_EQ(judgement.approvals[1].outcome, "valid");
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;
}

TEST_F(ApprovalJudgeTest, ApprovalsOlderThanMaxAgeOrDatedInTheFutureDoNotCount) {
  // Given approval.max_age 1h, then an approval signed two hours ago has expired, one dated a
  // day ahead is refused too (its age cannot be told), and one signed now counts.
  repository_.settings.approval.min_approvals = 1;
  repository_.settings.approval.max_age = Duration{3'600'000};
  const TimePoint now = now_utc();
  auto judgement = judge(
      {approval("alice@example.net", alice_, kDigest, format_utc(now - std::chrono::hours(2))),
       approval("bob@example.net", bob_, kDigest, format_utc(now + std::chrono::hours(24))),
       approval("bob@example.net", bob_, kDigest, format_utc(now))});
  ASSERT_EQ(judgement.approvals.size(), 3u);
  EXPECT_EQ(judgement.approvals[0].outcome, "expired");
  EXPECT_NE(judgement.approvals[0].reason.find("older than approval.max_age 1h"), std::string::npos)
      << judgement.approvals[0].reason;
  EXPECT_EQ(judgement.approvals[1].outcome, "expired");
  EXPECT_NE(judgement.approvals[1].reason.find("is in the future"), std::string::npos)
      << judgement.approvals[1].reason;
  EXPECT_EQ(judgement.approvals[2].outcome, "valid");
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;

  // Without max_age the same old approval counts.
  repository_.settings.approval.max_age.reset();
  auto unlimited = judge(
      {approval("alice@example.net", alice_, kDigest, format_utc(now - std::chrono::hours(2)))});
  EXPECT_EQ(unlimited.approvals[0].outcome, "valid");
}

TEST_F(ApprovalJudgeTest, AVerifierThatNamesNoKeyProvesNothingCountable) {
  // Given a verifier that accepts every signature but does not say which key made it, then the
  // approval is not-verified and the gate has no evidence rather than a pass.
  repository_.settings.approval.min_approvals = 1;
  std::string silent = dir_.file("silent-keygen");
  std::ofstream(silent) << "#!/bin/sh\nexit 0\n";
  std::filesystem::permissions(silent, std::filesystem::perms::owner_all);
  SshKeygen verifier(Duration{10'000}, silent);
  SignedApprovalJudge judge({{approval("alice@example.net", alice_)}, ""}, verifier);
  auto judgement = judge.judge(repository_, change_, kDigest, RehearsalCheck::per_policy);
  ASSERT_EQ(judgement.approvals.size(), 1u);
  EXPECT_EQ(judgement.approvals[0].outcome, "not-verified");
  EXPECT_NE(judgement.approvals[0].reason.find("named no key fingerprint"), std::string::npos)
      << judgement.approvals[0].reason;
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
}

TEST_F(ApprovalJudgeTest, TheCommitAuthorIsRejectedWhateverTheCaseOfTheEmail) {
  repository_.settings.approval.min_approvals = 1;
  auto judgement = judge({approval("author@example.net", author_)});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_EQ(judgement.approvals[0].outcome, "self-approval");
  EXPECT_NE(judgement.details[0].find("authored commit 0123456789ab and cannot approve it"),
            std::string::npos)
      << judgement.details[0];
}

TEST_F(ApprovalJudgeTest, AnApprovalOfAnotherDigestIsStale) {
  repository_.settings.approval.min_approvals = 1;
  auto judgement = judge({approval("alice@example.net", alice_, "sha256:" + std::string(64, 'b'))});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_EQ(judgement.approvals[0].outcome, "stale");
  EXPECT_NE(judgement.approvals[0].reason.find("the change was modified after approval"),
            std::string::npos);
}

TEST_F(ApprovalJudgeTest, UnknownSignersForgedFieldsAndWrongKeysDoNotCount) {
  // Given an unlisted principal, an approval whose signed field was edited afterwards, a
  // listed principal signed with someone else's key, and a file that is not an approval, then
  // none counts and each says why.
  repository_.settings.approval.min_approvals = 1;
  std::string mallory = key("mallory");
  std::string edited = approval("alice@example.net", alice_, "sha256:" + std::string(64, 'c'));
  auto document = nlohmann::json::parse(read_file(edited));
  document["digest"] = kDigest;  // claims to approve this plan; the signature says otherwise
  std::ofstream(edited) << document.dump();
  std::string junk = dir_.file("junk.json");
  std::ofstream(junk) << "not json";
  auto judgement = judge({approval("mallory@example.net", mallory), edited,
                          approval("bob@example.net", mallory), junk, dir_.file("absent.json")});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  ASSERT_EQ(judgement.approvals.size(), 5u);
  EXPECT_EQ(judgement.approvals[0].outcome, "unknown-signer");
  EXPECT_EQ(judgement.approvals[1].outcome, "bad-signature");
  EXPECT_EQ(judgement.approvals[2].outcome, "bad-signature");
  EXPECT_EQ(judgement.approvals[3].outcome, "unreadable");
  EXPECT_EQ(judgement.approvals[4].outcome, "unreadable");
  for (const auto& record : judgement.approvals) EXPECT_FALSE(record.counted);
}

TEST_F(ApprovalJudgeTest, WithoutAllowedSignersAtTheCommitNothingVerifies) {
  repository_.settings.approval.min_approvals = 1;
  repository_.policy_texts.clear();
  auto judgement = judge({approval("alice@example.net", alice_)});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_EQ(judgement.approvals[0].outcome, "unknown-signer");
  EXPECT_NE(judgement.approvals[0].reason.find("policies/allowed_signers is not in commit"),
            std::string::npos);
}

TEST_F(ApprovalJudgeTest, AFolderOfApprovalsIsReadInNameOrder) {
  std::string folder = dir_.file("approvals");
  std::filesystem::create_directories(folder);
  std::filesystem::rename(approval("bob@example.net", bob_), folder + "/b.json");
  std::filesystem::rename(approval("alice@example.net", alice_), folder + "/a.json");
  std::ofstream(folder + "/README") << "not an approval";
  auto judgement = judge({folder});
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;
  ASSERT_EQ(judgement.approvals.size(), 2u);
  EXPECT_EQ(judgement.approvals[0].approver, "alice@example.net");
}

TEST_F(ApprovalJudgeTest, APolicyOfZeroPassesWithNothingGiven) {
  repository_.settings.approval.min_approvals = 0;
  auto judgement = judge({});
  EXPECT_EQ(judgement.verdict, Verdict::pass);
  EXPECT_EQ(judgement.summary, "policy requires no approvals");
}

TEST_F(ApprovalJudgeTest, AKeyWithAPassphraseFailsAtOnceWithoutATerminal) {
  std::string locked = dir_.file("locked");
  ASSERT_EQ(run_shell("ssh-keygen -q -t ed25519 -N sesame -f " + shell_quoted(locked)).exit_code,
            0);
  auto signature = keygen_.sign(locked, "x\n", Prompt::never);
  ASSERT_FALSE(signature.ok());
  EXPECT_EQ(signature.error().kind, SignatureFailure::Kind::key_unusable);
  EXPECT_NE(signature.error().message.find("ssh-agent"), std::string::npos)
      << signature.error().message;
}

// ---- rehearsal records ----------------------------------------------------------------------

// ---- the policy from the trusted ref (docs/approvals.md "Where the policy comes from") ----

class TrustedPolicyJudgeTest : public ApprovalJudgeTest {
 protected:
  // The trusted ref's policy: one approval, alice and bob listed; the change's own commit says
  // whatever a test sets in repository_.settings and policy_texts.
  intent::TrustedPolicy& trust(int min_approvals = 1) {
    intent::TrustedPolicy trusted;
    trusted.source = "main at 89abcdef0123 (the merge base of 0123456789ab with main)";
    trusted.commit = "89abcdef0123456789abcdef0123456789abcdef";
    trusted.approval.min_approvals = min_approvals;
    trusted.allowed_signers = line("alice@example.net", alice_) + line("bob@example.net", bob_);
    repository_.trusted_policy = trusted;
    return *repository_.trusted_policy;
  }
};

TEST_F(TrustedPolicyJudgeTest, TheChangesOwnZeroDoesNotLowerTheTrustedPolicy) {
  // Given the change's commit sets min_approvals 0 and the trusted ref says 1, when nothing is
  // given, then the gate fails "0 valid approvals of 1 required" and names where the policy
  // came from.
  repository_.settings.approval.min_approvals = 0;
  trust(1);
  auto judgement = judge({});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_EQ(judgement.summary.rfind("0 valid approvals of 1 required", 0), 0u) << judgement.summary;
  std::string details = join(judgement.details, "\n");
  EXPECT_NE(details.find("approval policy from main at 89abcdef0123"), std::string::npos)
      << details;
}

TEST_F(TrustedPolicyJudgeTest, AKeyTheChangeAddsToAllowedSignersDoesNotVerify) {
  // Given the change's commit lists a second key of the author's as mallory@example.net, when
  // that key approves, then it is an unknown signer at the trusted commit and does not count.
  auto mallory = key("mallory");
  add_signer("mallory@example.net", mallory);
  trust(1);
  auto judgement = judge({approval("mallory@example.net", mallory)});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  ASSERT_EQ(judgement.approvals.size(), 1u);
  EXPECT_EQ(judgement.approvals[0].outcome, "unknown-signer");
  EXPECT_NE(judgement.approvals[0].reason.find("at commit 89abcdef0123"), std::string::npos)
      << judgement.approvals[0].reason;
  // A reviewer the trusted ref lists counts.
  EXPECT_EQ(judge({approval("bob@example.net", bob_)}).verdict, Verdict::pass);
}

TEST_F(TrustedPolicyJudgeTest, AChangeThatEditsThePolicyNeedsOneApprovalEvenUnderZero) {
  // Given a trusted policy of 0 approvals that lists reviewers, when the change edits the
  // exceptions register, then it needs one approval (named in the details); with bob's it
  // passes. Under a trusted policy that lists nobody, the edit needs what that policy says.
  auto& trusted = trust(0);
  trusted.edits = {"policies/exceptions.yaml: edited"};
  auto refused = judge({});
  EXPECT_EQ(refused.verdict, Verdict::fail);
  EXPECT_EQ(refused.summary.rfind("0 valid approvals of 1 required", 0), 0u) << refused.summary;
  EXPECT_NE(join(refused.details, "\n")
                .find("this change edits the approval policy it is judged by "
                      "(policies/exceptions.yaml: edited): it needs 1 approval under the policy "
                      "at main at 89abcdef0123"),
            std::string::npos)
      << join(refused.details, "\n");
  EXPECT_EQ(judge({approval("bob@example.net", bob_)}).verdict, Verdict::pass);

  repository_.trusted_policy->allowed_signers.reset();
  EXPECT_EQ(judge({}).verdict, Verdict::pass);
}

TEST_F(TrustedPolicyJudgeTest, WithSignedCommitsTheSignerNotTheAuthorEmailIsSelf) {
  // Given approval.require_signed_commits and a commit signed by bob's key whose author e-mail
  // claims alice: alice may approve (the e-mail proves nothing), bob may not, by principal or
  // by the same key under another name.
  auto& trusted = trust(1);
  trusted.approval.require_signed_commits = true;
  trusted.commit_signer = "bob@example.net";
  trusted.commit_signing_key = fingerprint(bob_);
  repository_.commit.author_email = "alice@example.net";
  repository_.commit.committer_email = "alice@example.net";
  EXPECT_EQ(judge({approval("alice@example.net", alice_)}).verdict, Verdict::pass);

  auto by_signer = judge({approval("bob@example.net", bob_)});
  EXPECT_EQ(by_signer.verdict, Verdict::fail);
  EXPECT_EQ(by_signer.approvals[0].outcome, "self-approval");
  EXPECT_NE(by_signer.approvals[0].reason.find("bob@example.net signed commit 0123456789ab"),
            std::string::npos)
      << by_signer.approvals[0].reason;

  trusted.allowed_signers = *trusted.allowed_signers + line("bob.alt@example.net", bob_);
  auto by_key = judge({approval("bob.alt@example.net", bob_)});
  EXPECT_EQ(by_key.approvals[0].outcome, "self-approval") << by_key.approvals[0].reason;
}

TEST_F(TrustedPolicyJudgeTest, AnUnverifiedCommitIsRefusedWhateverItsApprovals) {
  // Given approval.require_signed_commits and a commit whose signature was not verified, then
  // the gate fails with that reason first, even with a valid approval.
  auto& trusted = trust(1);
  trusted.approval.require_signed_commits = true;
  trusted.signature_problem = "commit 0123456789ab is not signed";
  auto judgement = judge({approval("bob@example.net", bob_)});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  EXPECT_EQ(judgement.summary.rfind("the change's commit is not signed", 0), 0u)
      << judgement.summary;
  ASSERT_FALSE(judgement.details.empty());
  EXPECT_EQ(judgement.details.front(), "commit 0123456789ab is not signed");
}

class RehearsalRecordTest : public ApprovalJudgeTest {
 protected:
  void SetUp() override {
    ApprovalJudgeTest::SetUp();
    if (IsSkipped()) return;
    repository_.settings.approval.min_approvals = 0;
    repository_.settings.approval.require_rehearsal = true;
  }
  // A finished rehearse bundle holding rehearsal.json with these fields, signed (`fabgate
  // evidence sign`) with `signer` unless that is empty.
  std::string bundle(bool passed, const std::string& digest, const std::string& signer) {
    auto created = pipeline::EvidenceBundle::create(dir_.file("evidence"), "c", now_utc(),
                                                    pipeline::new_run_id(), Redactor{});
    EXPECT_TRUE(created.ok());
    auto& bundle = *created.value();
    EXPECT_TRUE(bundle
                    .write_json("rehearsal.json", {{"format", "fabgate.rehearsal/1"},
                                                   {"digest", digest},
                                                   {"change", "c"},
                                                   {"run_id", bundle.run_id()},
                                                   {"passed", passed},
                                                   {"exit", passed ? 0 : 4},
                                                   {"device_state", "rolled back"}})
                    .ok());
    EXPECT_TRUE(bundle.finish({{"format", "fabgate.evidence/1"}, {"mode", "rehearse"}}).ok());
    if (!signer.empty()) {
      SshKeygen evidence(Duration{20'000}, "ssh-keygen", kEvidenceNamespace);
      auto signed_bundle = sign_bundle(bundle.dir(), signer, evidence, Prompt::never);
      EXPECT_TRUE(signed_bundle.ok()) << signed_bundle.error().message;
    }
    return bundle.dir().string();
  }
};

TEST_F(RehearsalRecordTest, APassingRecordOfThisDigestCounts) {
  // Given a passing rehearsal of this digest in a bundle signed by bob, whom allowed_signers
  // lists, then it counts and the detail names the signer.
  auto judgement = judge({}, bundle(true, kDigest, bob_));
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;
  EXPECT_NE(judgement.details.back().find("passed for this digest"), std::string::npos);
  EXPECT_NE(judgement.details.back().find("signed by bob@example.net SHA256:"), std::string::npos)
      << judgement.details.back();
}

TEST_F(RehearsalRecordTest, AbsentFailedOtherDigestOrTamperedRecordsDoNotCount) {
  std::string tampered = bundle(true, kDigest, bob_);
  std::ofstream(tampered + "/rehearsal.json", std::ios::app) << " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "no --rehearsal was given"},
      {bundle(false, kDigest, bob_), "did not pass (exit 4"},
      {bundle(true, "sha256:" + std::string(64, 'b'), bob_), "modified after the rehearsal"},
      {tampered, "does not verify (modified rehearsal.json)"},
      {dir_.file("nowhere"), "cannot be read"},
  };
  for (const auto& [given, why] : cases) {
    auto judgement = judge({}, given);
    EXPECT_EQ(judgement.verdict, Verdict::fail) << given;
    ASSERT_FALSE(judgement.details.empty());
    EXPECT_NE(judgement.details.front().find(why), std::string::npos)
        << given << ": " << judgement.details.front();
  }
}

TEST_F(RehearsalRecordTest, OnlyABundleSignedByAListedKeyCounts) {
  // Given passing records of this digest whose bundles verify, then one never signed (as a
  // hand-written rehearsal.json with a matching manifest would be), one signed by a key
  // allowed_signers does not list, and a signed bundle of another mode do not count, and the
  // refusal says how to sign.
  std::string mallory = key("mallory");
  std::string apply_mode = bundle(true, kDigest, "");
  {
    auto manifest = nlohmann::json::parse(read_file(apply_mode + "/manifest.json"));
    manifest["mode"] = "apply";
    manifest["bundle_sha256"] = pipeline::manifest_digest(manifest);
    std::ofstream(apply_mode + "/manifest.json", std::ios::trunc) << manifest.dump(2);
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {bundle(true, kDigest, ""),
       "is not signed by a key policies/allowed_signers lists (unsigned"},
      {bundle(true, kDigest, mallory), "(unknown-signer"},
      {apply_mode, "is not the evidence of a `fabgate rehearse` run"},
  };
  for (const auto& [given, why] : cases) {
    auto judgement = judge({}, given);
    EXPECT_EQ(judgement.verdict, Verdict::fail) << given;
    ASSERT_FALSE(judgement.details.empty());
    EXPECT_NE(judgement.details.front().find(why), std::string::npos)
        << given << ": " << judgement.details.front();
  }
  auto unsigned_judgement = judge({}, bundle(true, kDigest, ""));
  EXPECT_NE(unsigned_judgement.details.front().find("fabgate evidence sign"), std::string::npos)
      << unsigned_judgement.details.front();
}

TEST_F(RehearsalRecordTest, ARehearsalRunItselfIsNotAskedForOne) {
  auto judgement = judge({}, "", RehearsalCheck::not_applicable);
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;
}

}  // namespace
}  // namespace fabgate::approval
