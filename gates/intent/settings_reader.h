#pragma once

// fabgate.yaml alone, at a commit other than the change's: the approval policy is read from
// the trusted ref (docs/approvals.md), where the rest of the intent need not be valid for the
// change being judged.

#include <optional>
#include <string>

#include "adapters/core/diagnostics.h"
#include "adapters/git/file_tree.h"
#include "gates/intent/model.h"

namespace fabgate::intent {

struct SettingsOutcome {
  bool present = false;              // fabgate.yaml is in the tree
  std::optional<Settings> settings;  // set when present and valid
  Diagnostics diagnostics;           // its problems, with file:line:column
};

SettingsOutcome load_settings_only(const git::FileTree& files, const std::string& display_root);

}  // namespace fabgate::intent
