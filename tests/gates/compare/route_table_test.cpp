#include "gates/compare/route_table.h"

#include <gtest/gtest.h>

namespace fabgate::compare {
namespace {

void add(RouteTable& table, const char* prefix, const char* protocol, std::uint32_t metric,
         std::vector<std::string_view> hops, const char* vrf = "default") {
  std::string error;
  ASSERT_TRUE(table.add(vrf, prefix, protocol, metric, hops, &error)) << error;
}

TEST(RouteTable, DiffCountsAddedRemovedAndChangedRoutes) {
  // Given one removed, one added, one with a new metric and one with the same next hops in
  // another order, then the diff counts 1/1/1 and treats next hops as a set.
  RouteTable pre(Family::ipv4), post(Family::ipv4);
  add(pre, "10.0.1.0/24", "bgp", 20, {"10.0.0.1", "10.0.0.3"});
  add(pre, "10.0.2.0/24", "bgp", 20, {"10.0.0.1"});
  add(pre, "10.0.3.0/24", "bgp", 20, {"10.0.0.1"});
  add(post, "10.0.3.0/24", "bgp", 30, {"10.0.0.1"});
  add(post, "10.0.1.0/24", "bgp", 20, {"10.0.0.3", "10.0.0.1"});
  add(post, "10.0.4.0/24", "static", 0, {"10.0.0.9"});
  std::string error;
  ASSERT_TRUE(pre.finalize(&error));
  ASSERT_TRUE(post.finalize(&error));

  RouteDiff diff = diff_routes(pre, post);
  EXPECT_EQ(diff.added, 1u);
  EXPECT_EQ(diff.removed, 1u);
  EXPECT_EQ(diff.changed, 1u);
  ASSERT_EQ(diff.changed_examples.size(), 1u);
  EXPECT_NE(diff.changed_examples[0].find("10.0.3.0/24"), std::string::npos);
  EXPECT_NE(diff.added_examples[0].find("10.0.4.0/24 static"), std::string::npos);
}

TEST(RouteTable, PrefixLengthAndVrfArePartOfTheKey) {
  // Given the same address with two lengths, and a VRF that exists only after, then neither is
  // confused with another route.
  RouteTable pre(Family::ipv6), post(Family::ipv6);
  add(pre, "2001:db8::/32", "bgp", 1, {"fe80::1"});
  add(post, "2001:db8::/48", "bgp", 1, {"fe80::1"});
  add(post, "2001:db8::/32", "bgp", 1, {"fe80::1"}, "tenant1");
  std::string error;
  ASSERT_TRUE(pre.finalize(&error));
  ASSERT_TRUE(post.finalize(&error));
  RouteDiff diff = diff_routes(pre, post);
  EXPECT_EQ(diff.removed, 1u);
  EXPECT_EQ(diff.added, 2u);
  EXPECT_EQ(diff.changed, 0u);
}

TEST(RouteTable, RejectsBadPrefixesAndDuplicates) {
  // Given a prefix of the wrong family and a prefix listed twice, then both are reported.
  RouteTable table(Family::ipv4);
  std::string error;
  EXPECT_FALSE(table.add("default", "2001:db8::/32", "bgp", 1, {}, &error));
  EXPECT_NE(error.find("not an IPv4 prefix"), std::string::npos);
  EXPECT_FALSE(table.add("default", "10.0.0.0/33", "bgp", 1, {}, &error));
  add(table, "10.0.0.0/8", "bgp", 1, {});
  add(table, "10.0.0.0/8", "bgp", 2, {});
  EXPECT_FALSE(table.finalize(&error));
  EXPECT_NE(error.find("10.0.0.0/8"), std::string::npos);
}

TEST(RouteTable, ADeviceListingAPrefixTwiceIsMergedWhenAskedWithTheLowestMetricsValues) {
  // Given a default route listed three times (metric 200 via one gateway, metric 100 via another
  // as a static route of type unicast, and metric 100 again via a third), as the kernel lists
  // one route per metric, then merging keeps one route: every next hop, and the protocol, metric
  // and type of the first route with the lowest metric. A table that refuses duplicates still does.
  auto load = [](RouteTable& table) {
    std::string error;
    ASSERT_TRUE(table.add("default", "0.0.0.0/0", "dhcp", 200, {"10.0.0.2"}, &error));
    ASSERT_TRUE(table.add("default", "0.0.0.0/0", "static", 100, {"10.0.0.1"}, &error, "unicast"));
    ASSERT_TRUE(table.add("default", "0.0.0.0/0", "bgp", 100, {"10.0.0.3"}, &error));
    ASSERT_TRUE(table.add("default", "10.9.0.0/24", "kernel", 0, {"dev:eth0"}, &error, "blackhole"));
  };
  RouteTable merged(Family::ipv4), refused(Family::ipv4);
  load(merged);
  load(refused);
  std::string error;
  ASSERT_TRUE(merged.finalize(&error, RouteTable::Duplicates::merge)) << error;
  ASSERT_EQ(merged.size(), 2u);
  const Route& default_route = merged.vrfs().at("default").at(0);
  EXPECT_EQ(merged.prefix_of(default_route), "0.0.0.0/0");
  EXPECT_EQ(merged.nexthops_of(default_route),
            (std::vector<std::string>{"10.0.0.1", "10.0.0.2", "10.0.0.3"}));
  EXPECT_EQ(merged.strings().text(default_route.protocol), "static");
  EXPECT_EQ(default_route.metric, 100u);
  EXPECT_EQ(merged.type_of(default_route), "unicast");
  EXPECT_EQ(merged.type_of(merged.vrfs().at("default").at(1)), "blackhole");
  EXPECT_FALSE(refused.finalize(&error));
  EXPECT_NE(error.find("0.0.0.0/0 in vrf default is listed twice"), std::string::npos) << error;
}

TEST(RouteTable, TheTypeIsCarriedButNotCompared) {
  // Given the same route once without a type and once typed unicast, then the diff sees no
  // change: the type is carried for the snapshot's text only.
  RouteTable pre(Family::ipv4), post(Family::ipv4);
  std::string error;
  ASSERT_TRUE(pre.add("default", "10.0.0.0/24", "bgp", 20, {"10.0.0.1"}, &error));
  ASSERT_TRUE(post.add("default", "10.0.0.0/24", "bgp", 20, {"10.0.0.1"}, &error, "unicast"));
  ASSERT_TRUE(pre.finalize(&error));
  ASSERT_TRUE(post.finalize(&error));
  EXPECT_TRUE(diff_routes(pre, post).empty());
}

}  // namespace
}  // namespace fabgate::compare
