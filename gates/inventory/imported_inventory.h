#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/diagnostics.h"

namespace fabgate::inventory {

// One device found in another tool's inventory, with where it was declared.
struct ImportedDevice {
  std::string name;      // the inventory key; [A-Za-z0-9._-]+
  std::string platform;  // a fabgate platform (kFabgatePlatforms)
  std::string role;
  std::string host;  // management address or name, for ssh
  std::optional<int> port;
  SourceLocation where;
};

// What an import found, in the order the source declares it.
struct ImportedInventory {
  std::string command;  // how it was made, for the header comment
  std::vector<ImportedDevice> devices;
  std::vector<std::string> skipped;  // "br1: kind 'bridge' is not a device fabgate manages"
};

// The platforms gates/intent/loader.cpp accepts.
inline constexpr std::string_view kFabgatePlatforms[] = {
    "frr", "linux", "rdma-host", "openconfig", "sonic", "eos", "srlinux", "junos", "nxos"};
bool is_fabgate_platform(std::string_view platform);
std::string fabgate_platforms();  // "frr, linux, ..." for messages

// An inventory key fabgate accepts (docs/schema/inventory.schema.json).
bool is_device_name(std::string_view name);

// The role a name suggests when the source says none: its trailing digits dropped
// ("leaf12" -> "leaf", "spine-a1" -> "spine-a"); "device" when nothing is left.
std::string role_from_name(std::string_view name);

// inventory.yaml text: a header saying where it came from and what to check, top-level
// credentials to edit (a read and a change account through the ssh agent, which
// `fabgate validate` accepts), and one entry per device with platform, role and ssh host/port.
std::string render_inventory_yaml(const ImportedInventory& inventory);

}  // namespace fabgate::inventory
