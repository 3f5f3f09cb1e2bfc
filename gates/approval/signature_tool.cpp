#include "gates/approval/signature_tool.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "adapters/core/text.h"
#include "gates/approval/child_process.h"

namespace fabgate::approval {
namespace {

// A private temporary folder (mode 0700) removed with its content when the object dies.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fabgate-sign.XXXXXX").string();
    if (::mkdtemp(pattern.data())) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  bool ok() const { return !path_.empty(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

bool write_text(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(out);
}

// Why ssh-keygen failed, in one line: its last non-empty stderr line says it best.
std::string reason(const ChildResult& run) {
  auto lines = split_lines(run.err);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!trim(*it).empty()) return std::string(trim(*it));
  return "exit status " + std::to_string(run.exit_status);
}

// Runs ssh-keygen; a child that could not start, timed out or is not installed is the failure
// every operation reports alike ("ssh-keygen -Y <operation> timed out after 20s").
Expected<ChildResult, SignatureFailure> run_tool(const std::string& program,
                                                 const ChildRequest& request,
                                                 const std::string& operation) {
  using Kind = SignatureFailure::Kind;
  auto run = run_child(request);
  if (!run.ok())
    return SignatureFailure{Kind::tool_missing, program + " could not run: " + run.error().message};
  if (run->timed_out)
    return SignatureFailure{Kind::timed_out, program + " -Y " + operation + " timed out after " +
                                                 format_duration(request.deadline)};
  if (run->exit_status == 127)
    return SignatureFailure{Kind::tool_missing, program + " is not installed"};
  return std::move(*run);
}

// The allowed-signers text and the signature as the files ssh-keygen reads, in `scratch`.
std::optional<SignatureFailure> write_signer_files(const ScratchDir& scratch,
                                                   std::string_view allowed_signers,
                                                   std::string_view signature) {
  if (!scratch.ok())
    return SignatureFailure{SignatureFailure::Kind::io, "cannot create a temporary folder"};
  if (!write_text(scratch.file("allowed_signers"), allowed_signers) ||
      !write_text(scratch.file("signature"), signature))
    return SignatureFailure{SignatureFailure::Kind::io, "cannot write temporary files"};
  return std::nullopt;
}

}  // namespace

SshKeygen::SshKeygen(Duration deadline, std::string program, std::string signature_namespace)
    : deadline_(deadline),
      program_(std::move(program)),
      namespace_(std::move(signature_namespace)) {}

Expected<std::string, SignatureFailure> SshKeygen::sign(const std::string& key_file,
                                                        std::string_view message, Prompt prompt) {
  using Kind = SignatureFailure::Kind;
  if (!std::filesystem::exists(key_file))
    return SignatureFailure{Kind::key_unusable, "key " + key_file + " does not exist"};
  ScratchDir scratch;
  if (!scratch.ok()) return SignatureFailure{Kind::io, "cannot create a temporary folder"};
  // The statement goes in a file rather than on stdin: stdin is where ssh-keygen falls back to
  // for a passphrase when there is no terminal.
  const std::string statement = scratch.file("statement");
  if (!write_text(statement, message))
    return SignatureFailure{Kind::io, "cannot write " + statement};
  ChildRequest request;
  request.argv = {program_, "-q", "-Y", "sign", "-f", key_file, "-n", namespace_, statement};
  // Someone typing a passphrase gets longer than a machine.
  request.deadline = prompt == Prompt::on_terminal ? Duration{120'000} : deadline_;
  request.terminal = prompt == Prompt::on_terminal ? Terminal::inherited : Terminal::detached;
  request.extra_env = {"SSH_ASKPASS_REQUIRE=never"};  // no graphical prompt either
  auto run = run_tool(program_, request, "sign");
  if (!run.ok()) return run.error();
  std::ifstream in(statement + ".sig", std::ios::binary);
  std::string signature((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (run->exit_status != 0 || signature.empty()) {
    std::string why = reason(*run);
    if (prompt == Prompt::never)
      why +=
          " (a key with a passphrase needs a terminal, or load it into ssh-agent with "
          "ssh-add and pass its .pub file)";
    return SignatureFailure{Kind::key_unusable,
                            "ssh-keygen could not sign with " + key_file + ": " + why};
  }
  return signature;
}

Expected<VerifiedSignature, SignatureFailure> SshKeygen::verify(std::string_view allowed_signers,
                                                                const std::string& principal,
                                                                std::string_view message,
                                                                std::string_view signature) {
  using Kind = SignatureFailure::Kind;
  ScratchDir scratch;
  if (auto failed = write_signer_files(scratch, allowed_signers, signature)) return *failed;
  ChildRequest request;
  request.argv = {program_,  "-Y", "verify",   "-f", scratch.file("allowed_signers"), "-I",
                  principal, "-n", namespace_, "-s", scratch.file("signature")};
  request.input = std::string(message);
  request.deadline = deadline_;
  auto run = run_tool(program_, request, "verify");
  if (!run.ok()) return run.error();
  if (run->exit_status != 0) return SignatureFailure{Kind::rejected, reason(*run)};
  // Without the key an approval cannot be counted per key, so a verified signature whose key
  // went unnamed proves nothing countable.
  for (const auto& line : split_lines(run->out)) {
    if (!starts_with(line, "Good ")) continue;
    auto at = line.rfind(" SHA256:");
    if (at == std::string::npos) break;
    std::string fingerprint = line.substr(at + 1);
    fingerprint = fingerprint.substr(0, fingerprint.find_first_of(" \t"));
    if (fingerprint.size() > 7) return VerifiedSignature{fingerprint};
  }
  return SignatureFailure{Kind::no_key, program_ +
                                            " accepted the signature but named no key "
                                            "fingerprint (\"Good ... key SHA256:...\"): " +
                                            std::string(trim(run->out))};
}

Expected<std::vector<std::string>, SignatureFailure> SshKeygen::find_principals(
    std::string_view allowed_signers, std::string_view signature) {
  ScratchDir scratch;
  if (auto failed = write_signer_files(scratch, allowed_signers, signature)) return *failed;
  ChildRequest request;
  request.argv = {program_,
                  "-Y",
                  "find-principals",
                  "-f",
                  scratch.file("allowed_signers"),
                  "-s",
                  scratch.file("signature")};
  request.deadline = deadline_;
  auto run = run_tool(program_, request, "find-principals");
  if (!run.ok()) return run.error();
  // A non-zero exit with nothing printed means no line lists the key; an unreadable signature
  // also ends here and is then rejected by the caller as unsigned by any listed key.
  std::vector<std::string> principals;
  if (run->exit_status != 0) return principals;
  for (const auto& line : split_lines(run->out)) {
    std::string_view rest = trim(line);
    while (!rest.empty()) {
      auto comma = rest.find(',');
      std::string_view name = trim(rest.substr(0, comma));
      if (!name.empty()) principals.emplace_back(name);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return principals;
}

}  // namespace fabgate::approval
