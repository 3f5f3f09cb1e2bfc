#pragma once

// Signed evidence bundles: `fabgate evidence sign` signs the sha256 of a sealed bundle's
// manifest.json with ssh-keygen -Y sign in the fabgate-evidence namespace and writes the
// signature next to it (manifest.json.sig); `fabgate evidence verify --allowed-signers FILE`
// checks that signature for a key the file lists. The manifest holds the sha256 of every other
// file and the run's headline fields, so a signature over it covers the whole bundle: a
// rewritten manifest (new hashes for edited files, another exit code) no longer matches what
// was signed.

#include <filesystem>
#include <string>
#include <string_view>

#include "adapters/core/result.h"
#include "gates/approval/signature_tool.h"

namespace fabgate::approval {

// The exact bytes signed: a version line, the namespace, and the manifest's sha256 (hex).
std::string evidence_statement(const std::string& manifest_sha256);

struct SignedBundle {
  std::string manifest_sha256;
  std::filesystem::path signature_file;
};

// Signs the bundle in `dir` with `key_file`. Refused (exit 3) when the bundle does not verify
// against its manifest: signing it would vouch for files nobody can trust. Invalid input when
// `dir` is no sealed bundle or the key cannot sign; internal when ssh-keygen cannot run.
// `tool` must sign in kEvidenceNamespace.
Result<SignedBundle> sign_bundle(const std::filesystem::path& dir, const std::string& key_file,
                                 SignatureTool& tool, Prompt prompt);

enum class BundleSignatureStatus {
  verified,         // a key allowed_signers lists signed this manifest
  unsigned_bundle,  // no manifest.json.sig
  unknown_signer,   // the key that signed is not listed in allowed_signers
  bad_signature,    // a listed key, but not over this manifest (rewritten manifest), or a
                    // signature in another namespace, or not a signature at all
  not_verified,     // ssh-keygen could not run or timed out: nothing was proven
};
std::string_view to_string(BundleSignatureStatus status);

struct BundleSignatureCheck {
  BundleSignatureStatus status = BundleSignatureStatus::not_verified;
  std::string signer;  // the principal it verified for
  std::string key;     // "SHA256:..." of the signing key, when verified
  std::string reason;  // in words, for people
};

// Checks `dir`'s manifest.json.sig against `manifest_text` (the manifest.json bytes that
// verify_bundle read and checked: pipeline::BundleCheck::manifest_text), for a key that
// `allowed_signers` (the file's text) lists. `tool` must verify in kEvidenceNamespace.
BundleSignatureCheck check_bundle_signature(const std::filesystem::path& dir,
                                            std::string_view manifest_text,
                                            std::string_view allowed_signers, SignatureTool& tool);

}  // namespace fabgate::approval
