#pragma once

#include <string>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

// `fabgate evidence verify DIR`: 0 when every file matches manifest.json; 3 when any file was
// modified, removed or added (the evidence cannot be trusted); 2 when DIR is no bundle.
Result<ExitCode> run_evidence_verify(const CommonOptions& common, const std::string& dir,
                                     Console& console);

}  // namespace fabgate::app
