#pragma once

#include <string>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

struct ChangeOptions {
  std::string change;   // change id or its file inside the intent root
  int parallelism = 0;  // devices contacted at once; 0: fabgate.yaml's ssh.parallelism
  bool accept_new_host_keys = false;  // trust-on-first-use, recorded in output and evidence
  std::string operator_name;          // default: $USER
};

// `fabgate plan CHANGE`: the read-only gates, review.md and plan.json. 0 ready, 3 refused.
Result<ExitCode> run_plan(const CommonOptions& common, const ChangeOptions& options,
                          Console& console);
// `fabgate apply CHANGE`: every gate; 0 accepted, 3 refused (nothing touched), 4 rolled back
// and verified, 5 not restored.
Result<ExitCode> run_apply(const CommonOptions& common, const ChangeOptions& options,
                           Console& console);

}  // namespace fabgate::app
