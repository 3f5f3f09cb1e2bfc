// Normalizer tests on outputs captured on Debian 12: iproute2 and ethtool in a network
// namespace with veth pairs, FRR 8.4 vtysh JSON from two bgpd/bfdd namespaces
// (capture-frr-samples.sh). vtysh-evpn-vni.json is written by hand in FRR's format.

#include "gates/snapshot/normalizers.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace fabgate::snapshot {
namespace {

using nlohmann::json;

std::string sample(const std::string& name) {
  return testing::read_file(std::string(FABGATE_SOURCE_DIR) + "/tests/gates/snapshot/testdata/" +
                            name);
}

TEST(LinuxNormalizers, InterfacesCarryStateMtuCountersAndAddresses) {
  // Given real `ip -j -s link` and `ip -j addr` output, then each interface has admin/oper
  // state, MTU, integer counters and its addresses without IPv6 link-local ones.
  json interfaces;
  ASSERT_TRUE(parse_ip_link(sample("ip-link.json"), interfaces));
  ASSERT_TRUE(parse_ip_addr(sample("ip-addr.json"), interfaces));
  const auto& eth1 = interfaces.at("eth1");
  EXPECT_EQ(eth1.at("admin"), "up");
  EXPECT_EQ(eth1.at("oper"), "up");
  EXPECT_EQ(eth1.at("mtu"), 9000);
  EXPECT_TRUE(eth1.at("counters").at("rx_packets").is_number_integer());
  EXPECT_EQ(eth1.at("addresses"), (json{"10.0.1.1/31", "2001:db8::1/64"}));
  EXPECT_EQ(interfaces.at("lo").at("oper"), "unknown");
  EXPECT_EQ(interfaces.at("lo").at("addresses"), (json{"10.10.0.1/32", "127.0.0.1/8", "::1/128"}));
}

TEST(LinuxNormalizers, RoutesHaveExplicitPrefixesProtocolsAndNexthopSets) {
  // Given real `ip -j route` output with a default route, an ECMP route and a static route,
  // then prefixes are explicit, nexthops are sorted sets, and metrics default to 0.
  json routes;
  ASSERT_TRUE(parse_ip_route_v4(sample("ip-route-v4.json"), routes));
  ASSERT_TRUE(parse_ip_route_v6(sample("ip-route-v6.json"), routes));
  const auto& v4 = routes.at("ipv4");
  auto find = [](const json& table, const std::string& prefix) {
    for (const auto& route : table)
      if (route.at("prefix") == prefix) return route;
    return json();
  };
  EXPECT_EQ(find(v4, "0.0.0.0/0").at("nexthops"), (json{"10.0.1.0"}));
  auto ecmp = find(v4, "10.20.0.0/24");
  EXPECT_EQ(ecmp.at("protocol"), "bgp");
  EXPECT_EQ(ecmp.at("metric"), 20);
  EXPECT_EQ(ecmp.at("nexthops"), (json{"10.0.1.0", "10.0.2.0"}));
  // 10.0.1.0/31 is connected on eth1 and eth2 (both ends on this host): one route, two hops.
  EXPECT_EQ(find(v4, "10.0.1.0/31").at("nexthops"), (json{"dev:eth1", "dev:eth2"}));
  EXPECT_EQ(find(routes.at("ipv6"), "2001:db8:1::/48").at("nexthops"), (json{"2001:db8::2"}));
  // fe80::/64 is listed once per interface by the kernel: one route, both interfaces.
  std::size_t link_local = 0;
  for (const auto& route : routes.at("ipv6")) link_local += route.at("prefix") == "fe80::/64";
  EXPECT_EQ(link_local, 1u);
  EXPECT_EQ(find(routes.at("ipv6"), "fe80::/64").at("nexthops"), (json{"dev:eth1", "dev:eth2"}));
}

TEST(LinuxNormalizers, TwoRoutesToOnePrefixAreOneRouteUsingTheLowestMetric) {
  // Given two default routes (metric 200 via one gateway, then metric 100 via another) and one
  // prefix listed on two devices, then each prefix is one route holding every next hop, with the
  // protocol and metric of the route the kernel uses (the lowest metric).
  json routes;
  ASSERT_TRUE(parse_ip_route_v4(
      R"([{"dst":"default","gateway":"10.0.0.2","protocol":"static","metric":200},)"
      R"({"dst":"default","gateway":"10.0.0.1","protocol":"dhcp","metric":100},)"
      R"({"dst":"10.9.0.0/24","dev":"eth0","protocol":"kernel"},)"
      R"({"dst":"10.9.0.0/24","dev":"eth1","protocol":"kernel","metric":5}])",
      routes));
  const auto& v4 = routes.at("ipv4");
  ASSERT_EQ(v4.size(), 2u) << v4.dump();
  EXPECT_EQ(v4[0].at("prefix"), "0.0.0.0/0");
  EXPECT_EQ(v4[0].at("nexthops"), (json{"10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(v4[0].at("protocol"), "dhcp");
  EXPECT_EQ(v4[0].at("metric"), 100);
  EXPECT_EQ(v4[1].at("nexthops"), (json{"dev:eth0", "dev:eth1"}));
  EXPECT_EQ(v4[1].at("metric"), 0);
}

TEST(LinuxNormalizers, RouteTypesAreKeptAndMalformedRouteListsNamed) {
  // Given a blackhole route, then its type is in the snapshot. Given a destination that is no
  // prefix, a metric out of range, a route list with something after it, or no `dst`, then
  // the output is refused naming the field or saying it is not JSON.
  json routes;
  ASSERT_TRUE(parse_ip_route_v4(R"([{"type":"blackhole","dst":"10.66.0.0/16","protocol":"static",)"
                                R"("flags":[]}])",
                                routes));
  EXPECT_EQ(routes.at("ipv4").at(0).at("type"), "blackhole");
  EXPECT_EQ(routes.at("ipv4").at(0).at("nexthops"), (json{"unknown"}));
  struct Case {
    const char* output;
    const char* failure;
  };
  for (const Case& wrong : {
           Case{R"([{"dst":"10.0.0.0/24"},{"dst":"fe80::/64","dev":"eth0"}])",
                "field '[1].dst': 'fe80::/64' is not an IPv4 prefix"},
           Case{R"([{"dst":"10.0.0.0/24","metric":-1}])",
                "field '[0].metric' is -1, not a route metric (0 to 4294967295)"},
           Case{R"([{"dst":"10.0.0.0/24"}] [])", "not JSON: '[{\"dst\":\"10.0.0.0/24\"}] []'"},
           Case{R"([{"gateway":"10.0.0.1"}])", "field '[0].dst' is missing"},
           Case{R"({"dst":"10.0.0.0/24"})", "expected a JSON list"},
           Case{R"([{"dst":"10.0.0.0/24","nexthops":{}}])",
                "field '[0].nexthops' is an object, not an array"},
       }) {
    SCOPED_TRACE(wrong.output);
    auto result = parse_ip_route_v4(wrong.output, routes);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), wrong.failure);
  }
}

TEST(LinuxNormalizers, ALongRouteListIsReadInBatchesAndAFailureNamesItsPlaceInTheWhole) {
  // Given 30,000 routes (about 2 MB, read in batches of about 1 MB), then every route is read;
  // and given the same list with a wrong metric at route 25,000 (in a later batch), then the
  // failure names route 25,000 of the whole list.
  auto routes_text = [](std::size_t wrong_at) {
    std::string text = "[";
    for (std::size_t i = 0; i < 30'000; ++i) {
      if (i) text += ',';
      text += R"({"dst":"10.)" + std::to_string(i >> 8) + "." + std::to_string(i & 255) +
              R"(.0/24","gateway":"10.255.0.1","dev":"eth1","protocol":"bgp","metric":)" +
              (i == wrong_at ? std::string(R"("20")") : std::string("20")) +
              R"(,"flags":[],"padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxx"})";
    }
    return text + "]";
  };
  json routes;
  ASSERT_TRUE(parse_ip_route_v4(routes_text(30'000), routes));
  EXPECT_EQ(routes.at("ipv4").size(), 30'000u);
  auto wrong = parse_ip_route_v4(routes_text(25'000), routes);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error(), "field '[25000].metric' is a string, not an integer");
}

TEST(LinuxNormalizers, IdentityFromHostnameOsReleaseKernelAndEthtool) {
  // Given real os-release, uname -r and ethtool -i output, then identity names OS, kernel and
  // each NIC's driver while skipping interfaces without driver information.
  json identity;
  ASSERT_TRUE(parse_hostname("leaf1\n", identity));
  ASSERT_TRUE(parse_os_release(sample("os-release.txt"), identity));
  ASSERT_TRUE(parse_kernel_release(sample("kernel-release.txt"), identity));
  ASSERT_TRUE(parse_ethtool_drivers(sample("ethtool-drivers.txt"), identity));
  EXPECT_EQ(identity.at("hostname"), "leaf1");
  EXPECT_EQ(identity.at("os"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_FALSE(identity.at("kernel").get<std::string>().empty());
  EXPECT_EQ(identity.at("nics").at("eth1").at("driver"), "veth");
  EXPECT_EQ(identity.at("nics").at("eth1").at("driver_version"), "1.0");
  EXPECT_FALSE(identity.at("nics").contains("lo"));
}

TEST(LinuxNormalizers, SystemIdentityPrefersAPermanentMacAndSaysWhyASerialIsMissing) {
  // Given the system-identity command's output captured on a VM without DMI (no
  // /sys/class/dmi), then there is no serial and the reason says the file is absent, and the
  // system MAC is eth0's permanent address although ifb0 has a lower ifindex.
  json identity;
  ASSERT_TRUE(parse_system_identity(sample("system-identity.txt"), identity));
  EXPECT_FALSE(identity.contains("serial"));
  EXPECT_NE(identity.at("serial_unavailable").get<std::string>().find("absent"), std::string::npos);
  EXPECT_EQ(identity.at("system_mac"), "02:fc:00:00:00:01");
  EXPECT_EQ(identity.at("system_mac_source"), "eth0 (its permanent address)");

  // Given a real serial and only random addresses (lab veths), then the serial is taken and
  // the MAC is the lowest ifindex's, flagged as one that may change.
  json lab;
  ASSERT_TRUE(
      parse_system_identity("serial FOC2231X0AB\n"
                            "iface 9 to-spine1 AA:BB:CC:00:00:09 1\n"
                            "iface 3 mgmt0 aa:bb:cc:00:00:03 1\n",
                            lab));
  EXPECT_EQ(lab.at("serial"), "FOC2231X0AB");
  EXPECT_EQ(lab.at("system_mac"), "aa:bb:cc:00:00:03");
  EXPECT_NE(lab.at("system_mac_source").get<std::string>().find("may change"), std::string::npos);

  // A firmware placeholder is not a serial; no Ethernet interface means no MAC; output without
  // the serial line is an error (not an empty identity).
  json placeholder;
  ASSERT_TRUE(parse_system_identity("serial To Be Filled By O.E.M.\n", placeholder));
  EXPECT_FALSE(placeholder.contains("serial"));
  EXPECT_NE(placeholder.at("serial_unavailable").get<std::string>().find("placeholder"),
            std::string::npos);
  EXPECT_TRUE(placeholder.contains("system_mac_unavailable"));
  json broken;
  EXPECT_FALSE(parse_system_identity("garbage\n", broken));
}

TEST(FrrNormalizers, BgpPeersCarryStateRemoteAsAndPrefixesPerFamily) {
  // Given real FRR 8.4 `show bgp summary json` with an established eBGP peer in two address
  // families, then the peer appears once with state, remote AS and per-family prefix counts.
  json bgp;
  ASSERT_TRUE(parse_bgp_summary(sample("vtysh-bgp-summary.json"), bgp));
  const auto& peer = bgp.at("peers").at("10.0.1.0");
  EXPECT_EQ(peer.at("state"), "Established");
  EXPECT_EQ(peer.at("remote_as"), 65002);
  EXPECT_TRUE(peer.at("address_families").contains("ipv4_unicast"));
  EXPECT_TRUE(peer.at("address_families").contains("l2_vpn_evpn"));
  EXPECT_TRUE(peer.at("prefixes_received").is_number_integer());
}

TEST(FrrNormalizers, BfdPeersAndEvpnVnis) {
  // Given real `show bfd peers json` and an `show evpn vni json` in FRR's format, then BFD
  // peers carry their status and VNIs their type and VTEP count (none for L3 VNIs).
  json bfd, evpn, empty_evpn;
  ASSERT_TRUE(parse_bfd_peers(sample("vtysh-bfd-peers.json"), bfd));
  EXPECT_EQ(bfd.at("peers").at("10.0.1.0").at("status"), "up");
  ASSERT_TRUE(parse_evpn_vni(sample("vtysh-evpn-vni.json"), evpn));
  EXPECT_EQ(evpn.at("vnis").at("10100").at("type"), "L2");
  EXPECT_EQ(evpn.at("vnis").at("10100").at("vtep_count"), 2);
  EXPECT_FALSE(evpn.at("vnis").at("50001").contains("vtep_count"));
  ASSERT_TRUE(parse_evpn_vni(sample("vtysh-evpn-vni-empty.json"), empty_evpn));
  EXPECT_TRUE(empty_evpn.at("vnis").empty());
}

TEST(FrrNormalizers, FrrVersionFromShowVersion) {
  // Given real `show version` output, then the FRR version is extracted.
  json identity;
  ASSERT_TRUE(parse_frr_version(sample("vtysh-show-version.txt"), identity));
  EXPECT_EQ(identity.at("frr_version"), "8.4.4");
}

TEST(Normalizers, RefuseOutputThatIsNotWhatTheyExpect) {
  // Given error text, empty output or JSON of the wrong shape, then every normalizer returns an
  // error (the caller turns it into no-evidence) instead of an empty healthy value.
  json into;
  EXPECT_FALSE(parse_bgp_summary("% BGP instance not found\n", into));
  EXPECT_FALSE(parse_bgp_summary("", into));
  EXPECT_FALSE(parse_ip_link("{\"not\": \"a list\"}", into));
  EXPECT_FALSE(parse_bfd_peers("{}", into));
  EXPECT_FALSE(parse_hostname("", into));
  EXPECT_FALSE(parse_os_release("NAME=x\n", into));
  EXPECT_FALSE(parse_frr_version("vtysh: command not found", into));
  EXPECT_FALSE(parse_ethtool_drivers("", into));
  const Normalizer* link = find_normalizer("ip-link");
  ASSERT_NE(link, nullptr);
  auto shape = normalize(*link, "[{\"mtu\": 1500}]", into);  // no ifname
  ASSERT_FALSE(shape);
  EXPECT_EQ(shape.error(), "field '[0].ifname' is missing");
}

}  // namespace
}  // namespace fabgate::snapshot
