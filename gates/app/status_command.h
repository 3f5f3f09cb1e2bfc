#pragma once

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

// `fabgate status`: the fleet view (docs/coordination.md "Fleet view"). Reads fabgate.yaml's
// `coordination:` block, policies/budgets.yaml and the inventory from the intent at --ref, then
// the fabric's etcd, and prints the runs in flight, every budget group with its holders and
// headroom, the budget queue and the dead runs awaiting `fabgate recover`. Read-only: it writes
// nothing to etcd and contacts no device.
//   0  the view was read
//   2  invalid input: no `coordination:` block, invalid settings, budgets file or inventory
//   3  the store could not be read (unreachable, timed out, refused login): no evidence of what
//      is in change, naming the endpoint and the operation
Result<ExitCode> run_status(const CommonOptions& common, Console& console);

}  // namespace fabgate::app
