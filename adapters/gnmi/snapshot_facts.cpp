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
std::string without_identity_module(std::string text) {
  auto colon = text.find(':');
  if (colon != std::string::npos && is_yang_identifier(std::string_view(text).substr(0, colon))) {
    return text.substr(colon + 1);
  }
  return text;
}

std::string identity_leaf(const json& value, const std::string& where) {
  return without_identity_module(text_leaf(value, where));
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

// /components: NICs (PORT components with a driver in `description`, as fabgate-gnmid serves
// them) become identity.nics like `ethtool -i`; the OPERATING_SYSTEM component's
// software-version is identity.os_version; BIOS/FIRMWARE/BOOT_LOADER components go to
// identity.firmware.<name>.
void add_component_facts(const json& list, json& identity) {
  if (!list.is_array()) throw FactError{"/components/component: expected a list"};
  for (const auto& entry : list) {
    const json* name_leaf = member(entry, "name");
    if (name_leaf == nullptr) throw FactError{"/components/component: an entry has no name"};
    std::string name = text_leaf(*name_leaf, "/components/component/name");
    std::string where = "/components/component[name=" + name + "]/state";
    const json* state = member(entry, "state");
    if (state == nullptr) continue;
    std::string type;
    if (const json* value = member(*state, "type")) type = identity_leaf(*value, where + "/type");
    auto leaf = [&](const char* leaf_name) -> std::optional<std::string> {
      const json* value = member(*state, leaf_name);
      if (value == nullptr) return std::nullopt;
      return text_leaf(*value, where + "/" + leaf_name);
    };
    if (type == "OPERATING_SYSTEM") {
      if (auto version = leaf("software-version")) identity["os_version"] = *version;
    } else if (type == "BIOS" || type == "FIRMWARE" || type == "BOOT_LOADER") {
      auto version = leaf("firmware-version");
      if (!version) version = leaf("software-version");
      if (version) identity["firmware"][name] = *version;
    } else if (type == "PORT") {
      auto driver = leaf("description");
      if (!driver) continue;
      json nic = {{"driver", *driver}};
      if (auto version = leaf("software-version")) nic["driver_version"] = *version;
      if (auto firmware = leaf("firmware-version")) nic["firmware"] = *firmware;
      if (auto bus = leaf("location")) nic["bus"] = *bus;
      identity["nics"][name] = std::move(nic);
    }
  }
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

bool is_ipv6_link_local(const std::string& ip) {
  std::string head = lowercase(ip.substr(0, 3));
  return head == "fe8" || head == "fe9" || head == "fea" || head == "feb";
}

// "ip/prefix-length" of every subinterface's IPv4 and IPv6 addresses, sorted, without IPv6
// link-local ones (as the SSH collector's ip-addr normalizer). An interface whose reply has
// subinterfaces but no address gets an empty list: that is an answer.
json interface_addresses(const json& subinterfaces, const std::string& where) {
  if (!subinterfaces.is_array()) throw FactError{where + "/subinterfaces: expected a list"};
  std::vector<std::string> out;
  for (const auto& subinterface : subinterfaces) {
    for (const char* family : {"ipv4", "ipv6"}) {
      const json* addresses = walk(subinterface, {family, "addresses", "address"});
      if (addresses == nullptr) continue;
      if (!addresses->is_array()) {
        throw FactError{where + "/subinterfaces/.../address: expected a list"};
      }
      for (const auto& address : *addresses) {
        const json* state = member(address, "state");
        if (state == nullptr) state = member(address, "config");
        const json* ip = state != nullptr ? member(*state, "ip") : nullptr;
        if (ip == nullptr) ip = member(address, "ip");
        const json* length = state != nullptr ? member(*state, "prefix-length") : nullptr;
        if (ip == nullptr || length == nullptr) {
          throw FactError{where + "/subinterfaces/.../address: no ip or prefix-length"};
        }
        std::string text = text_leaf(*ip, where + "/.../address/ip");
        if (std::string(family) == "ipv6" && is_ipv6_link_local(text)) continue;
        out.push_back(text + "/" + std::to_string(counter(*length, where + "/.../prefix-length")));
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
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
        // LOWER_LAYER_DOWN -> lowerlayerdown: the kernel's operstate words, as ip-link has them.
        std::string word = lowercase(identity_leaf(*oper, where + "/state/oper-status"));
        word.erase(std::remove(word.begin(), word.end(), '_'), word.end());
        facts["oper"] = word;
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
    if (const json* subinterfaces = walk(entry, {"subinterfaces", "subinterface"})) {
      facts["addresses"] = interface_addresses(*subinterfaces, where);
    }
    interfaces[text_leaf(*name, "name")] = std::move(facts);
  }
  return interfaces;
}

// IPV4_UNICAST -> ipv4_unicast, L2VPN_EVPN -> l2_vpn_evpn: the keys the SSH collector's
// bgp-summary normalizer derives from FRR's ipv4Unicast and l2VpnEvpn.
std::string address_family_key(const std::string& afi_safi) {
  if (afi_safi == "L2VPN_EVPN") return "l2_vpn_evpn";
  if (afi_safi == "L2VPN_VPLS") return "l2_vpn_vpls";
  return lowercase(afi_safi);
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
        const json* value = walk(afi_safi, {"state", "prefixes", "received"});
        if (value == nullptr) continue;
        std::uint64_t count = counter(*value, where + "/afi-safis/.../prefixes/received");
        any = true;
        const json* name = member(afi_safi, "afi-safi-name");
        if (name == nullptr) name = walk(afi_safi, {"state", "afi-safi-name"});
        std::string family =
            name ? identity_leaf(*name, where + "/afi-safis/afi-safi/afi-safi-name") : "";
        // EVPN routes are not IP prefixes: the sum leaves them out, as the SSH collector's
        // bgp-summary normalizer does; they stay under address_families.
        if (family != "L2VPN_EVPN") received += count;
        if (name == nullptr) continue;
        json family_facts = {{"prefixes_received", count}};
        if (const json* sent = walk(afi_safi, {"state", "prefixes", "sent"})) {
          family_facts["prefixes_sent"] = counter(*sent, where + "/afi-safis/.../prefixes/sent");
        }
        facts["address_families"][address_family_key(family)] = std::move(family_facts);
      }
      if (any) facts["prefixes_received"] = received;
    }
    peers[name] = std::move(facts);
  }
}

// /lldp/interfaces/interface[name]/neighbors/neighbor[id]/state ->
// lldp.neighbors.<interface> = [{system_name, port_id, chassis_id, port_description}], sorted.
json lldp_facts(const json& list) {
  if (!list.is_array()) throw FactError{"/lldp/interfaces/interface: expected a list"};
  json neighbors = json::object();
  for (const auto& entry : list) {
    const json* name = member(entry, "name");
    if (name == nullptr) throw FactError{"/lldp/interfaces/interface: an entry has no name"};
    std::string interface = text_leaf(*name, "/lldp/interfaces/interface/name");
    std::string where = "/lldp/interfaces/interface[name=" + interface + "]";
    json found = json::array();
    if (const json* peers = walk(entry, {"neighbors", "neighbor"})) {
      if (!peers->is_array()) throw FactError{where + "/neighbors/neighbor: expected a list"};
      for (const auto& peer : *peers) {
        const json* state = member(peer, "state");
        if (state == nullptr) continue;
        json out = json::object();
        static const std::pair<const char*, const char*> leaves[] = {
            {"system-name", "system_name"},
            {"port-id", "port_id"},
            {"chassis-id", "chassis_id"},
            {"port-description", "port_description"}};
        for (const auto& [openconfig, snapshot] : leaves) {
          if (const json* value = member(*state, openconfig)) {
            out[snapshot] = text_leaf(*value, where + "/neighbors/neighbor/state/" + openconfig);
          }
        }
        found.push_back(std::move(out));
      }
    }
    std::sort(found.begin(), found.end());
    neighbors[interface] = std::move(found);
  }
  return json{{"neighbors", std::move(neighbors)}};
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

// An AFT key (next-hop index, next-hop-group id): uint64, a string in JSON_IETF.
std::string aft_key(const json& value, const std::string& where) {
  return std::to_string(counter(value, where));
}

// The origin-protocol identity in the words iproute2 writes for the kernel's route protocol,
// as the SSH route collector (ip-route-v4) reports them.
std::string route_protocol_name(const std::string& identity) {
  static const std::map<std::string, std::string> names = {
      {"BGP", "bgp"},       {"DIRECTLY_CONNECTED", "kernel"},
      {"STATIC", "static"}, {"OSPF", "ospf"},
      {"OSPF3", "ospf"},    {"ISIS", "isis"}};
  auto found = names.find(identity);
  return found == names.end() ? lowercase(identity) : found->second;
}

// /network-instances/network-instance[name]/afts: every ipv4-entry (ipv6-entry) becomes a
// route of routes.ipv4 (routes.ipv6) {prefix, protocol, nexthops} like the ip-route-v4
// (ip-route-v6) normalizer; a next hop is its ip-address, else "dev:<interface>". OpenConfig's
// AFT has no metric, so none is written. Instances other than "default" add a `vrf`. A family
// is present when the reply has its list, an empty one included (a table with no route is an
// answer); a reply without ipv6-unicast leaves routes.ipv6 absent, never empty.
std::optional<json> route_facts(const json& tree) {
  const json* instances = walk(tree, {"network-instances", "network-instance"});
  if (instances == nullptr || !instances->is_array()) return std::nullopt;
  std::optional<json> routes;
  for (const auto& instance : *instances) {
    const json* afts = member(instance, "afts");
    if (afts == nullptr) continue;
    std::string vrf = "default";
    if (const json* name = member(instance, "name"))
      vrf = text_leaf(*name, "network-instance/name");
    const std::string where = "/network-instances/network-instance[name=" + vrf + "]/afts";
    std::map<std::string, std::string> hops;
    if (const json* list = walk(*afts, {"next-hops", "next-hop"}); list && list->is_array()) {
      for (const auto& hop : *list) {
        const json* index = member(hop, "index");
        if (index == nullptr) throw FactError{where + "/next-hops/next-hop: an entry has no index"};
        std::string key = aft_key(*index, where + "/next-hops/next-hop/index");
        std::string text = "unknown";
        if (const json* ip = walk(hop, {"state", "ip-address"}))
          text = text_leaf(*ip, where + "/next-hops/next-hop[index=" + key + "]/state/ip-address");
        else if (const json* interface = walk(hop, {"interface-ref", "state", "interface"}))
          text = "dev:" + text_leaf(*interface, where + "/next-hops/next-hop[index=" + key +
                                                    "]/interface-ref/state/interface");
        hops[key] = text;
      }
    }
    std::map<std::string, std::vector<std::string>> groups;
    if (const json* list = walk(*afts, {"next-hop-groups", "next-hop-group"});
        list && list->is_array()) {
      for (const auto& group : *list) {
        const json* id = member(group, "id");
        if (id == nullptr)
          throw FactError{where + "/next-hop-groups/next-hop-group: an entry has no id"};
        std::string key = aft_key(*id, where + "/next-hop-groups/next-hop-group/id");
        auto& members = groups[key];
        const json* list_of_hops = walk(group, {"next-hops", "next-hop"});
        if (list_of_hops == nullptr || !list_of_hops->is_array()) continue;
        for (const auto& hop : *list_of_hops) {
          const json* index = member(hop, "index");
          if (index == nullptr) continue;
          std::string hop_key =
              aft_key(*index, where + "/next-hop-groups/next-hop-group[id=" + key +
                                  "]/next-hops/next-hop/index");
          auto found = hops.find(hop_key);
          if (found == hops.end())
            throw FactError{where + "/next-hop-groups/next-hop-group[id=" + key + "]: next hop " +
                            hop_key + " is not in /afts/next-hops"};
          members.push_back(found->second);
        }
      }
    }
    for (const char* family : {"ipv4", "ipv6"}) {
      const std::string unicast = std::string(family) + "-unicast";
      const std::string entry_name = std::string(family) + "-entry";
      const json* entries = walk(*afts, {unicast.c_str(), entry_name.c_str()});
      if (entries == nullptr) continue;
      const std::string list_where = where + "/" + unicast + "/" + entry_name;
      if (!entries->is_array()) throw FactError{list_where + ": expected a list"};
      if (!routes) routes = json::object();
      json& table = (*routes)[family];
      if (!table.is_array()) table = json::array();
      for (const auto& entry : *entries) {
        const json* prefix = member(entry, "prefix");
        if (prefix == nullptr) throw FactError{list_where + ": an entry has no prefix"};
        std::string text = text_leaf(*prefix, list_where + "/prefix");
        std::string entry_where = list_where + "[prefix=" + text + "]";
        json route = {{"prefix", text}};
        if (vrf != "default") route["vrf"] = vrf;
        if (const json* origin = walk(entry, {"state", "origin-protocol"}))
          route["protocol"] =
              route_protocol_name(identity_leaf(*origin, entry_where + "/state/origin-protocol"));
        std::vector<std::string> nexthops;
        if (const json* group = walk(entry, {"state", "next-hop-group"})) {
          std::string key = aft_key(*group, entry_where + "/state/next-hop-group");
          auto found = groups.find(key);
          if (found == groups.end())
            throw FactError{entry_where + ": next-hop-group " + key +
                            " is not in /afts/next-hop-groups"};
          nexthops = found->second;
        }
        std::sort(nexthops.begin(), nexthops.end());
        route["nexthops"] = nexthops;
        table.push_back(std::move(route));
      }
    }
  }
  return routes;
}

}  // namespace

// Some targets (SONiC's management framework) answer a path with its node wrapped in an
// object named after the path's last element, module-qualified: a Get of .../config returns
// {"openconfig-interfaces:config": {...}}, of interface[name=X] {"...:interface": [{...}]}.
// Such a wrapper is removed so the value sits where the path says (a list stays a list, see
// place_update()); an unqualified member of the same name is data and is kept.
json unwrap_named_value(const GnmiPath& path, json value) {
  if (path.elements.empty() || !value.is_object() || value.size() != 1) return value;
  const std::string& member_name = value.begin().key();
  if (member_name.find(':') == std::string::npos) return value;
  const PathElement& last = path.elements.back();
  if (strip_module_prefix(member_name) != strip_module_prefix(last.name)) return value;
  json inner = std::move(value.begin().value());  // moved: it may be a whole route table
  return inner;
}

// Places one update's value in the merged tree, member names without module prefixes. A list
// entry's path answered with a list (SONiC answers interface[name=*] with
// {"openconfig-lldp:interface": [{...}, {...}]}) puts each entry where its own key leaves say,
// so a wildcard never becomes an entry named "*". Fails when such an entry lacks a key leaf.
static std::optional<std::string> place_update(json& tree, GnmiPath path, json value) {
  value = unwrap_named_value(path, std::move(value));
  for (auto& element : path.elements) element.name = strip_module_prefix(element.name);
  strip_module_prefixes_in_place(value);
  if (!value.is_array() || path.elements.empty() || path.elements.back().keys.empty()) {
    insert_into_tree(tree, path, std::move(value));
    return std::nullopt;
  }
  for (auto& entry : value) {
    GnmiPath entry_path = path;
    for (auto& [key, text] : entry_path.elements.back().keys) {
      const json* leaf = member(entry, key.c_str());
      if (leaf == nullptr)
        return "value at " + path.to_string() + ": a list entry has no key leaf '" + key + "'";
      text = leaf->is_string() ? leaf->get<std::string>() : leaf->dump();
    }
    insert_into_tree(tree, entry_path, std::move(entry));
  }
  return std::nullopt;
}

Expected<json, std::string> config_facts(const std::vector<GnmiNotification>& notifications) {
  json tree = json::object();
  bool any = false;
  for (const auto& notification : notifications) {
    for (const auto& update : notification.updates) {
      auto value = parse_target_value(update.path, update.json);
      if (!value) return value.error();
      if (auto failure = place_update(tree, update.path, std::move(*value))) return *failure;
      any = true;
    }
  }
  if (!any) return std::string("the reply holds no configuration");
  return json{{"format", "openconfig-json"}, {"text", tree.dump(2) + "\n"}};
}

std::string aft_route_protocol(const std::string& origin_protocol) {
  return route_protocol_name(without_identity_module(origin_protocol));
}

Expected<SnapshotFacts, std::string> snapshot_facts(
    const std::vector<GnmiNotification>& notifications, TimePoint now) {
  json tree = json::object();
  for (const auto& notification : notifications) {
    for (const auto& update : notification.updates) {
      auto value = parse_target_value(update.path, update.json);
      if (!value) return value.error();
      if (auto failure = place_update(tree, update.path, std::move(*value))) return *failure;
    }
  }
  try {
    SnapshotFacts facts;
    if (const json* system = member(tree, "system")) facts.identity = identity_facts(*system);
    if (const json* components = walk(tree, {"components", "component"})) {
      if (!facts.identity) facts.identity = json::object();
      add_component_facts(*components, *facts.identity);
    }
    if (const json* lldp = walk(tree, {"lldp", "interfaces", "interface"})) {
      facts.lldp = lldp_facts(*lldp);
    }
    if (const json* list = walk(tree, {"interfaces", "interface"})) {
      facts.interfaces = interface_facts(*list);
    }
    facts.bgp = bgp_facts(tree, now);
    facts.routes = route_facts(tree);
    return facts;
  } catch (const FactError& error) {
    return error.message;
  } catch (const json::exception& error) {
    return std::string("unexpected value: ") + error.what();
  }
}

}  // namespace fabgate::gnmi
