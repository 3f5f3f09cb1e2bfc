#include "gates/pipeline/families/load_spread.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>

#include "adapters/core/foreign_json.h"
#include "adapters/core/text.h"

namespace fabgate::pipeline {

std::vector<intent::Probe> spread_window_probes(const std::vector<intent::Probe>& probes) {
  std::vector<intent::Probe> window;
  for (auto probe : probes) {
    if (probe.kind != "flows" || probe.protocol != "udp") continue;
    probe.flows = std::max(probe.flows, kSpreadFlows);
    window.push_back(std::move(probe));
  }
  return window;
}

std::set<std::string> declared_spread_devices(const intent::Change& change,
                                              const std::set<std::string>& group_devices) {
  std::set<std::string> declared;
  for (const auto& expected : change.compare.expected) {
    if (expected.path != "spread") continue;
    if (expected.device == "*")
      declared.insert(group_devices.begin(), group_devices.end());
    else
      declared.insert(expected.device);
  }
  return declared;
}
namespace {

using nlohmann::json;

// An address of either family as 16 bytes and its family's width in bits.
struct Address {
  std::array<std::uint8_t, 16> bytes{};
  int bits = 0;  // 32 or 128; 0: did not parse
};

Address parse_address(const std::string& text) {
  Address address;
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return address;
  if (::inet_pton(AF_INET, text.c_str(), address.bytes.data()) == 1)
    address.bits = 32;
  else if (::inet_pton(AF_INET6, text.c_str(), address.bytes.data()) == 1)
    address.bits = 128;
  return address;
}

// Whether `gateway` lies in the subnet of `cidr` ("10.0.1.1/31").
bool in_subnet(const Address& gateway, const std::string& cidr) {
  auto slash = cidr.find('/');
  if (slash == std::string::npos) return false;
  Address subnet = parse_address(cidr.substr(0, slash));
  if (subnet.bits == 0 || subnet.bits != gateway.bits) return false;
  int length = 0;
  const std::string digits = cidr.substr(slash + 1);
  if (digits.empty() || digits.size() > 3) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    length = length * 10 + (c - '0');
  }
  if (length > subnet.bits) return false;
  for (int bit = 0; bit < length; ++bit) {
    const int byte = bit / 8, mask = 0x80 >> (bit % 8);
    if ((subnet.bytes[byte] & mask) != (gateway.bytes[byte] & mask)) return false;
  }
  return true;
}

bool link_local(const Address& address) {
  return address.bits == 128 && address.bytes[0] == 0xfe && (address.bytes[1] & 0xc0) == 0x80;
}

// The interface a next hop leaves by: "dev:X" names it; a gateway is the one interface whose
// connected subnet holds it. Empty when that cannot be told.
std::string member_of(const std::string& nexthop, const json& interfaces) {
  if (nexthop.rfind("dev:", 0) == 0) return nexthop.substr(4);
  Address gateway = parse_address(nexthop);
  if (gateway.bits == 0 || link_local(gateway) || !interfaces.is_object()) return {};
  std::string found;
  for (const auto& [name, interface] : interfaces.items()) {
    const json* addresses = array_member(interface, "addresses");
    if (!addresses) continue;
    for (const auto& cidr : *addresses)
      if (cidr.is_string() && in_subnet(gateway, cidr.get<std::string>())) {
        if (!found.empty() && found != name) return {};  // two interfaces claim it
        found = name;
      }
  }
  return found;
}

// Whether the device's `category` was collected (its source says ok).
bool source_ok(const json& device, const std::string& category) {
  const json* sources = object_member(device, "sources");
  const json* source = sources ? object_member(*sources, category) : nullptr;
  return source && string_member(*source, "status").value_or("") == "ok";
}

bool answered(const json& device, const std::string& category) {
  return source_ok(device, category) && object_member(device, category);
}

std::string percent(double share) {
  return std::to_string(static_cast<int>(std::lround(share * 100))) + " %";
}

}  // namespace

std::string EcmpGroup::name() const { return device + " " + join(members, "/"); }

EcmpGroups ecmp_groups(const json& snapshot, const DeviceRouteTables& routes) {
  EcmpGroups found;
  const json* devices = object_member(snapshot, "devices");
  if (!devices) return found;
  for (const auto& [device_name, device] : devices->items()) {
    auto held = routes.find(device_name);
    const snapshot::RouteTables* tables =
        held != routes.end() && held->second ? held->second.get() : nullptr;
    if (tables ? !source_ok(device, "routes") : !answered(device, "routes")) continue;
    found.routes_read.insert(device_name);
    const json* interfaces = object_member(device, "interfaces");
    static const json kNone = json::object();
    std::map<std::vector<std::string>, std::vector<std::string>> prefixes_by_members;
    std::size_t unresolved = 0;
    std::string an_unresolved;
    // One route with its next hops as text (nullopt: one that is not a string).
    auto consider = [&](const std::string& prefix,
                        const std::vector<std::optional<std::string>>& hops) {
      if (hops.size() < 2) return;
      // A prefix on several interfaces without a gateway is no equal-cost group: the kernel
      // lists a connected prefix once per interface that has it (fe80::/64 on every port with
      // IPv6) and sends by the first; the snapshot merges them into one route.
      if (std::all_of(hops.begin(), hops.end(),
                      [](const auto& hop) { return hop && hop->starts_with("dev:"); }))
        return;
      std::set<std::string> members;
      bool resolved = true;
      for (const auto& hop : hops) {
        std::string member = hop ? member_of(*hop, interfaces ? *interfaces : kNone) : std::string{};
        if (member.empty()) resolved = false;
        members.insert(member);
      }
      if (!resolved) {
        if (!unresolved++) an_unresolved = prefix;
        return;
      }
      if (members.size() < 2) return;  // several gateways behind one interface
      prefixes_by_members[{members.begin(), members.end()}].push_back(prefix);
    };
    for (const char* family : {"ipv4", "ipv6"}) {
      if (tables) {
        auto table = tables->find(family);
        if (table == tables->end()) continue;
        const auto& sets = table->second.nexthop_sets();
        for (const auto& [vrf, list] : table->second.vrfs()) {
          for (const auto& route : list) {
            if (route.nexthops >= sets.size() || sets[route.nexthops].size() < 2) continue;
            std::vector<std::optional<std::string>> hops;
            for (auto& hop : table->second.nexthops_of(route)) hops.emplace_back(std::move(hop));
            consider(table->second.prefix_of(route), hops);
          }
        }
        continue;
      }
      const json* table = array_member(device["routes"], family);
      if (!table) continue;
      for (const auto& route : *table) {
        const json* hops = array_member(route, "nexthops");
        auto prefix = string_member(route, "prefix");
        if (!hops || hops->size() < 2 || !prefix) continue;
        std::vector<std::optional<std::string>> texts;
        for (const auto& hop : *hops)
          texts.push_back(hop.is_string() ? std::optional<std::string>(hop.get<std::string>())
                                          : std::nullopt);
        consider(*prefix, texts);
      }
    }
    for (auto& [members, prefixes] : prefixes_by_members) {
      std::sort(prefixes.begin(), prefixes.end());
      found.groups.push_back({device_name, members, std::move(prefixes)});
    }
    if (unresolved)
      found.unresolved.push_back(device_name + ": " + std::to_string(unresolved) +
                                 " equal-cost route(s) whose next hops' interfaces are unknown "
                                 "(first " +
                                 an_unresolved + ")");
  }
  return found;
}

double GroupSpread::share(std::size_t member) const {
  if (total <= 0 || member >= packets.size()) return 0;
  return static_cast<double>(packets[member]) / static_cast<double>(total);
}

std::string GroupSpread::shares_text() const {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < group.members.size(); ++i)
    parts.push_back(percent(share(i)) + " on " + group.members[i]);
  return join(parts, ", ");
}

std::vector<GroupSpread> measure_spread(const std::vector<EcmpGroup>& groups, const json& before,
                                        const json& after) {
  std::vector<GroupSpread> spreads;
  const json* devices_before = object_member(before, "devices");
  const json* devices_after = object_member(after, "devices");
  for (const auto& group : groups) {
    GroupSpread spread{group, {}, 0, {}};
    const json* then = devices_before ? object_member(*devices_before, group.device) : nullptr;
    const json* now = devices_after ? object_member(*devices_after, group.device) : nullptr;
    if (!then || !now || !answered(*then, "interfaces") || !answered(*now, "interfaces")) {
      spread.missing = group.device + " did not answer the interface counters read " +
                       std::string(!then || !answered(*then, "interfaces") ? "before" : "after") +
                       " the window";
      spreads.push_back(std::move(spread));
      continue;
    }
    for (const auto& member : group.members) {
      auto tx = [&](const json& device) -> std::optional<std::int64_t> {
        const json* interface = object_member(device["interfaces"], member);
        const json* counters = interface ? object_member(*interface, "counters") : nullptr;
        return counters ? integer_member(*counters, "tx_packets") : std::nullopt;
      };
      auto first = tx(*then), second = tx(*now);
      if (!first || !second) {
        spread.missing = group.device + " " + member + ": no tx_packets counter " +
                         (!first ? "before" : "after") + " the window";
        break;
      }
      if (*second < *first) {
        spread.missing = group.device + " " + member + ": tx_packets went backwards (" +
                         std::to_string(*first) + " then " + std::to_string(*second) +
                         "): the counters were reset";
        break;
      }
      spread.packets.push_back(*second - *first);
      spread.total += *second - *first;
    }
    if (!spread.missing.empty()) {
      spread.packets.clear();
      spread.total = 0;
    }
    spreads.push_back(std::move(spread));
  }
  return spreads;
}

SpreadJudgement judge_spread(const std::vector<GroupSpread>& baseline,
                             const std::vector<GroupSpread>& acceptance,
                             const std::set<std::string>& declared, const SpreadLimits& limits) {
  SpreadJudgement judgement;
  bool missing = false;
  // The failures sorted by how concentrated the group now is, the worst first.
  std::vector<std::pair<double, std::string>> failures;
  for (const auto& now : acceptance) {
    const std::string name = now.group.name();
    if (!now.missing.empty()) {
      missing = true;
      judgement.lines.push_back(name + ": no evidence: " + now.missing);
      continue;
    }
    if (now.total < limits.min_packets) {
      judgement.lines.push_back(name + ": not judged: " + std::to_string(now.total) +
                                " packets crossed it (the probes' traffic does not)");
      continue;
    }
    auto before = std::find_if(baseline.begin(), baseline.end(), [&](const GroupSpread& b) {
      return b.group.device == now.group.device && b.group.members == now.group.members;
    });
    if (before == baseline.end() || !before->missing.empty() ||
        before->total < limits.min_packets) {
      judgement.lines.push_back(name + ": " + now.shares_text() +
                                "; not judged: no baseline of this group (" +
                                (before == baseline.end() ? std::string("not a group before")
                                 : !before->missing.empty()
                                     ? before->missing
                                     : std::to_string(before->total) + " packets before") +
                                ")");
      continue;
    }
    std::vector<std::string> before_shares;
    double most_now = 0, most_before = 0, moved = 0;
    for (std::size_t i = 0; i < now.group.members.size(); ++i) {
      most_now = std::max(most_now, now.share(i));
      most_before = std::max(most_before, before->share(i));
      moved = std::max(moved, std::fabs(now.share(i) - before->share(i)));
      before_shares.push_back(percent(before->share(i)));
    }
    const std::string described =
        name + ": " + now.shares_text() + "; before " + join(before_shares, " / ");
    if (declared.contains(now.group.device)) {
      judgement.lines.push_back(described + " (declared: compare.expected spread)");
      continue;
    }
    ++judgement.judged;
    const bool concentrated = most_now >= limits.concentrated && most_before <= limits.spread_before;
    const bool shifted = moved >= limits.max_shift;
    if (concentrated || shifted) {
      const std::string why = concentrated ? " (concentrated on one member)"
                                           : " (a member's share moved by " + percent(moved) + ")";
      failures.emplace_back(most_now, described + why);
      judgement.lines.push_back(described + why);
    } else {
      judgement.lines.push_back(described);
    }
  }
  std::stable_sort(failures.begin(), failures.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& failure : failures) judgement.failures.push_back(std::move(failure.second));
  if (!judgement.failures.empty())
    judgement.verdict = Verdict::fail;
  else if (missing)
    judgement.verdict = Verdict::no_evidence;
  else if (judgement.judged > 0)
    judgement.verdict = Verdict::pass;
  else
    judgement.verdict = Verdict::skipped;
  return judgement;
}

json to_json(const std::vector<GroupSpread>& spreads) {
  json groups = json::array();
  for (const auto& spread : spreads) {
    json group = {{"device", spread.group.device},
                  {"members", spread.group.members},
                  {"prefixes", spread.group.prefixes}};
    if (!spread.missing.empty()) {
      group["missing"] = spread.missing;
    } else {
      json members = json::object();
      for (std::size_t i = 0; i < spread.group.members.size(); ++i)
        members[spread.group.members[i]] = {{"tx_packets", spread.packets[i]},
                                            {"share", std::round(spread.share(i) * 1000) / 1000}};
      group["packets"] = spread.total;
      group["by_member"] = std::move(members);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace fabgate::pipeline
