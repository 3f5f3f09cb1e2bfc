#pragma once

#include <string>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

// `fabgate evidence verify DIR [--allowed-signers FILE]`: 0 when every file matches
// manifest.json and, with --allowed-signers, manifest.json.sig is a signature over this manifest
// by a key FILE lists; 3 when any file was modified, removed or added, or (with
// --allowed-signers) the bundle is unsigned, signed by an unlisted key, its signature does not
// match the manifest, or ssh-keygen could not check it: the evidence cannot be trusted; 2 when
// DIR is no bundle or FILE cannot be read. Without --allowed-signers a 0 proves integrity only,
// and says so: anyone who can write the bundle can edit it and reseal the manifest.
Result<ExitCode> run_evidence_verify(const CommonOptions& common, const std::string& dir,
                                     const std::string& allowed_signers, Console& console);

// `fabgate evidence sign DIR --key KEY`: signs the sha256 of DIR/manifest.json with
// `ssh-keygen -Y sign -n fabgate-evidence` and writes DIR/manifest.json.sig. 0 signed; 3 when the
// bundle does not match its manifest (nothing signed); 2 when DIR is no bundle or KEY cannot
// sign without a prompt nobody can answer; 1 when ssh-keygen cannot run.
Result<ExitCode> run_evidence_sign(const CommonOptions& common, const std::string& dir,
                                   const std::string& key, Console& console);

// `fabgate evidence show DIR`: a terminal summary of a bundle from its manifest (verdict, exit
// code, devices, each gate with its verdict and duration, each layer's recovery) and where its
// report.html is; `--html` prints only the page's path. 0 when the bundle is intact (which it
// says is integrity only: the signature is checked by `evidence verify --allowed-signers`); 3
// when any file differs from the manifest (no summary, TAMPERED); 2 when DIR is no bundle or
// (with --html) has no report.html.
enum class ShowWhat { summary, html_path };
Result<ExitCode> run_evidence_show(const CommonOptions& common, const std::string& dir,
                                   ShowWhat what, Console& console);

}  // namespace fabgate::app
