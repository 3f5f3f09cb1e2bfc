#pragma once

#include <optional>
#include <string>

#include "adapters/core/diagnostics.h"
#include "adapters/git/file_tree.h"
#include "gates/intent/model.h"

namespace fabgate::intent {

struct LoadOutcome {
  std::optional<IntentRepository> repository;  // set only when diagnostics is empty
  Diagnostics diagnostics;                     // every problem found, with file:line:column
};

// Reads fabgate.yaml, the inventory, every change and the policy files from `files` (the
// intent root at one commit) and validates all of it: types, required fields, unknown keys,
// references between files, bounds, durations, window times and duplicate ids. All problems
// are reported, not just the first. `display_root` prefixes file names in diagnostics so they
// can be opened from the repository top ("examples/intent/changes/x.yaml").
LoadOutcome load_intent_repository(const git::FileTree& files, const CommitInfo& commit,
                                   const std::string& display_root);

// Devices that have steps but no rollback steps: every change must say how to undo itself on
// each device it touches. validate reports them; the rollback-plan gate refuses the change.
std::vector<std::string> devices_without_rollback(const Change& change);

// One line per lab-only setting in the inventory that weakens security (gnmi
// lab_insecure_plaintext_credentials), as the commands warn about it and the evidence manifest
// records it (`lab_only_settings`, docs/security.md).
std::vector<std::string> lab_only_settings(const Inventory& inventory);

// The paths (relative to the intent root) whose committed content is the intent: used to check
// that the work tree holds no uncommitted edits to them.
std::vector<std::string> intent_paths(const Settings& settings);

}  // namespace fabgate::intent
