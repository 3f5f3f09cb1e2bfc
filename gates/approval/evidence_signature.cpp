#include "gates/approval/evidence_signature.h"

#include <fstream>
#include <iterator>
#include <optional>

#include "adapters/core/sha256.h"
#include "adapters/core/text.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::approval {
namespace {

std::optional<std::string> read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

std::string evidence_statement(const std::string& manifest_sha256) {
  return std::string("fabgate.evidence-signature/1\nnamespace: ") + kEvidenceNamespace +
         "\nmanifest_sha256: " + manifest_sha256 + "\n";
}

Result<SignedBundle> sign_bundle(const std::filesystem::path& dir, const std::string& key_file,
                                 SignatureTool& tool, Prompt prompt) {
  auto check = pipeline::verify_bundle(dir);
  if (!check.ok()) return std::move(check).error();
  if (!check->intact())
    return Error::refused("evidence sign: " + dir.string() +
                              ": the bundle does not match its manifest; nothing was signed",
                          {"run fabgate evidence verify " + dir.string() + " to see which files"});
  // The manifest bytes the check read and proved are the bytes signed.
  SignedBundle signed_bundle;
  signed_bundle.manifest_sha256 = sha256_hex(check->manifest_text);
  auto signature = tool.sign(key_file, evidence_statement(signed_bundle.manifest_sha256), prompt);
  if (!signature.ok()) {
    std::string message = "evidence sign: " + signature.error().message;
    return signature.error().kind == SignatureFailure::Kind::key_unusable
               ? Error::invalid_input(message)
               : Error::internal(message);
  }
  signed_bundle.signature_file = dir / pipeline::kManifestSignatureFile;
  auto written = pipeline::write_file_atomically(signed_bundle.signature_file, signature.value());
  if (!written.ok()) return std::move(written).error();
  return signed_bundle;
}

std::string_view to_string(BundleSignatureStatus status) {
  switch (status) {
    case BundleSignatureStatus::verified:
      return "verified";
    case BundleSignatureStatus::unsigned_bundle:
      return "unsigned";
    case BundleSignatureStatus::unknown_signer:
      return "unknown-signer";
    case BundleSignatureStatus::bad_signature:
      return "bad-signature";
    case BundleSignatureStatus::not_verified:
      return "not-verified";
  }
  return "not-verified";
}

BundleSignatureCheck check_bundle_signature(const std::filesystem::path& dir,
                                            std::string_view manifest_text,
                                            std::string_view allowed_signers, SignatureTool& tool) {
  using Status = BundleSignatureStatus;
  BundleSignatureCheck check;
  auto signature = read_bytes(dir / pipeline::kManifestSignatureFile);
  if (!signature) {
    check.status = Status::unsigned_bundle;
    check.reason = "no " + std::string(pipeline::kManifestSignatureFile) +
                   ": the bundle was never signed (fabgate evidence sign)";
    return check;
  }
  auto principals = tool.find_principals(allowed_signers, *signature);
  if (!principals.ok()) {
    check.status = Status::not_verified;
    check.reason = principals.error().message;
    return check;
  }
  if (principals->empty()) {
    check.status = Status::unknown_signer;
    check.reason =
        "the key that made the signature is not listed in allowed signers (or the "
        "file is not an SSH signature)";
    return check;
  }
  const std::string statement = evidence_statement(sha256_hex(manifest_text));
  std::string last_reason;
  for (const auto& principal : principals.value()) {
    auto verified = tool.verify(allowed_signers, principal, statement, *signature);
    if (verified.ok()) {
      check.status = Status::verified;
      check.signer = principal;
      check.key = verified->key_fingerprint;
      check.reason = "signed by " + principal + " (" + check.key + ")";
      return check;
    }
    if (verified.error().kind != SignatureFailure::Kind::rejected) {
      check.status = Status::not_verified;
      check.reason = verified.error().message;
      return check;
    }
    last_reason = verified.error().message;
  }
  check.status = Status::bad_signature;
  check.reason = "the signature by " + join(principals.value(), ", ") +
                 " does not match this manifest (rewritten after signing, or signed in another "
                 "namespace): " +
                 last_reason;
  return check;
}

}  // namespace fabgate::approval
