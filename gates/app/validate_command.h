#pragma once

#include <string>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

struct ValidateOptions {
  std::string change;  // optional: a change id or its file inside the intent root
};

// `fabgate validate [CHANGE]`: 0 with a summary when the intent at --ref is valid, 2 listing
// every problem otherwise. Work-tree edits that differ from the commit are warnings here;
// plan and apply refuse them.
Result<ExitCode> run_validate(const CommonOptions& common, const ValidateOptions& options,
                              Console& console);

}  // namespace fabgate::app
