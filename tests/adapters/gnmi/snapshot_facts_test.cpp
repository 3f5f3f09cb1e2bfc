#include "adapters/gnmi/snapshot_facts.h"

#include <gtest/gtest.h>

#include "adapters/gnmi/data_tree.h"

namespace fabgate::gnmi {
namespace {

using nlohmann::json;

GnmiUpdate update(const char* path, json value) {
  return {*parse_path(path), value.dump()};
}

TEST(GnmiSnapshotFacts, MapsInterfacesSystemAndBgpToSnapshotCategories) {
  // Given a Get of system, interface and BGP neighbor state as JSON_IETF (counters as strings,
  // module-qualified names), then the snapshot categories carry the same names and types the
  // SSH collectors write: lower-case status words, integer counters, FRR's session state.
  GnmiNotification notification;
  notification.updates.push_back(
      update("/system/state", {{"openconfig-system:hostname", "leaf1"},
                               {"software-version",
                                "Debian GNU/Linux 12 (bookworm); Linux 6.1.0-18-amd64; "
                                "FRRouting 8.4.4"}}));
  notification.updates.push_back(
      update("/interfaces/interface[name=eth1]/state", {{"name", "eth1"},
                                                        {"mtu", 9000},
                                                        {"admin-status", "UP"},
                                                        {"oper-status", "DOWN"},
                                                        {"counters",
                                                         {{"in-pkts", "10"},
                                                          {"out-pkts", "12"},
                                                          {"in-octets", "1000"},
                                                          {"out-octets", "1200"},
                                                          {"in-errors", "0"},
                                                          {"out-errors", "0"},
                                                          {"in-discards", "1"},
                                                          {"out-discards", "2"}}}}));
  notification.updates.push_back(
      update("/network-instances/network-instance[name=default]/protocols/"
             "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=10.0.1.0]",
             {{"neighbor-address", "10.0.1.0"},
              {"state",
               {{"peer-as", 65000},
                {"session-state", "ESTABLISHED"},
                {"last-established", "1000000000000"}}},
              {"afi-safis",
               {{"afi-safi", json::array({{{"afi-safi-name", "IPV4_UNICAST"},
                                           {"state", {{"prefixes", {{"received", 4}}}}}}})}}}}));
  TimePoint now{std::chrono::milliseconds(1'000'000 + 5'000)};

  auto facts = snapshot_facts({notification}, now);

  ASSERT_TRUE(facts) << facts.error();
  ASSERT_TRUE(facts->identity);
  EXPECT_EQ(*facts->identity, (json{{"hostname", "leaf1"},
                                    {"os", "Debian GNU/Linux 12 (bookworm)"},
                                    {"kernel", "6.1.0-18-amd64"},
                                    {"frr_version", "8.4.4"}}));
  ASSERT_TRUE(facts->interfaces);
  EXPECT_EQ((*facts->interfaces)["eth1"], (json{{"oper", "down"},
                                                {"admin", "up"},
                                                {"mtu", 9000},
                                                {"counters",
                                                 {{"rx_packets", 10},
                                                  {"tx_packets", 12},
                                                  {"rx_bytes", 1000},
                                                  {"tx_bytes", 1200},
                                                  {"rx_errors", 0},
                                                  {"tx_errors", 0},
                                                  {"rx_dropped", 1},
                                                  {"tx_dropped", 2}}}}));
  ASSERT_TRUE(facts->bgp);
  EXPECT_EQ((*facts->bgp)["peers"]["10.0.1.0"],
            (json{{"state", "Established"},
                  {"remote_as", 65000},
                  {"prefixes_received", 4},
                  {"address_families", {{"ipv4_unicast", {{"prefixes_received", 4}}}}},
                  {"uptime_ms", 5000}}));
}

TEST(GnmiSnapshotFacts, CategoriesNotAskedForStayAbsent) {
  // Given only interface updates, then identity and bgp are absent (not empty and healthy).
  GnmiNotification notification;
  notification.updates.push_back(update("/interfaces/interface[name=lo]/state/mtu", 65536));
  auto facts = snapshot_facts({notification}, TimePoint{});
  ASSERT_TRUE(facts);
  EXPECT_FALSE(facts->identity);
  EXPECT_FALSE(facts->bgp);
  ASSERT_TRUE(facts->interfaces);
  EXPECT_EQ((*facts->interfaces)["lo"]["mtu"], 65536);
}

TEST(GnmiSnapshotFacts, ColonsInNamesAndAddressesAreKeptOnlyIdentityrefsLoseTheirModule) {
  // Given values that contain ':' without being module-qualified (an IPv6 neighbor, a
  // channelized interface name, a hostname) next to enum and identityref leaves that a target
  // module-qualifies (RFC 7951 identityrefs), then names and addresses are kept whole and only
  // the identityref/enum leaves lose their "module:" prefix.
  GnmiNotification notification;
  notification.updates.push_back(update("/system/state", {{"hostname", "rack1:leaf1"}}));
  notification.updates.push_back(update("/interfaces/interface[name=et-0/0/0:1]/state",
                                        {{"name", "et-0/0/0:1"},
                                         {"admin-status", "UP"},
                                         {"oper-status", "openconfig-interfaces:DOWN"}}));
  notification.updates.push_back(update(
      "/network-instances/network-instance[name=default]/protocols/"
      "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=2001:db8::2]",
      {{"neighbor-address", "2001:db8::2"},
       {"state", {{"peer-as", 65002}, {"session-state", "openconfig-bgp:ESTABLISHED"}}},
       {"afi-safis",
        {{"afi-safi", json::array({{{"afi-safi-name", "openconfig-bgp-types:IPV6_UNICAST"},
                                    {"state", {{"prefixes", {{"received", 3}}}}}}})}}}}));

  auto facts = snapshot_facts({notification}, TimePoint{});

  ASSERT_TRUE(facts) << facts.error();
  EXPECT_EQ((*facts->identity)["hostname"], "rack1:leaf1");
  ASSERT_TRUE(facts->interfaces->contains("et-0/0/0:1")) << facts->interfaces->dump();
  EXPECT_EQ((*facts->interfaces)["et-0/0/0:1"]["oper"], "down");
  ASSERT_TRUE((*facts->bgp)["peers"].contains("2001:db8::2")) << facts->bgp->dump();
  EXPECT_EQ((*facts->bgp)["peers"]["2001:db8::2"]["state"], "Established");
  EXPECT_EQ((*facts->bgp)["peers"]["2001:db8::2"]["prefixes_received"], 3);
}

TEST(GnmiSnapshotFacts, AddressesNicsAddressFamiliesAndLldpInTheSshCollectorsShapes) {
  // Given subinterface addresses (IPv4, IPv6, an IPv6 link-local), an interface whose only
  // subinterface has none, PORT components with a driver, an OPERATING_SYSTEM component, BGP
  // AFI-SAFIs with received and sent counts and an LLDP neighbor, then the facts have the
  // shapes the SSH normalizers write: sorted "ip/len" without link-local, [] for no address,
  // identity.nics like ethtool -i, address_families keyed like FRR's, lldp.neighbors.
  GnmiNotification notification;
  json address_v4 = {{"ip", "10.0.1.1"}, {"state", {{"ip", "10.0.1.1"}, {"prefix-length", 31}}}};
  json address_v6 = {{"ip", "2001:db8::1"},
                     {"state", {{"ip", "2001:db8::1"}, {"prefix-length", 64}}}};
  json link_local = {{"ip", "fe80::1"}, {"state", {{"ip", "fe80::1"}, {"prefix-length", 64}}}};
  notification.updates.push_back(update(
      "/interfaces/interface[name=eth1]/subinterfaces",
      {{"subinterface",
        json::array({{{"index", 0},
                      {"openconfig-if-ip:ipv6",
                       {{"addresses", {{"address", json::array({address_v6, link_local})}}}}},
                      {"openconfig-if-ip:ipv4",
                       {{"addresses", {{"address", json::array({address_v4})}}}}}}})}}));
  notification.updates.push_back(
      update("/interfaces/interface[name=eth2]/subinterfaces",
             {{"subinterface", json::array({{{"index", 0}, {"state", {{"index", 0}}}}})}}));
  notification.updates.push_back(
      update("/components/component[name=eth1]", {{"name", "eth1"},
                                                  {"state",
                                                   {{"type", "openconfig-platform-types:PORT"},
                                                    {"description", "mlx5_core"},
                                                    {"software-version", "24.04"},
                                                    {"firmware-version", "28.39.1002"},
                                                    {"location", "0000:3b:00.0"}}}}));
  notification.updates.push_back(update("/components/component[name=EOS]",
                                        {{"name", "EOS"},
                                         {"state",
                                          {{"type", "openconfig-platform-types:OPERATING_SYSTEM"},
                                           {"software-version", "4.31.2F"}}}}));
  notification.updates.push_back(update(
      "/network-instances/network-instance[name=default]/protocols/"
      "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=10.0.1.0]",
      {{"neighbor-address", "10.0.1.0"},
       {"afi-safis",
        {{"afi-safi", json::array({{{"afi-safi-name", "openconfig-bgp-types:IPV4_UNICAST"},
                                    {"state", {{"prefixes", {{"received", 4}, {"sent", 6}}}}}},
                                   {{"afi-safi-name", "L2VPN_EVPN"},
                                    {"state", {{"prefixes", {{"received", 2}}}}}}})}}}}));
  notification.updates.push_back(
      update("/lldp/interfaces/interface[name=eth1]",
             {{"name", "eth1"},
              {"neighbors",
               {{"neighbor", json::array({{{"id", "1"},
                                           {"state",
                                            {{"system-name", "spine1"},
                                             {"port-id", "Ethernet1/1"},
                                             {"chassis-id", "00:11:22:33:44:55"}}}}})}}}}));

  auto facts = snapshot_facts({notification}, TimePoint{});

  ASSERT_TRUE(facts) << facts.error();
  EXPECT_EQ((*facts->interfaces)["eth1"]["addresses"], (json{"10.0.1.1/31", "2001:db8::1/64"}));
  EXPECT_EQ((*facts->interfaces)["eth2"]["addresses"], json::array());
  ASSERT_TRUE(facts->identity);
  EXPECT_EQ((*facts->identity)["nics"]["eth1"], (json{{"driver", "mlx5_core"},
                                                      {"driver_version", "24.04"},
                                                      {"firmware", "28.39.1002"},
                                                      {"bus", "0000:3b:00.0"}}));
  EXPECT_EQ((*facts->identity)["os_version"], "4.31.2F");
  const json& peer = (*facts->bgp)["peers"]["10.0.1.0"];
  EXPECT_EQ(peer["prefixes_received"], 4) << "EVPN routes are not summed, as bgp-summary";
  EXPECT_EQ(peer["address_families"],
            (json{{"ipv4_unicast", {{"prefixes_received", 4}, {"prefixes_sent", 6}}},
                  {"l2_vpn_evpn", {{"prefixes_received", 2}}}}));
  ASSERT_TRUE(facts->lldp);
  EXPECT_EQ((*facts->lldp)["neighbors"]["eth1"],
            (json::array({{{"system_name", "spine1"},
                           {"port_id", "Ethernet1/1"},
                           {"chassis_id", "00:11:22:33:44:55"}}})));
}

TEST(GnmiSnapshotFacts, AftEntriesBecomeRoutesInTheIpRouteShape) {
  // Given a Get of the default instance's AFT as JSON_IETF (ids as strings, module-qualified
  // names and origin-protocol identities), a BGP route over two next hops, a connected route
  // through an interface and a route of another instance, then routes.ipv4 holds
  // {prefix, protocol, nexthops} as the ip-route-v4 normalizer writes them (iproute2's
  // protocol words, gateways, "dev:<interface>", sorted), a vrf for the other instance, and no
  // metric; a next-hop-group that names a missing next hop is an error, not an empty set.
  json afts = {
      {"openconfig-network-instance:ipv4-unicast",
       {{"ipv4-entry",
         {{{"prefix", "10.0.2.0/24"},
           {"state",
            {{"prefix", "10.0.2.0/24"},
             {"origin-protocol", "openconfig-policy-types:BGP"},
             {"next-hop-group", "7"}}}},
          {{"prefix", "10.0.1.0/31"},
           {"state",
            {{"prefix", "10.0.1.0/31"},
             {"origin-protocol", "openconfig-policy-types:DIRECTLY_CONNECTED"},
             {"next-hop-group", "8"}}}}}}}},
      {"next-hop-groups",
       {{"next-hop-group",
         {{{"id", "7"},
           {"next-hops",
            {{"next-hop", {{{"index", "2"}, {"state", {{"weight", "1"}}}}, {{"index", "1"}}}}}}},
          {{"id", "8"}, {"next-hops", {{"next-hop", {{{"index", "3"}}}}}}}}}}},
      {"next-hops",
       {{"next-hop",
         {{{"index", "1"}, {"state", {{"index", "1"}, {"ip-address", "10.0.1.2"}}}},
          {{"index", "2"}, {"state", {{"index", "2"}, {"ip-address", "10.0.1.0"}}}},
          {{"index", "3"},
           {"state", {{"index", "3"}}},
           {"interface-ref", {{"state", {{"interface", "to-spine1"}}}}}}}}}}};
  GnmiNotification notification;
  notification.updates.push_back(
      update("/network-instances/network-instance[name=default]/afts", afts));
  notification.updates.push_back(update(
      "/network-instances/network-instance[name=blue]/afts",
      {{"ipv4-unicast",
        {{"ipv4-entry",
          {{{"prefix", "0.0.0.0/0"},
            {"state", {{"origin-protocol", "STATIC"}, {"next-hop-group", 1}}}}}}}},
       {"next-hop-groups",
        {{"next-hop-group", {{{"id", 1}, {"next-hops", {{"next-hop", {{{"index", 1}}}}}}}}}}},
       {"next-hops", {{"next-hop", {{{"index", 1}, {"state", {{"ip-address", "192.0.2.1"}}}}}}}}}));
  auto facts = snapshot_facts({notification}, now_utc());
  ASSERT_TRUE(facts.ok()) << facts.error();
  ASSERT_TRUE(facts->routes.has_value());
  EXPECT_EQ(*facts->routes, json::parse(R"({"ipv4": [
              {"prefix": "10.0.2.0/24", "protocol": "bgp", "nexthops": ["10.0.1.0", "10.0.1.2"]},
              {"prefix": "10.0.1.0/31", "protocol": "kernel", "nexthops": ["dev:to-spine1"]},
              {"prefix": "0.0.0.0/0", "vrf": "blue", "protocol": "static", "nexthops": ["192.0.2.1"]}]})"));
  EXPECT_FALSE(facts->bgp.has_value());

  afts["next-hops"]["next-hop"].erase(0);
  GnmiNotification broken;
  broken.updates.push_back(update("/network-instances/network-instance[name=default]/afts", afts));
  auto refused = snapshot_facts({broken}, now_utc());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("next hop 1 is not in /afts/next-hops"), std::string::npos)
      << refused.error();
}

TEST(GnmiSnapshotFacts, Ipv6AftEntriesFillRoutesIpv6AndAnUnansweredFamilyStaysAbsent) {
  // Given an AFT with ipv6-unicast entries next to ipv4 ones (next hops shared), then
  // routes.ipv6 holds them in the ip-route-v6 shape; an AFT that answers ipv6-unicast with no
  // entry has routes.ipv6 = [] (an empty table is an answer), and one without ipv6-unicast has
  // no routes.ipv6 at all (no evidence, never an empty table).
  json afts = {
      {"ipv4-unicast",
       {{"ipv4-entry",
         {{{"prefix", "10.0.2.0/24"},
           {"state", {{"origin-protocol", "BGP"}, {"next-hop-group", "1"}}}}}}}},
      {"ipv6-unicast",
       {{"ipv6-entry",
         {{{"prefix", "2001:db8:2::/64"},
           {"state",
            {{"origin-protocol", "openconfig-policy-types:BGP"}, {"next-hop-group", "2"}}}},
          {{"prefix", "2001:db8::/64"},
           {"state",
            {{"origin-protocol", "openconfig-policy-types:DIRECTLY_CONNECTED"},
             {"next-hop-group", "3"}}}}}}}},
      {"next-hop-groups",
       {{"next-hop-group",
         {{{"id", "1"}, {"next-hops", {{"next-hop", {{{"index", "1"}}}}}}},
          {{"id", "2"}, {"next-hops", {{"next-hop", {{{"index", "3"}}, {{"index", "2"}}}}}}},
          {{"id", "3"}, {"next-hops", {{"next-hop", {{{"index", "4"}}}}}}}}}}},
      {"next-hops",
       {{"next-hop",
         {{{"index", "1"}, {"state", {{"ip-address", "10.0.1.0"}}}},
          {{"index", "2"}, {"state", {{"ip-address", "fe80::1"}}}},
          {{"index", "3"}, {"state", {{"ip-address", "2001:db8::2"}}}},
          {{"index", "4"}, {"interface-ref", {{"state", {{"interface", "to-spine1"}}}}}}}}}}};
  auto routes_of = [](const json& tree) {
    GnmiNotification notification;
    notification.updates.push_back(
        update("/network-instances/network-instance[name=default]/afts", tree));
    auto facts = snapshot_facts({notification}, now_utc());
    EXPECT_TRUE(facts.ok()) << facts.error();
    return facts.ok() && facts->routes ? *facts->routes : json();
  };

  json both = routes_of(afts);
  EXPECT_EQ(both["ipv6"], json::parse(R"([
              {"prefix": "2001:db8:2::/64", "protocol": "bgp", "nexthops": ["2001:db8::2", "fe80::1"]},
              {"prefix": "2001:db8::/64", "protocol": "kernel", "nexthops": ["dev:to-spine1"]}])"));
  EXPECT_EQ(both["ipv4"].size(), 1u);

  json empty_ipv6 = afts;
  empty_ipv6["ipv6-unicast"]["ipv6-entry"] = json::array();
  EXPECT_EQ(routes_of(empty_ipv6)["ipv6"], json::array());

  json ipv4_only = afts;
  ipv4_only.erase("ipv6-unicast");
  json routes = routes_of(ipv4_only);
  EXPECT_FALSE(routes.contains("ipv6")) << routes.dump();
  EXPECT_EQ(routes["ipv4"].size(), 1u);
}

TEST(GnmiSnapshotFacts, AListForAKeyedPathPutsEachEntryUnderItsOwnKey) {
  // Given a wildcard path answered with the whole list wrapped in its qualified name (SONiC),
  // then every entry lands under its own key, never under an entry named "*"; an entry without
  // its key leaf is an error naming the path, not a guessed place.
  GnmiNotification notification;
  notification.updates.push_back(
      update("/openconfig-interfaces:interfaces/interface[name=*]",
             {{"openconfig-interfaces:interface",
               json::array({{{"name", "Ethernet0"}, {"state", {{"mtu", 9100}}}},
                            {{"name", "Ethernet4"}, {"state", {{"mtu", 1500}}}}})}}));
  auto facts = snapshot_facts({notification}, TimePoint{});
  ASSERT_TRUE(facts) << facts.error();
  ASSERT_TRUE(facts->interfaces);
  EXPECT_EQ(*facts->interfaces,
            json({{"Ethernet0", {{"mtu", 9100}}}, {"Ethernet4", {{"mtu", 1500}}}}));

  GnmiNotification keyless;
  keyless.updates.push_back(
      update("/openconfig-interfaces:interfaces/interface[name=*]",
             {{"openconfig-interfaces:interface", json::array({{{"state", {{"mtu", 9100}}}}})}}));
  auto refused = snapshot_facts({keyless}, TimePoint{});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("a list entry has no key leaf 'name'"), std::string::npos)
      << refused.error();
}

TEST(GnmiSnapshotFacts, WrongTypesAreErrorsNotDefaults) {
  // Given a counter that is not a number, then the mapping fails with the path, so the
  // collector records no-evidence instead of a zero.
  GnmiNotification notification;
  notification.updates.push_back(
      update("/interfaces/interface[name=e1]/state", {{"counters", {{"in-pkts", "lots"}}}}));
  auto facts = snapshot_facts({notification}, TimePoint{});
  ASSERT_FALSE(facts);
  EXPECT_EQ(facts.error(),
            "/interfaces/interface[name=e1]/state/counters/in-pkts: expected an unsigned "
            "integer, got \"lots\"");
}

TEST(GnmiSnapshotFacts, AValueNestedTooDeeplyIsRefusedNamingItsPath) {
  // Given a target answering /interfaces with 300,000 levels of nesting, then both the facts
  // and the configuration refuse the reply naming the path and the depth, before the value is
  // stripped of module prefixes or dumped (each recursive: a stack overflow).
  const std::string deep = std::string(300'000, '[') + std::string(300'000, ']');
  GnmiNotification notification;
  notification.updates.push_back({*parse_path("/interfaces"), deep});
  auto facts = snapshot_facts({notification}, TimePoint{});
  ASSERT_FALSE(facts);
  EXPECT_EQ(facts.error(), "value at /interfaces is nested deeper than 64 levels");
  auto config = config_facts({notification});
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error(), "value at /interfaces is nested deeper than 64 levels");
}

TEST(GnmiDataTree, WildcardsExpandAndMissesNameTheMissingElement) {
  // Given a tree with two interfaces, then a wildcard matches both with concrete keys and a
  // path to a missing leaf says which element is missing below which node.
  json tree = {{"interfaces",
                {{"interface", json::array({{{"name", "a"}, {"state", {{"mtu", 1}}}},
                                            {{"name", "b"}, {"state", {{"mtu", 2}}}}})}}}};
  auto matches = find_in_tree(tree, *parse_path("/interfaces/interface[name=*]/state/mtu"));
  ASSERT_TRUE(matches);
  ASSERT_EQ(matches->size(), 2u);
  EXPECT_EQ((*matches)[1].path.to_string(), "/interfaces/interface[name=b]/state/mtu");
  EXPECT_EQ(*(*matches)[1].value, 2);

  auto missing = find_in_tree(tree, *parse_path("/interfaces/interface[name=a]/state/speed"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "no 'speed' under /interfaces/interface[name=a]/state");
  auto no_entry = find_in_tree(tree, *parse_path("/interfaces/interface[name=zz]"));
  ASSERT_FALSE(no_entry);
  EXPECT_EQ(no_entry.error(), "no entry interface[name=zz] under /interfaces");
}

}  // namespace
}  // namespace fabgate::gnmi
