#pragma once

// Delivery of configured secrets to devices (fabgate.yaml `secrets.env`, docs/pipeline.md):
// a command may say $BGP_MD5_KEY or ${BGP_MD5_KEY}; the controller puts the value from its own
// environment into the text at the last moment, just before the command goes over SSH, so that
// everything recorded about the command (commands.jsonl, journal, execution.json, reports,
// the terminal) holds the placeholder, never the value.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gates/pipeline/families/remote.h"

namespace fabgate::pipeline {

// Values by variable name, as the controller's environment holds them.
using SecretValues = std::map<std::string, std::string>;

// The names among `names` that `text` refers to, each once, in order of first use. A reference
// is ${NAME}, or $NAME not followed by a letter, digit or '_' (as a shell reads it): with
// KEY listed, "$KEY_2" refers to KEY_2, not to KEY.
std::vector<std::string> secret_references(std::string_view text,
                                           const std::vector<std::string>& names);

// `text` with every reference to a name in `values` replaced by the value, verbatim; other
// '$' text is left alone. The caller checks values beforehand (gates/app/secrets.h).
std::string substitute_secrets(std::string_view text, const SecretValues& values);

// A Remote that substitutes secrets into each command and passes it on. It sits directly above
// the SSH remote and below RecordingRemote, so only the SSH channel ever sees the value. A
// command with a value in it is passed on with run_via_stdin(): the text travels on the
// channel's standard input, never in the exec request, so `ps` on the device does not show
// the value while the command runs (docs/ssh.md).
class SecretSubstitutingRemote final : public Remote {
 public:
  // `withheld`: secrets.env names this run must not deliver (a plan, made before anyone
  // approved the change): a command that refers to one is refused, never sent with the
  // reference left for the device's shell to expand.
  SecretSubstitutingRemote(Remote& inner, SecretValues values,
                           std::vector<std::string> withheld = {})
      : inner_(inner), values_(std::move(values)), withheld_(std::move(withheld)) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                   const std::string& command, Duration deadline,
                   std::string_view purpose) override;

 private:
  Remote& inner_;
  SecretValues values_;
  std::vector<std::string> withheld_;
};

}  // namespace fabgate::pipeline
