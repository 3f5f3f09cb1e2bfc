#pragma once

#include "cmd/fabgate/subcommand.h"

namespace fabgate::cli {
Runner define_plan(CLI::App& command, const app::CommonOptions& common);
Runner define_apply(CLI::App& command, const app::CommonOptions& common);
Runner define_rehearse(CLI::App& command, const app::CommonOptions& common);
Runner define_twin(CLI::App& command, const app::CommonOptions& common);
Runner define_evidence(CLI::App& command, const app::CommonOptions& common);
}  // namespace fabgate::cli
