#include "gates/intent/model.h"

#include <algorithm>

namespace fabgate::intent {

Duration default_rollback_timeout(Duration step_timeout) {
  return std::max(3 * step_timeout, Duration{60'000});
}

Duration Bounds::effective_rollback_timeout() const {
  return rollback_timeout.value_or(default_rollback_timeout(step_timeout));
}

const Device* Inventory::find(const std::string& name) const {
  for (const auto& device : devices)
    if (device.name == name) return &device;
  return nullptr;
}

const Change* IntentRepository::find_change(const std::string& id_or_file) const {
  for (const auto& change : changes)
    if (change.id == id_or_file || change.file == id_or_file) return &change;
  // Accept the path as a user would type it from the intent root, e.g. ./changes/x.yaml.
  std::string trimmed = id_or_file;
  if (trimmed.rfind("./", 0) == 0) trimmed = trimmed.substr(2);
  for (const auto& change : changes)
    if (change.file == trimmed) return &change;
  return nullptr;
}

}  // namespace fabgate::intent
