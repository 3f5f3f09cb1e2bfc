#pragma once

#include <string>
#include <vector>

#include "gates/intent/model.h"

namespace fabgate::app {

// The secret values this run must never show: the values of the environment variables
// fabgate.yaml names under `secrets.env`, and the gNMI passwords the inventory's
// `credentials_env` prefixes point at. Unset variables are listed in `unset` so the caller can
// warn: a secret the operator meant to protect but did not provide is worth a line.
struct ConfiguredSecrets {
  std::vector<std::string> values;
  std::vector<std::string> unset;  // variable names
};
ConfiguredSecrets configured_secrets(const intent::IntentRepository& repository);

}  // namespace fabgate::app
