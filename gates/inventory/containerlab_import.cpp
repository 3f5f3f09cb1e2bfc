#include "gates/inventory/containerlab_import.h"

#include <arpa/inet.h>

#include <map>

#include "adapters/core/yaml_reader.h"

namespace fabgate::inventory {
namespace {

// containerlab kind -> fabgate platform ("" for a linux kind: the image decides).
const std::map<std::string, std::string, std::less<>>& platform_of_kind() {
  static const std::map<std::string, std::string, std::less<>> kinds = {
      {"nokia_srlinux", "srlinux"},
      {"srl", "srlinux"},
      {"arista_ceos", "eos"},
      {"ceos", "eos"},
      {"arista_veos", "eos"},
      {"vr-veos", "eos"},
      {"juniper_crpd", "junos"},
      {"crpd", "junos"},
      {"juniper_vmx", "junos"},
      {"vr-vmx", "junos"},
      {"juniper_vqfx", "junos"},
      {"vr-vqfx", "junos"},
      {"juniper_vjunosrouter", "junos"},
      {"juniper_vjunosswitch", "junos"},
      {"juniper_vjunosevolved", "junos"},
      {"cisco_n9kv", "nxos"},
      {"vr-n9kv", "nxos"},
      {"sonic-vs", "sonic"},
      {"sonic-vm", "sonic"},
      {"linux", ""},
  };
  return kinds;
}

// Kinds that are not a device with a management address: they are skipped, not refused.
bool is_infrastructure_kind(std::string_view kind) {
  return kind == "bridge" || kind == "ovs-bridge" || kind == "host" || kind == "ext-container" ||
         kind == "k8s-kind";
}

std::string known_kinds() {
  std::string names;
  for (const auto& [kind, platform] : platform_of_kind())
    names += (names.empty() ? "" : ", ") + kind;
  return names;
}

// A string field of `map`, or "" when absent; a non-string value is recorded as a problem.
std::string text_of(YamlReader& reader, const YAML::Node& map, std::string_view key,
                    std::string_view what) {
  if (!map || !map.IsMap() || !map[std::string(key)]) return {};
  return reader.string(map, key, Need::optional, what).value_or("");
}

}  // namespace

Result<ImportedInventory> import_containerlab(std::string_view text, const std::string& file) {
  auto parsed = parse_yaml(text, file);
  if (!parsed) return parsed.error();
  const YAML::Node& root = *parsed;
  Diagnostics problems;
  YamlReader reader(file, problems);
  ImportedInventory inventory;
  auto fail = [&]() -> Result<ImportedInventory> {
    return Error::invalid_input(file + ": not a containerlab topology fabgate can import",
                                problems.lines());
  };
  if (!reader.expect_map(root, "containerlab topology")) return fail();
  reader.check_duplicate_keys(root);
  auto lab = reader.string(root, "name", Need::required, "containerlab topology");
  auto topology = reader.child(root, "topology", Need::required, "containerlab topology");
  if (!lab || !topology || !reader.expect_map(*topology, "topology")) return fail();
  auto nodes = reader.child(*topology, "nodes", Need::required, "topology");
  if (!nodes || !reader.expect_map(*nodes, "topology.nodes")) return fail();
  if (nodes->size() == 0) {
    reader.error(*nodes, "topology.nodes is empty: no device to import");
    return fail();
  }
  YAML::Node defaults = (*topology)["defaults"];
  YAML::Node kinds = (*topology)["kinds"];
  // containerlab names a node's container PREFIX-LAB-NODE ("clab" unless `prefix` says
  // otherwise; an empty prefix means the bare node name) and puts it in /etc/hosts.
  std::string prefix = "clab";
  if (root["prefix"])
    prefix = reader.string(root, "prefix", Need::optional, "topology").value_or("");

  for (auto it = nodes->begin(); it != nodes->end(); ++it) {
    std::string name = it->first.as<std::string>();
    const YAML::Node node = it->second;
    std::string what = "node '" + name + "'";
    if (node && !node.IsNull() && !node.IsMap()) {
      reader.error(node, what + " is not a mapping");
      continue;
    }
    if (!is_device_name(name)) {
      reader.error(it->first, "node name '" + name + "' is not a fabgate device name",
                   "use letters, digits, '.', '_' and '-'");
      continue;
    }
    std::string kind = text_of(reader, node, "kind", what);
    if (kind.empty()) kind = text_of(reader, defaults, "kind", "topology.defaults");
    if (kind.empty()) {
      reader.error(it->first, what + " has no kind, and topology.defaults has none",
                   "add `kind: linux` (or the node's kind) to the node");
      continue;
    }
    YAML::Node kind_defaults = kinds && kinds.IsMap() ? kinds[kind] : YAML::Node();
    std::string image = text_of(reader, node, "image", what);
    if (image.empty()) image = text_of(reader, kind_defaults, "image", "topology.kinds." + kind);
    if (image.empty()) image = text_of(reader, defaults, "image", "topology.defaults");
    YAML::Node labels = node && node.IsMap() ? node["labels"] : YAML::Node();
    std::string platform = text_of(reader, labels, "fabgate-platform", what + " labels");
    if (is_infrastructure_kind(kind) && platform.empty()) {
      inventory.skipped.push_back(name + ": kind '" + kind + "' is not a device fabgate manages");
      continue;
    }
    if (!platform.empty()) {
      if (!is_fabgate_platform(platform)) {
        reader.error(
            labels["fabgate-platform"],
            "label fabgate-platform '" + platform + "' of " + what + " is not a fabgate platform",
            "use one of " + fabgate_platforms());
        continue;
      }
    } else if (auto known = platform_of_kind().find(kind); known != platform_of_kind().end()) {
      platform = known->second;
      if (platform.empty()) platform = image.find("frr") != std::string::npos ? "frr" : "linux";
    } else {
      YAML::Node where = node && node.IsMap() && node["kind"] ? node["kind"] : it->first;
      reader.error(where, "kind '" + kind + "' of " + what + " has no fabgate platform",
                   "known kinds: " + known_kinds() +
                       "; or give the node a label fabgate-platform: PLATFORM (" +
                       fabgate_platforms() + ")");
      continue;
    }
    ImportedDevice device;
    device.name = name;
    device.platform = platform;
    device.where = reader.key_at(*nodes, name);
    device.role = text_of(reader, labels, "fabgate-role", what + " labels");
    if (device.role.empty()) device.role = text_of(reader, node, "group", what);
    if (device.role.empty()) device.role = role_from_name(name);
    for (const char* key : {"mgmt-ipv4", "mgmt_ipv4"}) {
      if (!device.host.empty() || !node || !node.IsMap() || !node[key]) continue;
      device.host = text_of(reader, node, key, what);
      in_addr address{};
      if (::inet_pton(AF_INET, device.host.c_str(), &address) != 1) {
        reader.error(node[key], key + std::string(" '") + device.host + "' of " + what +
                                    " is not an IPv4 address");
        device.host.clear();
      }
    }
    if (device.host.empty()) device.host = prefix.empty() ? name : prefix + "-" + *lab + "-" + name;
    inventory.devices.push_back(std::move(device));
  }
  if (!problems.empty()) return fail();
  if (inventory.devices.empty()) {
    reader.error(*nodes, "no node of topology.nodes is a device fabgate manages");
    return fail();
  }
  return inventory;
}

}  // namespace fabgate::inventory
