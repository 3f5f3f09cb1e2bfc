#include "gates/pipeline/twin/twin_plan.h"

#include <algorithm>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "adapters/core/foreign_json.h"
#include "gates/pipeline/families/probes.h"

namespace fabgate::pipeline::twin {

using nlohmann::json;

namespace {

const json& empty_object() {
  static const json empty = json::object();
  return empty;
}

const json& facts_of(const HeldSnapshot& pre, const std::string& device) {
  const json* devices = object_member(pre.document, "devices");
  if (!devices) return empty_object();
  const json* facts = object_member(*devices, device);
  return facts ? *facts : empty_object();
}

// Inventory names by the names devices give themselves (LLDP's system name is the hostname):
// each device's captured hostname, and its inventory name.
std::map<std::string, std::string> names_by_hostname(const PlanRequest& request) {
  std::map<std::string, std::string> names;
  for (const auto& device : request.inventory.devices) {
    names.emplace(device.name, device.name);
    const json& facts = facts_of(request.pre, device.name);
    if (const json* identity = object_member(facts, "identity"))
      if (auto hostname = string_member(*identity, "hostname"); hostname && !hostname->empty())
        names.emplace(*hostname, device.name);
  }
  return names;
}

struct Neighbour {
  std::string port;         // this device's port
  std::string device;       // the inventory name of the device heard there
  std::string remote_port;  // its port id
  // Found by address, not LLDP: the far end is a bridge with the subnet's address (a host on a
  // switch's host-facing bridge); the twin gives that bridge a new port for this link.
  std::string bridge;
  bool by_address = false;
};

// Every neighbour a device's LLDP agent hears that is in the inventory.
std::vector<Neighbour> lldp_neighbours(const PlanRequest& request, const std::string& device,
                                       const std::map<std::string, std::string>& names) {
  std::vector<Neighbour> found;
  const json* lldp = object_member(facts_of(request.pre, device), "lldp");
  const json* ports = lldp ? object_member(*lldp, "neighbors") : nullptr;
  if (!ports) return found;
  for (const auto& [port, heard] : ports->items()) {
    if (!heard.is_array()) continue;
    for (const auto& neighbour : heard) {
      if (!neighbour.is_object()) continue;
      auto system = string_member(neighbour, "system_name");
      auto remote_port = string_member(neighbour, "port_id");
      if (!system || !remote_port) continue;
      auto name = names.find(*system);
      if (name == names.end()) continue;
      found.push_back({port, name->second, *remote_port});
    }
  }
  return found;
}

// An IPv4 interface address: the address and its prefix length.
struct Ipv4Prefix {
  std::uint32_t address = 0;
  int length = 0;
  std::uint32_t network() const {
    return length == 0 ? 0 : address & (~std::uint32_t{0} << (32 - length));
  }
};

std::optional<Ipv4Prefix> parse_ipv4_prefix(const std::string& text) {
  unsigned a, b, c, d;
  int length;
  char tail;
  if (std::sscanf(text.c_str(), "%u.%u.%u.%u/%d%c", &a, &b, &c, &d, &length, &tail) != 5) return {};
  if (a > 255 || b > 255 || c > 255 || d > 255 || length < 0 || length > 32) return {};
  return Ipv4Prefix{(a << 24) | (b << 16) | (c << 8) | d, length};
}

// Where LLDP says nothing (the device runs no agent, or its profile does not read one), links
// are found by address: two interfaces in one /30 or /31 are the two ends of a link, and a
// host's interface in the subnet of a switch's bridge hangs off that bridge.
struct AddressEnd {
  std::string device, port;
  bool bridge = false;
  bool host = false;
};
using AddressIndex = std::map<std::pair<std::uint32_t, int>, std::vector<AddressEnd>>;

AddressIndex index_addresses(const PlanRequest& request) {
  AddressIndex index;
  for (const auto& device : request.inventory.devices) {
    const json* interfaces = object_member(facts_of(request.pre, device.name), "interfaces");
    if (!interfaces) continue;
    std::set<std::string> masters;
    for (const auto& [name, interface] : interfaces->items())
      if (interface.is_object())
        if (auto master = string_member(interface, "master")) masters.insert(*master);
    const bool host = device.platform == "linux" || device.platform == "rdma-host";
    for (const auto& [name, interface] : interfaces->items()) {
      if (!interface.is_object() || name == "lo" || name.rfind("mgmt", 0) == 0) continue;
      const json* addresses = array_member(interface, "addresses");
      if (!addresses) continue;
      for (const auto& address : *addresses) {
        if (!address.is_string()) continue;
        auto prefix = parse_ipv4_prefix(address.get<std::string>());
        if (!prefix || prefix->length == 32) continue;
        index[{prefix->network(), prefix->length}].push_back(
            {device.name, name, masters.count(name) > 0, host});
      }
    }
  }
  return index;
}

std::vector<Neighbour> address_neighbours(const AddressIndex& index, const std::string& device) {
  std::vector<Neighbour> found;
  for (const auto& [subnet, ends] : index) {
    for (const auto& end : ends) {
      if (end.device != device) continue;
      for (const auto& other : ends) {
        if (other.device == device) continue;
        if (subnet.second >= 30) {
          found.push_back({end.port, other.device, other.port, "", true});
        } else if (end.host && other.bridge && !other.host) {
          found.push_back({end.port, other.device, "", other.port, true});
        } else if (end.bridge && !end.host && other.host) {
          found.push_back({"", other.device, other.port, "", true});  // the host's side names it
        }
      }
    }
  }
  return found;
}

// Every neighbour of a device: LLDP's, and by address for the ports LLDP says nothing of.
std::vector<Neighbour> neighbours_of(const PlanRequest& request, const std::string& device,
                                     const std::map<std::string, std::string>& names,
                                     const AddressIndex& index) {
  auto found = lldp_neighbours(request, device, names);
  std::set<std::string> heard;
  for (const auto& neighbour : found) heard.insert(neighbour.port);
  for (auto& neighbour : address_neighbours(index, device))
    if (neighbour.port.empty() || !heard.count(neighbour.port)) found.push_back(std::move(neighbour));
  return found;
}

bool valid_address(const std::string& address) {
  if (address.empty() || address.size() > 50) return false;
  if (std::count(address.begin(), address.end(), '/') != 1) return false;
  return std::all_of(address.begin(), address.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
           c == ':' || c == '.' || c == '/';
  });
}

bool valid_gateway(const std::string& address) {
  return !address.empty() && valid_address(address + "/0");
}

std::vector<std::string> addresses_of(const json& interface, const std::string& where,
                                      std::vector<std::string>& gaps) {
  std::vector<std::string> addresses;
  const json* list = array_member(interface, "addresses");
  if (!list) return addresses;
  for (const auto& address : *list) {
    if (address.is_string() && valid_address(address.get<std::string>()))
      addresses.push_back(address.get<std::string>());
    else
      gaps.push_back(where + ": an address that is not an IP prefix was left out");
  }
  return addresses;
}

// The kernel VXLAN devices the evpn category names, by interface name.
struct VxlanDevice {
  std::string vni;
  const json* entry = nullptr;
};
std::map<std::string, VxlanDevice> vxlan_devices(const json& facts) {
  std::map<std::string, VxlanDevice> devices;
  const json* evpn = object_member(facts, "evpn");
  const json* vnis = evpn ? object_member(*evpn, "vnis") : nullptr;
  if (!vnis) return devices;
  for (const auto& [vni, entry] : vnis->items()) {
    if (!entry.is_object()) continue;
    auto name = string_member(entry, "vxlan_if");
    if (name && entry.contains("local_vtep")) devices.emplace(*name, VxlanDevice{vni, &entry});
  }
  return devices;
}

// A Linux host's own routes with a gateway (protocol boot or static: what its administrator
// added, not what the kernel derives from addresses), as `ip route add` arguments.
std::vector<std::string> host_static_routes(const HeldSnapshot& pre, const std::string& device,
                                            std::vector<std::string>& gaps) {
  std::vector<std::string> routes;
  auto held = pre.routes.find(device);
  if (held == pre.routes.end() || !held->second) {
    // A snapshot read back from a file keeps its lists in the document.
    const json* table = object_member(facts_of(pre, device), "routes");
    const json* ipv4 = table ? array_member(*table, "ipv4") : nullptr;
    if (!ipv4) {
      gaps.push_back(device + ": no route table captured: the host gets no static routes");
      return routes;
    }
    for (const auto& route : *ipv4) {
      if (!route.is_object()) continue;
      auto protocol = string_member(route, "protocol").value_or("");
      auto prefix = string_member(route, "prefix").value_or("");
      const json* nexthops = array_member(route, "nexthops");
      if ((protocol != "boot" && protocol != "static") || !nexthops || nexthops->size() != 1 ||
          !(*nexthops)[0].is_string())
        continue;
      std::string gateway = (*nexthops)[0].get<std::string>();
      if (gateway.rfind("dev:", 0) == 0 || !valid_gateway(gateway)) continue;
      if (prefix == "0.0.0.0/0") prefix = "default";
      if (prefix != "default" && !valid_address(prefix)) continue;
      routes.push_back(prefix + " via " + gateway);
    }
    return routes;
  }
  auto table = held->second->find("ipv4");
  if (table == held->second->end()) return routes;
  for (const auto& [vrf, list] : table->second.vrfs()) {
    if (vrf != "default") continue;
    for (const auto& route : list) {
      std::string protocol = table->second.strings().text(route.protocol);
      if (protocol != "boot" && protocol != "static") continue;
      auto nexthops = table->second.nexthops_of(route);
      if (nexthops.size() != 1 || nexthops[0].rfind("dev:", 0) == 0 ||
          !valid_gateway(nexthops[0]))
        continue;
      std::string prefix = table->second.prefix_of(route);
      if (prefix == "0.0.0.0/0") prefix = "default";
      if (prefix != "default" && !valid_address(prefix)) continue;
      routes.push_back(prefix + " via " + nexthops[0]);
    }
  }
  return routes;
}

// A host interface nothing wires (no LLDP, no subnet shared with a switch: an overlay
// interface in a VNI's bridge) joins the one bridge without addresses, with ports nothing wires,
// on the switch the host is otherwise attached to: the port it has in production cannot be told
// apart from its sibling ports, and a new port on the same bridge forwards the same. Where more
// than one such bridge exists, it stays unconnected.
void join_hosts_to_unaddressed_bridges(
    const PlanRequest& request, const std::vector<std::string>& scope,
    std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>>& peer_of,
    std::map<std::string, std::vector<std::pair<std::string, std::string>>>& bridge_ports,
    std::vector<std::string>& gaps) {
  for (const auto& host : scope) {
    const intent::Device* device = request.inventory.find(host);
    if (!device || (device->platform != "linux" && device->platform != "rdma-host")) continue;
    const json* interfaces = object_member(facts_of(request.pre, host), "interfaces");
    if (!interfaces) continue;
    std::set<std::string> switches;
    for (const auto& [here, there] : peer_of)
      if (here.first == host) switches.insert(there.first);
    for (const auto& [port, interface] : interfaces->items()) {
      if (port == "lo" || port.rfind("mgmt", 0) == 0 || !interface.is_object()) continue;
      if (peer_of.count({host, port})) continue;
      const json* addresses = array_member(interface, "addresses");
      if (!addresses || addresses->empty() || !valid_interface_name(port)) continue;
      std::vector<std::pair<std::string, std::string>> candidates;
      for (const auto& attached : switches) {
        const json* theirs = object_member(facts_of(request.pre, attached), "interfaces");
        if (!theirs) continue;
        std::map<std::string, bool> free_port_of;  // bridge -> has a port nothing wires
        for (const auto& [member, entry] : theirs->items()) {
          if (!entry.is_object()) continue;
          auto master = string_member(entry, "master");
          if (!master) continue;
          bool wired = peer_of.count({attached, member}) > 0;
          free_port_of[*master] = free_port_of[*master] || !wired;
        }
        for (const auto& [bridge, has_free_port] : free_port_of) {
          const json* bridge_entry = object_member(*theirs, bridge);
          const json* bridge_addresses = bridge_entry ? array_member(*bridge_entry, "addresses") : nullptr;
          bool addressed = bridge_addresses && !bridge_addresses->empty();
          if (has_free_port && !addressed) candidates.push_back({attached, bridge});
        }
      }
      if (candidates.size() != 1) continue;
      const auto& [attached, bridge] = candidates.front();
      std::string new_port = "tw-" + host + "-" + port;
      if (!valid_interface_name(new_port))
        new_port = "tw-o" + std::to_string(bridge_ports[attached].size() + 1);
      bridge_ports[attached].push_back({new_port, bridge});
      peer_of[{host, port}] = {attached, new_port};
      peer_of[{attached, new_port}] = {host, port};
      gaps.push_back(host + " " + port + ": no LLDP and no subnet shared with a switch; joined to " +
                     attached + "'s bridge " + bridge +
                     " (its one address-less bridge with unwired ports) on a new port " + new_port);
    }
  }
}

// `show running-config` as a configuration file: without the banner vtysh prints before it
// ("Building configuration...", "Current configuration:"), which no daemon reads as a command.
std::string startup_config(const std::string& running) {
  std::string config;
  std::size_t start = 0;
  while (start < running.size()) {
    std::size_t end = running.find('\n', start);
    if (end == std::string::npos) end = running.size();
    std::string line = running.substr(start, end - start);
    start = end + 1;
    if (line == "Building configuration..." || line == "Current configuration:") continue;
    config += line;
    config += '\n';
  }
  return config;
}

void add_unique(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

}  // namespace

const TwinNode* TwinPlan::find(const std::string& name) const {
  for (const auto& node : nodes)
    if (node.name == name) return &node;
  return nullptr;
}

bool valid_interface_name(const std::string& name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '@' || c == '+' || c == '-';
  });
}

namespace {

// nftables names from a device, before they reach the twin's nft: letters, digits and _ . -
// (nft's identifiers, without the rarer forms), at most 64 characters.
bool valid_nft_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
  });
}

// A word of a chain or set declaration (type, hook, policy, set type, flag, element): no
// character that could end the declaration or start another command.
bool valid_nft_words(const std::string& text) {
  if (text.empty() || text.size() > 256) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-' || c == ':' || c == '/' || c == ' ';
  });
}

// "inet fgtest input" -> {"inet", "fgtest", "input"}; empty when it is not two or three names
// with a family nft knows.
std::vector<std::string> nft_key(const std::string& key, std::size_t parts) {
  static const std::set<std::string> kFamilies = {"ip", "ip6", "inet", "arp", "bridge", "netdev"};
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= key.size()) {
    auto space = key.find(' ', start);
    if (space == std::string::npos) space = key.size();
    words.push_back(key.substr(start, space - start));
    start = space + 1;
  }
  if (words.size() != parts || !kFamilies.count(words[0])) return {};
  for (std::size_t i = 1; i < words.size(); ++i)
    if (!valid_nft_name(words[i])) return {};
  return words;
}

// The captured ruleset as nft commands (docs/snapshot-format.md, "Packet filters"): tables, sets
// with their elements, chains (base chains with type, hook, priority and policy), then rules
// in order. What cannot be given to nft as captured is left out and named in `gaps`.
void plan_packet_filter(const json& facts, TwinNode& node, std::vector<std::string>& gaps) {
  const json* filter = object_member(facts, "packet_filter");
  if (!filter) return;
  const std::string where = node.name + " nftables";
  if (const json* tables = object_member(*filter, "tables"))
    for (const auto& [key, table] : tables->items()) {
      if (nft_key(key, 2).empty()) {
        gaps.push_back(where + ": table '" + key.substr(0, 80) + "' is not a name the twin's "
                                                                 "nft is given; left out");
        continue;
      }
      node.nft_objects.push_back("add table " + key);
    }
  std::set<std::string> tables(node.nft_objects.begin(), node.nft_objects.end());
  auto in_table = [&](const std::vector<std::string>& words) {
    return tables.count("add table " + words[0] + " " + words[1]) > 0;
  };
  if (const json* sets = object_member(*filter, "sets"))
    for (const auto& [key, set] : sets->items()) {
      auto words = nft_key(key, 3);
      auto type = set.is_object() ? string_member(set, "type") : std::nullopt;
      auto kind = set.is_object() ? string_member(set, "kind").value_or("set") : "set";
      if (words.empty() || !in_table(words) || !type || !valid_nft_words(*type) || kind != "set") {
        gaps.push_back(where + ": set or map '" + key.substr(0, 80) + "' not reproduced");
        continue;
      }
      std::string declaration = "add set " + key + " { type " + *type + ";";
      std::vector<std::string> flags;
      if (const json* list = array_member(set, "flags"))
        for (const auto& flag : *list)
          if (flag.is_string() && valid_nft_words(flag.get<std::string>()))
            flags.push_back(flag.get<std::string>());
      for (std::size_t i = 0; i < flags.size(); ++i)
        declaration += (i == 0 ? " flags " : ", ") + flags[i] + (i + 1 == flags.size() ? ";" : "");
      declaration += " }";
      node.nft_objects.push_back(declaration);
      const json* elements = array_member(set, "elements");
      std::vector<std::string> good;
      if (elements)
        for (const auto& element : *elements)
          if (element.is_string() && valid_nft_words(element.get<std::string>()))
            good.push_back(element.get<std::string>());
      if (!elements || good.size() != elements->size())
        gaps.push_back(where + ": set '" + key + "': elements not reproduced (dynamic, or not "
                                                 "as captured)");
      std::string add = "add element " + key + " { ";
      for (std::size_t i = 0; i < good.size(); ++i) add += (i ? ", " : "") + good[i];
      if (!good.empty()) node.nft_objects.push_back(add + " }");
    }
  const json* chains = object_member(*filter, "chains");
  if (!chains) return;
  std::vector<std::pair<std::string, const json*>> ordered;
  for (const auto& [key, chain] : chains->items()) {
    auto words = nft_key(key, 3);
    if (words.empty() || !in_table(words) || !chain.is_object()) {
      gaps.push_back(where + ": chain '" + key.substr(0, 80) + "' not reproduced");
      continue;
    }
    std::string declaration = "add chain " + key;
    if (auto hook = string_member(chain, "hook")) {
      auto type = string_member(chain, "type").value_or("filter");
      auto priority = integer_member(chain, "priority");
      auto policy = string_member(chain, "policy").value_or("accept");
      // A netdev chain hooks given devices, which the snapshot does not always say.
      if (!valid_nft_words(*hook) || !valid_nft_words(type) || !priority ||
          (policy != "accept" && policy != "drop") || words[0] == "netdev") {
        gaps.push_back(where + ": base chain '" + key + "' not reproduced (a netdev chain, or "
                                                        "its hook, priority or policy)");
        continue;
      }
      declaration += " { type " + type + " hook " + *hook + " priority " +
                     std::to_string(*priority) + "; policy " + policy + "; }";
    }
    node.nft_objects.push_back(declaration);
    ordered.emplace_back(key, &chain);
  }
  for (const auto& [key, chain] : ordered) {
    const json* rules = array_member(*chain, "rules");
    if (!rules) continue;
    for (const auto& rule : *rules) {
      const std::string text = rule.is_string() ? rule.get<std::string>() : "";
      if (text.empty() || text.size() > 4096 ||
          text.find_first_of("\n\r;#") != std::string::npos) {
        gaps.push_back(where + ": a rule of chain '" + key + "' is not one nft command; left out");
        continue;
      }
      node.nft_rules.push_back("add rule " + key + " " + text);
    }
  }
}

}  // namespace

std::vector<std::string> twin_scope(const PlanRequest& request) {
  auto names = names_by_hostname(request);
  auto index = index_addresses(request);
  std::set<std::string> scope;
  std::vector<std::string> frontier;
  for (const auto& target : request.change.targets)
    if (request.inventory.find(target) && scope.insert(target).second) frontier.push_back(target);
  for (int hop = 0; hop < std::max(request.radius, 0); ++hop) {
    std::vector<std::string> next;
    for (const auto& device : frontier)
      for (const auto& neighbour : neighbours_of(request, device, names, index))
        if (scope.insert(neighbour.device).second) next.push_back(neighbour.device);
    frontier = std::move(next);
  }
  // The hosts the probes use, with their attachment switches: a probe from a host outside the
  // twin could not run there at all.
  std::vector<std::string> hosts;
  auto add_host = [&](const std::string& name) {
    if (name.empty()) return;
    if (const auto* device = request.inventory.find(name)) add_unique(hosts, device->name);
    else if (const auto* owner = owner_of(request.inventory, name)) add_unique(hosts, owner->name);
  };
  for (const auto& probe : request.change.acceptance.probes) {
    add_host(probe.host);
    add_host(probe.target);
    for (const auto& host : probe.hosts) add_host(host);
  }
  if (request.change.acceptance.during) {
    add_host(request.change.acceptance.during->host);
    add_host(request.change.acceptance.during->target);
  }
  // From each probe host one hop further than from the targets: its attachment switch and
  // that switch's own neighbourhood, so every path the probes may take around a drained or
  // broken target is in the twin too (a twin without the other spine would blame a drain for
  // the redundancy it left out).
  frontier.clear();
  for (const auto& host : hosts) {
    scope.insert(host);
    frontier.push_back(host);
  }
  std::set<std::string> seen(frontier.begin(), frontier.end());
  for (int hop = 0; hop < std::max(request.radius, 0) + 1; ++hop) {
    std::vector<std::string> next;
    for (const auto& device : frontier)
      for (const auto& neighbour : neighbours_of(request, device, names, index)) {
        scope.insert(neighbour.device);
        if (seen.insert(neighbour.device).second) next.push_back(neighbour.device);
      }
    frontier = std::move(next);
  }
  return {scope.begin(), scope.end()};
}

TwinPlan plan_twin(const PlanRequest& request) {
  TwinPlan plan;
  auto names = names_by_hostname(request);
  auto index = index_addresses(request);
  auto scope = twin_scope(request);
  std::set<std::string> in_scope(scope.begin(), scope.end());

  // Links: a port whose LLDP neighbour is in the twin becomes one end of a veth pair. Heard
  // from either side is enough (one agent may be quiet); each pair once.
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> peer_of;
  // New ports the twin adds to a switch's bridge for hosts found there by address.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> bridge_ports;
  for (const auto& device : scope)
    for (auto neighbour : neighbours_of(request, device, names, index)) {
      if (!in_scope.count(neighbour.device) || neighbour.device == device) continue;
      if (neighbour.port.empty()) continue;  // the host's own side makes this link
      if (!neighbour.bridge.empty()) {
        if (peer_of.count({device, neighbour.port})) continue;
        std::string port = "tw-" + device;
        if (!valid_interface_name(port))
          port = "tw-" + std::to_string(bridge_ports[neighbour.device].size() + 1);
        bridge_ports[neighbour.device].push_back({port, neighbour.bridge});
        neighbour.remote_port = port;
        plan.fidelity_gaps.push_back(device + " " + neighbour.port + ": no LLDP; joined to " +
                                     neighbour.device + "'s bridge " + neighbour.bridge +
                                     " by address, on a new port " + port);
      }
      std::pair<std::string, std::string> here{device, neighbour.port};
      std::pair<std::string, std::string> there{neighbour.device, neighbour.remote_port};
      auto known_here = peer_of.find(here);
      auto known_there = peer_of.find(there);
      if (known_here != peer_of.end() || known_there != peer_of.end()) {
        bool same = known_here != peer_of.end() && known_here->second == there;
        if (!same)
          plan.fidelity_gaps.push_back(device + " " + neighbour.port +
                                       ": more than one neighbour heard; only the first is wired");
        continue;
      }
      peer_of[here] = there;
      peer_of[there] = here;
    }

  join_hosts_to_unaddressed_bridges(request, scope, peer_of, bridge_ports, plan.fidelity_gaps);

  for (const auto& name : scope) {
    const intent::Device* device = request.inventory.find(name);
    const json& facts = facts_of(request.pre, name);
    TwinNode node;
    node.name = name;
    node.platform = device ? device->platform : "";
    node.hostname = name;
    if (const json* identity = object_member(facts, "identity"))
      if (auto hostname = string_member(*identity, "hostname");
          hostname && !hostname->empty() && hostname->size() < 64)
        node.hostname = *hostname;
    // The platform decides the emulator; none is none, never a pass.
    if (node.platform == "frr") {
      node.emulator = Emulator::frr;
      const json* config = object_member(facts, "config");
      auto text = config ? string_member(*config, "text") : std::nullopt;
      auto format = config ? string_member(*config, "format") : std::nullopt;
      if (!text || format.value_or("text") != "text" || text->empty())
        plan.cannot_build.push_back(name + ": no running configuration was captured (category "
                                           "config), so FRR there cannot be started as it runs");
      else
        node.frr_config = startup_config(*text);
    } else if (node.platform == "linux" || node.platform == "rdma-host") {
      node.emulator = Emulator::linux_host;
      if (node.platform == "rdma-host")
        plan.fidelity_gaps.push_back(name + ": RDMA devices are not emulated (probes of kind "
                                            "rdma cannot run on the twin)");
    } else {
      plan.cannot_build.push_back(name + ": platform '" + node.platform +
                                  "' has no emulator on the twin (docs/twin.md lists them)");
      continue;
    }
    const json* interfaces = object_member(facts, "interfaces");
    if (!interfaces) {
      plan.cannot_build.push_back(name + ": its interfaces were not captured (category "
                                         "interfaces), so the twin cannot be wired");
      continue;
    }
    if (!object_member(facts, "lldp"))
      plan.fidelity_gaps.push_back(name + ": no LLDP captured: its links are found by address only");
    if (const json* multipath = object_member(facts, "multipath"))
      if (const json* policy = object_member(*multipath, "hash_policy"))
        if (auto ipv4 = integer_member(*policy, "ipv4"); ipv4 && *ipv4 >= 0 && *ipv4 <= 3)
          node.ipv4_hash_policy = static_cast<int>(*ipv4);
    plan_packet_filter(facts, node, plan.fidelity_gaps);

    auto vxlans = vxlan_devices(facts);
    std::set<std::string> masters;
    for (const auto& [interface_name, interface] : interfaces->items())
      if (interface.is_object())
        if (auto master = string_member(interface, "master")) masters.insert(*master);

    std::vector<TwinInterface> ports;
    std::vector<TwinInterface> bridges;
    for (const auto& [interface_name, interface] : interfaces->items()) {
      if (!interface.is_object()) continue;
      const std::string where = name + " " + interface_name;
      if (interface_name == "lo") {
        for (auto& address : addresses_of(interface, where, plan.fidelity_gaps))
          if (address != "127.0.0.1/8" && address != "::1/128")
            node.loopback_addresses.push_back(address);
        continue;
      }
      if (!valid_interface_name(interface_name)) {
        plan.fidelity_gaps.push_back(where + ": not a name the twin can create; left out");
        continue;
      }
      TwinInterface twin;
      twin.name = interface_name;
      auto mtu = integer_member(interface, "mtu");
      twin.mtu = mtu && *mtu >= 68 && *mtu <= 65535 ? static_cast<int>(*mtu) : 1500;
      twin.admin_up = string_member(interface, "admin").value_or("up") == "up";
      twin.addresses = addresses_of(interface, where, plan.fidelity_gaps);
      if (auto master = string_member(interface, "master"); master && valid_interface_name(*master))
        twin.master = *master;
      if (peer_of.count({name, interface_name})) {
        twin.kind = TwinInterface::Kind::veth;
      } else if (auto vxlan = vxlans.find(interface_name); vxlan != vxlans.end()) {
        twin.kind = TwinInterface::Kind::vxlan;
        const json& entry = *vxlan->second.entry;
        twin.vni = std::strtoll(vxlan->second.vni.c_str(), nullptr, 10);
        twin.vxlan_local = string_member(entry, "local_vtep").value_or("");
        twin.vxlan_port = static_cast<int>(integer_member(entry, "udp_port").value_or(4789));
        twin.vxlan_learning = bool_member(entry, "learning").value_or(false);
        if (twin.vni <= 0 || twin.vni >= (1 << 24) || !valid_gateway(twin.vxlan_local)) {
          plan.fidelity_gaps.push_back(where + ": VXLAN device without a usable VNI or local "
                                               "address; made a plain interface");
          twin.kind = TwinInterface::Kind::dummy;
        }
      } else if (masters.count(interface_name)) {
        twin.kind = TwinInterface::Kind::bridge;
      } else {
        twin.kind = TwinInterface::Kind::dummy;
        if (interface_name.rfind("mgmt", 0) != 0 && interface_name != "eth0")
          plan.fidelity_gaps.push_back(where + ": no neighbour in the twin (no LLDP neighbour, "
                                               "or one outside the radius): present, unconnected");
        else if (interface_name == "eth0")
          plan.fidelity_gaps.push_back(where + ": no neighbour in the twin: present, unconnected");
      }
      (twin.kind == TwinInterface::Kind::bridge ? bridges : ports).push_back(std::move(twin));
    }
    for (const auto& [port, bridge] : bridge_ports[name]) {
      TwinInterface added;
      added.name = port;
      added.kind = TwinInterface::Kind::veth;
      added.master = bridge;
      for (const auto& existing : bridges)
        if (existing.name == bridge) added.mtu = existing.mtu;
      ports.push_back(std::move(added));
    }
    // Bridges first, so a port can join its bridge when it is made.
    for (auto& bridge : bridges) node.interfaces.push_back(std::move(bridge));
    for (auto& port : ports) node.interfaces.push_back(std::move(port));
    if (node.emulator == Emulator::linux_host)
      node.static_routes = host_static_routes(request.pre, name, plan.fidelity_gaps);
    plan.nodes.push_back(std::move(node));
  }

  for (const auto& [here, there] : peer_of) {
    if (here > there) continue;
    const TwinNode* a = plan.find(here.first);
    const TwinNode* b = plan.find(there.first);
    if (!a || !b) continue;
    auto interface_of = [](const TwinNode* node, const std::string& name) -> const TwinInterface* {
      for (const auto& interface : node->interfaces)
        if (interface.name == name) return &interface;
      return nullptr;
    };
    const TwinInterface* end_a = interface_of(a, here.second);
    const TwinInterface* end_b = interface_of(b, there.second);
    if (!end_a || !end_b) {
      plan.fidelity_gaps.push_back(here.first + " " + here.second + " <-> " + there.first + " " +
                                   there.second + ": one end's interface was not captured; not wired");
      continue;
    }
    if (end_a->mtu != end_b->mtu)
      plan.fidelity_gaps.push_back(here.first + " " + here.second + " <-> " + there.first + " " +
                                   there.second + ": MTUs differ (" + std::to_string(end_a->mtu) +
                                   " vs " + std::to_string(end_b->mtu) + "), each end keeps its own");
    plan.links.push_back({here.first, here.second, there.first, there.second, end_a->mtu});
  }
  // A port LLDP pairs with an interface the twin left out stays unconnected.
  for (auto& node : plan.nodes)
    for (auto& interface : node.interfaces)
      if (interface.kind == TwinInterface::Kind::veth) {
        bool linked = std::any_of(plan.links.begin(), plan.links.end(), [&](const TwinLink& link) {
          return (link.node_a == node.name && link.interface_a == interface.name) ||
                 (link.node_b == node.name && link.interface_b == interface.name);
        });
        if (!linked) interface.kind = TwinInterface::Kind::dummy;
      }
  plan.fidelity_gaps.push_back("hardware counters, ASIC forwarding and queueing are not emulated: "
                               "the twin forwards in the Linux kernel");
  return plan;
}

json to_json(const TwinPlan& plan) {
  json nodes = json::array();
  for (const auto& node : plan.nodes) {
    json interfaces = json::array();
    for (const auto& interface : node.interfaces) {
      static const char* kinds[] = {"veth", "bridge", "vxlan", "dummy"};
      json entry = {{"name", interface.name},
                    {"kind", kinds[static_cast<int>(interface.kind)]},
                    {"mtu", interface.mtu},
                    {"addresses", interface.addresses}};
      if (!interface.master.empty()) entry["master"] = interface.master;
      if (interface.kind == TwinInterface::Kind::vxlan) entry["vni"] = interface.vni;
      interfaces.push_back(std::move(entry));
    }
    nodes.push_back({{"name", node.name},
                     {"platform", node.platform},
                     {"emulator", node.emulator == Emulator::frr ? "frr" : "linux-host"},
                     {"loopback", node.loopback_addresses},
                     {"interfaces", std::move(interfaces)},
                     {"static_routes", node.static_routes}});
    if (!node.nft_objects.empty() || !node.nft_rules.empty())
      nodes.back()["nftables"] = {{"objects", node.nft_objects}, {"rules", node.nft_rules}};
  }
  json links = json::array();
  for (const auto& link : plan.links)
    links.push_back({{"a", link.node_a + " " + link.interface_a},
                     {"b", link.node_b + " " + link.interface_b},
                     {"mtu", link.mtu}});
  return {{"nodes", std::move(nodes)},
          {"links", std::move(links)},
          {"fidelity_gaps", plan.fidelity_gaps},
          {"cannot_build", plan.cannot_build}};
}

}  // namespace fabgate::pipeline::twin
