#pragma once

#include <CLI/CLI.hpp>

#include <functional>

#include "cmd/fabgate-probe/probe_exit.h"

namespace fabgate::probe {

using Runner = std::function<ProbeExit()>;

// One row of fabgate-probe's subcommand table: name, help, and a function that declares the
// flags on `command` (bound to options it owns) and returns the runner.
struct Subcommand {
  const char* name;
  const char* help;
  Runner (*define)(CLI::App& command);
};

}  // namespace fabgate::probe
