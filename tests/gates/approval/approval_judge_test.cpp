// The approval gate's judge with real ssh-keygen and keys made here: which approvals count and
// why the others do not, and the rehearsal record the policy can require, on real evidence
// bundles.

#include "gates/approval/approval_judge.h"

#include <gtest/gtest.h>

#include <fstream>

#include "gates/approval/approval_file.h"
#include "gates/pipeline/evidence.h"
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

  // Signs an approval of `digest` as `principal` with `key` and writes it to a file.
  std::string approval(const std::string& principal, const std::string& key,
                       const std::string& digest = kDigest) {
    SignedApproval approval{
        principal,           digest, "c", repository_.commit.id, "2026-01-01T00:00:00.000Z",
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

TEST(AllowedSigners, PrincipalsAreMatchedExactlyOrByPattern) {
  std::string text =
      "# comment\nalice@example.net ssh-ed25519 AAAA\n*@ops.example.net,!eve@ops.example.net "
      "namespaces=\"fabgate-plan\" ssh-ed25519 BBBB\n\"carol smith\" ssh-ed25519 CCCC\n";
  EXPECT_TRUE(lists_principal(text, "alice@example.net"));
  EXPECT_TRUE(lists_principal(text, "dave@ops.example.net"));
  EXPECT_TRUE(lists_principal(text, "carol smith"));
  EXPECT_FALSE(lists_principal(text, "alice@example.org"));
  EXPECT_FALSE(lists_principal(text, "comment"));
}

// ---- rehearsal records ----------------------------------------------------------------------

class RehearsalRecordTest : public ApprovalJudgeTest {
 protected:
  void SetUp() override {
    ApprovalJudgeTest::SetUp();
    if (IsSkipped()) return;
    repository_.settings.approval.min_approvals = 0;
    repository_.settings.approval.require_rehearsal = true;
  }
  // A finished evidence bundle holding rehearsal.json with these fields.
  std::string bundle(bool passed, const std::string& digest) {
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
    EXPECT_TRUE(bundle.finish({{"format", "fabgate.evidence/1"}}).ok());
    return bundle.dir().string();
  }
};

TEST_F(RehearsalRecordTest, APassingRecordOfThisDigestCounts) {
  auto judgement = judge({}, bundle(true, kDigest));
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;
  EXPECT_NE(judgement.details.back().find("passed for this digest"), std::string::npos);
}

TEST_F(RehearsalRecordTest, AbsentFailedOtherDigestOrTamperedRecordsDoNotCount) {
  std::string tampered = bundle(true, kDigest);
  std::ofstream(tampered + "/rehearsal.json", std::ios::app) << " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "no --rehearsal was given"},
      {bundle(false, kDigest), "did not pass (exit 4"},
      {bundle(true, "sha256:" + std::string(64, 'b')), "modified after the rehearsal"},
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

TEST_F(RehearsalRecordTest, ARehearsalRunItselfIsNotAskedForOne) {
  auto judgement = judge({}, "", RehearsalCheck::not_applicable);
  EXPECT_EQ(judgement.verdict, Verdict::pass) << judgement.summary;
}

}  // namespace
}  // namespace fabgate::approval
