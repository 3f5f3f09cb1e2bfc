#include "gates/snapshot/aft_routes.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "adapters/gnmi/snapshot_facts.h"

namespace fabgate::snapshot {
namespace {

using gnmi::GnmiNotification;
using nlohmann::json;

GnmiNotification one_update(const std::string& path, const std::string& value) {
  GnmiNotification notification;
  notification.updates.push_back({*gnmi::parse_path(path), value});
  return notification;
}

// The routes as the snapshot holds them, each family's list in (vrf, prefix) order, so that the
// tree path's reply order and the tables' key order compare equal.
json sorted(json routes) {
  for (auto& [family, list] : routes.items()) {
    std::sort(list.begin(), list.end(), [](const json& a, const json& b) {
      return std::pair(a.value("vrf", std::string()), a.at("prefix").get<std::string>()) <
             std::pair(b.value("vrf", std::string()), b.at("prefix").get<std::string>());
    });
  }
  return routes;
}

json tree_routes(const GnmiNotification& reply) {
  auto facts = gnmi::snapshot_facts({reply}, now_utc());
  EXPECT_TRUE(facts.ok()) << facts.error();
  return facts.ok() && facts->routes ? sorted(*facts->routes) : json();
}

json table_routes(const GnmiNotification& reply) {
  auto tables = read_aft_routes({reply});
  if (!tables) return "the fallback (nullopt)";
  if (!*tables) return "error: " + tables->error();
  json routes = json::object();
  for (const auto& [family, table] : tables->value()) routes[family] = route_list_json(table);
  return sorted(routes);
}

// A JSON_IETF AFT: module-qualified names and identities, uint64 ids as strings, a BGP route
// over two next hops, a connected one through an interface, IPv6 entries, a route without an
// origin protocol and one without a next-hop group.
json sample_afts() {
  return {
      {"openconfig-network-instance:ipv4-unicast",
       {{"ipv4-entry",
         {{{"prefix", "10.0.2.0/24"},
           {"state",
            {{"prefix", "10.0.2.0/24"},
             {"origin-protocol", "openconfig-policy-types:BGP"},
             {"next-hop-group", "7"}}}},
          {{"prefix", "10.0.1.0/31"},
           {"state",
            {{"origin-protocol", "openconfig-policy-types:DIRECTLY_CONNECTED"},
             {"next-hop-group", 8}}}},
          {{"prefix", "10.9.0.0/16"}, {"state", {{"next-hop-group", "8"}}}},
          {{"prefix", "10.8.0.0/16"}, {"state", {{"origin-protocol", "STATIC"}}}}}}}},
      {"ipv6-unicast",
       {{"ipv6-entry",
         {{{"prefix", "2001:db8:2::/64"},
           {"state", {{"origin-protocol", "BGP"}, {"next-hop-group", "9"}}}}}}}},
      {"next-hop-groups",
       {{"next-hop-group",
         {{{"id", "7"},
           {"next-hops",
            {{"next-hop", {{{"index", "2"}, {"state", {{"weight", "1"}}}}, {{"index", "1"}}}}}}},
          {{"id", "8"}, {"next-hops", {{"next-hop", {{{"index", "3"}}}}}}},
          {{"id", "9"}, {"next-hops", {{"next-hop", {{{"index", "4"}}, {{"index", "2"}}}}}}}}}}},
      {"next-hops",
       {{"next-hop",
         {{{"index", "1"}, {"state", {{"index", "1"}, {"ip-address", "10.0.1.2"}}}},
          {{"index", "2"}, {"state", {{"index", "2"}, {"ip-address", "10.0.1.0"}}}},
          {{"index", "3"},
           {"interface-ref", {{"state", {{"interface", "to-spine1"}}}}},
           {"state", {{"index", "3"}}}},
          {{"index", "4"},
           {"interface-ref", {{"state", {{"interface", "ignored"}}}}},
           {"state", {{"ip-address", "fe80::1"}}}}}}}}};
}

const char* const kDefaultAfts = "/network-instances/network-instance[name=default]/afts";

TEST(AftRoutes, AWholeAftReadIntoTablesIsTheSameRoutesAsTheTreePath) {
  // Given one update of the default instance's whole AFT, bare and wrapped in a
  // module-qualified `afts` member, and another instance's, then the tables written as the
  // snapshot's lists are exactly the routes the tree path reads: protocols in iproute2's words,
  // gateways, "dev:<interface>" only where a next hop has no address, no metric, a vrf for the
  // other instance, no protocol where the entry has none.
  const auto bare = one_update(kDefaultAfts, sample_afts().dump());
  const json expected = tree_routes(bare);
  ASSERT_EQ(expected.at("ipv4").size(), 4u);
  EXPECT_EQ(table_routes(bare), expected);
  const auto wrapped =
      one_update(kDefaultAfts, json{{"openconfig-network-instance:afts", sample_afts()}}.dump());
  EXPECT_EQ(table_routes(wrapped), tree_routes(wrapped));
  const auto blue =
      one_update("/network-instances/network-instance[name=blue]/afts", sample_afts().dump());
  const json blue_routes = table_routes(blue);
  EXPECT_EQ(blue_routes, tree_routes(blue));
  EXPECT_EQ(blue_routes.at("ipv4").at(0).at("vrf"), "blue");
}

TEST(AftRoutes, ATableReadInManyBatchesIsWholeAndInOrder) {
  // Given 40,000 entries (several batches of about 1 MB), then every route is read, the same
  // as the tree path reads them.
  json afts = sample_afts();
  auto& entries = afts["openconfig-network-instance:ipv4-unicast"]["ipv4-entry"];
  for (int i = 0; i < 40'000; ++i)
    entries.push_back({{"prefix", "10." + std::to_string(20 + i / 256) + "." +
                                      std::to_string(i % 256) + ".0/24"},
                       {"state",
                        {{"origin-protocol", "openconfig-policy-types:BGP"},
                         {"next-hop-group", "7"},
                         {"padding", "xxxxxxxxxxxxxxxxxxxx"}}}});
  const auto reply = one_update(kDefaultAfts, afts.dump());
  ASSERT_GT(reply.updates[0].json.size(), std::size_t{3} << 20);
  const json routes = table_routes(reply);
  ASSERT_EQ(routes.at("ipv4").size(), 40'004u);
  EXPECT_EQ(routes, tree_routes(reply));
}

TEST(AftRoutes, OtherReplyShapesAreLeftToTheTreePath) {
  // Given a reply in several updates (per-entry state, as some targets answer), a wildcard
  // instance, an update below the afts and a value that is not JSON, then the tables reader
  // leaves each to the tree path instead of guessing.
  GnmiNotification several = one_update(kDefaultAfts + std::string("/next-hops"), "{}");
  several.updates.push_back(
      {*gnmi::parse_path(std::string(kDefaultAfts) +
                         "/ipv4-unicast/ipv4-entry[prefix=10.0.0.0/31]/state"),
       R"({"origin-protocol": "BGP"})"});
  for (const auto& reply :
       {several, one_update("/network-instances/network-instance[name=*]/afts", "{}"),
        one_update(std::string(kDefaultAfts) + "/ipv4-unicast", sample_afts().dump()),
        one_update(kDefaultAfts, R"({"ipv4-unicast": {"ipv4-entry": [}})"),
        one_update(kDefaultAfts, R"({"next-hops": {"next-hop": []}})")}) {
    EXPECT_FALSE(read_aft_routes({reply}).has_value()) << reply.updates[0].json;
  }
}

TEST(AftRoutes, AMissingNextHopOrGroupIsAnErrorNamingIt) {
  // Given a group naming a next hop the AFT lacks, an entry naming a group it lacks, and an id
  // that is no unsigned integer, then each is an error naming the place, never an empty set.
  json missing_hop = sample_afts();
  missing_hop["next-hops"]["next-hop"].erase(0);
  json missing_group = sample_afts();
  missing_group["next-hop-groups"]["next-hop-group"].erase(1);
  json bad_id = sample_afts();
  bad_id["next-hops"]["next-hop"][0]["index"] = "one";
  for (const auto& [afts, problem] : std::vector<std::pair<json, std::string>>{
           {missing_hop, "next-hop-group[id=7]: next hop 1 is not in /afts/next-hops"},
           {missing_group, "ipv4-entry[prefix=10.0.1.0/31]: next-hop-group 8 is not in "
                           "/afts/next-hop-groups"},
           {bad_id, "/next-hops/next-hop/index: expected an unsigned integer, got a string"}}) {
    auto tables = read_aft_routes({one_update(kDefaultAfts, afts.dump())});
    ASSERT_TRUE(tables.has_value());
    ASSERT_FALSE(*tables);
    EXPECT_NE(tables->error().find(problem), std::string::npos) << tables->error();
    EXPECT_EQ(tables->error().rfind("/network-instances/network-instance[name=default]/afts", 0),
              0u)
        << tables->error();
  }
}

}  // namespace
}  // namespace fabgate::snapshot
