#include "gates/compare/snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "adapters/core/text.h"
#include "adapters/core/utf8.h"

namespace fabgate::compare {

using nlohmann::json;

bool DeviceSnapshot::collects(const std::string& category) const {
  if (sources.count(category)) return true;
  if (category == "routes") return has_routes;
  if (category == "identity") return !identity.empty();
  return facts.contains(category);
}

const SourceInfo* DeviceSnapshot::source(const std::string& category) const {
  auto found = sources.find(category);
  return found == sources.end() ? nullptr : &found->second;
}

namespace {

// Builds a JSON tree for everything except `devices.<d>.routes.<family>` lists, which go
// into RouteTables as they stream past. One event at a time; no DOM of the routes exists.
class SnapshotSax {
 public:
  json root;
  std::map<std::string, std::map<std::string, RouteTable>> route_tables;
  std::string error;

  bool null() { return in_route() ? route_scalar(json()) : value(json()); }
  bool boolean(bool v) { return in_route() ? route_scalar(json(v)) : value(json(v)); }
  bool number_integer(json::number_integer_t v) {
    return in_route() ? route_scalar(json(v)) : value(json(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (in_route()) return route_unsigned(v);
    return value(json(v));
  }
  bool number_float(json::number_float_t v, const std::string&) {
    return in_route() ? route_scalar(json(v)) : value(json(v));
  }
  bool string(std::string& v) {
    if (in_route()) return route_string(v);
    return value(json(std::move(v)));
  }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) {
    if (!deeper()) return false;
    if (in_route()) return route_start_object();
    return open(json::object());
  }
  bool key(std::string& k) {
    if (in_route()) return route_key(k);
    keys_.back() = k;
    return true;
  }
  bool end_object() {
    --nesting_;
    if (in_route()) return route_end_object();
    return close();
  }
  bool start_array(std::size_t) {
    if (!deeper()) return false;
    if (in_route()) return route_start_array();
    if (at_route_list()) return begin_route_list();
    return open(json::array());
  }
  bool end_array() {
    --nesting_;
    if (in_route()) return route_end_array();
    return close();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    // The parser quotes what it last read, which may be the very bytes that are not UTF-8.
    error = "byte " + std::to_string(position) + ": " + escape_invalid_utf8(e.what());
    return false;
  }

 private:
  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }

  // The parser itself keeps its nesting on the heap, but every reader after it (the tree's
  // consumers, the compare engine) recurses: depth is refused here, as the parser meets it.
  bool deeper() {
    if (++nesting_ <= kMaxSnapshotDepth) return true;
    std::vector<std::string> path;  // the first few keys: enough to find it, bounded in size
    for (std::size_t i = 0; i < keys_.size() && path.size() < 4; ++i)
      if (!keys_[i].empty()) path.push_back(keys_[i]);
    return fail("objects and arrays nested more than " + std::to_string(kMaxSnapshotDepth) +
                " levels deep (under '" + (in_route() ? where() : join(path, ".")) + "')");
  }

  // ---- generic tree -------------------------------------------------------------------------
  bool value(json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return true;
    }
    json& parent = *stack_.back();
    if (parent.is_object())
      parent[keys_.back()] = std::move(v);
    else
      parent.push_back(std::move(v));
    return true;
  }
  bool open(json container) {
    json* slot;
    if (stack_.empty()) {
      root = std::move(container);
      slot = &root;
    } else if (stack_.back()->is_object()) {
      slot = &(*stack_.back())[keys_.back()];
      *slot = std::move(container);
    } else {
      stack_.back()->push_back(std::move(container));
      slot = &stack_.back()->back();
    }
    stack_.push_back(slot);
    keys_.emplace_back();
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  // ---- route lists --------------------------------------------------------------------------
  // The list at root.devices.<d>.routes.<family>: four objects deep, keyed as the format says.
  bool at_route_list() const {
    return stack_.size() == 4 && keys_[0] == "devices" && keys_[2] == "routes" &&
           stack_[3]->is_object();
  }
  bool in_route() const { return route_table_ != nullptr; }
  std::string where() const {
    return "devices." + device_ + ".routes." + family_ + "[" + std::to_string(route_index_) + "]";
  }

  bool begin_route_list() {
    device_ = keys_[1];
    family_ = keys_[3];
    Family family;
    if (family_ == "ipv4")
      family = Family::ipv4;
    else if (family_ == "ipv6")
      family = Family::ipv6;
    else
      return fail("devices." + device_ + ".routes." + family_ +
                  ": unknown address family (ipv4 or ipv6)");
    auto& tables = route_tables[device_];
    if (tables.count(family_))
      return fail("devices." + device_ + ".routes." + family_ + " is listed twice");
    route_table_ = &tables.emplace(family_, RouteTable(family)).first->second;
    route_index_ = 0;
    depth_ = 0;
    return true;
  }

  void reset_route() {
    prefix_.clear();
    vrf_ = "default";
    protocol_.clear();
    metric_.reset();
    nexthops_.clear();
    nexthop_views_.clear();
    has_prefix_ = false;
    route_key_.clear();
  }

  // depth_: 0 inside the list, 1 inside a route object, 2 inside its nexthops list; skip_ > 0
  // while skipping a value under a key this version does not know.
  bool route_start_object() {
    if (skip_ > 0) return ++skip_, true;
    if (depth_ == 0) {
      depth_ = 1;
      reset_route();
      return true;
    }
    if (depth_ == 1 && !route_key_.empty() && !known_route_key()) return skip_ = 1, true;
    return fail(where() + ": '" + route_key_ + "' must not be an object");
  }
  bool route_end_object() {
    if (skip_ > 0) {
      if (--skip_ == 0) route_key_.clear();
      return true;
    }
    depth_ = 0;
    if (!has_prefix_) return fail(where() + ": route has no 'prefix'");
    nexthop_views_.assign(nexthops_.begin(), nexthops_.end());
    std::string problem;
    if (!route_table_->add(vrf_, prefix_, protocol_, metric_, nexthop_views_, &problem))
      return fail(where() + ": " + problem);
    ++route_index_;
    return true;
  }
  bool route_start_array() {
    if (skip_ > 0) return ++skip_, true;
    if (depth_ == 1 && route_key_ == "nexthops") return depth_ = 2, true;
    if (depth_ == 1 && !known_route_key()) return skip_ = 1, true;
    return fail(where() + ": unexpected list");
  }
  bool route_end_array() {
    if (skip_ > 0) {
      if (--skip_ == 0) route_key_.clear();
      return true;
    }
    if (depth_ == 2) return depth_ = 1, true;
    // The route list itself ends.
    std::string problem;
    if (!route_table_->finalize(&problem))
      return fail("devices." + device_ + ".routes." + family_ + ": " + problem);
    route_table_ = nullptr;
    return true;
  }
  bool route_key(const std::string& k) {
    if (skip_ > 0) return true;
    route_key_ = k;
    return true;
  }
  bool known_route_key() const {
    return route_key_ == "prefix" || route_key_ == "vrf" || route_key_ == "protocol" ||
           route_key_ == "metric" || route_key_ == "nexthops";
  }
  bool route_string(std::string& v) {
    if (skip_ > 0) return true;
    if (depth_ == 2) {
      nexthops_.push_back(std::move(v));
      return true;
    }
    if (depth_ == 0) return fail(where() + ": a route must be an object");
    if (route_key_ == "prefix") {
      prefix_ = std::move(v);
      has_prefix_ = true;
    } else if (route_key_ == "vrf") {
      vrf_ = std::move(v);
    } else if (route_key_ == "protocol") {
      protocol_ = std::move(v);
    } else if (route_key_ == "metric" || route_key_ == "nexthops") {
      return fail(where() + ": '" + route_key_ + "' has the wrong type");
    }
    return true;
  }
  bool route_unsigned(json::number_unsigned_t v) {
    if (skip_ > 0) return true;
    if (depth_ == 1 && route_key_ == "metric") {
      if (v > 0xffffffffu)
        return fail(where() + ": metric " + std::to_string(v) + " is out of range");
      metric_ = static_cast<std::uint32_t>(v);
      return true;
    }
    return route_scalar(json(v));
  }
  bool route_scalar(const json&) {
    if (skip_ > 0) return true;
    if (depth_ == 0) return fail(where() + ": a route must be an object");
    if (depth_ == 1 && !known_route_key()) return true;  // unknown scalar key: ignored
    return fail(where() + ": '" + route_key_ + "' has the wrong type");
  }

  std::vector<json*> stack_;
  std::vector<std::string> keys_;
  std::size_t nesting_ = 0;

  RouteTable* route_table_ = nullptr;
  std::string device_, family_, route_key_;
  std::size_t route_index_ = 0;
  int depth_ = 0;
  int skip_ = 0;
  std::string prefix_, vrf_, protocol_;
  bool has_prefix_ = false;
  std::optional<std::uint32_t> metric_;
  std::vector<std::string> nexthops_;
  std::vector<std::string_view> nexthop_views_;
};

Error invalid(const std::string& file, const std::string& message) {
  return Error::invalid_input("snapshot " + file + ": " + message);
}

Result<DeviceSnapshot> build_device(const std::string& file, const std::string& name, json& tree,
                                    std::map<std::string, RouteTable>* tables) {
  if (!tree.is_object()) return invalid(file, "devices." + name + " must be an object");
  DeviceSnapshot device;
  for (auto& [key, value] : tree.items()) {
    if (key == "identity") {
      if (!value.is_object())
        return invalid(file, "devices." + name + ".identity must be an object");
      device.identity = std::move(value);
    } else if (key == "sources") {
      if (!value.is_object())
        return invalid(file, "devices." + name + ".sources must be an object");
      for (auto& [category, source] : value.items()) {
        std::string at = "devices." + name + ".sources." + category;
        if (!source.is_object() || !source.contains("status") || !source["status"].is_string())
          return invalid(file, at + " needs a 'status' of ok or no-evidence");
        std::string status = source["status"].get<std::string>();
        SourceInfo info;
        if (status == "no-evidence") {
          info.ok = false;
          info.reason = source.value("reason", std::string("no reason given"));
        } else if (status != "ok") {
          return invalid(file, at + ".status is '" + status + "', not ok or no-evidence");
        }
        device.sources.emplace(category, std::move(info));
      }
    } else if (key == "routes") {
      if (!value.is_object()) return invalid(file, "devices." + name + ".routes must be an object");
      for (auto& [family, list] : value.items())
        return invalid(file, "devices." + name + ".routes." + family + " must be a list of routes");
      device.has_routes = true;
      if (tables) device.routes = std::move(*tables);
    } else {
      device.facts[key] = std::move(value);
    }
  }
  return device;
}

}  // namespace

Result<Snapshot> parse_snapshot(std::string_view text, const std::string& file_name) {
  SnapshotSax sax;
  bool parsed = false;
  try {
    parsed = json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const std::exception& e) {
    return invalid(file_name, e.what());
  }
  if (!parsed) return invalid(file_name, sax.error.empty() ? "not valid JSON" : sax.error);

  json& root = sax.root;
  if (!root.is_object()) return invalid(file_name, "the document must be a JSON object");
  if (!root.contains("format") || root["format"] != kSnapshotFormat)
    return invalid(file_name, "'format' must be \"" + std::string(kSnapshotFormat) + "\"");
  Snapshot snapshot;
  snapshot.file = file_name;
  if (!root.contains("taken_at") || !root["taken_at"].is_string())
    return invalid(file_name, "'taken_at' (ISO 8601 time) is missing");
  auto taken_at = parse_iso8601(root["taken_at"].get<std::string>());
  if (!taken_at)
    return invalid(file_name, "'taken_at' is not an ISO 8601 time with a zone: " +
                                  root["taken_at"].get<std::string>());
  snapshot.taken_at = *taken_at;
  if (root.contains("intent_commit") && root["intent_commit"].is_string())
    snapshot.intent_commit = root["intent_commit"].get<std::string>();
  if (!root.contains("devices") || !root["devices"].is_object())
    return invalid(file_name, "'devices' must be an object");

  for (auto& [name, tree] : root["devices"].items()) {
    auto tables = sax.route_tables.find(name);
    auto device = build_device(file_name, name, tree,
                               tables == sax.route_tables.end() ? nullptr : &tables->second);
    if (!device) return device.error();
    snapshot.devices.emplace(name, std::move(device).value());
  }
  for (auto& [name, tables] : sax.route_tables)
    if (!snapshot.devices.count(name))
      return invalid(file_name, "routes for unknown device " + name);
  return snapshot;
}

Result<Snapshot> load_snapshot_file(const std::string& path) {
  // Opened first and judged by the open file, so what is checked is what is read. A folder
  // opens for reading and "seeks" to a huge end: it must be refused before any buffer is sized.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Error::invalid_input("snapshot " + path + ": cannot be read: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return Error::invalid_input("snapshot " + path + ": cannot be read: " + why);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Error::invalid_input("snapshot " + path + ": not a regular file (" +
                                (S_ISDIR(info.st_mode) ? "a directory" : "a special file") +
                                "); give the path of a snapshot JSON file");
  }
  auto size = static_cast<std::uintmax_t>(info.st_size);
  if (size > kMaxSnapshotBytes) {
    ::close(fd);
    return Error::invalid_input("snapshot " + path + ": " + std::to_string(size) +
                                " bytes, more than the " + std::to_string(kMaxSnapshotBytes >> 20) +
                                " MiB a snapshot may have");
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  std::string why = "the file shrank while it was read";
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) why = std::strerror(errno);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got != text.size())
    return Error::invalid_input("snapshot " + path + ": read failed after " + std::to_string(got) +
                                " of " + std::to_string(text.size()) + " bytes: " + why);
  return parse_snapshot(text, path);
}

}  // namespace fabgate::compare
