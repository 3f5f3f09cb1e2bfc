#include "adapters/gnmi/snapshot_facts.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <string_view>

#include "adapters/core/text.h"
#include "adapters/gnmi/data_tree.h"

namespace fabgate::gnmi {

namespace {

using nlohmann::json;

// Thrown inside this file only and turned into the Result at snapshot_facts().
struct FactError {
  std::string message;
};

const json* member(const json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  auto found = object.find(name);
  return found == object.end() ? nullptr : &*found;
}

const json* walk(const json& root, std::initializer_list<const char*> names) {
  const json* node = &root;
  for (const char* name : names) {
    node = member(*node, name);
    if (node == nullptr) return nullptr;
  }
  return node;
}

// OpenConfig counters are uint64, which JSON_IETF sends as strings (RFC 7951).
std::uint64_t counter(const json& value, const std::string& where) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    std::uint64_t parsed = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (error == std::errc() && end == text.data() + text.size()) return parsed;
  }
  throw FactError{where + ": expected an unsigned integer, got " + value.dump()};
}

// A string leaf taken as it is: names and addresses may contain ':' ("2001:db8::2",
// "et-0/0/0:1") that is no module prefix.
std::string text_leaf(const json& value, const std::string& where) {
  if (!value.is_string()) throw FactError{where + ": expected a string, got " + value.dump()};
  return value.get<std::string>();
}

// True for a YANG module name: a letter or '_', then letters, digits, '_', '-' or '.'.
bool is_yang_identifier(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// A leaf the OpenConfig schema types as an identityref or enumeration (oper-status,
// session-state, afi-safi-name): RFC 7951 qualifies identityrefs as "module:NAME", and some
// targets qualify enums too, so a leading module name is dropped. Only these leaves are
// read this way.
std::string identity_leaf(const json& value, const std::string& where) {
  std::string text = text_leaf(value, where);
  auto colon = text.find(':');
  if (colon != std::string::npos && is_yang_identifier(std::string_view(text).substr(0, colon))) {
    return text.substr(colon + 1);
  }
  return text;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// OpenConfig's session-state enum in the spelling FRR (and the SSH collectors) use, so that
// snapshots from either source compare equal.
std::string bgp_state_name(const std::string& openconfig) {
  static const std::map<std::string, std::string> names = {
      {"IDLE", "Idle"},         {"CONNECT", "Connect"},         {"ACTIVE", "Active"},
      {"OPENSENT", "OpenSent"}, {"OPENCONFIRM", "OpenConfirm"}, {"ESTABLISHED", "Established"}};
  auto found = names.find(openconfig);
  return found == names.end() ? openconfig : found->second;
}

json identity_facts(const json& system) {
  json identity = json::object();
  const json* state = member(system, "state");
  if (state == nullptr) return identity;
  if (const json* hostname = member(*state, "hostname")) {
    identity["hostname"] = text_leaf(*hostname, "/system/state/hostname");
  }
  if (const json* version = member(*state, "software-version")) {
    // fabgate-gnmid writes "<os>; Linux <release>; FRRouting <version>"; other targets write
    // their own text, which is kept whole as the OS.
    std::string text = text_leaf(*version, "/system/state/software-version");
    std::string os;
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find("; ", start);
      std::string part =
          text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (starts_with(part, "Linux "))
        identity["kernel"] = part.substr(6);
      else if (starts_with(part, "FRRouting "))
        identity["frr_version"] = part.substr(10);
      else if (os.empty())
        os = part;
      if (end == std::string::npos) break;
      start = end + 2;
    }
    identity["os"] = os.empty() ? text : os;
  }
  return identity;
}

json interface_facts(const json& list) {
  static const std::pair<const char*, const char*> counter_names[] = {
      {"in-pkts", "rx_packets"},     {"out-pkts", "tx_packets"},    {"in-octets", "rx_bytes"},
      {"out-octets", "tx_bytes"},    {"in-errors", "rx_errors"},    {"out-errors", "tx_errors"},
      {"in-discards", "rx_dropped"}, {"out-discards", "tx_dropped"}};
  json interfaces = json::object();
  if (!list.is_array()) throw FactError{"/interfaces/interface: expected a list"};
  for (const auto& entry : list) {
    const json* name = member(entry, "name");
    if (name == nullptr) throw FactError{"/interfaces/interface: an entry has no name"};
    std::string where = "/interfaces/interface[name=" + text_leaf(*name, "name") + "]";
    json facts = json::object();
    const json* state = member(entry, "state");
    const json* config = member(entry, "config");
    if (state != nullptr) {
      if (const json* oper = member(*state, "oper-status")) {
        facts["oper"] = lowercase(identity_leaf(*oper, where + "/state/oper-status"));
      }
      if (const json* admin = member(*state, "admin-status")) {
        facts["admin"] = lowercase(identity_leaf(*admin, where + "/state/admin-status"));
      }
      if (const json* counters = member(*state, "counters")) {
        json out = json::object();
        for (const auto& [openconfig, snapshot] : counter_names) {
          if (const json* value = member(*counters, openconfig)) {
            out[snapshot] = counter(*value, where + "/state/counters/" + openconfig);
          }
        }
        facts["counters"] = std::move(out);
      }
    }
    const json* mtu = state != nullptr ? member(*state, "mtu") : nullptr;
    if (mtu == nullptr && config != nullptr) mtu = member(*config, "mtu");
    if (mtu != nullptr) facts["mtu"] = counter(*mtu, where + "/state/mtu");
    if (!facts.contains("admin") && config != nullptr) {
      if (const json* enabled = member(*config, "enabled"); enabled && enabled->is_boolean()) {
        facts["admin"] = enabled->get<bool>() ? "up" : "down";
      }
    }
    interfaces[text_leaf(*name, "name")] = std::move(facts);
  }
  return interfaces;
}

void add_bgp_neighbors(const json& neighbors, TimePoint now, json& peers) {
  if (!neighbors.is_array()) throw FactError{"bgp/neighbors/neighbor: expected a list"};
  for (const auto& entry : neighbors) {
    const json* address = member(entry, "neighbor-address");
    if (address == nullptr) throw FactError{"bgp/neighbors/neighbor: an entry has no address"};
    std::string name = text_leaf(*address, "neighbor-address");
    std::string where = "neighbor[neighbor-address=" + name + "]";
    json facts = json::object();
    if (const json* state = member(entry, "state")) {
      if (const json* session = member(*state, "session-state")) {
        facts["state"] = bgp_state_name(identity_leaf(*session, where + "/state/session-state"));
      }
      if (const json* as = member(*state, "peer-as")) {
        facts["remote_as"] = counter(*as, where + "/state/peer-as");
      }
      if (const json* since = member(*state, "last-established")) {
        std::uint64_t since_ns = counter(*since, where + "/state/last-established");
        std::int64_t now_ms = now.time_since_epoch().count();
        std::int64_t since_ms = static_cast<std::int64_t>(since_ns / 1'000'000);
        facts["uptime_ms"] = std::max<std::int64_t>(0, now_ms - since_ms);
      }
    }
    if (const json* afi_safis = walk(entry, {"afi-safis", "afi-safi"});
        afi_safis && afi_safis->is_array()) {
      std::uint64_t received = 0;
      bool any = false;
      for (const auto& afi_safi : *afi_safis) {
        if (const json* value = walk(afi_safi, {"state", "prefixes", "received"})) {
          received += counter(*value, where + "/afi-safis/.../prefixes/received");
          any = true;
        }
      }
      if (any) facts["prefixes_received"] = received;
    }
    peers[name] = std::move(facts);
  }
}

std::optional<json> bgp_facts(const json& tree, TimePoint now) {
  const json* instances = walk(tree, {"network-instances", "network-instance"});
  if (instances == nullptr || !instances->is_array()) return std::nullopt;
  std::optional<json> bgp;
  for (const auto& instance : *instances) {
    const json* protocols = walk(instance, {"protocols", "protocol"});
    if (protocols == nullptr || !protocols->is_array()) continue;
    for (const auto& protocol : *protocols) {
      const json* neighbors = walk(protocol, {"bgp", "neighbors", "neighbor"});
      if (neighbors == nullptr) continue;
      if (!bgp) bgp = json{{"peers", json::object()}};
      add_bgp_neighbors(*neighbors, now, (*bgp)["peers"]);
    }
  }
  return bgp;
}

}  // namespace

Expected<SnapshotFacts, std::string> snapshot_facts(
    const std::vector<GnmiNotification>& notifications, TimePoint now) {
  json tree = json::object();
  for (const auto& notification : notifications) {
    for (const auto& update : notification.updates) {
      json value = json::parse(update.json, nullptr, false);
      if (value.is_discarded()) {
        return "value at " + update.path.to_string() + " is not JSON";
      }
      GnmiPath path = update.path;
      for (auto& element : path.elements) element.name = strip_module_prefix(element.name);
      insert_into_tree(tree, path, strip_module_prefixes(value));
    }
  }
  try {
    SnapshotFacts facts;
    if (const json* system = member(tree, "system")) facts.identity = identity_facts(*system);
    if (const json* list = walk(tree, {"interfaces", "interface"})) {
      facts.interfaces = interface_facts(*list);
    }
    facts.bgp = bgp_facts(tree, now);
    return facts;
  } catch (const FactError& error) {
    return error.message;
  } catch (const json::exception& error) {
    return std::string("unexpected value: ") + error.what();
  }
}

}  // namespace fabgate::gnmi
