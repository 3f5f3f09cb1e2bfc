#include "gates/snapshot/aft_routes.h"

#include <charconv>
#include <cstdint>
#include <unordered_map>

#include "adapters/gnmi/snapshot_facts.h"
#include "gates/snapshot/json_lists.h"

namespace fabgate::snapshot {

namespace {

namespace ondemand = simdjson::ondemand;

std::string_view without_module(std::string_view name) {
  auto colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

// The lists read, by their member names under the afts container.
enum List : std::size_t { ipv4_entries, ipv6_entries, groups_list, hops_list, kLists };
constexpr std::string_view kListPaths[kLists][2] = {{"ipv4-unicast", "ipv4-entry"},
                                                      {"ipv6-unicast", "ipv6-entry"},
                                                      {"next-hop-groups", "next-hop-group"},
                                                      {"next-hops", "next-hop"}};

// Reading one AFT: the first problem is kept, and every read after it is skipped. Places in
// failures ("…/next-hops/next-hop/index") are built only when there is a failure: a million
// entries are read without a string per leaf.
class AftReader {
 public:
  explicit AftReader(std::string where) : where_(std::move(where)) {}

  std::string problem;

  bool read_hops(ondemand::array& list) {
    const std::string at = where_ + "/next-hops/next-hop";
    for (auto element : list) {
      ondemand::object hop;
      if (!object_of(element, at, hop)) return false;
      std::optional<std::uint64_t> index;
      std::optional<std::string_view> address, interface;
      each_member(hop, [&](std::string_view name, ondemand::value& value) {
        if (name == "index") {
          index = unsigned_of(value, at, "/index");
        } else if (name == "state") {
          address = leaf(value, {"ip-address"}, at, "/state/ip-address");
        } else if (name == "interface-ref") {
          interface = leaf(value, {"state", "interface"}, at, "/interface-ref/state/interface");
        }
      });
      if (!problem.empty()) return false;
      if (!index) return fail(at + ": an entry has no index");
      hops_[*index] = address     ? std::string(*address)
                      : interface ? "dev:" + std::string(*interface)
                                  : std::string("unknown");
    }
    return true;
  }

  bool read_groups(ondemand::array& list) {
    const std::string at = where_ + "/next-hop-groups/next-hop-group";
    for (auto element : list) {
      ondemand::object group;
      if (!object_of(element, at, group)) return false;
      std::optional<std::uint64_t> id;
      std::vector<std::uint64_t> members;
      each_member(group, [&](std::string_view name, ondemand::value& value) {
        if (name == "id") id = unsigned_of(value, at, "/id");
        else if (name == "next-hops") group_members(value, at, members);
      });
      if (!problem.empty()) return false;
      if (!id) return fail(at + ": an entry has no id");
      groups_[*id] = std::move(members);
    }
    return true;
  }

  // After every hop and group: each group's next hops as texts.
  bool resolve_groups() {
    for (const auto& [id, members] : groups_) {
      auto& texts = group_texts_[id];
      for (auto index : members) {
        auto hop = hops_.find(index);
        if (hop == hops_.end())
          return fail(where_ + "/next-hop-groups/next-hop-group[id=" + std::to_string(id) +
                      "]: next hop " + std::to_string(index) + " is not in /afts/next-hops");
        texts.push_back(hop->second);
      }
    }
    return true;
  }

  bool read_entries(ondemand::array& list, compare::RouteTable& table, const std::string& vrf,
                    const std::string& at) {
    for (auto element : list) {
      ondemand::object entry;
      if (!object_of(element, at, entry)) return false;
      std::optional<std::string_view> prefix;
      std::optional<std::uint64_t> group;
      protocol_.clear();
      each_member(entry, [&](std::string_view name, ondemand::value& value) {
        if (name == "prefix") {
          prefix = string_of(value, at, "/prefix");
        } else if (name == "state") {
          ondemand::object state;
          if (value.get_object().get(state)) return;
          each_member(state, [&](std::string_view leaf_name, ondemand::value& leaf_value) {
            if (leaf_name == "origin-protocol") {
              if (auto origin = string_of(leaf_value, at, "/state/origin-protocol"))
                protocol_ = gnmi::aft_route_protocol(std::string(*origin));
            } else if (leaf_name == "next-hop-group") {
              group = unsigned_of(leaf_value, at, "/state/next-hop-group");
            }
          });
        }
      });
      if (!problem.empty()) return false;
      if (!prefix) return fail(at + ": an entry has no prefix");
      static const std::vector<std::string_view> kNoHops;
      const std::vector<std::string_view>* hops = &kNoHops;
      if (group) {
        auto found = group_texts_.find(*group);
        if (found == group_texts_.end())
          return fail(at + "[prefix=" + std::string(*prefix) + "]: next-hop-group " +
                      std::to_string(*group) + " is not in /afts/next-hop-groups");
        hops = &found->second;
      }
      std::string error;
      if (!table.add(vrf, *prefix, protocol_, std::nullopt, *hops, &error))
        return fail(at + "[prefix=" + std::string(*prefix) + "]: " + error);
    }
    return true;
  }

 private:
  bool fail(std::string message) {
    if (problem.empty()) problem = std::move(message);
    return false;
  }

  bool fail_json(simdjson::error_code code) {
    return fail(where_ + ": not valid JSON: " + simdjson::error_message(code));
  }

  // Calls `read(name, value)` for each member of `object`, its name without a module prefix,
  // until a problem is found.
  template <typename Read>
  void each_member(ondemand::object& object, Read&& read) {
    for (auto field : object) {
      std::string_view key;
      ondemand::value value;
      if (auto code = field.unescaped_key().get(key)) return void(fail_json(code));
      if (auto code = field.value().get(value)) return void(fail_json(code));
      read(without_module(key), value);
      if (!problem.empty()) return;
    }
  }

  template <typename Element>
  bool object_of(Element& element, const std::string& at, ondemand::object& out) {
    ondemand::value value;
    if (auto code = element.get(value)) return fail_json(code);
    if (value.get_object().get(out)) return fail(at + ": an entry is " + json_lists::kind_of(value));
    return true;
  }

  std::optional<std::string_view> string_of(ondemand::value& value, const std::string& at,
                                            std::string_view leaf_path) {
    std::string_view text;
    if (value.get_string().get(text)) {
      fail(at + std::string(leaf_path) + ": expected a string, got " + json_lists::kind_of(value));
      return std::nullopt;
    }
    return text;
  }

  // OpenConfig's uint64 leaves: a JSON number, or a decimal string in JSON_IETF (RFC 7951).
  std::optional<std::uint64_t> unsigned_of(ondemand::value& value, const std::string& at,
                                           std::string_view leaf_path) {
    std::uint64_t out = 0;
    ondemand::json_type type;
    if (!value.type().get(type)) {
      if (type == ondemand::json_type::number && !value.get_uint64().get(out)) return out;
      std::string_view text;
      if (type == ondemand::json_type::string && !value.get_string().get(text)) {
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
        if (error == std::errc() && end == text.data() + text.size()) return out;
      }
    }
    fail(at + std::string(leaf_path) + ": expected an unsigned integer, got " +
         json_lists::kind_of(value));
    return std::nullopt;
  }

  // The string leaf at `names` below the object `value` (member names without module
  // prefixes), if there: ip-address under state, state/interface under interface-ref.
  std::optional<std::string_view> leaf(ondemand::value& value,
                                       std::initializer_list<std::string_view> names,
                                       const std::string& at, std::string_view leaf_path) {
    ondemand::value node = value;
    for (auto name : names) {
      ondemand::object object;
      if (node.get_object().get(object)) return std::nullopt;
      std::optional<ondemand::value> found;
      for (auto field : object) {
        std::string_view key;
        if (auto code = field.unescaped_key().get(key)) return fail_json(code), std::nullopt;
        if (without_module(key) != name) continue;
        ondemand::value member;
        if (auto code = field.value().get(member)) return fail_json(code), std::nullopt;
        found = member;
        break;
      }
      if (!found) return std::nullopt;
      node = *found;
    }
    return string_of(node, at, leaf_path);
  }

  void group_members(ondemand::value& value, const std::string& at,
                     std::vector<std::uint64_t>& members) {
    ondemand::object object;
    if (value.get_object().get(object)) return;
    each_member(object, [&](std::string_view name, ondemand::value& hops) {
      ondemand::array list;
      if (name != "next-hop" || hops.get_array().get(list)) return;
      for (auto element : list) {
        ondemand::object hop;
        if (!object_of(element, at + "/next-hops/next-hop", hop)) return;
        each_member(hop, [&](std::string_view hop_name, ondemand::value& index) {
          if (hop_name != "index") return;
          if (auto got = unsigned_of(index, at, "/next-hops/next-hop/index"))
            members.push_back(*got);
        });
        if (!problem.empty()) return;
      }
    });
  }

  std::string where_;
  std::unordered_map<std::uint64_t, std::string> hops_;
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> groups_;
  std::unordered_map<std::uint64_t, std::vector<std::string_view>> group_texts_;
  std::string protocol_;
};

}  // namespace

std::optional<Expected<RouteTables, std::string>> read_aft_routes(
    const std::vector<gnmi::GnmiNotification>& notifications) {
  if (notifications.size() != 1 || notifications[0].updates.size() != 1 ||
      !notifications[0].deletes.empty())
    return std::nullopt;
  const gnmi::GnmiUpdate& update = notifications[0].updates[0];
  const auto& elements = update.path.elements;
  if (elements.size() != 3 || without_module(elements[0].name) != "network-instances" ||
      without_module(elements[1].name) != "network-instance" ||
      without_module(elements[2].name) != "afts" || !elements[2].keys.empty())
    return std::nullopt;
  auto name = elements[1].keys.find("name");
  if (elements[1].keys.size() != 1 || name == elements[1].keys.end() || name->second.empty() ||
      name->second == "*")
    return std::nullopt;
  const std::string& vrf = name->second;

  const std::string_view text = update.json;
  std::vector<std::vector<std::string_view>> targets;
  for (const auto& path : kListPaths) targets.push_back({path[0], path[1]});
  for (const auto& path : kListPaths) targets.push_back({"afts", path[0], path[1]});
  const json_lists::Scan scan = json_lists::scan(text, targets);
  const std::string where = "/network-instances/network-instance[name=" + vrf + "]/afts";
  if (scan.too_deep)
    return Expected<RouteTables, std::string>(
        "value at " + update.path.to_string() + " is nested deeper than " +
        std::to_string(json_lists::kMaxDepth) + " levels");
  // Anything unusual (not JSON, a list twice, the afts both bare and wrapped) is the tree
  // path's to judge and to word.
  if (!scan.closed || scan.trailing || scan.mismatched || scan.repeated) return std::nullopt;
  const std::size_t trimmed = text.find_first_not_of(" \t\r\n");
  if (trimmed == std::string_view::npos || text[trimmed] != '{') return std::nullopt;
  bool bare = false, wrapped = false;
  for (std::size_t list = 0; list < kLists; ++list) {
    bare = bare || scan.lists[list].found;
    wrapped = wrapped || scan.lists[kLists + list].found;
  }
  if (bare == wrapped) return std::nullopt;
  const std::size_t offset = wrapped ? static_cast<std::size_t>(kLists) : 0;
  const auto& lists = scan.lists;
  if (!lists[offset + ipv4_entries].found && !lists[offset + ipv6_entries].found)
    return std::nullopt;

  ondemand::parser parser;
  AftReader reader(where);
  auto read = [&](List list, auto&& fn) {
    if (!lists[offset + list].found) return true;
    auto code = json_lists::read_batches(text, lists[offset + list], parser,
                                         [&](ondemand::array& array) { return fn(array); });
    return !code && reader.problem.empty();
  };
  RouteTables tables;
  bool ok = read(hops_list, [&](ondemand::array& list) { return reader.read_hops(list); }) &&
            read(groups_list, [&](ondemand::array& list) { return reader.read_groups(list); }) &&
            reader.resolve_groups();
  for (auto [list, family] : {std::pair{ipv4_entries, compare::Family::ipv4},
                              std::pair{ipv6_entries, compare::Family::ipv6}}) {
    if (!ok || !lists[offset + list].found) continue;
    const char* name_of_family = family == compare::Family::ipv4 ? "ipv4" : "ipv6";
    auto& table = tables.emplace(name_of_family, family).first->second;
    const std::string at = where + "/" + std::string(kListPaths[list][0]) + "/" +
                           std::string(kListPaths[list][1]);
    ok = read(list, [&](ondemand::array& array) {
      return reader.read_entries(array, table, vrf, at);
    });
    std::string error;
    if (ok && !table.finalize(&error)) {
      reader.problem = at + ": " + error;
      ok = false;
    }
  }
  if (!reader.problem.empty()) return Expected<RouteTables, std::string>(reader.problem);
  if (!ok) return std::nullopt;  // a batch simdjson could not read: the tree path words it
  return Expected<RouteTables, std::string>(std::move(tables));
}

}  // namespace fabgate::snapshot
