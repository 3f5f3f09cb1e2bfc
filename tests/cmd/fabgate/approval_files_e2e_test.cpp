// End-to-end: how apply reads the approval files it is given, and what `evidence verify` and
// `evidence show` claim about a bundle, through the fabgate binary, a real git repository, a
// real sshd and real ssh-keygen with keys made here. Asserted is what an operator or auditor
// sees: exit codes, the words on the terminal, what the devices ended up with, and what the
// evidence bundle holds.

#include "adapters/core/sha256.h"
#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::change;
using testing::FabgateEndToEnd;
using testing::read_file;
using testing::run_shell;
using testing::shell_quoted;

class ApprovalFilesEndToEnd : public FabgateEndToEnd {
 protected:
  void SetUp() override {
    FabgateEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (run_shell("command -v ssh-keygen").exit_code != 0) GTEST_SKIP() << "ssh-keygen missing";
  }

  std::string make_key(const std::string& name) {
    std::string key = sshd_->dir() + "/" + name;
    auto made = run_shell("ssh-keygen -q -t ed25519 -C " + name + " -N '' -f " + shell_quoted(key));
    EXPECT_EQ(made.exit_code, 0) << made.output;
    return key;
  }

  // min_approvals `min_approvals`, reviewer@example.net listed in allowed_signers.
  void commit_with_reviewer(int min_approvals) {
    reviewer_key_ = make_key("reviewer");
    repo_.write("policies/allowed_signers",
                "reviewer@example.net " + read_file(reviewer_key_ + ".pub"));
    commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"),
                  "approval:\n  min_approvals: " + std::to_string(min_approvals) + "\n");
  }

  std::filesystem::path plan() {
    auto out = fabgate("plan c");
    EXPECT_EQ(out.exit_code, 0) << out.output;
    return evidence_of(out);
  }

  // The reviewer's approval of `plan_dir`, written to `out`.
  void approve(const std::filesystem::path& plan_dir, const std::string& out) {
    auto approved = fabgate("approve " + shell_quoted(plan_dir.string()) + " --key " +
                            shell_quoted(reviewer_key_) +
                            " --identity reviewer@example.net --out " + shell_quoted(out));
    ASSERT_EQ(approved.exit_code, 0) << approved.output;
  }

  // The files under `bundle`/approvals, by name.
  static std::vector<std::string> copies_in(const std::filesystem::path& bundle) {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(bundle / "approvals", error))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string reviewer_key_;
};

TEST_F(ApprovalFilesEndToEnd, ASymbolicLinkToAnApprovalIsRefusedAndNotCounted) {
  // Given a valid approval reached through a symbolic link, given as a file and inside an
  // approvals folder, then apply is refused (exit 3, nothing sent): the link is named, said to
  // be a symbolic link, recorded as not counted and not copied; the file itself is then
  // accepted (exit 0), so it was the link that was refused.
  commit_with_reviewer(1);
  auto plan_dir = plan();
  testing::TempDir elsewhere("fabgate-approval-link");
  const std::string file = elsewhere.path() + "/reviewer.json";
  approve(plan_dir, file);
  const std::string link = elsewhere.path() + "/linked.json";
  std::filesystem::create_symlink(file, link);
  const std::string folder = elsewhere.path() + "/approvals";
  std::filesystem::create_directory(folder);
  std::filesystem::create_symlink(file, folder + "/reviewer.json");

  for (const std::string& given : {link, folder}) {
    const std::string named = given == link ? link : folder + "/reviewer.json";
    auto out = fabgate("apply c --approval " + shell_quoted(given));
    EXPECT_EQ(out.exit_code, 3) << out.output;
    EXPECT_NE(out.output.find("0 valid approvals of 1 required"), std::string::npos) << out.output;
    EXPECT_NE(out.output.find("approval " + named + ": is a symbolic link, refused"),
              std::string::npos)
        << out.output;
    EXPECT_EQ(config("d1"), "mtu 9000\n");
    auto bundle = evidence_of(out);
    EXPECT_TRUE(commands_in(bundle, "step", "d1").empty());
    auto m = read_json(bundle / "manifest.json");
    ASSERT_EQ(m["approvals"].size(), 1u) << m["approvals"];
    EXPECT_EQ(m["approvals"][0]["file"], named);
    EXPECT_EQ(m["approvals"][0]["outcome"], "unreadable");
    EXPECT_FALSE(m["approvals"][0]["counted"].get<bool>());
    EXPECT_EQ(m["approvals"][0]["bundle_copy"], "");
    EXPECT_TRUE(copies_in(bundle).empty());
  }

  auto applied = fabgate("apply c --approval " + shell_quoted(file));
  EXPECT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9100\n");
}

TEST_F(ApprovalFilesEndToEnd, OnlyTheApprovalsOfAnApprovalsFolderAreCopiedIntoTheBundle) {
  // Given an approvals folder holding the reviewer's approval, a JSON file that is no approval
  // and a note, then apply counts the approval and exits 0; the bundle holds a copy of the
  // approval only, byte for byte; the JSON file is listed as unreadable ("not an approval") and
  // the note as "not an approval (not a .json file), not copied"; the bundle verifies.
  commit_with_reviewer(1);
  auto plan_dir = plan();
  testing::TempDir elsewhere("fabgate-approval-folder");
  const std::string folder = elsewhere.path() + "/approvals";
  std::filesystem::create_directory(folder);
  approve(plan_dir, folder + "/b-reviewer.json");
  testing::write_file(folder + "/a-settings.json", "{\"hello\": 1}\n");
  testing::write_file(folder + "/notes.txt", "reviewed on the call\n");
  const std::string signed_text = read_file(folder + "/b-reviewer.json");

  auto out = fabgate("apply c --approval " + shell_quoted(folder));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9100\n");
  // A passing gate's details are in report.md's findings.
  auto bundle = evidence_of(out);
  const std::string report = read_file((bundle / "report.md").string());
  EXPECT_NE(report.find(folder + "/a-settings.json: unreadable: approval " + folder +
                        "/a-settings.json: not an approval: its format is not "
                        "fabgate.approval/1"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(folder + "/notes.txt: not an approval (not a .json file), not copied"),
            std::string::npos)
      << report;

  EXPECT_EQ(copies_in(bundle), std::vector<std::string>{"2-b-reviewer.json"});
  EXPECT_EQ(read_file((bundle / "approvals/2-b-reviewer.json").string()), signed_text);
  auto m = read_json(bundle / "manifest.json");
  ASSERT_EQ(m["approvals"].size(), 2u) << m["approvals"];
  EXPECT_EQ(m["approvals"][0]["outcome"], "unreadable");
  EXPECT_EQ(m["approvals"][0]["bundle_copy"], "");
  EXPECT_EQ(m["approvals"][1]["outcome"], "valid");
  EXPECT_EQ(m["approvals"][1]["bundle_copy"], "approvals/2-b-reviewer.json");
  for (const auto& [path, hash] : m["files"].items())
    EXPECT_EQ(path.find("settings"), std::string::npos) << path;
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(bundle.string())).exit_code, 0);
}

TEST_F(ApprovalFilesEndToEnd, AResealedBundleIsIntactButOnlyItsSignatureSaysWhoWroteIt) {
  // Given a signed plan bundle whose review.md is rewritten and whose manifest is resealed as a
  // forger would (the file's sha256 and the bundle digest recomputed), then `evidence verify`
  // without a key still exits 0 (the hashes match) but says that is integrity only, not
  // authenticity, in words and in --json; `evidence show` says the same; with
  // --allowed-signers it exits 3 because the signature is not over this manifest, while the
  // untouched bundle verifies naming its signer.
  commit_with_reviewer(0);
  const std::string ci_key = make_key("ci");
  const std::string signers = repo_.file("evidence_signers");
  testing::write_file(signers, "ci@example.net " + read_file(ci_key + ".pub"));
  auto bundle = plan();
  auto signed_out = fabgate("evidence sign " + shell_quoted(bundle.string()) + " --key " +
                            shell_quoted(ci_key) + " </dev/null");
  ASSERT_EQ(signed_out.exit_code, 0) << signed_out.output;

  std::filesystem::path forged = repo_.file("forged");
  std::filesystem::copy(bundle, forged, std::filesystem::copy_options::recursive);
  const std::string review = "# Review\n\nNothing to see here: approve at once.\n";
  testing::write_file((forged / "review.md").string(), review);
  auto manifest = read_json(forged / "manifest.json");
  manifest["files"]["review.md"] = fabgate::sha256_hex(review);
  manifest.erase("bundle_sha256");
  manifest["bundle_sha256"] = fabgate::sha256_hex(manifest.dump());
  testing::write_file((forged / "manifest.json").string(), manifest.dump(2) + "\n");

  const std::string quoted = shell_quoted(forged.string());
  auto hashes_only = fabgate("evidence verify " + quoted);
  EXPECT_EQ(hashes_only.exit_code, 0) << hashes_only.output;
  EXPECT_NE(hashes_only.output.find(
                "intact: every file matches manifest.json (integrity only, not authenticity)"),
            std::string::npos)
      << hashes_only.output;
  EXPECT_NE(hashes_only.output.find("authenticity: not checked: anyone who can write the bundle "
                                    "can edit it and reseal its manifest"),
            std::string::npos)
      << hashes_only.output;
  EXPECT_NE(hashes_only.output.find("pass --allowed-signers FILE to check who signed it"),
            std::string::npos)
      << hashes_only.output;
  auto json = fabgate("--json evidence verify " + quoted);
  EXPECT_EQ(json.exit_code, 0) << json.output;
  auto document = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << json.output;
  EXPECT_EQ(document["intact"], true);
  EXPECT_EQ(document["authenticity"], "not-checked");

  auto shown = fabgate("evidence show " + quoted);
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("integrity: intact (every file matches manifest.json; integrity "
                              "only, not authenticity)"),
            std::string::npos)
      << shown.output;
  EXPECT_NE(shown.output.find("authenticity: not checked: anyone who can write the bundle can "
                              "edit it and reseal its manifest\n"
                              "  check who signed it: fabgate evidence verify DIR "
                              "--allowed-signers FILE"),
            std::string::npos)
      << shown.output;
  auto shown_json = fabgate("--json evidence show " + quoted);
  EXPECT_EQ(nlohmann::json::parse(shown_json.output, nullptr, false)["authenticity"], "not-checked")
      << shown_json.output;

  auto with_key =
      fabgate("evidence verify " + quoted + " --allowed-signers " + shell_quoted(signers));
  EXPECT_EQ(with_key.exit_code, 3) << with_key.output;
  EXPECT_NE(with_key.output.find("signature: bad-signature"), std::string::npos) << with_key.output;
  EXPECT_NE(with_key.output.find("TAMPERED"), std::string::npos) << with_key.output;
  auto with_key_json =
      fabgate("--json evidence verify " + quoted + " --allowed-signers " + shell_quoted(signers));
  EXPECT_EQ(nlohmann::json::parse(with_key_json.output, nullptr, false)["authenticity"], "failed")
      << with_key_json.output;

  auto original = fabgate("--json evidence verify " + shell_quoted(bundle.string()) +
                          " --allowed-signers " + shell_quoted(signers));
  EXPECT_EQ(original.exit_code, 0) << original.output;
  auto verified = nlohmann::json::parse(original.output, nullptr, false);
  EXPECT_EQ(verified["authenticity"], "verified") << original.output;
  EXPECT_EQ(verified["signature"]["signer"], "ci@example.net") << original.output;
}

}  // namespace
}  // namespace fabgate
