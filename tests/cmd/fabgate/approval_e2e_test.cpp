// End-to-end: plan -> approve -> apply with real signed approvals, and rehearse -> apply with a
// required rehearsal, through the fabgate binary, a real git repository, a real sshd and real
// ssh-keygen with keys made here. What is asserted is what an operator sees: exit codes, the
// reason on the terminal, what the devices ended up with, and the evidence.

#include <chrono>
#include <thread>

#include "adapters/core/sha256.h"
#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::change;
using testing::FabgateEndToEnd;
using testing::read_file;
using testing::run_shell;
using testing::shell_quoted;

class ApprovalEndToEnd : public FabgateEndToEnd {
 protected:
  void SetUp() override {
    FabgateEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (run_shell("command -v ssh-keygen").exit_code != 0) GTEST_SKIP() << "ssh-keygen missing";
  }

  // A fresh ed25519 key pair (no passphrase unless given) named `name` in the sshd's folder.
  std::string make_key(const std::string& name, const std::string& passphrase = "") {
    std::string key = sshd_->dir() + "/" + name;
    auto made = run_shell("ssh-keygen -q -t ed25519 -C " + name + " -N " +
                          shell_quoted(passphrase) + " -f " + shell_quoted(key));
    EXPECT_EQ(made.exit_code, 0) << made.output;
    return key;
  }
  std::string signer_line(const std::string& principal, const std::string& key) {
    return principal + " " + read_file(key + ".pub");
  }

  // An intent with `min_approvals` whose allowed_signers lists reviewer@example.net and the
  // commit author author@example.net (who still may not approve their own change).
  // `approval_extra` adds lines to fabgate.yaml's approval section ("  max_age: 1s\n").
  void commit_with_policy(const std::string& change_yaml, int min_approvals,
                          bool require_rehearsal = false, const std::string& approval_extra = "") {
    reviewer_key_ = make_key("reviewer");
    author_key_ = make_key("author");
    repo_.write("policies/allowed_signers", signer_line("reviewer@example.net", reviewer_key_) +
                                                signer_line("author@example.net", author_key_));
    commit_intent(change_yaml, "approval:\n  min_approvals: " + std::to_string(min_approvals) +
                                   "\n  require_rehearsal: " +
                                   (require_rehearsal ? "true" : "false") + "\n" + approval_extra);
  }

  // Runs plan and returns the bundle it names.
  std::filesystem::path plan() {
    auto out = fabgate("plan c");
    EXPECT_EQ(out.exit_code, 0) << out.output;
    return evidence_of(out);
  }

  testing::CommandOutput approve(const std::filesystem::path& plan_dir, const std::string& key,
                                 const std::string& identity, const std::string& out) {
    return fabgate("approve " + shell_quoted(plan_dir.string()) + " --key " + shell_quoted(key) +
                   " --identity " + identity + " --out " + shell_quoted(out));
  }

  // A copy of `bundle` whose plan.json is `plan_text`, resealed as a forger would: the file's
  // sha256 and the bundle digest recomputed the way docs/pipeline.md describes (sha256 of the
  // manifest without bundle_sha256, members sorted, no whitespace). Returns the copy's plan.json.
  std::string resealed_copy(const std::filesystem::path& bundle, const std::string& name,
                            const std::string& plan_text) {
    std::filesystem::path copy = repo_.file(name);
    std::filesystem::copy(bundle, copy, std::filesystem::copy_options::recursive);
    testing::write_file((copy / "plan.json").string(), plan_text);
    auto manifest = read_json(copy / "manifest.json");
    manifest["files"]["plan.json"] = fabgate::sha256_hex(plan_text);
    manifest.erase("bundle_sha256");
    manifest["bundle_sha256"] = fabgate::sha256_hex(manifest.dump());
    testing::write_file((copy / "manifest.json").string(), manifest.dump(2) + "\n");
    return (copy / "plan.json").string();
  }

  // Signs the bundle with `key` (`fabgate evidence sign`), as CI signs a rehearsal.
  void sign_bundle(const std::filesystem::path& bundle, const std::string& key) {
    auto out = fabgate("evidence sign " + shell_quoted(bundle.string()) + " --key " +
                       shell_quoted(key) + " </dev/null");
    ASSERT_EQ(out.exit_code, 0) << out.output;
  }

  // main with min_approvals 1, then a pull request branch whose fabgate.yaml points ssh.config
  // at its own file with a ProxyCommand that writes a marker (whose path is returned) and names
  // FABGATE_RUNNER_TOKEN as a secret.
  std::string pull_request_with_proxy_command(const std::string& name) {
    commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
    const std::string marker = repo_.file("../" + name + "-" + std::to_string(::getpid()));
    repo_.run("git checkout -q -b pr");
    repo_.write("proxy.conf", "Host *\n  ProxyCommand sh -c 'touch " + marker + "; exit 1'\n");
    repo_.run(
        "sed -i 's|config: none|config: proxy.conf|' fabgate.yaml && printf "
        "'secrets:\\n  env: [FABGATE_RUNNER_TOKEN]\\n' >> fabgate.yaml");
    repo_.commit_all("faster ssh");
    return marker;
  }

  std::string reviewer_key_, author_key_;
};

TEST_F(ApprovalEndToEnd, ApprovedPlanIsAppliedAndTheApprovalIsInTheEvidence) {
  // Given min_approvals 1 and a reviewer who signs the plan, then apply with that approval
  // exits 0, d1 holds the change, and plan.json, review.md, the approval and the manifest all
  // carry the same digest.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  auto plan_dir = plan();
  auto plan_json = read_json(plan_dir / "plan.json");
  std::string digest = plan_json["digest"].get<std::string>();
  EXPECT_EQ(digest.rfind("sha256:", 0), 0u) << digest;
  auto review = read_file((plan_dir / "review.md").string());
  EXPECT_NE(review.find(digest), std::string::npos);
  EXPECT_NE(review.find("fabgate approve"), std::string::npos);
  EXPECT_NE(review.find("## Blast radius"), std::string::npos);
  EXPECT_NE(review.find("## Baseline health"), std::string::npos);

  auto approved = fabgate("approve " + shell_quoted(plan_dir.string()) + " --key " +
                          shell_quoted(reviewer_key_) + " --identity reviewer@example.net");
  ASSERT_EQ(approved.exit_code, 0) << approved.output;
  auto approval_file = plan_dir / "approvals" / "reviewer@example.net.json";
  auto approval = read_json(approval_file);
  EXPECT_EQ(approval["digest"], digest);
  EXPECT_EQ(approval["approver"], "reviewer@example.net");
  EXPECT_NE(approval["signature"].get<std::string>().find("BEGIN SSH SIGNATURE"),
            std::string::npos);
  // The approval added to the sealed plan bundle is listed as attached, not as tampering; any
  // other file added there still is.
  auto verified = fabgate("evidence verify " + shell_quoted(plan_dir.string()));
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  EXPECT_NE(verified.output.find("attached: approvals/reviewer@example.net.json"),
            std::string::npos)
      << verified.output;
  testing::write_file((plan_dir / "approvals" / "notes.txt").string(), "not an approval\n");
  auto tampered = fabgate("evidence verify " + shell_quoted(plan_dir.string()));
  EXPECT_EQ(tampered.exit_code, 3) << tampered.output;
  std::filesystem::remove(plan_dir / "approvals" / "notes.txt");

  auto applied = fabgate("apply c --approval " + shell_quoted(approval_file.string()));
  EXPECT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9100\n");
  auto apply_dir = evidence_of(applied);
  auto m = read_json(apply_dir / "manifest.json");
  EXPECT_EQ(m["plan_digest"], digest);
  ASSERT_EQ(m["approvals"].size(), 1u) << m["approvals"];
  EXPECT_EQ(m["approvals"][0]["outcome"], "valid");
  EXPECT_TRUE(m["approvals"][0]["counted"].get<bool>());
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(apply_dir.string())).exit_code, 0);
}

TEST_F(ApprovalEndToEnd, AChangeWhoseStepHoldsASecretCanStillBeApprovedAndApplied) {
  // Given a step carrying a BGP password, then plan.json holds it redacted (so the digest cannot
  // be recomputed from the file), approve recomputes the digest from the commit and signs that,
  // and apply, which computes the digest from the commit too, counts the approval.
  commit_with_policy(change("echo 'neighbor 10.0.0.1 password CanaryPw1' >> {home}/d1.conf",
                            "cp {home}/d1.bak {home}/d1.conf", "true"),
                     1);
  auto plan_dir = plan();
  EXPECT_EQ(read_file((plan_dir / "plan.json").string()).find("CanaryPw1"), std::string::npos);
  std::string file = repo_.file("reviewer.json");
  auto approved = approve(plan_dir, reviewer_key_, "reviewer@example.net", file);
  ASSERT_EQ(approved.exit_code, 0) << approved.output;
  EXPECT_NE(approved.output.find("(recomputed from commit " + repo_.head().substr(0, 12) + ")"),
            std::string::npos)
      << approved.output;
  EXPECT_EQ(read_json(file)["digest"], read_json(plan_dir / "plan.json")["digest"]);
  EXPECT_EQ(approved.output.find("CanaryPw1"), std::string::npos);
  auto out = fabgate("apply c --approval " + shell_quoted(file));
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output.find("CanaryPw1"), std::string::npos);
}

TEST_F(ApprovalEndToEnd, ApproveSignsOnlyADigestItRecomputedFromTheCommit) {
  // Given a plan whose digest input was redacted (so the file cannot prove its own digest):
  // when its digest is replaced, then approve refuses (exit 2) naming both digests and writes
  // nothing; when the repository given has no such commit, or is no repository, then approve
  // refuses (exit 2) saying it cannot recompute the digest; the untouched plan is approved, also
  // when --repo names a folder inside the repository rather than the intent folder.
  commit_with_policy(change("echo 'neighbor 10.0.0.1 password CanaryPw1' >> {home}/d1.conf",
                            "cp {home}/d1.bak {home}/d1.conf", "true"),
                     1);
  auto plan_dir = plan();
  auto plan_json = read_json(plan_dir / "plan.json");
  const std::string digest = plan_json["digest"].get<std::string>();
  ASSERT_NE(plan_json["digest_input"].dump().find("<redacted>"), std::string::npos);

  const std::string forged_digest = "sha256:" + std::string(64, 'e');
  plan_json["digest"] = forged_digest;
  // Resealed, so the bundle verifies: the digest recomputed from the commit still catches it.
  std::string forged = resealed_copy(plan_dir, "forged", plan_json.dump());
  std::string file = repo_.file("reviewer.json");
  auto refused = approve(forged, reviewer_key_, "reviewer@example.net", file);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("plan " + forged + ": its digest " + forged_digest +
                                " is not the digest of change c at commit " +
                                repo_.head().substr(0, 12) + " (" + digest + ")"),
            std::string::npos)
      << refused.output;
  EXPECT_FALSE(std::filesystem::exists(file));

  testing::GitRepo elsewhere;
  elsewhere.write("README", "another repository\n");
  elsewhere.commit_all("unrelated");
  testing::TempDir not_a_repository("fabgate-not-a-repo");
  for (const std::string& repo : {elsewhere.path(), not_a_repository.path()}) {
    auto out = fabgate("approve " + shell_quoted(plan_dir.string()) + " --key " +
                       shell_quoted(reviewer_key_) + " --identity reviewer@example.net --out " +
                       shell_quoted(file) + " --repo " + shell_quoted(repo));
    EXPECT_EQ(out.exit_code, 2) << repo << ": " << out.output;
    EXPECT_NE(
        out.output.find("cannot recompute its digest from commit " + repo_.head().substr(0, 12)),
        std::string::npos)
        << out.output;
    EXPECT_FALSE(std::filesystem::exists(file)) << repo;
  }

  // --repo may name any folder of the repository: the plan says which folder holds the intent.
  auto approved = fabgate("approve " + shell_quoted(plan_dir.string()) + " --key " +
                          shell_quoted(reviewer_key_) + " --identity reviewer@example.net --out " +
                          shell_quoted(file) + " --repo " + shell_quoted(repo_.file("changes")));
  ASSERT_EQ(approved.exit_code, 0) << approved.output;
  EXPECT_EQ(read_json(file)["digest"], digest);
}

TEST_F(ApprovalEndToEnd, AnApprovalOlderThanMaxAgeIsRefusedAtApply) {
  // Given approval.max_age 1s and a valid approval, when apply runs two seconds later, then the
  // approval has expired: exit 3, the reason on the terminal and in the manifest, nothing sent.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1, false, "  max_age: 1s\n");
  auto plan_dir = plan();
  // The reviewer is told the limit before signing.
  EXPECT_NE(
      read_file((plan_dir / "review.md").string()).find("approvals older than 1s do not count"),
      std::string::npos);
  std::string file = repo_.file("reviewer.json");
  ASSERT_EQ(approve(plan_dir, reviewer_key_, "reviewer@example.net", file).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2'100));
  std::filesystem::remove_all(evidence_);
  auto out = fabgate("apply c --approval " + shell_quoted(file));
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("reviewer@example.net: expired: approved "), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("older than approval.max_age 1s"), std::string::npos) << out.output;
  EXPECT_EQ(manifest()["approvals"][0]["outcome"], "expired");
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_TRUE(commands("step", "d1").empty());
}

TEST_F(ApprovalEndToEnd, WithoutApprovalsApplyIsRefusedAndNothingIsSent) {
  // Given min_approvals 1 and no approval, then apply exits 3, says how many were needed, and
  // no step reaches d1; plan still exits 0 and says approvals are needed.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  auto planned = fabgate("plan c");
  EXPECT_EQ(planned.exit_code, 0) << planned.output;
  EXPECT_NE(planned.output.find("needed before apply"), std::string::npos) << planned.output;
  std::filesystem::remove_all(evidence_);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("0 valid approvals of 1 required"), std::string::npos) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_TRUE(commands("step", "d1").empty());
}

TEST_F(ApprovalEndToEnd, TheCommitAuthorCannotApproveTheirOwnChange) {
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  auto plan_dir = plan();
  std::string file = repo_.file("author.json");
  // Without --identity (and $FABGATE_APPROVER) the approver is the repository's user.email.
  auto approved = repo_.run("env -u FABGATE_APPROVER " + shell_quoted(testing::kFabgate) +
                            " approve " + shell_quoted(plan_dir.string()) + " --key " +
                            shell_quoted(author_key_) + " --out " + shell_quoted(file) + " 2>&1");
  ASSERT_EQ(approved.exit_code, 0) << approved.output;
  EXPECT_NE(approved.output.find("as author@example.net"), std::string::npos) << approved.output;
  std::filesystem::remove_all(evidence_);
  auto out = fabgate("apply c --approval " + shell_quoted(file));
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("self-approval: author@example.net authored commit"), std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_EQ(manifest()["approvals"][0]["outcome"], "self-approval");
}

TEST_F(ApprovalEndToEnd, AnApprovalOfAnEarlierVersionOfTheChangeIsStale) {
  // Given an approval, then the change is edited and recommitted, then the approval does not
  // count: "the change was modified after approval", exit 3, nothing sent.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  auto plan_dir = plan();
  std::string file = repo_.file("reviewer.json");
  ASSERT_EQ(approve(plan_dir, reviewer_key_, "reviewer@example.net", file).exit_code, 0);
  repo_.write("changes/c.yaml", std::regex_replace(change("echo 'mtu 9200' >> {home}/d1.conf"),
                                                   std::regex("\\{home\\}"), sshd_->home()));
  repo_.commit_all("different mtu");
  std::filesystem::remove_all(evidence_);
  auto out = fabgate("apply c --approval " + shell_quoted(file));
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("stale: the change was modified after approval"), std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_TRUE(commands("step", "d1").empty());
}

TEST_F(ApprovalEndToEnd, ASignerNotInAllowedSignersIsRejected) {
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  auto plan_dir = plan();
  std::string stranger = make_key("stranger");
  std::string file = repo_.file("stranger.json");
  ASSERT_EQ(approve(plan_dir, stranger, "stranger@example.net", file).exit_code, 0);
  // Claiming a listed principal with an unlisted key does not work either.
  std::string impostor = repo_.file("impostor.json");
  ASSERT_EQ(approve(plan_dir, stranger, "reviewer@example.net", impostor).exit_code, 0);
  std::filesystem::remove_all(evidence_);
  auto out =
      fabgate("apply c --approval " + shell_quoted(file) + " --approval " + shell_quoted(impostor));
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("unknown-signer: stranger@example.net is not listed in "
                            "policies/allowed_signers"),
            std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("reviewer@example.net: bad-signature"), std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
}

TEST_F(ApprovalEndToEnd, ApproveRefusesABadPlanAndAPassphraseItCannotAsk) {
  // Given a plan file that is not a plan, then approve exits 2 naming it; given a key with a
  // passphrase and no terminal, then approve fails at once (exit 2) instead of waiting.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  std::string bogus = repo_.file("bogus.json");
  testing::write_file(bogus, "{\"hello\": 1}\n");
  auto bad = fabgate("approve " + shell_quoted(bogus) + " --key " + shell_quoted(reviewer_key_) +
                     " --identity reviewer@example.net");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("plan " + bogus), std::string::npos) << bad.output;

  auto plan_dir = plan();
  // An edited plan is refused rather than signed.
  auto plan_json = read_json(plan_dir / "plan.json");
  plan_json["digest_input"]["change"]["steps"][0]["run"] = "rm -rf /";
  // Edited in a copy of its bundle: the bundle no longer verifies (exit 3, nothing signed).
  std::filesystem::path edited_bundle = repo_.file("edited");
  std::filesystem::copy(plan_dir, edited_bundle, std::filesystem::copy_options::recursive);
  testing::write_file((edited_bundle / "plan.json").string(), plan_json.dump());
  auto unverified = fabgate("approve " + shell_quoted(edited_bundle.string()) + " --key " +
                            shell_quoted(reviewer_key_) + " --identity reviewer@example.net");
  EXPECT_EQ(unverified.exit_code, 3) << unverified.output;
  EXPECT_NE(unverified.output.find("does not verify (modified plan.json)"), std::string::npos)
      << unverified.output;
  EXPECT_FALSE(std::filesystem::exists(edited_bundle / "approvals"));
  // Resealed: the plan's own digest check names the edit.
  std::string edited = resealed_copy(plan_dir, "resealed", plan_json.dump());
  auto tampered = fabgate("approve " + shell_quoted(edited) + " --key " +
                          shell_quoted(reviewer_key_) + " --identity reviewer@example.net");
  EXPECT_EQ(tampered.exit_code, 2) << tampered.output;
  EXPECT_NE(tampered.output.find("does not match its content"), std::string::npos)
      << tampered.output;

  std::string locked = make_key("locked", "correct horse battery");
  auto started = std::chrono::steady_clock::now();
  auto out = repo_.run(shell_quoted(testing::kFabgate) + " approve " +
                       shell_quoted(plan_dir.string()) + " --key " + shell_quoted(locked) +
                       " --identity reviewer@example.net --out x.json </dev/null 2>&1");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15));
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("passphrase"), std::string::npos) << out.output;
  EXPECT_FALSE(std::filesystem::exists(repo_.file("x.json")));
}

TEST_F(ApprovalEndToEnd, RequiredRehearsalMustBePresentPassingAndForThisDigest) {
  // Given require_rehearsal: apply without a rehearsal is refused; rehearse passes (exit 0),
  // leaves d1 as it was and writes rehearsal.json bound to the plan digest; apply with it is
  // accepted.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 0, true);
  auto without = fabgate("apply c");
  EXPECT_EQ(without.exit_code, 3) << without.output;
  EXPECT_NE(without.output.find("no --rehearsal was given"), std::string::npos) << without.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");

  std::filesystem::remove_all(evidence_);
  auto plan_dir = plan();
  std::string digest = read_json(plan_dir / "plan.json")["digest"].get<std::string>();
  auto rehearsed = fabgate("rehearse c");
  EXPECT_EQ(rehearsed.exit_code, 0) << rehearsed.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");  // the forced rollback restored it
  auto rehearsal_dir = evidence_of(rehearsed);
  auto record = read_json(rehearsal_dir / "rehearsal.json");
  EXPECT_TRUE(record["passed"].get<bool>()) << record;
  EXPECT_EQ(record["digest"], digest);
  EXPECT_TRUE(record["detection_to_restore_ms"].is_number()) << record;
  EXPECT_EQ(commands_in(rehearsal_dir, "rollback", "d1").size(), 1u);

  // Unsigned, the rehearsal does not count (anyone can write a rehearsal.json and a manifest
  // that matches it); signed with a key allowed_signers lists, it does.
  auto unsigned_rehearsal = fabgate("apply c --rehearsal " + shell_quoted(rehearsal_dir.string()));
  EXPECT_EQ(unsigned_rehearsal.exit_code, 3) << unsigned_rehearsal.output;
  EXPECT_NE(unsigned_rehearsal.output.find("fabgate evidence sign"), std::string::npos)
      << unsigned_rehearsal.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  sign_bundle(rehearsal_dir, reviewer_key_);
  auto applied = fabgate("apply c --rehearsal " + shell_quoted(rehearsal_dir.string()));
  EXPECT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9100\n");
  EXPECT_EQ(read_json(evidence_of(applied) / "manifest.json")["plan_digest"], digest);
}

TEST_F(ApprovalEndToEnd, AFailedOrTamperedOrOutdatedRehearsalDoesNotCount) {
  // Given a change that breaks the service, then rehearse exits 4 (rolled back) and its record
  // says not passed, so apply refuses it; a tampered record and a record of an earlier version
  // of the change are refused too.
  commit_with_policy(change("echo broken >> {home}/d1.conf"), 0, true);
  auto failed = fabgate("rehearse c");
  EXPECT_EQ(failed.exit_code, 4) << failed.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  auto failed_dir = evidence_of(failed);
  EXPECT_FALSE(read_json(failed_dir / "rehearsal.json")["passed"].get<bool>());
  sign_bundle(failed_dir, reviewer_key_);
  auto refused = fabgate("apply c --rehearsal " + shell_quoted(failed_dir.string()));
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  EXPECT_NE(refused.output.find("did not pass"), std::string::npos) << refused.output;

  // A good rehearsal, then the change is edited and recommitted: its digest no longer matches.
  repo_.write("changes/c.yaml", std::regex_replace(change("echo 'mtu 9100' >> {home}/d1.conf"),
                                                   std::regex("\\{home\\}"), sshd_->home()));
  repo_.commit_all("fixed change");
  auto good = fabgate("rehearse c");
  ASSERT_EQ(good.exit_code, 0) << good.output;
  auto good_dir = evidence_of(good);
  sign_bundle(good_dir, reviewer_key_);

  // Editing the record breaks its bundle's integrity.
  const std::string original = read_file((good_dir / "rehearsal.json").string());
  auto forged = read_json(good_dir / "rehearsal.json");
  forged["passed"] = true;
  forged["digest"] = "sha256:0000";
  std::ofstream(good_dir / "rehearsal.json") << forged.dump();
  auto tampered = fabgate("apply c --rehearsal " + shell_quoted(good_dir.string()));
  EXPECT_EQ(tampered.exit_code, 3) << tampered.output;
  EXPECT_NE(tampered.output.find("does not verify (modified rehearsal.json)"), std::string::npos)
      << tampered.output;
  testing::write_file((good_dir / "rehearsal.json").string(), original);

  repo_.write("changes/c.yaml", std::regex_replace(change("echo 'mtu 9200' >> {home}/d1.conf"),
                                                   std::regex("\\{home\\}"), sshd_->home()));
  repo_.commit_all("another mtu");
  auto outdated = fabgate("apply c --rehearsal " + shell_quoted(good_dir.string()));
  EXPECT_EQ(outdated.exit_code, 3) << outdated.output;
  EXPECT_NE(outdated.output.find("the change was modified after the rehearsal"), std::string::npos)
      << outdated.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
}

TEST_F(ApprovalEndToEnd, APlanTheGatesRefusedCannotBeApproved) {
  // Given a change whose baseline probe fails, then plan exits 3, its review.md has no
  // "Approve" section, and approve refuses to sign it (exit 3, nothing written); there is no
  // option to force it.
  commit_with_policy(
      change("echo 'mtu 9100' >> {home}/d1.conf", "cp {home}/d1.bak {home}/d1.conf", "false"), 1);
  auto planned = fabgate("plan c");
  ASSERT_EQ(planned.exit_code, 3) << planned.output;
  auto plan_dir = evidence_of(planned);
  auto review = read_file((plan_dir / "review.md").string());
  EXPECT_EQ(review.find("## Approve"), std::string::npos) << review;
  EXPECT_EQ(review.find("fabgate approve plan.json"), std::string::npos) << review;
  EXPECT_NE(review.find("refuses to sign this plan"), std::string::npos) << review;
  EXPECT_EQ(review.find("accepted"), std::string::npos) << review;

  std::string file = repo_.file("reviewer.json");
  auto refused = approve(plan_dir, reviewer_key_, "reviewer@example.net", file);
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  EXPECT_NE(refused.output.find("is not ready: its gates refused the change"), std::string::npos)
      << refused.output;
  EXPECT_FALSE(std::filesystem::exists(file));
  // plan.json edited to "ready": true: in place the bundle does not verify (exit 3); resealed,
  // the manifest's own "ready": false, covered by the bundle digest, still refuses.
  auto ready_plan = read_json(plan_dir / "plan.json");
  ready_plan["ready"] = true;
  std::filesystem::path in_place = repo_.file("in-place");
  std::filesystem::copy(plan_dir, in_place, std::filesystem::copy_options::recursive);
  testing::write_file((in_place / "plan.json").string(), ready_plan.dump(2));
  auto edited = approve(in_place, reviewer_key_, "reviewer@example.net", file);
  EXPECT_EQ(edited.exit_code, 3) << edited.output;
  EXPECT_NE(edited.output.find("does not verify (modified plan.json)"), std::string::npos)
      << edited.output;
  auto resealed = approve(resealed_copy(plan_dir, "ready-resealed", ready_plan.dump(2)),
                          reviewer_key_, "reviewer@example.net", file);
  EXPECT_EQ(resealed.exit_code, 3) << resealed.output;
  EXPECT_NE(resealed.output.find("is not ready"), std::string::npos) << resealed.output;
  EXPECT_FALSE(std::filesystem::exists(file));
  auto forced = fabgate("approve " + shell_quoted(plan_dir.string()) + " --key " +
                        shell_quoted(reviewer_key_) + " --identity reviewer@example.net --force");
  EXPECT_EQ(forced.exit_code, 2) << forced.output;
  EXPECT_FALSE(std::filesystem::exists(plan_dir / "approvals"));
}

TEST_F(ApprovalEndToEnd, TheApprovalsAnApplyUsedAreCopiedIntoItsBundle) {
  // Given an approval written outside the evidence (as to /tmp) and used by apply, when that
  // file is deleted afterwards, then the apply bundle still holds it byte for byte, signature
  // included, listed and hashed in the manifest, named by the manifest's approval record and
  // by report.md, and the bundle verifies.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  auto plan_dir = plan();
  testing::TempDir elsewhere("fabgate-approval-out");
  std::string file = elsewhere.path() + "/reviewer.json";
  ASSERT_EQ(approve(plan_dir, reviewer_key_, "reviewer@example.net", file).exit_code, 0);
  const std::string signed_text = read_file(file);
  auto applied = fabgate("apply c --approval " + shell_quoted(file));
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  std::filesystem::remove(file);

  auto apply_dir = evidence_of(applied);
  const std::string copy = "approvals/1-reviewer.json";
  EXPECT_EQ(read_file((apply_dir / copy).string()), signed_text);
  EXPECT_NE(signed_text.find("BEGIN SSH SIGNATURE"), std::string::npos);
  auto m = read_json(apply_dir / "manifest.json");
  EXPECT_TRUE(m["files"].contains(copy)) << m["files"];
  ASSERT_EQ(m["approvals"].size(), 1u);
  EXPECT_EQ(m["approvals"][0]["bundle_copy"], copy);
  EXPECT_NE(read_file((apply_dir / "report.md").string())
                .find("reviewer@example.net (valid, copy in " + copy + ")"),
            std::string::npos);
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(apply_dir.string())).exit_code, 0);
  // Editing the copy is tampering.
  testing::write_file((apply_dir / copy).string(), signed_text + " ");
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(apply_dir.string())).exit_code, 3);
}

TEST_F(ApprovalEndToEnd, SignedEvidenceVerifiesOnlyForAListedKeyAndTheManifestItSigned) {
  // Given a plan bundle signed with a CI key that allowed signers lists, then verify with
  // --allowed-signers exits 0 naming the signer; an unsigned bundle, a bundle signed by a key
  // not listed, a manifest rewritten after signing, and a signature made in the plan-approval
  // namespace all exit 3; a bundle that does not match its manifest is not signed (exit 3).
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 0);
  std::string ci_key = make_key("ci");
  std::string other_key = make_key("other");
  std::string signers = repo_.file("evidence_signers");
  testing::write_file(signers, signer_line("ci@example.net", ci_key));
  auto verify = [&](const std::filesystem::path& dir) {
    return fabgate("evidence verify " + shell_quoted(dir.string()) + " --allowed-signers " +
                   shell_quoted(signers));
  };
  auto sign = [&](const std::filesystem::path& dir, const std::string& key) {
    return fabgate("evidence sign " + shell_quoted(dir.string()) + " --key " + shell_quoted(key) +
                   " </dev/null");
  };

  auto bundle = plan();
  auto unsigned_check = verify(bundle);
  EXPECT_EQ(unsigned_check.exit_code, 3) << unsigned_check.output;
  EXPECT_NE(unsigned_check.output.find("signature: unsigned"), std::string::npos)
      << unsigned_check.output;

  auto signed_out = sign(bundle, ci_key);
  ASSERT_EQ(signed_out.exit_code, 0) << signed_out.output;
  EXPECT_NE(read_file((bundle / "manifest.json.sig").string()).find("BEGIN SSH SIGNATURE"),
            std::string::npos);
  auto good = verify(bundle);
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("signature: verified: signed by ci@example.net (SHA256:"),
            std::string::npos)
      << good.output;
  auto json = fabgate("--json evidence verify " + shell_quoted(bundle.string()) +
                      " --allowed-signers " + shell_quoted(signers));
  EXPECT_EQ(json.exit_code, 0) << json.output;
  auto document = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << json.output;
  EXPECT_EQ(document["signature"]["status"], "verified");
  EXPECT_EQ(document["signature"]["signer"], "ci@example.net");
  // Without --allowed-signers the hashes are checked and the signature is only mentioned.
  auto hashes_only = fabgate("evidence verify " + shell_quoted(bundle.string()));
  EXPECT_EQ(hashes_only.exit_code, 0) << hashes_only.output;
  EXPECT_NE(hashes_only.output.find("signature: present, not checked"), std::string::npos)
      << hashes_only.output;

  // A manifest rewritten after signing (its hashes still match the files) no longer verifies.
  const std::string manifest_text = read_file((bundle / "manifest.json").string());
  auto manifest = read_json(bundle / "manifest.json");
  manifest["operator"] = "someone-else";
  testing::write_file((bundle / "manifest.json").string(), manifest.dump(2) + "\n");
  // The bundle digest covers the whole manifest, so even without --allowed-signers.
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(bundle.string())).exit_code, 3);
  auto rewritten = verify(bundle);
  EXPECT_EQ(rewritten.exit_code, 3) << rewritten.output;
  EXPECT_NE(rewritten.output.find("signature: bad-signature"), std::string::npos)
      << rewritten.output;
  testing::write_file((bundle / "manifest.json").string(), manifest_text);
  EXPECT_EQ(verify(bundle).exit_code, 0);

  // Signed by a key allowed signers does not list.
  ASSERT_EQ(sign(bundle, other_key).exit_code, 0);
  auto unknown = verify(bundle);
  EXPECT_EQ(unknown.exit_code, 3) << unknown.output;
  EXPECT_NE(unknown.output.find("signature: unknown-signer"), std::string::npos) << unknown.output;

  // The listed key, but a signature in the plan-approval namespace over the same statement.
  std::string statement = repo_.file("statement");
  testing::write_file(statement,
                      "fabgate.evidence-signature/1\nnamespace: fabgate-evidence\n"
                      "manifest_sha256: " +
                          fabgate::sha256_hex(manifest_text) + "\n");
  ASSERT_EQ(run_shell("ssh-keygen -q -Y sign -f " + shell_quoted(ci_key) + " -n fabgate-plan " +
                      shell_quoted(statement) + " && cp " + shell_quoted(statement + ".sig") + " " +
                      shell_quoted((bundle / "manifest.json.sig").string()))
                .exit_code,
            0);
  auto other_namespace = verify(bundle);
  EXPECT_EQ(other_namespace.exit_code, 3) << other_namespace.output;
  EXPECT_NE(other_namespace.output.find("signature: bad-signature"), std::string::npos)
      << other_namespace.output;

  // A bundle that no longer matches its manifest is not signed.
  testing::write_file((bundle / "review.md").string(), "rewritten\n");
  auto refused = sign(bundle, ci_key);
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  EXPECT_NE(refused.output.find("does not match its manifest; nothing was signed"),
            std::string::npos)
      << refused.output;
}

// ---- the policy comes from the trusted ref, never from the change's commit (issue 31) ----

TEST_F(ApprovalEndToEnd, ACommitThatLowersMinApprovalsIsStillJudgedByTheStricterRulesBeforeIt) {
  // Given min_approvals 1 committed on main, when one more commit carries a new step and
  // quietly sets min_approvals 0, then apply without an approval is still refused (exit 3,
  // nothing sent), the gate names the edit and the ref the policy came from; the plan is then
  // approvable by a listed reviewer and runs.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  EXPECT_EQ(fabgate("apply c").exit_code, 3);
  const std::string policy_commit = repo_.head();
  repo_.run(
      "sed -i 's/min_approvals: 1/min_approvals: 0/; s/mtu 9100/mtu 9200/' "
      "fabgate.yaml changes/c.yaml");
  repo_.commit_all("tidy up");
  std::filesystem::remove_all(evidence_);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_EQ(out.output.find("policy requires no approvals"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("0 valid approvals of 1 required"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("fabgate.yaml approval.min_approvals: 1 -> 0"), std::string::npos)
      << out.output;
  EXPECT_NE(
      out.output.find("approval policy from main at " + repo_.head().substr(0, 12) +
                      " (its tip); the stricter rules of main at " + policy_commit.substr(0, 12) +
                      " (the parent of " + repo_.head().substr(0, 12) +
                      ", which is on main) apply: min_approvals 1 (tip: 0)"),
      std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_TRUE(commands("step", "d1").empty());

  // The review artifact says where the policy came from.
  auto plan_dir = plan();
  auto review = read_file((plan_dir / "review.md").string());
  EXPECT_NE(review.find("- Approval policy: 1 approval(s)"), std::string::npos) << review;
  EXPECT_NE(review.find("- Approval policy read from: main at " + repo_.head().substr(0, 12) +
                        " (its tip); the stricter rules of main at " + policy_commit.substr(0, 12)),
            std::string::npos)
      << review;
  std::string file = repo_.file("reviewer.json");
  ASSERT_EQ(approve(plan_dir, reviewer_key_, "reviewer@example.net", file).exit_code, 0);
  std::filesystem::remove_all(evidence_);
  auto approved = fabgate("apply c --approval " + shell_quoted(file));
  EXPECT_EQ(approved.exit_code, 0) << approved.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9200\n");
}

TEST_F(ApprovalEndToEnd, AKeyTheChangeAddsToAllowedSignersCannotApproveIt) {
  // Given min_approvals 1 on main, when a branch lists a second key of the author's as
  // accomplice@example.net and approves with it, then that approval is an unknown signer at
  // the merge base with main: exit 3, nothing sent.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  const std::string base = repo_.head();
  repo_.run("git checkout -q -b feature");
  std::string second_key = make_key("accomplice");
  repo_.write("policies/allowed_signers", read_file(repo_.file("policies/allowed_signers")) +
                                              signer_line("accomplice@example.net", second_key));
  repo_.commit_all("add a reviewer");
  auto plan_dir = plan();
  std::string file = repo_.file("accomplice.json");
  ASSERT_EQ(approve(plan_dir, second_key, "accomplice@example.net", file).exit_code, 0);
  std::filesystem::remove_all(evidence_);
  auto out = fabgate("apply c --approval " + shell_quoted(file));
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("unknown-signer: accomplice@example.net is not listed in "
                            "policies/allowed_signers at commit " +
                            base.substr(0, 12)),
            std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("policies/allowed_signers: edited"), std::string::npos) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
}

TEST_F(ApprovalEndToEnd, AChangeCannotWaiveItsOwnFailingProbe) {
  // Given no approvals required and a probe that cannot run, when the change's own commit (on
  // its branch, as a pull request) adds an exception waiving it, then the waiver is not in
  // force (it is not at the trusted ref) and the edit to the register needs a reviewer: exit 3
  // and nothing sent; plan shows the probe unwaived.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf", "cp {home}/d1.bak {home}/d1.conf",
                            "/nonexistent/rdma-check"),
                     0);
  repo_.run("git checkout -q -b waiver");
  repo_.write(
      "policies/exceptions.yaml",
      "exceptions:\n  - id: EXC-7\n    scope: {device: d2, rule: \"probe:config-healthy\"}\n"
      "    reason: trust me\n    owner: author@example.net\n    expiry: "
      "2099-01-01T00:00:00Z\n");
  repo_.commit_all("waive the probe");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("edits the approval policy it is judged by "
                            "(policies/exceptions.yaml: added)"),
            std::string::npos)
      << out.output;
  EXPECT_EQ(out.output.find("waived"), std::string::npos) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");

  // The plan says so too, and its baseline probe stays failed: nothing to approve.
  auto planned = fabgate("plan c");
  EXPECT_EQ(planned.exit_code, 3) << planned.output;
  EXPECT_NE(planned.output.find("this change edits the approval policy: apply needs an approval"),
            std::string::npos)
      << planned.output;
  EXPECT_NE(planned.output.find("first disproven: baseline-probes"), std::string::npos)
      << planned.output;
  EXPECT_EQ(planned.output.find("waived"), std::string::npos) << planned.output;
  // The review artifact lists the register at the trusted ref, without the change's waiver.
  auto bundle = evidence_of(planned);
  ASSERT_FALSE(bundle.empty()) << planned.output;
  const std::string review = read_file((bundle / "review.md").string());
  EXPECT_NE(review.find("## Exceptions in force"), std::string::npos) << review;
  EXPECT_EQ(review.find("EXC-7"), std::string::npos) << review;
  EXPECT_NE(review.find("None: nothing is waived."), std::string::npos) << review;
}

TEST_F(ApprovalEndToEnd, WithSignedCommitsAForgedAuthorCannotApproveTheirOwnChange) {
  // Given approval.require_signed_commits on main, when the author signs a commit with their
  // key but names someone else with `git commit --author`, then their own approval is a
  // self-approval by the verified signer (exit 3) and a reviewer's counts (exit 0); an
  // unsigned commit is refused with a clear reason whatever its approvals.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1, false,
                     "  require_signed_commits: true\n");
  repo_.run("sed -i 's/mtu 9100/mtu 9200/' changes/c.yaml");
  auto committed = repo_.run(
      "git add -A && git -c gpg.format=ssh -c user.signingkey=" + shell_quoted(author_key_) +
      " commit -q -S --author 'Somebody <somebody@example.net>' -m forged");
  ASSERT_EQ(committed.exit_code, 0) << committed.output;
  auto plan_dir = plan();
  std::string own = repo_.file("own.json");
  ASSERT_EQ(approve(plan_dir, author_key_, "author@example.net", own).exit_code, 0);
  std::filesystem::remove_all(evidence_);
  auto out = fabgate("apply c --approval " + shell_quoted(own));
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("self-approval: author@example.net signed commit " +
                            repo_.head().substr(0, 12)),
            std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");

  plan_dir = plan();  // the first plan's bundle went with the evidence folder
  std::string reviewer = repo_.file("reviewer.json");
  ASSERT_EQ(approve(plan_dir, reviewer_key_, "reviewer@example.net", reviewer).exit_code, 0);
  std::filesystem::remove_all(evidence_);
  auto approved = fabgate("apply c --approval " + shell_quoted(reviewer));
  EXPECT_EQ(approved.exit_code, 0) << approved.output;

  repo_.run("sed -i 's/mtu 9200/mtu 9300/' changes/c.yaml");
  repo_.commit_all("unsigned");
  auto unsigned_plan = plan();
  std::string again = repo_.file("reviewer-again.json");
  ASSERT_EQ(approve(unsigned_plan, reviewer_key_, "reviewer@example.net", again).exit_code, 0);
  std::filesystem::remove_all(evidence_);
  auto refused = fabgate("apply c --approval " + shell_quoted(again));
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  EXPECT_NE(refused.output.find("commit " + repo_.head().substr(0, 12) + " is not signed"),
            std::string::npos)
      << refused.output;
}

TEST_F(ApprovalEndToEnd, WithoutATrustedRefApplyIsRefusedAndValidateSaysWhy) {
  // Given a repository whose only branch is 'trunk', then apply exits 2 naming
  // approval.policy_ref and nothing is sent; validate says where the policy would come from
  // once main exists.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 0);
  repo_.run("git branch -m main trunk");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("approval.policy_ref: no trusted ref"), std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  repo_.run("git branch main");
  auto validated = fabgate("validate");
  EXPECT_EQ(validated.exit_code, 0) << validated.output;
  EXPECT_NE(validated.output.find("approval  policy from main at " + repo_.head().substr(0, 12)),
            std::string::npos)
      << validated.output;
}

// ---- the change's author is not trusted until the change is approved (issue 42) ----

TEST_F(ApprovalEndToEnd, ABranchFromBeforeTheApprovalRuleIsStillJudgedByIt) {
  // Given main that first required no approvals and then one, when a pull request branches
  // from the commit before the rule (so its merge base has none), then apply without an
  // approval is refused under the tip's rule: exit 3, nothing sent.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 0);
  const std::string before = repo_.head();
  repo_.run("sed -i 's/min_approvals: 0/min_approvals: 1/' fabgate.yaml");
  repo_.commit_all("require a review");
  repo_.run("git checkout -q -b old-base " + before);
  repo_.run("sed -i 's/mtu 9100/mtu 9200/' changes/c.yaml");
  repo_.commit_all("my change");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_EQ(out.output.find("policy requires no approvals"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("0 valid approvals of 1 required"), std::string::npos) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_TRUE(commands("step", "d1").empty());
}

TEST_F(ApprovalEndToEnd, ATagNamedLikeThePolicyBranchCannotLowerThePolicy) {
  // Given main naming release as its policy ref, where release requires an approval, when the
  // author pushes a tag 'release' at a commit of their own whose parent lowers min_approvals
  // to 0, then a short policy_ref is refused (exit 2) and the full one reads the branch
  // (exit 3); nothing is sent either way.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  repo_.run("git branch release");
  repo_.run("git checkout -q -b attack");
  repo_.run("sed -i 's/min_approvals: 1/min_approvals: 0/' fabgate.yaml");
  repo_.commit_all("lower");
  repo_.run("sed -i 's/mtu 9100/mtu 9200/' changes/c.yaml");
  repo_.commit_all("my change");
  repo_.run("git tag release");
  repo_.run("git checkout -q main && printf '  policy_ref: release\\n' >> fabgate.yaml");
  repo_.commit_all("policy from release");
  repo_.run("git checkout -q attack");
  auto short_name = fabgate("apply c");
  EXPECT_EQ(short_name.exit_code, 2) << short_name.output;
  EXPECT_NE(short_name.output.find("is not a full reference name"), std::string::npos)
      << short_name.output;

  repo_.run(
      "git checkout -q main && sed -i 's|policy_ref: release|policy_ref: refs/heads/release|'"
      " fabgate.yaml");
  repo_.commit_all("full name");
  repo_.run("git checkout -q attack");
  auto full = fabgate("apply c");
  EXPECT_EQ(full.exit_code, 3) << full.output;
  EXPECT_NE(full.output.find("0 valid approvals of 1 required"), std::string::npos) << full.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_TRUE(bundles().empty() || commands_in(bundles().back(), "step", "d1").empty());
}

TEST_F(ApprovalEndToEnd, PlanRunsNoProxyCommandThePullRequestChose) {
  // Given main with `ssh: config: none`, when a pull request points ssh.config at a file of
  // its own whose ProxyCommand writes a marker and names a secret in secrets.env, then
  // plan connects with main's settings: the marker is never written, the plan is made (exit
  // 0), and the review lists the fleet edits.
  const std::string marker = pull_request_with_proxy_command("proxy-ran");
  auto out = fabgate_with("FABGATE_RUNNER_TOKEN=runner-secret", "plan c");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the pull request's ProxyCommand ran";
  auto bundle = evidence_of(out);
  ASSERT_FALSE(bundle.empty());
  const std::string review = read_file((bundle / "review.md").string());
  EXPECT_NE(review.find("**Fleet settings this change edits**"), std::string::npos) << review;
  EXPECT_NE(review.find("  - fabgate.yaml: edited"), std::string::npos) << review;
  std::filesystem::remove(marker);
}

TEST_F(ApprovalEndToEnd, APlanDeliversNoSecretAndApplyDoes) {
  // Given main naming FABGATE_TEST_TOKEN in secrets.env and a probe that writes it on the
  // host, then plan (made before anyone approved the change) does not send that probe: the
  // host never sees the value, the probe is no-evidence and the plan is refused (exit 3);
  // apply of the same change delivers it.
  const std::string seen = sshd_->home() + "/seen-token";
  std::string yaml = change("echo 'mtu 9100' >> {home}/d1.conf", "cp {home}/d1.bak {home}/d1.conf",
                            "printf %s $FABGATE_TEST_TOKEN > " + seen);
  reviewer_key_ = make_key("reviewer");
  repo_.write("policies/allowed_signers", signer_line("reviewer@example.net", reviewer_key_));
  commit_intent(yaml, "secrets:\n  env: [FABGATE_TEST_TOKEN]\napproval:\n  min_approvals: 0\n");
  auto planned = fabgate_with("FABGATE_TEST_TOKEN=tok-123", "plan c");
  EXPECT_EQ(planned.exit_code, 3) << planned.output;
  EXPECT_NE(planned.output.find("a plan delivers no secrets"), std::string::npos) << planned.output;
  EXPECT_FALSE(std::filesystem::exists(seen));
  std::filesystem::remove_all(evidence_);
  auto applied = fabgate_with("FABGATE_TEST_TOKEN=tok-123", "apply c");
  EXPECT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_EQ(read_file(seen), "tok-123");
}

TEST_F(ApprovalEndToEnd, AnAuthorCannotApproveTheirChangeAfterAColleaguesFixUp) {
  // Given min_approvals 1, when alice (author@example.net) commits the change on a branch and
  // bob adds a typo fix on top, then alice's signed approval is a self-approval (exit 3,
  // nothing sent) although the tip commit is bob's; a reviewer who made no commit counts.
  commit_with_policy(change("echo 'mtu 9100' >> {home}/d1.conf"), 1);
  repo_.run("git checkout -q -b feature");
  repo_.run("sed -i 's/mtu 9100/mtu 9200/' changes/c.yaml");
  repo_.commit_all("alice's change");
  repo_.run(
      "sed -i 's/test change/test change, typo fixed/' changes/c.yaml && git add -A && "
      "git -c user.name=Bob -c user.email=bob@example.net commit -q -m typo");
  auto plan_dir = plan();
  std::string own = repo_.file("alice.json");
  ASSERT_EQ(approve(plan_dir, author_key_, "author@example.net", own).exit_code, 0);
  std::filesystem::remove_all(evidence_);
  auto out = fabgate("apply c --approval " + shell_quoted(own));
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("self-approval: author@example.net authored commit"), std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");

  plan_dir = plan();
  std::string reviewer = repo_.file("reviewer.json");
  ASSERT_EQ(approve(plan_dir, reviewer_key_, "reviewer@example.net", reviewer).exit_code, 0);
  std::filesystem::remove_all(evidence_);
  auto approved = fabgate("apply c --approval " + shell_quoted(reviewer));
  EXPECT_EQ(approved.exit_code, 0) << approved.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9200\n");
}

TEST_F(ApprovalEndToEnd, SnapshotOnAPullRequestCheckoutUsesTheTrustedSettingsToo) {
  // Given a pull request whose fabgate.yaml points ssh.config at a ProxyCommand that writes a
  // marker, when `fabgate snapshot` runs on that checkout, then it connects with main's
  // settings: the marker is never written and d1 is collected (exit 0).
  const std::string marker = pull_request_with_proxy_command("snapshot-proxy-ran");
  auto out = fabgate("snapshot d1 --output " + shell_quoted(repo_.file("../snap.json")));
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the pull request's ProxyCommand ran";
  std::filesystem::remove(marker);
}

}  // namespace
}  // namespace fabgate
