#include "gates/intent/settings_reader.h"

#include "gates/intent/loader_internal.h"

namespace fabgate::intent {

SettingsOutcome load_settings_only(const git::FileTree& files, const std::string& display_root) {
  SettingsOutcome outcome;
  outcome.present = files.read("fabgate.yaml").has_value();
  if (!outcome.present) return outcome;
  loading::Loader loader(files, display_root, outcome.diagnostics);
  Settings settings = loader.load_settings();
  if (outcome.diagnostics.empty()) outcome.settings = std::move(settings);
  return outcome;
}

}  // namespace fabgate::intent
