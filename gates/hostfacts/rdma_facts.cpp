#include "gates/hostfacts/rdma_facts.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "adapters/core/foreign_json.h"
#include "adapters/core/shorten.h"
#include "adapters/core/text.h"

namespace fabgate::hostfacts {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Where the reader finds files, by paths relative to the tree root ("mlx5_0/ports/1/state";
// "" is the root). Two implementations: the live tree, and a dump of it taken over SSH, so a
// collected snapshot and a local read describe a port the same way.
class SysfsTree {
 public:
  virtual ~SysfsTree() = default;
  virtual bool is_directory(const std::string& directory) const = 0;
  virtual std::vector<std::string> children(const std::string& directory) const = 0;  // sorted
  virtual std::optional<std::string> read(const std::string& file) const = 0;  // trimmed text
  virtual std::string describe(const std::string& directory) const = 0;        // for messages
};

std::string child_path(const std::string& directory, const std::string& name) {
  return directory.empty() ? name : directory + "/" + name;
}

class DirectoryTree final : public SysfsTree {
 public:
  explicit DirectoryTree(fs::path root) : root_(std::move(root)) {}

  bool is_directory(const std::string& directory) const override {
    std::error_code error;
    return fs::is_directory(root_ / directory, error);
  }
  std::vector<std::string> children(const std::string& directory) const override {
    std::vector<std::string> names;
    std::error_code error;
    for (fs::directory_iterator it(root_ / directory, error), end; !error && it != end;
         it.increment(error)) {
      names.push_back(it->path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::optional<std::string> read(const std::string& file) const override {
    std::ifstream stream(root_ / file);
    if (!stream) return std::nullopt;
    std::ostringstream content;
    content << stream.rdbuf();
    if (stream.bad()) return std::nullopt;
    return std::string(trim(content.str()));
  }
  std::string describe(const std::string& directory) const override {
    return (directory.empty() ? root_ : root_ / directory).string();
  }

 private:
  fs::path root_;
};

// `grep -rH . FILES...` run inside /sys/class/infiniband: one "relative/path:value" line per
// non-empty line of each file. Files that are empty or fail to read (unset GID attributes
// answer EINVAL) are simply absent, as a failed read is in the live tree.
class DumpTree final : public SysfsTree {
 public:
  static Expected<DumpTree, FactsFailure> parse(std::string_view dump) {
    constexpr std::string_view kRoot = "/sys/class/infiniband/";
    DumpTree tree;
    std::size_t number = 0;
    for (const auto& raw_line : split_lines(dump)) {
      ++number;
      std::string_view line = raw_line;
      if (trim(line).empty()) continue;
      if (starts_with(line, kRoot)) line.remove_prefix(kRoot.size());
      auto colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0 || line.front() == '/') {
        return unparsable("sysfs dump line " + std::to_string(number) +
                          ": expected 'PATH:VALUE' with PATH under /sys/class/infiniband, got '" +
                          shorten(line, 80) + "'");
      }
      std::string path(line.substr(0, colon));
      auto& text = tree.files_[path];
      if (!text.empty()) text += "\n";
      text += line.substr(colon + 1);
      // Every ancestor directory lists the next segment, so the tree can be walked.
      for (std::size_t start = 0, slash = 0; slash != std::string::npos; start = slash + 1) {
        slash = path.find('/', start);
        tree.children_[path.substr(0, start == 0 ? 0 : start - 1)].insert(
            path.substr(start, slash == std::string::npos ? slash : slash - start));
      }
    }
    return tree;
  }

  bool is_directory(const std::string& directory) const override {
    return children_.count(directory) > 0;
  }
  std::vector<std::string> children(const std::string& directory) const override {
    auto it = children_.find(directory);
    if (it == children_.end()) return {};
    return {it->second.begin(), it->second.end()};
  }
  std::optional<std::string> read(const std::string& file) const override {
    auto it = files_.find(file);
    if (it == files_.end()) return std::nullopt;
    return std::string(trim(it->second));
  }
  std::string describe(const std::string& directory) const override {
    return "/sys/class/infiniband" + (directory.empty() ? std::string() : "/" + directory) +
           " (dump)";
  }

 private:
  std::map<std::string, std::string> files_;
  std::map<std::string, std::set<std::string>> children_;
};

// sysfs writes "4: ACTIVE" and "5: LinkUp"; the name is what rules compare.
std::string state_name(const std::string& text) {
  auto colon = text.find(':');
  return colon == std::string::npos ? text
                                    : std::string(trim(std::string_view(text).substr(colon + 1)));
}

bool is_unset_gid(const std::string& gid) {
  return gid.empty() ||
         std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

void read_counters(const SysfsTree& tree, const std::string& directory, json& port,
                   const char* key) {
  if (!tree.is_directory(directory)) return;
  json counters = json::object();
  for (const auto& name : tree.children(directory)) {
    auto text = tree.read(child_path(directory, name));
    auto value = text ? parse_counter(*text) : std::nullopt;
    if (value) {
      counters[name] = *value;
    } else {
      port["unreadable_counters"].push_back(std::string(key) + "/" + name);
    }
  }
  port[key] = std::move(counters);
}

json read_gids(const SysfsTree& tree, const std::string& port_directory) {
  json gids = json::object();
  for (const auto& index : tree.children(child_path(port_directory, "gids"))) {
    // unset entries read as zeros or fail with EINVAL
    auto gid = tree.read(child_path(port_directory, "gids/" + index));
    if (!gid || is_unset_gid(*gid)) continue;
    json entry = {{"gid", *gid}};
    if (auto type = tree.read(child_path(port_directory, "gid_attrs/types/" + index));
        type && !type->empty()) {
      entry["type"] = *type;
    }
    if (auto netdev = tree.read(child_path(port_directory, "gid_attrs/ndevs/" + index));
        netdev && !netdev->empty()) {
      entry["netdev"] = *netdev;
    }
    gids[index] = std::move(entry);
  }
  return gids;
}

Expected<json, FactsFailure> read_port(const SysfsTree& tree, const std::string& directory,
                                       const std::string& label) {
  json port = json::object();
  for (const char* required : {"state", "phys_state", "link_layer"}) {
    auto text = tree.read(child_path(directory, required));
    if (!text || text->empty()) return unparsable(label + ": cannot read " + required);
    port[required] = std::string(required) == "link_layer" ? *text : state_name(*text);
  }
  for (const char* optional : {"rate", "lid", "sm_lid"}) {
    if (auto text = tree.read(child_path(directory, optional))) port[optional] = *text;
  }
  port["gids"] = read_gids(tree, directory);
  read_counters(tree, child_path(directory, "counters"), port, "counters");
  read_counters(tree, child_path(directory, "hw_counters"), port, "hw_counters");
  return port;
}

Facts read_rdma_tree(const SysfsTree& tree) {
  if (!tree.is_directory(""))
    return unavailable(tree.describe("") + " does not exist: no RDMA device (or no driver)");
  json devices = json::object();
  for (const auto& name : tree.children("")) {
    json device = json::object();
    for (const char* attribute : {"fw_ver", "node_type", "hca_type", "board_id", "node_guid"}) {
      if (auto text = tree.read(child_path(name, attribute))) device[attribute] = *text;
    }
    json ports = json::object();
    const std::string ports_directory = child_path(name, "ports");
    for (const auto& port_name : tree.children(ports_directory)) {
      auto port =
          read_port(tree, child_path(ports_directory, port_name), name + " port " + port_name);
      if (!port) return std::move(port).error();
      ports[port_name] = std::move(port).value();
    }
    if (ports.empty())
      return unparsable(name + ": no ports under " + tree.describe(ports_directory));
    device["ports"] = std::move(ports);
    devices[name] = std::move(device);
  }
  if (devices.empty()) return unavailable("no RDMA devices under " + tree.describe(""));
  return json{{"devices", std::move(devices)}};
}

}  // namespace

Facts read_rdma_sysfs(const fs::path& root) {
  return read_rdma_tree(DirectoryTree(root));
}

Facts read_rdma_sysfs_dump(std::string_view dump) {
  if (trim(dump).empty())
    return unavailable("the sysfs dump is empty: no RDMA device (or no driver)");
  auto tree = DumpTree::parse(dump);
  if (!tree) return std::move(tree).error();
  return read_rdma_tree(*tree);
}

// The output is the host's: parsed depth-limited, and a member of another type than read here
// is unparsable naming it ("port [0]: field 'state' is an integer, not a string").
Facts parse_rdma_link_json(std::string_view text) {
  auto parsed = parse_foreign_json(text);
  if (!parsed.ok()) return unparsable("rdma -j link: " + parsed.problem);
  if (!parsed.document.is_array())
    return unparsable("rdma -j link: expected a JSON array of ports");
  json links = json::object();
  for (std::size_t i = 0; i < parsed.document.size(); ++i) {
    const json& entry = parsed.document[i];
    const std::string where = "rdma -j link: port [" + std::to_string(i) + "]: ";
    if (!entry.is_object()) return unparsable(where + "is " + json_kind(entry) + ", not an object");
    if (!entry.contains("ifname")) return unparsable("rdma -j link: a port entry lacks \"ifname\"");
    auto ifname = string_member(entry, "ifname");  // "mlx5_0/1"
    if (!ifname) return unparsable(where + wrong_member(entry, "ifname", "a string"));
    auto slash = ifname->rfind('/');
    if (slash == std::string::npos)
      return unparsable("rdma -j link: ifname '" + *ifname + "' is not DEVICE/PORT");
    json port = json::object();
    for (const char* key : {"state", "physical_state", "netdev"}) {
      if (!entry.contains(key)) continue;
      auto value = string_member(entry, key);
      if (!value) return unparsable(where + wrong_member(entry, key, "a string"));
      port[key] = *value;
    }
    links[ifname->substr(0, slash)][ifname->substr(slash + 1)] = std::move(port);
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
