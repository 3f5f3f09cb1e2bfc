#include "gates/approval/rehearsal_record.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "adapters/core/text.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::approval {

RehearsalProof check_rehearsal(const std::string& given, const std::string& digest,
                               const std::string& change_id) {
  auto refuse = [](std::string why) { return RehearsalProof{false, "rehearsal: " + why}; };
  if (given.empty())
    return refuse(
        "approval.require_rehearsal is set and no --rehearsal was given; run `fabgate "
        "rehearse " +
        change_id + "` and pass its rehearsal.json");
  std::error_code error;
  std::filesystem::path record = std::filesystem::absolute(given, error);
  if (error) record = given;
  if (std::filesystem::is_directory(record, error)) record /= "rehearsal.json";
  std::ifstream in(record, std::ios::binary);
  if (!in) return refuse(record.string() + " cannot be read");
  auto document = nlohmann::json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.is_object() ||
      document.value("format", "") != "fabgate.rehearsal/1")
    return refuse(record.string() + " is not a fabgate rehearsal record");

  auto bundle = pipeline::verify_bundle(record.parent_path());
  if (!bundle.ok()) return refuse(record.string() + ": " + bundle.error().message);
  if (!bundle->intact()) {
    std::vector<std::string> wrong;
    for (const auto& file : bundle->modified) wrong.push_back("modified " + file);
    for (const auto& file : bundle->missing) wrong.push_back("missing " + file);
    for (const auto& file : bundle->extra) wrong.push_back("extra " + file);
    if (!bundle->manifest_consistent) wrong.push_back("manifest edited");
    return refuse("the evidence bundle of " + record.string() + " does not verify (" +
                  join(wrong, ", ") + ")");
  }
  const std::string run = document.value("run_id", "?");
  if (document.value("change", "") != change_id)
    return refuse("run " + run + " rehearsed change '" + document.value("change", "") + "', not '" +
                  change_id + "'");
  if (document.value("digest", "") != digest)
    return refuse("run " + run + " rehearsed " + document.value("digest", "?") + ", this plan is " +
                  digest + " (the change was modified after the rehearsal)");
  if (!document.value("passed", false))
    return refuse("run " + run + " did not pass (exit " +
                  std::to_string(document.value("exit", -1)) + ": " +
                  document.value("device_state", "") + ")");
  return RehearsalProof{true, "rehearsal: run " + run +
                                  " passed for this digest (change accepted, forced rollback "
                                  "verified; evidence bundle intact)"};
}

}  // namespace fabgate::approval
