#include "gates/hostfacts/rdma_facts.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "adapters/core/text.h"

namespace fabgate::hostfacts {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::optional<std::string> read_text(const fs::path& file) {
  std::ifstream stream(file);
  if (!stream) return std::nullopt;
  std::ostringstream content;
  content << stream.rdbuf();
  if (stream.bad()) return std::nullopt;
  return std::string(trim(content.str()));
}

// sysfs writes "4: ACTIVE" and "5: LinkUp"; the name is what rules compare.
std::string state_name(const std::string& text) {
  auto colon = text.find(':');
  return colon == std::string::npos ? text
                                    : std::string(trim(std::string_view(text).substr(colon + 1)));
}

std::vector<fs::path> sorted_children(const fs::path& directory) {
  std::vector<fs::path> children;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    children.push_back(it->path());
  }
  std::sort(children.begin(), children.end());
  return children;
}

bool is_unset_gid(const std::string& gid) {
  return gid.empty() ||
         std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

void read_counters(const fs::path& directory, json& port, const char* key) {
  if (!fs::is_directory(directory)) return;
  json counters = json::object();
  for (const auto& file : sorted_children(directory)) {
    auto name = file.filename().string();
    auto text = read_text(file);
    auto value = text ? parse_counter(*text) : std::nullopt;
    if (value) {
      counters[name] = *value;
    } else {
      port["unreadable_counters"].push_back(std::string(key) + "/" + name);
    }
  }
  port[key] = std::move(counters);
}

json read_gids(const fs::path& port_directory) {
  json gids = json::object();
  for (const auto& file : sorted_children(port_directory / "gids")) {
    auto gid = read_text(file);  // unset entries read as zeros or fail with EINVAL
    if (!gid || is_unset_gid(*gid)) continue;
    auto index = file.filename().string();
    json entry = {{"gid", *gid}};
    if (auto type = read_text(port_directory / "gid_attrs" / "types" / index);
        type && !type->empty()) {
      entry["type"] = *type;
    }
    if (auto netdev = read_text(port_directory / "gid_attrs" / "ndevs" / index);
        netdev && !netdev->empty()) {
      entry["netdev"] = *netdev;
    }
    gids[index] = std::move(entry);
  }
  return gids;
}

Expected<json, FactsFailure> read_port(const fs::path& directory, const std::string& label) {
  json port = json::object();
  for (const char* required : {"state", "phys_state", "link_layer"}) {
    auto text = read_text(directory / required);
    if (!text || text->empty()) return unparsable(label + ": cannot read " + required);
    port[required] = std::string(required) == "link_layer" ? *text : state_name(*text);
  }
  for (const char* optional : {"rate", "lid", "sm_lid"}) {
    if (auto text = read_text(directory / optional)) port[optional] = *text;
  }
  port["gids"] = read_gids(directory);
  read_counters(directory / "counters", port, "counters");
  read_counters(directory / "hw_counters", port, "hw_counters");
  return port;
}

}  // namespace

Facts read_rdma_sysfs(const fs::path& root) {
  if (!fs::is_directory(root))
    return unavailable(root.string() + " does not exist: no RDMA device (or no driver)");
  json devices = json::object();
  for (const auto& device_directory : sorted_children(root)) {
    auto name = device_directory.filename().string();
    json device = json::object();
    for (const char* attribute : {"fw_ver", "node_type", "hca_type", "board_id", "node_guid"}) {
      if (auto text = read_text(device_directory / attribute)) device[attribute] = *text;
    }
    json ports = json::object();
    for (const auto& port_directory : sorted_children(device_directory / "ports")) {
      auto port = read_port(port_directory, name + " port " + port_directory.filename().string());
      if (!port) return std::move(port).error();
      ports[port_directory.filename().string()] = std::move(port).value();
    }
    if (ports.empty())
      return unparsable(name + ": no ports under " + (device_directory / "ports").string());
    device["ports"] = std::move(ports);
    devices[name] = std::move(device);
  }
  if (devices.empty()) return unavailable("no RDMA devices under " + root.string());
  return json{{"devices", std::move(devices)}};
}

Facts parse_rdma_link_json(std::string_view text) {
  json parsed;
  try {
    parsed = json::parse(text);
  } catch (const json::exception& e) {
    return unparsable(std::string("rdma -j link: not JSON: ") + e.what());
  }
  if (!parsed.is_array()) return unparsable("rdma -j link: expected a JSON array of ports");
  json links = json::object();
  for (const auto& entry : parsed) {
    if (!entry.is_object() || !entry.contains("ifname") || !entry["ifname"].is_string()) {
      return unparsable("rdma -j link: a port entry lacks \"ifname\"");
    }
    auto ifname = entry["ifname"].get<std::string>();  // "mlx5_0/1"
    auto slash = ifname.rfind('/');
    if (slash == std::string::npos)
      return unparsable("rdma -j link: ifname '" + ifname + "' is not DEVICE/PORT");
    json port = json::object();
    for (const char* key : {"state", "physical_state", "netdev"}) {
      if (entry.contains(key) && entry[key].is_string()) port[key] = entry[key];
    }
    links[ifname.substr(0, slash)][ifname.substr(slash + 1)] = std::move(port);
  }
  if (links.empty()) return unavailable("rdma -j link listed no RDMA ports");
  return links;
}

Facts parse_ibv_devinfo(std::string_view text) {
  json devices = json::object();
  std::string device;
  std::string port;
  for (const auto& raw_line : split_lines(text)) {
    auto line = trim(raw_line);
    if (line.empty()) continue;
    if (starts_with(line, "No IB devices found"))
      return unavailable("ibv_devinfo: No IB devices found");
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto key = std::string(trim(line.substr(0, colon)));
    auto value = std::string(trim(line.substr(colon + 1)));
    if (key == "hca_id") {
      device = value;
      port.clear();
      devices[device] = json{{"ports", json::object()}};
      continue;
    }
    if (device.empty()) return unparsable("ibv_devinfo: '" + key + "' before any hca_id line");
    if (key == "port") {
      port = value;
      devices[device]["ports"][port] = json::object();
      continue;
    }
    if (port.empty()) {
      if (key == "fw_ver" || key == "board_id" || key == "transport") devices[device][key] = value;
      continue;
    }
    auto& facts = devices[device]["ports"][port];
    if (key == "active_mtu" || key == "max_mtu") {
      // "4096 (5)": bytes, then the ibv_mtu enum value.
      auto number = parse_counter(value.substr(0, value.find(' ')));
      if (!number)
        return unparsable("ibv_devinfo: " + device + " port " + port + ": bad " + key + " '" +
                          value + "'");
      facts[key] = *number;
    } else if (key == "state") {
      facts["state"] = value.substr(0, value.find(' '));  // "PORT_ACTIVE (4)"
    } else if (key == "link_layer") {
      facts["link_layer"] = value;
    }
  }
  if (devices.empty()) return unparsable("ibv_devinfo: no hca_id line");
  return devices;
}

void merge_rdma_link(json& category, const json& links) {
  auto& devices = category["devices"];
  for (const auto& [device, ports] : links.items()) {
    if (!devices.contains(device)) continue;
    for (const auto& [port, facts] : ports.items()) {
      if (!devices[device]["ports"].contains(port)) continue;
      auto& target = devices[device]["ports"][port];
      if (facts.contains("netdev")) target["netdev"] = facts["netdev"];
      if (facts.contains("physical_state")) target["physical_state"] = facts["physical_state"];
    }
  }
}

void merge_ibv_devinfo(json& category, const json& devinfo) {
  auto& devices = category["devices"];
  for (const auto& [device, facts] : devinfo.items()) {
    if (!devices.contains(device) || !facts.contains("ports")) continue;
    for (const auto& [port, port_facts] : facts["ports"].items()) {
      if (!devices[device]["ports"].contains(port)) continue;
      auto& target = devices[device]["ports"][port];
      for (const char* key : {"active_mtu", "max_mtu"}) {
        if (port_facts.contains(key)) target[key] = port_facts[key];
      }
    }
  }
}

}  // namespace fabgate::hostfacts
