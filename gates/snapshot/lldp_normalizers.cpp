// LLDP as lldpd's `lldpcli -f json` reports it, in the snapshot shape the gNMI collector also
// writes (adapters/gnmi/snapshot_facts.cpp): lldp.neighbors.<interface> = sorted list of
// {system_name, port_id, chassis_id, port_description}, a leaf left out when the neighbour did
// not advertise it.
//
// lldpcli's JSON is shaped by what it holds: `lldp.interface` is one object ({"eth0": {...}})
// for one interface and a list of such objects for several (`show neighbors` repeats a port
// once per neighbour); `lldp` is empty when there is nothing to show. A chassis is keyed by its
// system name ({"leaf1": {"id": ...}}), and holds its members directly when it has none.

#include <algorithm>

#include "adapters/core/foreign_json.h"
#include "gates/snapshot/normalizers.h"
#include "gates/snapshot/output_json.h"

namespace fabgate::snapshot {

namespace {

using nlohmann::json;

Expected<json, std::string> parse_lldpcli(std::string_view output) {
  auto document = parse_output_json(output);
  if (!document) return "not lldpcli JSON (" + document.error() + ")";
  if (!object_member(*document, "lldp"))
    return std::string("not lldpcli JSON (expected an object with an \"lldp\" object)");
  return document;
}

// Every (interface, entry) pair of `lldp.interface`, whichever of its two shapes it has.
Expected<std::vector<std::pair<std::string, const json*>>, std::string> interface_entries(
    const json& document) {
  std::vector<std::pair<std::string, const json*>> out;
  const json& lldp = document["lldp"];
  auto interfaces = lldp.find("interface");
  if (interfaces == lldp.end()) return out;
  auto add = [&out](const json& entry) -> bool {
    if (!entry.is_object()) return false;
    for (const auto& [name, value] : entry.items()) {
      if (!value.is_object()) return false;
      out.emplace_back(name, &value);
    }
    return true;
  };
  bool shaped = interfaces->is_array() ? std::all_of(interfaces->begin(), interfaces->end(), add)
                                       : add(*interfaces);
  if (!shaped) return std::string("lldp.interface: expected objects keyed by interface name");
  return out;
}

json& neighbors_of(json& lldp) {
  if (!lldp.contains("neighbors") || !lldp["neighbors"].is_object())
    lldp["neighbors"] = json::object();
  return lldp["neighbors"];
}

// A string member, or empty when absent or not a string.
std::string text(const json& object, const char* name) {
  auto found = object.find(name);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

json neighbor_facts(const json& entry) {
  json out = json::object();
  auto chassis = entry.find("chassis");
  if (chassis != entry.end() && chassis->is_object()) {
    const json* members = &*chassis;
    if (!chassis->contains("id") && chassis->size() == 1 && chassis->begin()->is_object()) {
      out["system_name"] = chassis->begin().key();
      members = &*chassis->begin();
    }
    if (auto id = members->find("id"); id != members->end() && id->is_object()) {
      if (std::string value = text(*id, "value"); !value.empty()) out["chassis_id"] = value;
    }
  }
  auto port = entry.find("port");
  if (port != entry.end() && port->is_object()) {
    if (auto id = port->find("id"); id != port->end() && id->is_object()) {
      if (std::string value = text(*id, "value"); !value.empty()) out["port_id"] = value;
    }
    if (std::string description = text(*port, "descr"); !description.empty())
      out["port_description"] = description;
  }
  return out;
}

}  // namespace

Expected<Ok, std::string> parse_lldp_interfaces(std::string_view output, json& lldp) {
  auto document = parse_lldpcli(output);
  if (!document) return document.error();
  auto entries = interface_entries(*document);
  if (!entries) return entries.error();
  json& neighbors = neighbors_of(lldp);
  for (const auto& [name, entry] : *entries) {
    if (!neighbors.contains(name)) neighbors[name] = json::array();
  }
  return Ok{};
}

Expected<Ok, std::string> parse_lldp_neighbors(std::string_view output, json& lldp) {
  auto document = parse_lldpcli(output);
  if (!document) return document.error();
  auto entries = interface_entries(*document);
  if (!entries) return entries.error();
  json& neighbors = neighbors_of(lldp);
  for (const auto& [name, entry] : *entries) {
    if (!neighbors.contains(name)) neighbors[name] = json::array();
    neighbors[name].push_back(neighbor_facts(*entry));
  }
  for (auto& [name, list] : neighbors.items()) std::sort(list.begin(), list.end());
  return Ok{};
}

}  // namespace fabgate::snapshot
