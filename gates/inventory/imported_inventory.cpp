#include "gates/inventory/imported_inventory.h"

#include <algorithm>
#include <cctype>

#include "adapters/core/text.h"

namespace fabgate::inventory {
namespace {

// A YAML scalar as it may be written plainly, else double-quoted (JSON escaping is valid YAML).
std::string yaml_scalar(std::string_view text) {
  static constexpr std::string_view kWords[] = {"true", "false", "yes", "no", "on",
                                                "off",  "null",  "~",   "y",  "n"};
  bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '/';
  });
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  bool keyword = std::find(std::begin(kWords), std::end(kWords), lower) != std::end(kWords);
  // YAML reads 12 and 1.5 as numbers; an IPv4 address (three dots) stays a string.
  bool number = text.find_first_not_of("0123456789.") == std::string_view::npos &&
                std::count(text.begin(), text.end(), '.') <= 1;
  bool leading = !text.empty() && text.front() == '-';
  if (plain && !keyword && !number && !leading) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

bool is_fabgate_platform(std::string_view platform) {
  return std::find(std::begin(kFabgatePlatforms), std::end(kFabgatePlatforms), platform) !=
         std::end(kFabgatePlatforms);
}

std::string fabgate_platforms() {
  std::vector<std::string> names(std::begin(kFabgatePlatforms), std::end(kFabgatePlatforms));
  return join(names, ", ");
}

bool is_device_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

std::string role_from_name(std::string_view name) {
  std::string role(name);
  while (!role.empty() && std::isdigit(static_cast<unsigned char>(role.back()))) role.pop_back();
  while (!role.empty() && (role.back() == '-' || role.back() == '_' || role.back() == '.'))
    role.pop_back();
  return role.empty() ? "device" : role;
}

std::string render_inventory_yaml(const ImportedInventory& inventory) {
  std::string out;
  out += "# Written by `" + inventory.command + "`.\n";
  out += "# Check each device's platform and role, and set the accounts fabgate logs in with:\n";
  out += "# a read account and a change account, each with a key file (identity_file) or the\n";
  out += "# ssh agent (agent: true). docs/schema/inventory.schema.json describes every key.\n";
  for (const auto& skipped : inventory.skipped) out += "# not imported: " + skipped + "\n";
  out += "credentials:\n";
  out += "  read: {user: fabgate-ro, agent: true}\n";
  out += "  change: {user: fabgate-rw, agent: true}\n";
  out += "\ndevices:\n";
  for (const auto& device : inventory.devices) {
    out += "  " + device.name + ":\n";
    out += "    platform: " + device.platform + "\n";
    out += "    role: " + yaml_scalar(device.role) + "\n";
    out += "    ssh: {host: " + yaml_scalar(device.host);
    if (device.port) out += ", port: " + std::to_string(*device.port);
    out += "}\n";
  }
  return out;
}

}  // namespace fabgate::inventory
