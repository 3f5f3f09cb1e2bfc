#pragma once

#include <string>
#include <vector>

#include "gates/intent/model.h"

namespace fabgate::app {

// Validates the policy files the compare gate will read at this commit: every
// <policies>/compare/*.yaml as a rule set and <policies>/exceptions.yaml as the exceptions
// register. Returns one line per problem ("file:line:column: error: ..."), empty when valid.
// (The intent loader cannot do this itself: gates/compare depends on gates/intent.)
std::vector<std::string> policy_problems(const intent::IntentRepository& repository);

}  // namespace fabgate::app
