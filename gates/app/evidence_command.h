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

// `fabgate evidence show DIR`: a terminal summary of a bundle from its manifest (verdict, exit
// code, devices, each gate with its verdict and duration, each layer's recovery) and where its
// report.html is; `--html` prints only the page's path. 0 when the bundle is intact; 3 when any
// file differs from the manifest (the summary is printed, marked TAMPERED); 2 when DIR is no
// bundle or (with --html) has no report.html.
enum class ShowWhat { summary, html_path };
Result<ExitCode> run_evidence_show(const CommonOptions& common, const std::string& dir,
                                   ShowWhat what, Console& console);

}  // namespace fabgate::app
