#pragma once

// SSH signatures over approval statements. The real tool is OpenSSH's `ssh-keygen -Y`, so
// approvers use the keys they already have (files, ssh-agent, hardware keys) and verification
// uses the allowed_signers format git also uses for signed commits.

#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"

namespace fabgate::approval {

// The signature namespace of plan approvals: a signature made for git commits or for another
// tool never verifies as a plan approval.
inline constexpr const char* kSignatureNamespace = "fabgate-plan";
// The namespace of evidence bundle signatures (`fabgate evidence sign`): an approval signature
// never verifies as a signed bundle, nor a bundle signature as an approval.
inline constexpr const char* kEvidenceNamespace = "fabgate-evidence";

struct SignatureFailure {
  enum class Kind {
    tool_missing,  // ssh-keygen is not installed
    timed_out,     // it ran past its deadline and was killed
    key_unusable,  // the key could not be read or needs a passphrase nobody can type
    rejected,      // the signature does not verify for that principal
    io,            // a temporary file could not be written
    no_key,        // it accepted the signature but did not say which key made it
  };
  Kind kind;
  std::string message;
};

// What a successful verification proved: which key made the signature.
struct VerifiedSignature {
  // "SHA256:<base64>", as `ssh-keygen -lf` prints it; for a certificate, of the key it
  // certifies. Approvals are counted per key, not per principal name.
  std::string key_fingerprint;
};

// Whether signing may prompt for a key passphrase on the terminal.
enum class Prompt { never, on_terminal };

class SignatureTool {
 public:
  virtual ~SignatureTool() = default;
  // The armored signature ("-----BEGIN SSH SIGNATURE-----...") of `message` by `key_file` (a
  // private key, or a public key whose private half ssh-agent holds).
  virtual Expected<std::string, SignatureFailure> sign(const std::string& key_file,
                                                       std::string_view message, Prompt prompt) = 0;
  // The signing key when `signature` over `message` was made by a key that `allowed_signers`
  // (the file's text) lists for `principal` in the tool's namespace.
  virtual Expected<VerifiedSignature, SignatureFailure> verify(std::string_view allowed_signers,
                                                               const std::string& principal,
                                                               std::string_view message,
                                                               std::string_view signature) = 0;
  // The principals `allowed_signers` lists for the key that made `signature` (proving nothing
  // yet: verify() then checks the signature for one of them). Empty when no line lists that key.
  virtual Expected<std::vector<std::string>, SignatureFailure> find_principals(
      std::string_view allowed_signers, std::string_view signature) = 0;
};

// ssh-keygen -Y sign / -Y verify, run as a child process with a deadline and no shell, in one
// signature namespace (fabgate-plan unless told otherwise).
class SshKeygen final : public SignatureTool {
 public:
  explicit SshKeygen(Duration deadline = Duration{20'000}, std::string program = "ssh-keygen",
                     std::string signature_namespace = kSignatureNamespace);
  Expected<std::string, SignatureFailure> sign(const std::string& key_file,
                                               std::string_view message, Prompt prompt) override;
  // The fingerprint is the one ssh-keygen prints on success ("Good ... signature for P with
  // ED25519 key SHA256:..."): it comes from the process that proved the signature, and for a
  // certificate it is the certified key's, so one key with two certificates is still one key.
  Expected<VerifiedSignature, SignatureFailure> verify(std::string_view allowed_signers,
                                                       const std::string& principal,
                                                       std::string_view message,
                                                       std::string_view signature) override;
  Expected<std::vector<std::string>, SignatureFailure> find_principals(
      std::string_view allowed_signers, std::string_view signature) override;

 private:
  Duration deadline_;
  std::string program_;
  std::string namespace_;
};

}  // namespace fabgate::approval
