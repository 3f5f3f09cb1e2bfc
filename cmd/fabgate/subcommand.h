#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::cli {

// What a subcommand does once flags are parsed.
using Runner = std::function<Result<ExitCode>(app::Console&)>;

// One row of the subcommand table: name, one-line help, and a function that declares the
// subcommand's flags on `command` (binding them to an options struct it owns) and returns the
// runner that calls into gates/app. `common` is filled in by the time the runner is called.
struct Subcommand {
  const char* name;
  const char* help;
  Runner (*define)(CLI::App& command, const app::CommonOptions& common);
};

}  // namespace fabgate::cli
