#pragma once

#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

struct SnapshotOptions {
  std::vector<std::string> targets;   // device names or role:ROLE; empty: every device
  std::string output;                 // file for the snapshot JSON; empty: stdout
  int parallel = 0;                   // devices at once; 0: fabgate.yaml ssh.parallelism
  bool accept_new_host_keys = false;  // trust-on-first-use, recorded in the output
};

// `fabgate snapshot [DEVICE|role:ROLE ...]`: collects the selected devices with their read
// credential, writes the snapshot JSON (docs/snapshot-format.md) and prints a per-device table
// of what was and was not collected. Exit 0 when everything was collected, 3 (refused) when any
// source is no-evidence or a device is unreachable, 2 for an unknown device or role.
Result<ExitCode> run_snapshot(const CommonOptions& common, const SnapshotOptions& options,
                              Console& console);

}  // namespace fabgate::app
