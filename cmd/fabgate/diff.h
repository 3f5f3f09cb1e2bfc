#pragma once

#include "cmd/fabgate/subcommand.h"

namespace fabgate::cli {

// `fabgate diff PRE POST [--rules FILE ...] [--change FILE] [--exceptions FILE] [--max-age DUR]`
Runner define_diff(CLI::App& command, const app::CommonOptions& common);

}  // namespace fabgate::cli
