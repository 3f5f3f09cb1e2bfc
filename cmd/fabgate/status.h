#pragma once

#include "cmd/fabgate/subcommand.h"

namespace fabgate::cli {

// `fabgate status [--repo DIR] [--ref REF] [--json]`: the fleet view; no flags of its own.
Runner define_status(CLI::App& command, const app::CommonOptions& common);

}  // namespace fabgate::cli
