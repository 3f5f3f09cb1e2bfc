#pragma once

#include "cmd/fabgate/subcommand.h"

namespace fabgate::cli {

// `fabgate inventory import --from containerlab|ansible SOURCE [--out FILE] [--force]`
Runner define_inventory(CLI::App& command, const app::CommonOptions& common);

}  // namespace fabgate::cli
