#pragma once

// The approval code runs ssh-keygen and git through the shared child-process runner.
#include "adapters/core/child_process.h"

namespace fabgate::approval {
using fabgate::ChildRequest;
using fabgate::ChildResult;
using fabgate::run_child;
using fabgate::Terminal;
}  // namespace fabgate::approval
