#include "gates/app/evidence_command.h"

#include <nlohmann/json.hpp>

#include "gates/pipeline/evidence.h"

namespace fabgate::app {

Result<ExitCode> run_evidence_verify(const CommonOptions&, const std::string& dir,
                                     Console& console) {
  auto check = pipeline::verify_bundle(dir);
  if (!check.ok()) return std::move(check).error();
  const auto& result = check.value();
  if (console.json_mode()) {
    console.json(nlohmann::json{{"bundle", dir},
                                {"intact", result.intact()},
                                {"modified", result.modified},
                                {"missing", result.missing},
                                {"extra", result.extra},
                                {"attached_approvals", result.attached},
                                {"manifest_consistent", result.manifest_consistent}});
  } else {
    for (const auto& file : result.modified) console.line("modified: " + file);
    for (const auto& file : result.missing) console.line("missing:  " + file);
    for (const auto& file : result.extra) console.line("extra:    " + file);
    for (const auto& file : result.attached)
      console.line("attached: " + file +
                   " (an approval added after the plan; apply checks its signature)");
    if (!result.manifest_consistent)
      console.line("manifest: its file list does not match its bundle_sha256 (edited manifest)");
    console.line(result.intact() ? console.green("intact") + ": every file matches manifest.json"
                                 : console.red("TAMPERED") + ": this evidence cannot be trusted");
  }
  return result.intact() ? ExitCode::accepted : ExitCode::refused;
}

}  // namespace fabgate::app
