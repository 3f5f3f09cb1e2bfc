#pragma once

#include "cmd/fabgate/subcommand.h"

namespace fabgate::cli {
Runner define_approve(CLI::App& command, const app::CommonOptions& common);
}  // namespace fabgate::cli
