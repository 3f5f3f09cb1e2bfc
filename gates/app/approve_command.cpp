#include "gates/app/approve_command.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "adapters/core/text.h"
#include "adapters/core/time.h"
#include "gates/approval/approval_file.h"
#include "gates/approval/child_process.h"
#include "gates/approval/signature_tool.h"
#include "gates/pipeline/evidence.h"
#include "gates/pipeline/plan_digest.h"

namespace fabgate::app {
namespace {

struct Plan {
  std::filesystem::path file;
  std::string digest;
  std::string change;
  std::string commit;
  bool ready = false;
  bool redacted = false;  // the stored digest input had secrets removed
};

// Reads plan.json and checks that its digest is the digest of its own digest_input: a plan
// edited after it was written is refused rather than signed.
Result<Plan> read_plan(const std::string& given) {
  Plan plan;
  plan.file = given;
  std::error_code error;
  if (std::filesystem::is_directory(plan.file, error)) plan.file /= "plan.json";
  const std::string name = plan.file.string();
  std::ifstream in(plan.file, std::ios::binary);
  if (!in) return Error::invalid_input("plan " + name + ": cannot be read");
  auto document = nlohmann::json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return Error::invalid_input("plan " + name + ": not a JSON object");
  if (document.value("format", "") != "fabgate.plan/1")
    return Error::invalid_input("plan " + name + ": not a fabgate plan (format fabgate.plan/1)");
  if (!document.contains("digest") || !document["digest"].is_string() ||
      !document.contains("digest_input") || !document["digest_input"].is_object())
    return Error::invalid_input("plan " + name + ": has no plan digest",
                                {"it was written by an older fabgate; run fabgate plan again"});
  plan.digest = document["digest"].get<std::string>();
  // Evidence is redacted when written: a change whose steps hold a secret has "<redacted>" in
  // its stored digest input, which then cannot reproduce the digest. Only then is the check
  // left out, and the caller says so.
  plan.redacted = document["digest_input"].dump().find("<redacted>") != std::string::npos;
  if (!plan.redacted && pipeline::digest_of_input(document["digest_input"]) != plan.digest)
    return Error::invalid_input("plan " + name +
                                ": its digest does not match its content (edited after it was "
                                "written); run fabgate plan again");
  const auto& input = document["digest_input"];
  plan.commit = input.value("intent_commit", "");
  if (input.contains("change") && input["change"].is_object())
    plan.change = input["change"].value("id", "");
  if (plan.change.empty() || plan.commit.empty())
    return Error::invalid_input("plan " + name + ": names no change or intent commit");
  plan.ready = document.value("ready", false);
  return plan;
}

// Who approves: --identity, else $FABGATE_APPROVER, else the repository's git user.email.
Result<std::string> approver(const CommonOptions& common, const ApproveOptions& options) {
  if (!options.identity.empty()) return options.identity;
  if (const char* env = std::getenv("FABGATE_APPROVER"); env && *env) return std::string(env);
  approval::ChildRequest request;
  request.argv = {"git", "-C", common.repo, "config", "user.email"};
  request.deadline = Duration{10'000};
  auto git = approval::run_child(request);
  if (git.ok() && git->exit_status == 0 && !trim(git->out).empty())
    return std::string(trim(git->out));
  return Error::invalid_input("approve: no approver identity",
                              {"pass --identity PRINCIPAL (as listed in allowed_signers), set "
                               "FABGATE_APPROVER, or set git config user.email"});
}

}  // namespace

Result<ExitCode> run_approve(const CommonOptions& common, const ApproveOptions& options,
                             Console& console) {
  auto plan = read_plan(options.plan);
  if (!plan.ok()) return std::move(plan).error();
  auto principal = approver(common, options);
  if (!principal.ok()) return std::move(principal).error();
  if (!std::filesystem::exists(expand_home(options.key)))
    return Error::invalid_input("approve: key " + options.key + " does not exist");
  if (plan->redacted)
    console.warn("plan " + plan->file.string() +
                 " had secrets redacted, so its digest could not be recomputed from it; approve "
                 "only what you reviewed");
  if (!plan->ready)
    console.warn("plan " + plan->file.string() +
                 " was not ready (a pre-change gate failed); apply re-runs every gate");

  approval::SignedApproval approval;
  approval.approver = principal.value();
  approval.digest = plan->digest;
  approval.change = plan->change;
  approval.commit = plan->commit;
  approval.approved_at = format_utc(now_utc());
  approval.signature_namespace = approval::kSignatureNamespace;
  // A passphrase prompt only where someone can answer it.
  approval::Prompt prompt =
      ::isatty(STDIN_FILENO) ? approval::Prompt::on_terminal : approval::Prompt::never;
  approval::SshKeygen keygen;
  auto signature = keygen.sign(expand_home(options.key), approval::statement(approval), prompt);
  if (!signature.ok()) {
    auto kind = signature.error().kind;
    std::string message = "approve: " + signature.error().message;
    return kind == approval::SignatureFailure::Kind::key_unusable ? Error::invalid_input(message)
                                                                  : Error::internal(message);
  }
  approval.signature = signature.value();

  std::filesystem::path out =
      options.out.empty()
          ? plan->file.parent_path() / "approvals" / approval::approval_file_name(approval.approver)
          : std::filesystem::path(options.out);
  out = std::filesystem::absolute(out);
  auto document = approval::to_json(approval);
  auto written = pipeline::write_file_atomically(out, document.dump(2) + "\n");
  if (!written.ok()) return std::move(written).error();

  if (console.json_mode()) {
    document.erase("signature");
    document["file"] = out.string();
    console.json(document.dump(2));
  } else {
    console.line("approved " + approval.change + " at " + approval.commit.substr(0, 12) + " as " +
                 approval.approver);
    console.line("digest:   " + approval.digest);
    console.line("approval: " + out.string());
    console.line("apply it with: fabgate apply " + approval.change + " --approval " + out.string());
  }
  return ExitCode::accepted;
}

}  // namespace fabgate::app
