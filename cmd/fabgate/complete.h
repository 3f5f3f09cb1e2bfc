#pragma once

#include <map>

#include "cmd/fabgate/subcommand.h"

namespace fabgate::cli {

// Declares the hidden `fabgate __complete commands|flags CMD|changes` that the shell completion
// scripts call, reading the same CLI11 definitions as --help, so completion cannot drift from
// the CLI. Silent and exit 0 on every error: a completion must never print into a prompt.
void define_complete(CLI::App& app, const app::CommonOptions& common,
                     std::map<const CLI::App*, Runner>& runners);

}  // namespace fabgate::cli
