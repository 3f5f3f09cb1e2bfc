#pragma once

#include "cmd/fabgate/subcommand.h"

namespace fabgate::cli {
Runner define_validate(CLI::App& command, const app::CommonOptions& common);
}
