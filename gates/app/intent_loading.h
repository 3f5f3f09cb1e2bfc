#pragma once

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"
#include "gates/intent/model.h"

namespace fabgate::app {

// Reads and validates the intent repository named by --repo at --ref (from the commit, never
// the work tree). Invalid intent, an unresolvable ref or a non-git folder -> invalid_input.
// Warnings (e.g. work-tree edits that differ from the commit) go to the console.
Result<intent::IntentRepository> load_intent(const CommonOptions& options, Console& console);

}  // namespace fabgate::app
