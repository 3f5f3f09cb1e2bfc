#include "adapters/gnmi/target/openconfig_tree.h"

namespace fabgate::gnmi::target {

namespace {

using nlohmann::json;

json interface_node(const InterfaceState& state) {
  json counters = json::object();
  for (const auto& [name, value] : state.counters) counters[name] = value;
  return json{{"name", state.name},
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
  json afi_safis = json::array();
  for (const auto& [name, received] : neighbor.prefixes_received) {
    afi_safis.push_back(
        {{"afi-safi-name", name},
         {"state", {{"afi-safi-name", name}, {"prefixes", {{"received", received}}}}}});
  }
  return json{{"neighbor-address", neighbor.address},
              {"config", {{"neighbor-address", neighbor.address}, {"peer-as", neighbor.peer_as}}},
              {"state", state},
              {"afi-safis", {{"afi-safi", afi_safis}}}};
}

NodeResult<Ok> add_system(Node& node, json& tree) {
  tree["system"] = {
      {"state", {{"hostname", node.hostname()}, {"software-version", node.software_version()}}}};
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

NodeResult<Ok> add_bgp(Node& node, json& tree) {
  auto neighbors = node.bgp_neighbors();
  if (!neighbors) return neighbors.error();
  json list = json::array();
  for (const auto& neighbor : *neighbors) list.push_back(neighbor_node(neighbor));
  json protocol = {
      {"identifier", "BGP"}, {"name", "bgp"}, {"bgp", {{"neighbors", {{"neighbor", list}}}}}};
  tree["network-instances"] = {
      {"network-instance",
       json::array(
           {{{"name", "default"}, {"protocols", {{"protocol", json::array({protocol})}}}}})}};
  return Ok{};
}

// Inside a counters container every leaf is a uint64; last-established is one too.
json ietf_numbers(const json& value, bool is_uint64) {
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [name, member] : value.items()) {
      out[name] =
          ietf_numbers(member, is_uint64 || name == "counters" || name == "last-established");
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

}  // namespace

NodeResult<json> build_tree(Node& node, const GnmiPath& path) {
  json tree = json::object();
  std::string top = path.elements.empty() ? "" : strip_module_prefix(path.elements.front().name);
  if (top.empty() || top == "system") {
    if (auto added = add_system(node, tree); !added) return added.error();
  }
  if (top.empty() || top == "interfaces") {
    if (auto added = add_interfaces(node, tree); !added) return added.error();
  }
  if (top.empty() || top == "network-instances") {
    auto added = add_bgp(node, tree);
    if (!added && !top.empty()) {
      return NodeFailure{NodeFailure::Kind::not_found,
                         "/network-instances is not served: " + added.error().message};
    }
  }
  return tree;
}

std::string encode_value(const TreeMatch& match, bool json_ietf) {
  if (!json_ietf) return match.value->dump();
  bool is_uint64 = false;
  for (const auto& element : match.path.elements) {
    if (element.name == "counters" || element.name == "last-established") is_uint64 = true;
  }
  return ietf_numbers(*match.value, is_uint64).dump();
}

}  // namespace fabgate::gnmi::target
