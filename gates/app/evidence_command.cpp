#include "gates/app/evidence_command.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "adapters/core/text.h"
#include "gates/approval/evidence_signature.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::app {

namespace {

// What a bundle that matches its manifest proves without a signature check: the hashes and the
// bundle digest are public recipes, so whoever can write the folder can edit a file and reseal
// manifest.json. Said on every such success, so nobody reads "intact" as "authentic".
constexpr const char* kIntegrityOnly = "integrity only, not authenticity";
constexpr const char* kNotChecked =
    "authenticity: not checked: anyone who can write the bundle can edit it and reseal its "
    "manifest";

}  // namespace

Result<ExitCode> run_evidence_verify(const CommonOptions&, const std::string& dir,
                                     const std::string& allowed_signers, Console& console) {
  auto check = pipeline::verify_bundle(dir);
  if (!check.ok()) return std::move(check).error();
  const auto& result = check.value();
  std::optional<approval::BundleSignatureCheck> signature;
  if (!allowed_signers.empty()) {
    std::ifstream in(expand_home(allowed_signers), std::ios::binary);
    if (!in)
      return Error::invalid_input("evidence verify: allowed signers " + allowed_signers +
                                  ": cannot be read");
    std::string signers((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    approval::SshKeygen keygen(Duration{20'000}, "ssh-keygen", approval::kEvidenceNamespace);
    signature = approval::check_bundle_signature(dir, result.manifest_text, signers, keygen);
  }
  const bool signed_ok =
      !signature || signature->status == approval::BundleSignatureStatus::verified;
  const bool trusted = result.intact() && signed_ok;
  const bool has_signature =
      std::filesystem::exists(std::filesystem::path(dir) / pipeline::kManifestSignatureFile);
  if (console.json_mode()) {
    nlohmann::json document{{"bundle", dir},
                            {"intact", result.intact()},
                            {"modified", result.modified},
                            {"missing", result.missing},
                            {"extra", result.extra},
                            {"attached_approvals", result.attached},
                            {"unsafe", result.unsafe},
                            {"malformed", result.malformed},
                            {"manifest_consistent", result.manifest_consistent},
                            {"trusted", trusted},
                            {"authenticity", !signature  ? "not-checked"
                                             : signed_ok ? "verified"
                                                         : "failed"}};
    if (signature)
      document["signature"] = {{"status", std::string(approval::to_string(signature->status))},
                               {"signer", signature->signer},
                               {"key", signature->key},
                               {"reason", signature->reason}};
    else
      document["signature"] = {{"status", has_signature ? "not-checked" : "unsigned"}};
    console.json(document);
  } else {
    for (const auto& file : result.modified) console.line("modified: " + file);
    for (const auto& file : result.missing) console.line("missing:  " + file);
    for (const auto& file : result.extra) console.line("extra:    " + file);
    for (const auto& why : result.unsafe) console.line("unsafe:   " + why + " (not read)");
    for (const auto& why : result.malformed) console.line("malformed: " + why);
    for (const auto& file : result.attached)
      console.line("attached: " + file +
                   " (an approval added after the plan; apply checks its signature)");
    if (!result.manifest_consistent)
      console.line(
          "manifest: its content does not match its bundle_sha256 (edited after it was sealed, "
          "or sealed by a fabgate whose digest covered only the file list)");
    if (signature)
      console.line("signature: " + std::string(approval::to_string(signature->status)) + ": " +
                   signature->reason);
    else if (has_signature)
      console.line("signature: present, not checked (pass --allowed-signers FILE to check it)");
    std::string intact_line =
        signature ? "every file matches manifest.json, signed by " + signature->signer + " (" +
                        signature->key + ")"
                  : "every file matches manifest.json (" + std::string(kIntegrityOnly) + ")";
    console.line(trusted ? console.green("intact") + ": " + intact_line
                         : console.red("TAMPERED") + ": this evidence cannot be trusted");
    if (trusted && !signature) {
      console.line(kNotChecked);
      console.line("  pass --allowed-signers FILE to check who signed it (fabgate evidence sign)");
    }
  }
  return trusted ? ExitCode::accepted : ExitCode::refused;
}

Result<ExitCode> run_evidence_sign(const CommonOptions&, const std::string& dir,
                                   const std::string& key, Console& console) {
  if (!std::filesystem::exists(expand_home(key)))
    return Error::invalid_input("evidence sign: key " + key + " does not exist");
  approval::SshKeygen keygen(Duration{20'000}, "ssh-keygen", approval::kEvidenceNamespace);
  // A passphrase prompt only where someone can answer it.
  auto prompt = ::isatty(STDIN_FILENO) ? approval::Prompt::on_terminal : approval::Prompt::never;
  auto signed_bundle = approval::sign_bundle(dir, expand_home(key), keygen, prompt);
  if (!signed_bundle.ok()) return std::move(signed_bundle).error();
  if (console.json_mode()) {
    console.json(nlohmann::json{{"bundle", dir},
                                {"manifest_sha256", signed_bundle->manifest_sha256},
                                {"namespace", approval::kEvidenceNamespace},
                                {"signature", signed_bundle->signature_file.string()}});
  } else {
    console.line("signed:    manifest.json sha256 " + signed_bundle->manifest_sha256);
    console.line("signature: " + signed_bundle->signature_file.string() + " (namespace " +
                 approval::kEvidenceNamespace + ")");
    console.line("check it with: fabgate evidence verify " + dir + " --allowed-signers FILE");
  }
  return ExitCode::accepted;
}

namespace {

std::string text_of(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null()) return {};
  return object[key].is_string() ? object[key].get<std::string>() : object[key].dump();
}

// "02:14:05.123" of an ISO time, or "-".
std::string clock_of(const nlohmann::json& object, const char* key) {
  std::string text = text_of(object, key);
  return text.size() >= 23 ? text.substr(11, 12) : text.empty() ? "-" : text;
}

// Typed lookups: a field of another type reads as absent (verify_bundle names it malformed).
long long int_of(const nlohmann::json& object, const char* key, long long absent) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number_integer())
    return absent;
  return object[key].get<long long>();
}

nlohmann::json array_of(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_array())
    return nlohmann::json::array();
  return object[key];
}

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
}

}  // namespace

Result<ExitCode> run_evidence_show(const CommonOptions&, const std::string& dir, ShowWhat what,
                                   Console& console) {
  std::filesystem::path bundle(dir);
  std::filesystem::path page = std::filesystem::absolute(bundle / "report.html");
  // The manifest is read once, by the check; what is printed is what was checked.
  auto check = pipeline::verify_bundle(bundle);
  if (!check.ok())
    return Error::invalid_input("evidence show: " + dir +
                                ": no manifest.json (not an evidence bundle, or one that was "
                                "never sealed)");
  const bool intact = check->intact();
  const nlohmann::json manifest =
      check->manifest.is_object() ? check->manifest : nlohmann::json::object();
  bool has_page = std::filesystem::is_regular_file(page);
  if (what == ShowWhat::html_path) {
    if (!has_page)
      return Error::invalid_input("evidence show: " + dir + ": no report.html in this bundle",
                                  {"bundles written before report.html existed have report.md"});
    if (console.json_mode())
      console.json(nlohmann::json{{"page", page.string()}});
    else
      console.line(page.string());
    return ExitCode::accepted;
  }
  if (!intact) {
    // A manifest that does not verify is not summarised: its exit code and verdicts are
    // exactly what an edit would change.
    if (console.json_mode()) {
      console.json(nlohmann::json{{"bundle", dir}, {"intact", false}});
    } else {
      console.line("integrity: " + console.red("TAMPERED") + ": " + dir +
                   " does not match its manifest, so its outcome is not shown");
      console.line("run `fabgate evidence verify " + dir + "` for what differs");
    }
    return ExitCode::refused;
  }
  if (console.json_mode()) {
    console.json(nlohmann::json{{"bundle", dir},
                                {"intact", intact},
                                {"authenticity", "not-checked"},
                                {"page", has_page ? nlohmann::json(page.string()) : nullptr},
                                {"mode", text_of(manifest, "mode")},
                                {"change", manifest.value("change", nlohmann::json())},
                                {"exit_code", int_of(manifest, "exit_code", -1)},
                                {"outcome", text_of(manifest, "outcome")},
                                {"device_state", text_of(manifest, "device_state")},
                                {"first_disproven", text_of(manifest, "first_disproven")},
                                {"gates", array_of(manifest, "gates")},
                                {"layers", array_of(manifest, "layer_recovery")}});
    return intact ? ExitCode::accepted : ExitCode::refused;
  }
  const auto change = manifest.value("change", nlohmann::json::object());
  // A manifest sealed by recover names the change by id alone.
  console.line(
      console.bold("fabgate " + text_of(manifest, "mode") + " " +
                   (change.is_string() ? change.get<std::string>() : text_of(change, "id"))) +
      " run " + text_of(manifest, "run_id") + " by " + text_of(manifest, "operator") + ", intent " +
      text_of(manifest, "intent_commit").substr(0, 12));
  const long long exit_code = int_of(manifest, "exit_code", -1);
  std::string verdict = "exit " + std::to_string(exit_code) + ": " + text_of(manifest, "outcome");
  console.line(exit_code == 0   ? console.green(verdict)
               : exit_code == 4 ? console.yellow(verdict)
                                : console.red(verdict));
  if (!text_of(manifest, "device_state").empty())
    console.line("devices:  " + text_of(manifest, "device_state"));
  if (!text_of(manifest, "first_disproven").empty())
    console.line("first disproven: " + text_of(manifest, "first_disproven"));
  console.line("");
  console.line("gates:");
  for (const auto& gate : array_of(manifest, "gates")) {
    std::string gate_verdict = text_of(gate, "verdict");
    std::string word = padded(gate_verdict == "fail"          ? "FAIL"
                              : gate_verdict == "no-evidence" ? "NO-EVIDENCE"
                                                              : gate_verdict,
                              12);
    std::ostringstream seconds;
    seconds.setf(std::ios::fixed);
    seconds.precision(2);
    seconds << int_of(gate, "duration_ms", 0) / 1000.0 << " s";
    console.line("  " +
                 (gate_verdict == "pass"      ? console.green(word)
                  : gate_verdict == "skipped" ? word
                                              : console.red(word)) +
                 padded(text_of(gate, "name"), 18) + padded(seconds.str(), 10) +
                 text_of(gate, "summary"));
  }
  const auto layers = array_of(manifest, "layer_recovery");
  if (!layers.empty()) {
    console.line("");
    console.line("layers (last seen good / failed / proven restored, UTC):");
    for (const auto& layer : layers) {
      std::string status = text_of(layer, "status");
      std::string word = padded(status, 14);
      std::string painted = status == "held" || status == "restored" ? console.green(word)
                            : status == "no evidence"                ? word
                                                                     : console.red(word);
      std::string line =
          "  " + padded(text_of(layer, "layer"), 15) + (status == "no evidence" ? status : painted);
      if (status != "no evidence")
        line += padded(clock_of(layer, "last_good"), 14) +
                padded(clock_of(layer, "failed_at"), 14) + clock_of(layer, "restored_at");
      if (!text_of(layer, "failed_by").empty())
        line += "  (" + text_of(layer, "failed_verdict") + ": " + text_of(layer, "failed_by") + ")";
      console.line(line);
    }
  }
  console.line("");
  // Only an intact bundle gets here (a tampered one is not summarised, above).
  console.line("integrity: " + console.green("intact") + " (every file matches manifest.json; " +
               kIntegrityOnly + ")");
  console.line(kNotChecked);
  console.line("  check who signed it: fabgate evidence verify DIR --allowed-signers FILE");
  console.line("page:     " + (has_page ? page.string() : std::string("(no report.html)")));
  return intact ? ExitCode::accepted : ExitCode::refused;
}

}  // namespace fabgate::app
