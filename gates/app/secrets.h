#pragma once

#include <map>
#include <string>
#include <vector>

#include "gates/intent/model.h"

namespace fabgate::app {

// The secrets this run must never show: the environment variables fabgate.yaml names under
// `secrets.env`, and the gNMI passwords the inventory's `credentials_env` prefixes point at.
// Unset variables are listed in `unset` so the caller can warn: a secret the operator meant to
// protect but did not provide is worth a line.
struct ConfiguredSecrets {
  std::map<std::string, std::string> values;  // variable name -> value, for the set ones
  std::vector<std::string> unset;             // variable names
};
// Reads the values from the environment; nothing else (no redactor, no output).
ConfiguredSecrets configured_secrets(const intent::IntentRepository& repository);

}  // namespace fabgate::app
