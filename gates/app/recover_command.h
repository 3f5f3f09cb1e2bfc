#pragma once

#include <optional>
#include <string>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

struct RecoverOptions {
  std::string run_dir;              // the evidence bundle of the run that died
  std::optional<std::string> repo;  // overrides the --repo journaled in run-start
  std::string operator_name;        // who recovers (default: $USER)
  std::string controller;           // --controller: as for apply (default: $FABGATE_CONTROLLER)
  bool take_over_locks = false;     // locks of another, dead run (its own run's are taken anyway)
};

// `fabgate recover RUN_DIR`: finishes a run whose controller died, from its journal.
//   4  every device that may have changed was rolled back and the baseline verified
//   5  a rollback failed or the baseline could not be verified (e.g. no pre snapshot)
//   3  the run died before any step was sent: nothing was touched; the bundle is sealed
//   2  nothing to recover: the run ended (its bundle is sealed, or recover seals it), or the
//      journal is damaged anywhere but its last record
// The intent is read from the commit the run journaled, never from the work tree, and host
// keys are always checked strictly.
Result<ExitCode> run_recover(const CommonOptions& common, const RecoverOptions& options,
                             Console& console);

}  // namespace fabgate::app
