#include "adapters/gnmi/target/openconfig_tree.h"

#include <algorithm>
#include <map>

namespace fabgate::gnmi::target {

namespace {

using nlohmann::json;

// Addresses live on subinterface 0 (Linux has no subinterfaces apart from VLAN devices,
// which are interfaces of their own). The subinterface is served even without addresses, so
// that "no addresses" is an answer and not a missing subtree.
json subinterfaces_node(const InterfaceState& state) {
  json ipv4 = json::array();
  json ipv6 = json::array();
  for (const auto& address : state.addresses) {
    json entry = {{"ip", address.ip},
                  {"config", {{"ip", address.ip}, {"prefix-length", address.prefix_length}}},
                  {"state", {{"ip", address.ip}, {"prefix-length", address.prefix_length}}}};
    (address.ipv6 ? ipv6 : ipv4).push_back(std::move(entry));
  }
  json subinterface = {{"index", 0},
                       {"config", {{"index", 0}}},
                       {"state", {{"index", 0}, {"enabled", state.admin_up}}}};
  if (!ipv4.empty()) subinterface["ipv4"] = {{"addresses", {{"address", ipv4}}}};
  if (!ipv6.empty()) subinterface["ipv6"] = {{"addresses", {{"address", ipv6}}}};
  return {{"subinterface", json::array({subinterface})}};
}

json interface_node(const InterfaceState& state) {
  json counters = json::object();
  for (const auto& [name, value] : state.counters) counters[name] = value;
  return json{{"name", state.name},
              {"subinterfaces", subinterfaces_node(state)},
              {"config", {{"name", state.name}, {"mtu", state.mtu}, {"enabled", state.admin_up}}},
              {"state",
               {{"name", state.name},
                {"mtu", state.mtu},
                {"enabled", state.admin_up},
                {"ifindex", state.ifindex},
                {"admin-status", state.admin_up ? "UP" : "DOWN"},
                {"oper-status", state.oper_status},
                {"counters", counters}}}};
}

json neighbor_node(const BgpNeighborState& neighbor) {
  json state = {{"neighbor-address", neighbor.address},
                {"peer-as", neighbor.peer_as},
                {"local-as", neighbor.local_as},
                {"session-state", neighbor.session_state}};
  if (neighbor.last_established_ns) state["last-established"] = *neighbor.last_established_ns;
  if (neighbor.established_transitions)
    state["established-transitions"] = *neighbor.established_transitions;
  json afi_safis = json::array();
  for (const auto& [name, received] : neighbor.prefixes_received) {
    json prefixes = {{"received", received}};
    if (auto sent = neighbor.prefixes_sent.find(name); sent != neighbor.prefixes_sent.end()) {
      prefixes["sent"] = sent->second;
    }
    std::string identity = "openconfig-bgp-types:" + name;
    afi_safis.push_back({{"afi-safi-name", identity},
                         {"config", {{"afi-safi-name", identity}}},
                         {"state", {{"afi-safi-name", identity}, {"prefixes", prefixes}}}});
  }
  return json{{"neighbor-address", neighbor.address},
              {"config", {{"neighbor-address", neighbor.address}, {"peer-as", neighbor.peer_as}}},
              {"state", state},
              {"afi-safis", {{"afi-safi", afi_safis}}}};
}

NodeResult<Ok> add_system(Node& node, json& tree) {
  auto version = node.software_version();
  if (!version) return version.error();
  tree["system"] = {{"state", {{"hostname", node.hostname()}, {"software-version", *version}}}};
  return Ok{};
}

// One component per interface with a driver: the NIC's driver and firmware versions.
NodeResult<Ok> add_components(Node& node, json& tree) {
  auto nics = node.nics();
  if (!nics) return nics.error();
  json list = json::array();
  for (const auto& nic : *nics) {
    json state = {{"name", nic.interface},
                  {"type", "openconfig-platform-types:PORT"},
                  {"description", nic.driver},
                  {"software-version", nic.driver_version},
                  {"firmware-version", nic.firmware},
                  {"location", nic.bus}};
    list.push_back({{"name", nic.interface},
                    {"config", {{"name", nic.interface}}},
                    {"state", std::move(state)}});
  }
  tree["components"] = {{"component", list}};
  return Ok{};
}

NodeResult<Ok> add_interfaces(Node& node, json& tree) {
  auto interfaces = node.interfaces();
  if (!interfaces) return interfaces.error();
  json list = json::array();
  for (const auto& state : *interfaces) list.push_back(interface_node(state));
  tree["interfaces"] = {{"interface", list}};
  return Ok{};
}

NodeResult<Ok> add_bgp(Node& node, json& instance) {
  auto neighbors = node.bgp_neighbors();
  if (!neighbors) return neighbors.error();
  json list = json::array();
  for (const auto& neighbor : *neighbors) list.push_back(neighbor_node(neighbor));
  json protocol = {
      {"identifier", "BGP"}, {"name", "bgp"}, {"bgp", {{"neighbors", {{"neighbor", list}}}}}};
  instance["protocols"] = {{"protocol", json::array({protocol})}};
  return Ok{};
}

// The AFT of the default instance: one ipv4-entry or ipv6-entry per route of the main
// tables, pointing at a next-hop-group; groups and next hops are shared by both families and
// numbered from 1 in the order they are first used. A node whose IPv6 routes cannot be read
// (a kernel without IPv6) serves ipv4-unicast alone, unless the path asks for ipv6-unicast.
NodeResult<Ok> add_afts(Node& node, json& instance, bool ipv6_asked) {
  auto ipv4_routes = node.ipv4_routes();
  if (!ipv4_routes) return ipv4_routes.error();
  auto ipv6_routes = node.ipv6_routes();
  if (!ipv6_routes && ipv6_asked) return ipv6_routes.error();
  std::map<std::pair<std::string, std::string>, std::uint64_t> hop_index;
  std::map<std::vector<std::uint64_t>, std::uint64_t> group_id;
  json groups = json::array(), hops = json::array();
  auto entries_of = [&](const std::vector<UnicastRoute>& routes) {
    json entries = json::array();
    for (const auto& route : routes) {
      std::vector<std::uint64_t> members;
      for (const auto& hop : route.next_hops) {
        auto [at, added] =
            hop_index.emplace(std::pair{hop.ip, hop.interface}, hop_index.size() + 1);
        if (added) {
          json state = {{"index", at->second}};
          if (!hop.ip.empty()) state["ip-address"] = hop.ip;
          json entry = {{"index", at->second}, {"state", state}};
          if (!hop.interface.empty())
            entry["interface-ref"] = {{"state", {{"interface", hop.interface}}}};
          hops.push_back(std::move(entry));
        }
        members.push_back(at->second);
      }
      std::sort(members.begin(), members.end());
      auto [group, added] = group_id.emplace(members, group_id.size() + 1);
      if (added) {
        json member_list = json::array();
        for (auto index : members)
          member_list.push_back({{"index", index}, {"state", {{"index", index}, {"weight", 1}}}});
        groups.push_back({{"id", group->second},
                          {"state", {{"id", group->second}}},
                          {"next-hops", {{"next-hop", member_list}}}});
      }
      json state = {{"prefix", route.prefix}, {"next-hop-group", group->second}};
      if (!route.origin_protocol.empty())
        state["origin-protocol"] = "openconfig-policy-types:" + route.origin_protocol;
      entries.push_back({{"prefix", route.prefix}, {"state", state}});
    }
    return entries;
  };
  json afts = {{"ipv4-unicast", {{"ipv4-entry", entries_of(*ipv4_routes)}}}};
  if (ipv6_routes) afts["ipv6-unicast"] = {{"ipv6-entry", entries_of(*ipv6_routes)}};
  afts["next-hop-groups"] = {{"next-hop-group", groups}};
  afts["next-hops"] = {{"next-hop", hops}};
  instance["afts"] = std::move(afts);
  return Ok{};
}

// openconfig-lldp: every port the agent runs on, with the neighbours heard there (state only:
// the node's LLDP configuration is the agent's, not fabgate-gnmid's to change).
NodeResult<Ok> add_lldp(Node& node, json& tree) {
  auto interfaces = node.lldp_interfaces();
  if (!interfaces) return interfaces.error();
  json list = json::array();
  for (const auto& port : *interfaces) {
    json neighbors = json::array();
    for (const auto& neighbor : port.neighbors) {
      json state = {{"id", neighbor.id}};
      static const std::pair<const char*, std::string LldpNeighbor::*> leaves[] = {
          {"system-name", &LldpNeighbor::system_name},
          {"system-description", &LldpNeighbor::system_description},
          {"chassis-id", &LldpNeighbor::chassis_id},
          {"chassis-id-type", &LldpNeighbor::chassis_id_type},
          {"port-id", &LldpNeighbor::port_id},
          {"port-id-type", &LldpNeighbor::port_id_type},
          {"port-description", &LldpNeighbor::port_description},
          {"management-address", &LldpNeighbor::management_address}};
      for (const auto& [leaf, field] : leaves) {
        if (!(neighbor.*field).empty()) state[leaf] = neighbor.*field;
      }
      neighbors.push_back({{"id", neighbor.id}, {"state", std::move(state)}});
    }
    list.push_back({{"name", port.name},
                    {"state", {{"name", port.name}, {"enabled", true}}},
                    {"neighbors", {{"neighbor", std::move(neighbors)}}}});
  }
  tree["lldp"] = {{"interfaces", {{"interface", std::move(list)}}}};
  return Ok{};
}

bool names_element(const GnmiPath& path, const std::string& name) {
  return std::any_of(path.elements.begin(), path.elements.end(), [&](const PathElement& element) {
    return strip_module_prefix(element.name) == name;
  });
}

// Inside a counters container every leaf is a uint64; last-established and
// established-transitions are too.
json ietf_numbers(const json& value, bool is_uint64) {
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [name, member] : value.items()) {
      out[name] =
          ietf_numbers(member, is_uint64 || name == "counters" || name == "last-established" ||
                                   name == "established-transitions" || name == "afts");
    }
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const auto& item : value) out.push_back(ietf_numbers(item, is_uint64));
    return out;
  }
  if (is_uint64 && value.is_number_integer()) return json(value.dump());
  return value;
}

// `value` lies inside a config container (inside_config) or a state container (inside_state)
// or neither; `config_sibling` is the config container next to the state container being
// filtered, whose leaves OPERATIONAL leaves out.
std::optional<json> filter_by_type(const json& value, DataType type, bool inside_config,
                                   bool inside_state, const json* config_sibling) {
  if (!value.is_object() && !value.is_array()) {
    if (type == DataType::config && inside_state) return std::nullopt;
    if (type != DataType::config && inside_config) return std::nullopt;
    return value;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const auto& item : value) {
      auto kept = filter_by_type(item, type, inside_config, inside_state, nullptr);
      if (kept) out.push_back(std::move(*kept));
    }
    if (out.empty()) return std::nullopt;
    return out;
  }
  json out = json::object();
  bool has_container = false;
  for (const auto& [name, member] : value.items()) {
    bool is_config = inside_config || name == "config";
    bool is_state = inside_state || name == "state";
    const json* sibling = nullptr;
    if (name == "state" && !inside_state) {
      auto found = value.find("config");
      if (found != value.end()) sibling = &*found;
    } else if (config_sibling != nullptr && config_sibling->is_object()) {
      auto found = config_sibling->find(name);
      if (found != config_sibling->end()) sibling = &*found;
    }
    if (type == DataType::operational && inside_state && sibling != nullptr &&
        !member.is_object() && !member.is_array()) {
      continue;  // applied config: the config container has the same leaf
    }
    auto kept = filter_by_type(member, type, is_config, is_state, sibling);
    if (!kept) continue;
    if (kept->is_object() || kept->is_array()) has_container = true;
    out[name] = std::move(*kept);
  }
  // A list entry or container left with nothing but key leaves has none of this type's data.
  if (out.empty() || (!has_container && !inside_config && !inside_state)) return std::nullopt;
  return out;
}

}  // namespace

json select_data_type(const json& tree, DataType type) {
  if (type == DataType::all) return tree;
  return filter_by_type(tree, type, false, false, nullptr).value_or(json::object());
}

NodeResult<json> build_tree(Node& node, const GnmiPath& path) {
  json tree = json::object();
  std::string top = path.elements.empty() ? "" : strip_module_prefix(path.elements.front().name);
  // Without an LLDP agent (or when it does not answer) /lldp is refused with the reason rather
  // than answered with an empty neighbour list that would read as "no neighbours"; a Get of
  // the whole tree leaves it out.
  if (top == "lldp") {
    if (auto added = add_lldp(node, tree); !added) {
      return NodeFailure{added.error().kind, "/lldp is not served: " + added.error().message};
    }
  } else if (top.empty()) {
    (void)add_lldp(node, tree);
  }
  if (top.empty() || top == "system") {
    if (auto added = add_system(node, tree); !added) return added.error();
  }
  if (top.empty() || top == "components") {
    if (auto added = add_components(node, tree); !added) return added.error();
  }
  if (top.empty() || top == "interfaces") {
    if (auto added = add_interfaces(node, tree); !added) return added.error();
  }
  if (top.empty() || top == "network-instances") {
    json instance = {{"name", "default"}};
    bool wants_afts = names_element(path, "afts");
    bool wants_protocols = names_element(path, "protocols");
    NodeResult<Ok> bgp = Ok{};
    NodeResult<Ok> afts = Ok{};
    if (!wants_afts) bgp = add_bgp(node, instance);
    if (!wants_protocols) afts = add_afts(node, instance, names_element(path, "ipv6-unicast"));
    if (!top.empty()) {
      if (wants_afts && !afts)
        return NodeFailure{
            NodeFailure::Kind::not_found,
            "/network-instances/network-instance/afts is not served: " + afts.error().message};
      if (!bgp && (wants_protocols || !afts))
        return NodeFailure{NodeFailure::Kind::not_found,
                           "/network-instances is not served: " + bgp.error().message};
    }
    if (bgp || afts) tree["network-instances"] = {{"network-instance", json::array({instance})}};
  }
  return tree;
}

std::string encode_value(const TreeMatch& match, bool json_ietf) {
  if (!json_ietf) return match.value->dump();
  bool is_uint64 = false;
  for (const auto& element : match.path.elements) {
    if (element.name == "counters" || element.name == "last-established" ||
        element.name == "established-transitions" || element.name == "afts")
      is_uint64 = true;
  }
  return ietf_numbers(*match.value, is_uint64).dump();
}

}  // namespace fabgate::gnmi::target
