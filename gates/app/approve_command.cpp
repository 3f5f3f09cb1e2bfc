#include "gates/app/approve_command.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "adapters/core/sha256.h"
#include "adapters/core/text.h"
#include "adapters/core/time.h"
#include "gates/app/intent_loading.h"
#include "gates/app/trusted_policy.h"
#include "gates/approval/approval_file.h"
#include "gates/approval/child_process.h"
#include "gates/approval/signature_tool.h"
#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/reporting/plan_digest.h"

namespace fabgate::app {
namespace {

struct Plan {
  std::filesystem::path file;
  std::string digest;  // as the file says; never signed as it is, only compared
  std::string change;
  std::string commit;
  std::string intent_root;
  bool ready = false;
};

// Verifies the plan's evidence bundle (every file, and the whole manifest with its headline
// fields) and returns plan.json's bytes exactly as the manifest lists them, read once. A bundle
// that does not verify is refused: nothing is signed on the word of an edited plan. `ready`
// must be true both in plan.json and in the manifest (a plan run's headline field).
Result<std::string> verified_plan_bytes(const std::filesystem::path& file, bool& ready) {
  const std::filesystem::path dir = file.parent_path();
  const std::string name = file.filename().string();
  auto check = pipeline::verify_bundle(dir);
  if (!check.ok())
    return Error::invalid_input("plan " + file.string() + ": cannot be read (" +
                                check.error().message + ")");
  if (!check->intact()) {
    std::vector<std::string> wrong;
    for (const auto& f : check->modified) wrong.push_back("modified " + f);
    for (const auto& f : check->missing) wrong.push_back("missing " + f);
    for (const auto& f : check->extra) wrong.push_back("extra " + f);
    for (const auto& why : check->unsafe) wrong.push_back("unsafe " + why);
    for (const auto& why : check->malformed) wrong.push_back("malformed " + why);
    if (!check->manifest_consistent) wrong.push_back("manifest edited");
    return Error::refused("approve: the plan bundle " + dir.string() + " does not verify (" +
                              join(wrong, ", ") + "); nothing was signed",
                          {"run fabgate evidence verify " + dir.string() +
                           "; review and approve only a plan bundle as fabgate plan wrote it"});
  }
  const auto& manifest = check->manifest;
  if (manifest.value("mode", nlohmann::json()) != "plan" || !manifest["files"].contains(name))
    return Error::invalid_input("plan " + file.string() +
                                ": not the plan.json of a fabgate plan bundle");
  auto read = pipeline::read_inside(dir, name);
  if (!read.bytes) return Error::invalid_input("plan " + file.string() + ": " + read.why);
  if (sha256_hex(*read.bytes) != manifest["files"][name].get<std::string>())
    return Error::refused("approve: plan " + file.string() +
                          " changed while it was checked; nothing was signed");
  ready = manifest.value("ready", nlohmann::json()) == true &&
          manifest.value("exit_code", nlohmann::json()) == 0;
  return std::move(*read.bytes);
}

// Reads plan.json (from its verified bundle) and, unless its stored digest input was redacted,
// checks that its digest is the digest of that input: a plan edited after it was written is
// refused rather than signed.
Result<Plan> read_plan(const std::string& given) {
  Plan plan;
  std::error_code error;
  plan.file = std::filesystem::absolute(given, error);
  if (error) plan.file = given;
  if (std::filesystem::is_directory(plan.file, error)) plan.file /= "plan.json";
  const std::string name = plan.file.string();
  bool manifest_ready = false;
  auto bytes = verified_plan_bytes(plan.file, manifest_ready);
  if (!bytes.ok()) return std::move(bytes).error();
  auto document = nlohmann::json::parse(bytes.value(), nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return Error::invalid_input("plan " + name + ": not a JSON object");
  if (!document.contains("format") || document["format"] != "fabgate.plan/1")
    return Error::invalid_input("plan " + name + ": not a fabgate plan (format fabgate.plan/1)");
  if (!document.contains("digest") || !document["digest"].is_string() ||
      !document.contains("digest_input") || !document["digest_input"].is_object())
    return Error::invalid_input("plan " + name + ": has no plan digest",
                                {"it was written by an older fabgate; run fabgate plan again"});
  plan.digest = document["digest"].get<std::string>();
  // Evidence is redacted when written: a change whose steps hold a secret has "<redacted>" in
  // its stored digest input, which then cannot reproduce the digest. The digest that is signed
  // is recomputed from the commit in any case (recomputed_digest); this check only names an
  // edited file early and precisely.
  const bool redacted = document["digest_input"].dump().find("<redacted>") != std::string::npos;
  if (!redacted && pipeline::digest_of_input(document["digest_input"]) != plan.digest)
    return Error::invalid_input("plan " + name +
                                ": its digest does not match its content (edited after it was "
                                "written); run fabgate plan again");
  const auto& input = document["digest_input"];
  auto text = [](const nlohmann::json& object, const char* key) {
    return object.contains(key) && object[key].is_string() ? object[key].get<std::string>()
                                                           : std::string();
  };
  plan.commit = text(input, "intent_commit");
  plan.intent_root = text(input, "intent_root");
  if (input.contains("change") && input["change"].is_object())
    plan.change = text(input["change"], "id");
  if (plan.change.empty() || plan.commit.empty())
    return Error::invalid_input("plan " + name + ": names no change or intent commit");
  plan.ready = manifest_ready && document.contains("ready") && document["ready"] == true;
  return plan;
}

// The plan digest recomputed from the intent commit the plan names, by the code plan and apply
// use, so what is signed is what apply will compute, never a digest read from a file. --repo
// names the repository (any folder of it); the plan names the commit and the intent folder.
// Refused (invalid input) when the repository, the commit, the intent or the change cannot be
// read there, or when the plan's digest is not the recomputed one.
Result<std::string> recomputed_digest(const CommonOptions& common, const Plan& plan) {
  const std::string name = plan.file.string();
  const std::string at = plan.commit.substr(0, 12);
  auto unavailable = [&](const std::string& why) {
    return Error::invalid_input(
        "approve: plan " + name + ": cannot recompute its digest from commit " + at + ": " + why,
        {"run approve inside the intent repository or pass --repo DIR: fabgate signs only a "
         "digest it computed from the commit itself"});
  };
  CommonOptions at_commit = common;
  at_commit.ref = plan.commit;
  auto loaded = read_intent(at_commit);
  if (loaded.ok() && loaded->intent_root != plan.intent_root) {
    // intent_dir is the work tree joined with the intent root: climb back out of that root.
    std::filesystem::path root = loaded->intent_root, work_tree = loaded->intent_dir;
    for (auto depth = std::distance(root.begin(), root.end()); depth > 0; --depth)
      work_tree = work_tree.parent_path();
    at_commit.repo = (work_tree / plan.intent_root).string();
    loaded = read_intent(at_commit);
  }
  if (!loaded.ok()) return unavailable(loaded.error().message);
  if (loaded->commit.id != plan.commit)
    return unavailable(at_commit.repo + " resolves it to " + loaded->commit.id);
  // The digest apply will compute: the change from its commit, the fleet settings from the
  // trusted ref's tip (trusted_policy.h), exactly as plan and apply load them.
  if (loaded->outcome.diagnostics.empty()) {
    auto trusted = read_trusted_policy(at_commit, loaded.value(), nullptr);
    if (!trusted.ok()) return unavailable(trusted.error().message);
    auto under_trusted = read_intent_under_trusted_ref(at_commit, trusted.value());
    if (!under_trusted.ok()) return unavailable(under_trusted.error().message);
    loaded = std::move(under_trusted).value().take();
  }
  if (!loaded->outcome.diagnostics.empty())
    return Error::invalid_input(
        "approve: plan " + name + ": the intent at commit " + at + " is invalid",
        loaded->outcome.diagnostics.lines());
  const auto& repository = *loaded->outcome.repository;
  const intent::Change* change = repository.find_change(plan.change);
  if (!change) return unavailable("it has no change '" + plan.change + "'");
  std::string digest = pipeline::plan_digest(repository, *change);
  if (digest != plan.digest)
    return Error::invalid_input(
        "approve: plan " + name + ": its digest " + plan.digest + " is not the digest of change " +
            plan.change + " at commit " + at + " (" + digest + ")",
        {"the plan file was edited, or written by another fabgate version; run fabgate plan "
         "again and review that plan"});
  return digest;
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
  // A plan the gates refused is never signed, and there is no flag to sign it anyway: an
  // approval of it would let apply run a change whose baseline nobody saw pass.
  if (!plan->ready)
    return Error::refused("approve: plan " + plan->file.string() +
                              " is not ready: its gates refused the change (\"ready\": false "
                              "in plan.json or its manifest); nothing was signed",
                          {"fix what the plan's review.md reports, commit, run fabgate plan "
                           "again and approve that plan"});
  auto digest = recomputed_digest(common, plan.value());
  if (!digest.ok()) return std::move(digest).error();
  auto principal = approver(common, options);
  if (!principal.ok()) return std::move(principal).error();
  if (!std::filesystem::exists(expand_home(options.key)))
    return Error::invalid_input("approve: key " + options.key + " does not exist");

  approval::SignedApproval approval;
  approval.approver = principal.value();
  approval.digest = digest.value();
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
    console.json(document);
  } else {
    console.line("approved " + approval.change + " at " + approval.commit.substr(0, 12) + " as " +
                 approval.approver);
    console.line("digest:   " + approval.digest + " (recomputed from commit " +
                 approval.commit.substr(0, 12) + ")");
    console.line("approval: " + out.string());
    console.line("apply it with: fabgate apply " + approval.change + " --approval " + out.string());
  }
  return ExitCode::accepted;
}

}  // namespace fabgate::app
