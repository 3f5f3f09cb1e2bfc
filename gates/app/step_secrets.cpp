#include "gates/app/step_secrets.h"

#include <cstdlib>

namespace fabgate::app {

Result<pipeline::SecretValues> step_secret_values(const intent::IntentRepository& repository,
                                                  const intent::Change& change, CommandsSent sent) {
  const auto& names = repository.settings.secret_env;
  pipeline::SecretValues values;
  std::vector<std::string> problems;
  auto check = [&](const std::string& text, const SourceLocation& where) {
    for (const auto& name : pipeline::secret_references(text, names)) {
      if (values.count(name)) continue;
      // Only the name and where it is used go into messages: the name is not a secret. (Not
      // "secret NAME": the error printer's redactor reads that as a secret argument.)
      const std::string used_at = " (a secrets.env variable used at " + where.to_string() + ")";
      const char* value = std::getenv(name.c_str());
      if (value == nullptr || *value == '\0') {
        problems.push_back(name + " is not set in the environment" + used_at);
        values.emplace(name, "");
        continue;
      }
      std::string text_value(value);
      if (text_value.find_first_of("'\n\r") != std::string::npos) {
        problems.push_back(name +
                           " holds a single quote or a line break, which cannot be put into a "
                           "command safely" +
                           used_at);
        values.emplace(name, "");
        continue;
      }
      values.emplace(name, std::move(text_value));
    }
  };
  if (sent == CommandsSent::change)
    for (const auto& step : change.steps) check(step.run, step.where);
  for (const auto& step : change.rollback) check(step.run, step.where);
  for (const auto& probe : change.acceptance.probes) check(probe.run, probe.where);
  if (!problems.empty())
    return Error::refused(
        "change " + change.id +
            " uses secrets.env variables that cannot be delivered; nothing was sent",
        problems);
  return values;
}

}  // namespace fabgate::app
