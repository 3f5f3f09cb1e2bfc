#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fabgate::compare {

// Interns short repeated strings (protocols, next hops) so a route stores small ids.
class StringPool {
 public:
  std::uint32_t intern(std::string_view text);
  const std::string& text(std::uint32_t id) const { return texts_[id]; }
  std::optional<std::uint32_t> find(std::string_view text) const;
  std::size_t size() const { return texts_.size(); }

 private:
  std::vector<std::string> texts_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

// One route in 28 bytes: the key (address bytes and prefix length) and the compared values.
// Protocol and next-hop set are ids into the owning table's pools. `type` (the kernel's route
// type: unicast, blackhole, ...) is carried for the snapshot's text and not compared.
struct Route {
  std::array<std::uint8_t, 16> address{};  // IPv4 uses the first 4 bytes
  std::uint8_t length = 0;
  std::uint8_t has_metric : 1 = 0;
  std::uint8_t type : 7 = 0;   // 0: none; else 1 + its index in RouteTable::type_names()
  std::uint16_t protocol = 0;  // id in RouteTable::strings
  std::uint32_t metric = 0;
  std::uint32_t nexthops = 0;  // id in RouteTable::nexthop_sets
};

enum class Family : std::uint8_t { ipv4 = 4, ipv6 = 6 };

// A route table of one address family on one device, kept per VRF as a vector sorted by
// (address, length) so two tables compare by a merge-join instead of hashing 1 M strings.
class RouteTable {
 public:
  explicit RouteTable(Family family) : family_(family) {}
  // Move-only: a table holds a million routes, and copying one by accident is a silent cost.
  RouteTable(RouteTable&&) = default;
  RouteTable& operator=(RouteTable&&) = default;
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;

  Family family() const { return family_; }
  // An explicit copy, for a holder that must keep its table while another reads one of its own
  // (a gated run keeps each snapshot's tables and hands the comparison a copy).
  RouteTable clone() const;

  // Adds one route. `prefix` is "10.0.2.0/24" or "2001:db8::/64"; false with `error` set when
  // it does not parse or belongs to the other family. Host bits are kept as written.
  bool add(std::string_view vrf, std::string_view prefix, std::string_view protocol,
           std::optional<std::uint32_t> metric, const std::vector<std::string_view>& nexthops,
           std::string* error, std::string_view type = {});
  // What finalize does with a prefix listed twice in one VRF.
  enum class Duplicates {
    refuse,  // an error: a snapshot lists each prefix once
    // One route holding every next hop of them all, with the protocol, metric and type of the
    // one with the lowest metric (the earliest of equals): how a device's own listing, which may
    // give a prefix once per metric or per interface, becomes the snapshot's one route.
    merge,
  };
  // Sorts every VRF's routes and handles a prefix listed twice. Call once after loading.
  bool finalize(std::string* error, Duplicates duplicates = Duplicates::refuse);

  std::size_t size() const;
  const std::map<std::string, std::vector<Route>>& vrfs() const { return vrfs_; }
  const StringPool& strings() const { return strings_; }
  // Next hops of a route, as text, sorted.
  std::vector<std::string> nexthops_of(const Route& route) const;
  std::string prefix_of(const Route& route) const;
  // The route's type as added, or "" when it had none.
  std::string_view type_of(const Route& route) const;
  std::string describe(const std::string& vrf, const Route& route) const;

  const std::vector<std::vector<std::uint32_t>>& nexthop_sets() const { return nexthop_sets_; }
  // The id of the set holding exactly these next-hop string ids (any order), if any route uses it.
  std::optional<std::uint32_t> find_nexthop_set(std::vector<std::uint32_t> ids) const;

 private:
  std::uint32_t nexthop_set_id(std::vector<std::uint32_t>& sorted_unique_ids);
  void merge_duplicates(std::vector<Route>& routes);

  struct SetHash {
    std::size_t operator()(const std::vector<std::uint32_t>& ids) const;
  };

  Family family_;
  std::map<std::string, std::vector<Route>> vrfs_;
  StringPool strings_;                                    // protocols and next hops
  std::vector<std::vector<std::uint32_t>> nexthop_sets_;  // sorted string ids
  std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, SetHash> set_ids_;
  std::vector<std::uint32_t> scratch_;
  std::vector<std::string> types_;  // at most 127 distinct route types
  // Routes of one VRF arrive together; remembering the last one avoids a map lookup per route.
  // std::map nodes survive moves, so the pointer stays valid when the table is moved.
  std::string last_vrf_;
  std::vector<Route>* last_routes_ = nullptr;
};

// What changed between two tables of the same family. Counts are exact; the examples are the
// first few of each kind in key order, for people to read.
struct RouteDiff {
  std::size_t pre_count = 0;
  std::size_t post_count = 0;
  std::size_t added = 0;
  std::size_t removed = 0;
  std::size_t changed = 0;  // same key, different protocol, metric or next-hop set
  std::vector<std::string> added_examples;
  std::vector<std::string> removed_examples;
  std::vector<std::string> changed_examples;

  bool empty() const { return added == 0 && removed == 0 && changed == 0; }
};

RouteDiff diff_routes(const RouteTable& pre, const RouteTable& post, std::size_t max_examples = 5);

}  // namespace fabgate::compare
