// Signed evidence bundles with real ssh-keygen and keys made here (no ~/.ssh): which signatures
// verify against allowed signers, and which do not.

#include "gates/approval/evidence_signature.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "adapters/core/sha256.h"
#include "gates/pipeline/reporting/evidence.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace fabgate::approval {
namespace {

using testing::read_file;
using testing::run_shell;
using testing::shell_quoted;

class EvidenceSignatureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run_shell("command -v ssh-keygen").exit_code != 0) GTEST_SKIP() << "ssh-keygen missing";
    ci_ = key("ci");
    stranger_ = key("stranger");
    signers_ = "ci@example.net " + read_file(ci_ + ".pub");
    auto created = pipeline::EvidenceBundle::create(dir_.file("evidence"), "c", now_utc(),
                                                    pipeline::new_run_id(), Redactor{});
    ASSERT_TRUE(created.ok());
    ASSERT_TRUE(created.value()->write("report.md", "# report\n").ok());
    ASSERT_TRUE(created.value()->finish({{"format", "fabgate.evidence/1"}}).ok());
    bundle_ = created.value()->dir();
  }
  std::string key(const std::string& name) {
    std::string path = dir_.file(name);
    auto made =
        run_shell("ssh-keygen -q -t ed25519 -N '' -C " + name + " -f " + shell_quoted(path));
    EXPECT_EQ(made.exit_code, 0) << made.output;
    return path;
  }
  BundleSignatureCheck check() {
    return check_bundle_signature(bundle_, read_file((bundle_ / "manifest.json").string()),
                                  signers_, keygen_);
  }

  testing::TempDir dir_{"fabgate-evidence-sign"};
  SshKeygen keygen_{Duration{20'000}, "ssh-keygen", kEvidenceNamespace};
  std::string ci_, stranger_, signers_;
  std::filesystem::path bundle_;
};

TEST_F(EvidenceSignatureTest, AListedKeyOverThisManifestVerifies) {
  // Given a bundle signed with the CI key that allowed signers lists, then the signature
  // verifies, naming the principal and the key; manifest.json.sig does not make the bundle
  // fail its hash check.
  EXPECT_EQ(check().status, BundleSignatureStatus::unsigned_bundle);
  auto signed_bundle = sign_bundle(bundle_, ci_, keygen_, Prompt::never);
  ASSERT_TRUE(signed_bundle.ok()) << signed_bundle.error().message;
  EXPECT_EQ(signed_bundle->manifest_sha256,
            sha256_hex(read_file((bundle_ / "manifest.json").string())));
  auto verified = check();
  EXPECT_EQ(verified.status, BundleSignatureStatus::verified) << verified.reason;
  EXPECT_EQ(verified.signer, "ci@example.net");
  EXPECT_EQ(verified.key.rfind("SHA256:", 0), 0u) << verified.key;
  auto hashes = pipeline::verify_bundle(bundle_);
  ASSERT_TRUE(hashes.ok());
  EXPECT_TRUE(hashes->intact());
}

TEST_F(EvidenceSignatureTest, ARewrittenManifestOrAnUnlistedKeyDoesNotVerify) {
  // Given a signed bundle whose manifest is then rewritten, then the signature is bad; given a
  // bundle signed by a key allowed signers does not list, then the signer is unknown.
  ASSERT_TRUE(sign_bundle(bundle_, ci_, keygen_, Prompt::never).ok());
  testing::write_file((bundle_ / "manifest.json").string(),
                      read_file((bundle_ / "manifest.json").string()) + " ");
  EXPECT_EQ(check().status, BundleSignatureStatus::bad_signature);

  ASSERT_TRUE(sign_bundle(bundle_, stranger_, keygen_, Prompt::never).ok());
  auto unknown = check();
  EXPECT_EQ(unknown.status, BundleSignatureStatus::unknown_signer) << unknown.reason;
}

TEST_F(EvidenceSignatureTest, AnApprovalSignatureIsNotAnEvidenceSignature) {
  // Given the statement of this bundle signed by the listed key in the plan-approval namespace,
  // then it does not verify as the bundle's signature.
  SshKeygen plan_keygen;  // fabgate-plan
  auto statement = evidence_statement(sha256_hex(read_file((bundle_ / "manifest.json").string())));
  auto signature = plan_keygen.sign(ci_, statement, Prompt::never);
  ASSERT_TRUE(signature.ok()) << signature.error().message;
  testing::write_file((bundle_ / pipeline::kManifestSignatureFile).string(), signature.value());
  EXPECT_EQ(check().status, BundleSignatureStatus::bad_signature);
}

TEST_F(EvidenceSignatureTest, ABundleThatDoesNotMatchItsManifestIsNotSigned) {
  // Given a file edited after the bundle was sealed, then signing is refused (exit 3) and no
  // signature is written.
  testing::write_file((bundle_ / "report.md").string(), "# edited\n");
  auto refused = sign_bundle(bundle_, ci_, keygen_, Prompt::never);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().exit_code, ExitCode::refused);
  EXPECT_FALSE(std::filesystem::exists(bundle_ / pipeline::kManifestSignatureFile));
}

TEST_F(EvidenceSignatureTest, AManifestNamingAPathOutsideTheBundleIsNotSigned) {
  // Given a manifest that lists /etc/passwd and ../<file> with their true sha256 and a
  // recomputed bundle digest, then signing is refused (exit 3) and no signature is written:
  // a signature never vouches for files outside the bundle.
  const std::string outside = dir_.file("outside.txt");
  testing::write_file(outside, "outside\n");
  const std::string relative =
      std::filesystem::relative(outside, bundle_).generic_string();  // ../../outside.txt
  for (const std::string& path : {std::string("/etc/passwd"), relative}) {
    SCOPED_TRACE(path);
    auto manifest = nlohmann::json::parse(read_file((bundle_ / "manifest.json").string()));
    manifest["files"][path] = sha256_hex(read_file(path[0] == '/' ? path : outside));
    manifest["bundle_sha256"] = pipeline::manifest_digest(manifest);
    testing::write_file((bundle_ / "manifest.json").string(), manifest.dump(2));
    auto refused = sign_bundle(bundle_, ci_, keygen_, Prompt::never);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().exit_code, ExitCode::refused);
    EXPECT_FALSE(std::filesystem::exists(bundle_ / pipeline::kManifestSignatureFile));
    manifest["files"].erase(path);
    manifest["bundle_sha256"] = pipeline::manifest_digest(manifest);
    testing::write_file((bundle_ / "manifest.json").string(), manifest.dump(2));
  }
}

}  // namespace
}  // namespace fabgate::approval
