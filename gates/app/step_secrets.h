#pragma once

#include "adapters/core/result.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/secret_substitution.h"

namespace fabgate::app {

// The secrets a change's commands use, for delivery to the devices: the controller
// environment's values of the `secrets.env` variables that the commands this run may send
// refer to ($NAME or ${NAME}). Variables listed but not used are not needed
// (secrets.h warns about those that are unset). Refused before anything is sent (exit 3),
// naming the variable and the command that uses it: a used variable that is unset or empty,
// and a value holding a single quote or a line break, which would end the single quotes the
// confirm timer's job puts around rollback commands and run the rest of the value as shell.
enum class CommandsSent {
  change,    // plan, apply, rehearse: steps, rollback steps and probes
  recovery,  // recover: rollback steps and probes (its steps ran before the crash, or never)
};
Result<pipeline::SecretValues> step_secret_values(const intent::IntentRepository& repository,
                                                  const intent::Change& change, CommandsSent sent);

}  // namespace fabgate::app
