#include "gates/approval/rehearsal_record.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "adapters/core/sha256.h"
#include "adapters/core/text.h"
#include "gates/approval/evidence_signature.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::approval {

RehearsalProof check_rehearsal(const std::string& given, const std::string& digest,
                               const std::string& change_id, const RehearsalSigners& signers,
                               SignatureTool& evidence_tool) {
  auto refuse = [](std::string why) { return RehearsalProof{false, "rehearsal: " + why}; };
  if (given.empty())
    return refuse(
        "approval.require_rehearsal is set and no --rehearsal was given; run `fabgate "
        "rehearse " +
        change_id + "`, sign its bundle with `fabgate evidence sign DIR --key KEY` and pass DIR");
  std::error_code error;
  std::filesystem::path record = std::filesystem::absolute(given, error);
  if (error) record = given;
  if (std::filesystem::is_directory(record, error)) record /= "rehearsal.json";
  const std::filesystem::path dir = record.parent_path();
  const std::string name = record.filename().string();

  // The manifest is read once: the files, the signature and the record are checked against
  // those bytes.
  auto bundle = pipeline::verify_bundle(dir);
  if (!bundle.ok()) return refuse(record.string() + " cannot be read: " + bundle.error().message);
  if (!bundle->intact()) {
    std::vector<std::string> wrong;
    for (const auto& file : bundle->modified) wrong.push_back("modified " + file);
    for (const auto& file : bundle->missing) wrong.push_back("missing " + file);
    for (const auto& file : bundle->extra) wrong.push_back("extra " + file);
    for (const auto& why : bundle->unsafe) wrong.push_back("unsafe " + why);
    for (const auto& why : bundle->malformed) wrong.push_back("malformed " + why);
    if (!bundle->manifest_consistent) wrong.push_back("manifest edited");
    return refuse("the evidence bundle of " + record.string() + " does not verify (" +
                  join(wrong, ", ") + ")");
  }
  const auto& manifest = bundle->manifest;
  if (manifest.value("mode", nlohmann::json()) != "rehearse")
    return refuse(dir.string() + " is not the evidence of a `fabgate rehearse` run");
  auto signature = check_bundle_signature(dir, bundle->manifest_text, signers.text, evidence_tool);
  if (signature.status != BundleSignatureStatus::verified)
    return refuse("the evidence bundle " + dir.string() + " is not signed by a key " +
                  signers.name + " lists (" + std::string(to_string(signature.status)) + ": " +
                  signature.reason +
                  "); a rehearsal counts only from a bundle signed with `fabgate evidence sign " +
                  dir.string() + " --key KEY` by a key listed there (as CI signs its runs)");

  // The record exactly as the manifest lists it: read once, its sha256 compared with the entry.
  const auto& files = manifest["files"];
  if (!files.contains(name))
    return refuse(record.string() + " is not listed in its bundle's manifest");
  auto read = pipeline::read_inside(dir, name);
  if (!read.bytes) return refuse(record.string() + " cannot be read: " + read.why);
  if (sha256_hex(*read.bytes) != files[name].get<std::string>())
    return refuse(record.string() + " changed while it was checked");
  auto document = nlohmann::json::parse(*read.bytes, nullptr, false);
  auto text = [&](const char* key) {
    return document.contains(key) && document[key].is_string() ? document[key].get<std::string>()
                                                               : std::string();
  };
  if (document.is_discarded() || !document.is_object() || text("format") != "fabgate.rehearsal/1")
    return refuse(record.string() + " is not a fabgate rehearsal record");

  const std::string run = text("run_id").empty() ? "?" : text("run_id");
  if (text("change") != change_id)
    return refuse("run " + run + " rehearsed change '" + text("change") + "', not '" + change_id +
                  "'");
  if (text("digest") != digest)
    return refuse("run " + run + " rehearsed " + text("digest") + ", this plan is " + digest +
                  " (the change was modified after the rehearsal)");
  const bool passed = document.contains("passed") && document["passed"] == true;
  if (!passed) {
    const auto& exit = document.contains("exit") ? document["exit"] : nlohmann::json();
    return refuse("run " + run + " did not pass (exit " +
                  (exit.is_number_integer() ? exit.dump() : std::string("?")) + ": " +
                  text("device_state") + ")");
  }
  return RehearsalProof{true, "rehearsal: run " + run +
                                  " passed for this digest (change accepted, forced rollback "
                                  "verified; evidence bundle intact, signed by " +
                                  signature.signer + " " + signature.key + ")"};
}

}  // namespace fabgate::approval
