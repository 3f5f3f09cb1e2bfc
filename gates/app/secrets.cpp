#include "gates/app/secrets.h"

#include <algorithm>
#include <cstdlib>

namespace fabgate::app {

ConfiguredSecrets configured_secrets(const intent::IntentRepository& repository) {
  std::vector<std::string> names = repository.settings.secret_env;
  for (const auto& device : repository.inventory.devices)
    if (device.gnmi && !device.gnmi->credentials_env.empty())
      names.push_back(device.gnmi->credentials_env + "_PASSWORD");
  // Monitoring bearer tokens (docs/monitoring.md): redacted like every secret.
  const auto& monitoring = repository.settings.monitoring;
  if (monitoring.prometheus && !monitoring.prometheus->endpoint.token_env.empty())
    names.push_back(monitoring.prometheus->endpoint.token_env);
  if (monitoring.alertmanager && !monitoring.alertmanager->endpoint.token_env.empty())
    names.push_back(monitoring.alertmanager->endpoint.token_env);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());

  ConfiguredSecrets secrets;
  for (const auto& name : names) {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr || *value == '\0')
      secrets.unset.push_back(name);
    else
      secrets.values.emplace(name, value);
  }
  return secrets;
}

}  // namespace fabgate::app
