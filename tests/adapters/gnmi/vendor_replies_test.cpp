// Given replies shaped as each NOS documents its gNMI/OpenConfig answers (SONiC, Arista EOS,
// Nokia SR Linux, Juniper Junos, Cisco NX-OS) for the same switch state, then
// snapshot_facts() gives the same snapshot facts for every one of them, so the compare rules
// apply unchanged whichever platform profile collected the device. The shapes follow the
// vendors' public documentation; none was recorded from a real device (docs/gnmi.md).

#include <gtest/gtest.h>

#include <algorithm>

#include "adapters/gnmi/snapshot_facts.h"

namespace fabgate::gnmi {
namespace {

using nlohmann::json;

GnmiUpdate update(const std::string& path, const json& value) {
  auto parsed = parse_path(path);
  EXPECT_TRUE(parsed) << path;
  return {parsed ? parsed.value() : GnmiPath{}, value.dump()};
}

std::vector<GnmiNotification> one(std::vector<GnmiUpdate> updates) {
  GnmiNotification notification;
  notification.timestamp_ns = 1'700'000'000'000'000'000;
  notification.updates = std::move(updates);
  return {notification};
}

// What every vendor's reply below must normalize to, for an interface named `port`.
json expected_interfaces(const std::string& port) {
  return {
      {port,
       {{"oper", "up"},
        {"admin", "up"},
        {"mtu", 9100},
        {"counters", {{"rx_packets", 10}, {"tx_packets", 20}, {"rx_errors", 0}, {"tx_errors", 0}}},
        {"addresses", {"10.0.0.1/31"}}}}};
}

const json kExpectedPeer = {{"state", "Established"},
                            {"remote_as", 65000},
                            {"prefixes_received", 5},
                            {"address_families", {{"ipv4_unicast", {{"prefixes_received", 5}}}}}};

void expect_same_facts(const std::vector<GnmiNotification>& reply, const std::string& port) {
  auto facts = snapshot_facts(reply, TimePoint{});
  ASSERT_TRUE(facts) << facts.error();
  ASSERT_TRUE(facts->identity);
  EXPECT_EQ((*facts->identity)["hostname"], "sw1");
  ASSERT_TRUE(facts->interfaces);
  EXPECT_EQ(*facts->interfaces, expected_interfaces(port));
  ASSERT_TRUE(facts->bgp);
  json peer = (*facts->bgp)["peers"]["10.0.0.0"];
  peer.erase("uptime_ms");
  EXPECT_EQ(peer, kExpectedPeer);
}

TEST(VendorReplies, SonicModuleQualifiedPathsAndNamedWrappers) {
  // SONiC (JSON_IETF): module-qualified first path elements, every value wrapped in an object
  // named after the path's last element, uint64 counters as strings.
  const std::string port = "Ethernet0";
  const std::string iface = "/openconfig-interfaces:interfaces/interface[name=" + port + "]";
  expect_same_facts(
      one({update("/openconfig-system:system/state",
                  {{"openconfig-system:state", {{"hostname", "sw1"}}}}),
           update(iface + "/state", {{"openconfig-interfaces:state",
                                      {{"name", port},
                                       {"mtu", 9100},
                                       {"admin-status", "UP"},
                                       {"oper-status", "UP"},
                                       {"counters",
                                        {{"in-pkts", "10"},
                                         {"out-pkts", "20"},
                                         {"in-errors", "0"},
                                         {"out-errors", "0"}}}}}}),
           update(iface + "/subinterfaces",
                  {{"openconfig-interfaces:subinterfaces",
                    {{"subinterface",
                      json::array(
                          {{{"index", 0},
                            {"openconfig-if-ip:ipv4",
                             {{"addresses",
                               {{"address", json::array({{{"ip", "10.0.0.1"},
                                                          {"state",
                                                           {{"ip", "10.0.0.1"},
                                                            {"prefix-length", 31}}}}})}}}}}}})}}}}),
           update(
               "/openconfig-network-instance:network-instances/network-instance[name=default]/"
               "protocols/protocol[identifier=BGP][name=bgp]/bgp/neighbors/"
               "neighbor[neighbor-address=10.0.0.0]",
               {{"openconfig-network-instance:neighbor",
                 json::array(
                     {{{"neighbor-address", "10.0.0.0"},
                       {"state", {{"peer-as", 65000}, {"session-state", "ESTABLISHED"}}},
                       {"afi-safis",
                        {{"afi-safi",
                          json::array({{{"afi-safi-name", "openconfig-bgp-types:IPV4_UNICAST"},
                                        {"state", {{"prefixes", {{"received", 5}}}}}}})}}}}})}})}),
      port);
}

TEST(VendorReplies, EosIdentityrefsQualifiedAndProtocolNamedBgp) {
  // Arista EOS (JSON_IETF): plain paths, BGP protocol instance named "BGP" with a qualified
  // identifier, identityrefs and enums module-qualified inside values.
  const std::string port = "Ethernet1";
  const std::string iface = "/interfaces/interface[name=" + port + "]";
  expect_same_facts(
      one({update("/system/state", {{"openconfig-system:hostname", "sw1"}}),
           update(iface + "/state", {{"openconfig-interfaces:name", port},
                                     {"openconfig-interfaces:mtu", 9100},
                                     {"openconfig-interfaces:admin-status", "UP"},
                                     {"openconfig-interfaces:oper-status", "UP"},
                                     {"openconfig-interfaces:counters",
                                      {{"in-pkts", "10"},
                                       {"out-pkts", "20"},
                                       {"in-errors", "0"},
                                       {"out-errors", "0"}}}}),
           update(iface + "/subinterfaces/subinterface[index=0]/ipv4/addresses/"
                          "address[ip=10.0.0.1]/state",
                  {{"openconfig-if-ip:ip", "10.0.0.1"}, {"openconfig-if-ip:prefix-length", 31}}),
           update("/network-instances/network-instance[name=default]/protocols/"
                  "protocol[identifier=openconfig-policy-types:BGP][name=BGP]/bgp/neighbors/"
                  "neighbor[neighbor-address=10.0.0.0]",
                  {{"openconfig-network-instance:neighbor-address", "10.0.0.0"},
                   {"openconfig-network-instance:state",
                    {{"peer-as", 65000}, {"session-state", "openconfig-bgp:ESTABLISHED"}}},
                   {"openconfig-network-instance:afi-safis",
                    {{"afi-safi",
                      json::array({{{"afi-safi-name", "openconfig-bgp-types:IPV4_UNICAST"},
                                    {"state", {{"prefixes", {{"received", "5"}}}}}}})}}}})}),
      port);
}

TEST(VendorReplies, SrLinuxOriginOpenconfigAndSlashInInterfaceNames) {
  // Nokia SR Linux (JSON_IETF): paths under origin "openconfig", interface names with '/'.
  const std::string port = "ethernet-1/1";
  const std::string iface = "openconfig:/interfaces/interface[name=" + port + "]";
  expect_same_facts(
      one({update("openconfig:/system/state", {{"hostname", "sw1"}}),
           update(iface + "/state", {{"name", port},
                                     {"mtu", 9100},
                                     {"admin-status", "UP"},
                                     {"oper-status", "UP"},
                                     {"counters",
                                      {{"in-pkts", "10"},
                                       {"out-pkts", "20"},
                                       {"in-errors", "0"},
                                       {"out-errors", "0"}}}}),
           update(
               iface + "/subinterfaces/subinterface[index=0]",
               {{"index", 0},
                {"openconfig-if-ip:ipv4",
                 {{"addresses",
                   {{"address",
                     json::array({{{"ip", "10.0.0.1"},
                                   {"state", {{"ip", "10.0.0.1"}, {"prefix-length", 31}}}}})}}}}}}),
           update("openconfig:/network-instances/network-instance[name=default]/protocols/"
                  "protocol[identifier=BGP][name=bgp]/bgp/neighbors/"
                  "neighbor[neighbor-address=10.0.0.0]",
                  {{"neighbor-address", "10.0.0.0"},
                   {"state", {{"peer-as", 65000}, {"session-state", "ESTABLISHED"}}},
                   {"afi-safis",
                    {{"afi-safi",
                      json::array({{{"afi-safi-name", "IPV4_UNICAST"},
                                    {"state", {{"prefixes", {{"received", "5"}}}}}}})}}}})}),
      port);
}

TEST(VendorReplies, JunosJsonWithOneUpdatePerLeaf) {
  // Juniper Junos (JSON): numbers as numbers and one update per leaf.
  const std::string port = "et-0/0/0:1";
  const std::string iface = "/interfaces/interface[name=" + port + "]";
  const std::string peer =
      "/network-instances/network-instance[name=default]/protocols/"
      "protocol[identifier=BGP][name=bgp]/bgp/neighbors/"
      "neighbor[neighbor-address=10.0.0.0]";
  expect_same_facts(
      one({update("/system/state/hostname", "sw1"), update(iface + "/state/mtu", 9100),
           update(iface + "/state/admin-status", "UP"), update(iface + "/state/oper-status", "UP"),
           update(iface + "/state/counters/in-pkts", 10),
           update(iface + "/state/counters/out-pkts", 20),
           update(iface + "/state/counters/in-errors", 0),
           update(iface + "/state/counters/out-errors", 0),
           update(iface + "/subinterfaces/subinterface[index=0]/ipv4/addresses/"
                          "address[ip=10.0.0.1]/state/prefix-length",
                  31),
           update(iface + "/subinterfaces/subinterface[index=0]/ipv4/addresses/"
                          "address[ip=10.0.0.1]/state/ip",
                  "10.0.0.1"),
           update(peer + "/state/peer-as", 65000),
           update(peer + "/state/session-state", "ESTABLISHED"),
           update(peer + "/afi-safis/afi-safi[afi-safi-name=IPV4_UNICAST]/state/prefixes/received",
                  5)}),
      port);
}

TEST(VendorReplies, NxosOriginOpenconfigJsonContainers) {
  // Cisco NX-OS (JSON, origin openconfig): whole containers with JSON numbers.
  const std::string port = "eth1/1";
  const std::string iface = "openconfig:/interfaces/interface[name=" + port + "]";
  expect_same_facts(
      one({update("openconfig:/system", {{"state", {{"hostname", "sw1"}}}}),
           update(iface,
                  {{"name", port},
                   {"state",
                    {{"mtu", 9100},
                     {"admin-status", "UP"},
                     {"oper-status", "UP"},
                     {"counters",
                      {{"in-pkts", 10}, {"out-pkts", 20}, {"in-errors", 0}, {"out-errors", 0}}}}},
                   {"subinterfaces",
                    {{"subinterface",
                      json::array(
                          {{{"index", 0},
                            {"ipv4",
                             {{"addresses",
                               {{"address", json::array({{{"ip", "10.0.0.1"},
                                                          {"config",
                                                           {{"ip", "10.0.0.1"},
                                                            {"prefix-length", 31}}}}})}}}}}}})}}}}),
           update("openconfig:/network-instances/network-instance[name=default]/protocols/"
                  "protocol[identifier=BGP][name=bgp]/bgp",
                  {{"neighbors",
                    {{"neighbor",
                      json::array(
                          {{{"neighbor-address", "10.0.0.0"},
                            {"state", {{"peer-as", 65000}, {"session-state", "ESTABLISHED"}}},
                            {"afi-safis",
                             {{"afi-safi",
                               json::array(
                                   {{{"afi-safi-name", "IPV4_UNICAST"},
                                     {"state", {{"prefixes", {{"received", 5}}}}}}})}}}}})}}}})}),
      port);
}

// Routes and LLDP. Every vendor's AFT below holds the same two IPv4 and two IPv6 routes (a
// connected /31 through the port, a BGP prefix over two next hops, a BGP IPv6 prefix over two
// next hops, a static IPv6 default route), and its LLDP tree one neighbour on the port and
// none on a second interface; each must normalize to the shapes of the SSH collectors
// (ip-route-v4/ip-route-v6 without metric, lldp.neighbors).

json expected_routes(const std::string& port) {
  return json::parse(R"({
    "ipv4": [
      {"prefix": "10.0.0.0/31", "protocol": "kernel", "nexthops": ["dev:)" +
                     port + R"("]},
      {"prefix": "10.0.2.0/24", "protocol": "bgp", "nexthops": ["10.0.0.0", "10.0.0.2"]}],
    "ipv6": [
      {"prefix": "2001:db8:2::/64", "protocol": "bgp", "nexthops": ["2001:db8::", "2001:db8::2"]},
      {"prefix": "::/0", "protocol": "static", "nexthops": ["2001:db8::"]}]})");
}

json expected_lldp(const std::string& port, const std::string& quiet_port) {
  return {{"neighbors",
           {{port, json::array({{{"system_name", "spine1"},
                                 {"port_id", "Ethernet1"},
                                 {"chassis_id", "00:1c:73:aa:bb:01"},
                                 {"port_description", "to leaf1"}}})},
            {quiet_port, json::array()}}}};
}

// Routes in reply order are sorted by prefix, so that each family compares as a table.
json sorted_routes(json routes) {
  for (auto& [family, table] : routes.items()) {
    std::sort(table.begin(), table.end(),
              [](const json& a, const json& b) { return a["prefix"] < b["prefix"]; });
  }
  return routes;
}

void expect_routes_and_lldp(const std::vector<GnmiNotification>& reply, const std::string& port,
                            const std::string& quiet_port) {
  auto facts = snapshot_facts(reply, TimePoint{});
  ASSERT_TRUE(facts) << facts.error();
  ASSERT_TRUE(facts->routes);
  EXPECT_EQ(sorted_routes(*facts->routes), expected_routes(port)) << facts->routes->dump(2);
  ASSERT_TRUE(facts->lldp);
  EXPECT_EQ(*facts->lldp, expected_lldp(port, quiet_port)) << facts->lldp->dump(2);
}

// The LLDP state leaves every vendor fills from the neighbour's TLVs (openconfig-lldp.yang,
// neighbors/neighbor/state); the enum leaves and counters the normalizer does not keep are
// there so that they are shown not to disturb it.
json lldp_neighbor_state(const json& extra) {
  json state = {{"system-name", "spine1"},
                {"port-id", "Ethernet1"},
                {"port-id-type", "INTERFACE_NAME"},
                {"chassis-id", "00:1c:73:aa:bb:01"},
                {"chassis-id-type", "MAC_ADDRESS"},
                {"port-description", "to leaf1"},
                {"system-description", "spine switch"}};
  if (extra.is_object()) state.update(extra);
  return state;
}

TEST(VendorReplies, SonicAftAndLldpWrappedInQualifiedNames) {
  // SONiC (JSON_IETF), following SONiC's Management Framework design (OpenConfig served by
  // translib, RFC 7951 JSON: the reply to a path is the requested node wrapped in its
  // module-qualified name, a list as a JSON array) and RFC 7951 itself (uint64 ids as strings,
  // identityrefs such as origin-protocol as "openconfig-policy-types:BGP"); the AFT leaves
  // follow openconfig-aft (ipv4-unicast/ipv4-entry, ipv6-unicast/ipv6-entry,
  // next-hop-groups/next-hop-group[id]/next-hops/next-hop[index], next-hops/next-hop[index]/
  // state/ip-address, interface-ref/state/interface) and openconfig-lldp. Assumed rather than
  // seen in a SONiC example: the LLDP Get of interface[name=*] answered as one update holding
  // the whole interface list, as translib answers a list node.
  const std::string port = "Ethernet0";
  json afts = {
      {"ipv4-unicast",
       {{"ipv4-entry",
         {{{"prefix", "10.0.0.0/31"},
           {"state",
            {{"prefix", "10.0.0.0/31"},
             {"origin-protocol", "openconfig-policy-types:DIRECTLY_CONNECTED"},
             {"next-hop-group", "3"}}}},
          {{"prefix", "10.0.2.0/24"},
           {"state",
            {{"prefix", "10.0.2.0/24"},
             {"origin-protocol", "openconfig-policy-types:BGP"},
             {"next-hop-group", "1"}}}}}}}},
      {"ipv6-unicast",
       {{"ipv6-entry",
         {{{"prefix", "2001:db8:2::/64"},
           {"state",
            {{"prefix", "2001:db8:2::/64"},
             {"origin-protocol", "openconfig-policy-types:BGP"},
             {"next-hop-group", "2"}}}},
          {{"prefix", "::/0"},
           {"state",
            {{"prefix", "::/0"},
             {"origin-protocol", "openconfig-policy-types:STATIC"},
             {"next-hop-group", "4"}}}}}}}},
      {"next-hop-groups",
       {{"next-hop-group",
         {{{"id", "1"},
           {"state", {{"id", "1"}}},
           {"next-hops",
            {{"next-hop",
              {{{"index", "1"}, {"state", {{"index", "1"}, {"weight", "1"}}}},
               {{"index", "2"}, {"state", {{"index", "2"}, {"weight", "1"}}}}}}}}},
          {{"id", "2"}, {"next-hops", {{"next-hop", {{{"index", "4"}}, {{"index", "5"}}}}}}},
          {{"id", "3"}, {"next-hops", {{"next-hop", {{{"index", "3"}}}}}}},
          {{"id", "4"}, {"next-hops", {{"next-hop", {{{"index", "4"}}}}}}}}}}},
      {"next-hops",
       {{"next-hop",
         {{{"index", "1"}, {"state", {{"index", "1"}, {"ip-address", "10.0.0.0"}}}},
          {{"index", "2"}, {"state", {{"index", "2"}, {"ip-address", "10.0.0.2"}}}},
          {{"index", "3"},
           {"state", {{"index", "3"}}},
           {"interface-ref", {{"state", {{"interface", port}, {"subinterface", "0"}}}}}},
          {{"index", "4"}, {"state", {{"index", "4"}, {"ip-address", "2001:db8::"}}}},
          {{"index", "5"}, {"state", {{"index", "5"}, {"ip-address", "2001:db8::2"}}}}}}}}};
  json lldp_interfaces = json::array(
      {{{"name", port},
        {"config", {{"name", port}, {"enabled", true}}},
        {"state", {{"name", port}, {"enabled", true}}},
        {"neighbors",
         {{"neighbor",
           json::array(
               {{{"id", "1"},
                 {"state", lldp_neighbor_state({{"id", "1"}, {"ttl", 120}, {"age", "35"}})}}})}}}},
       {{"name", "Ethernet4"}, {"state", {{"name", "Ethernet4"}, {"enabled", true}}}}});
  expect_routes_and_lldp(one({update("/openconfig-network-instance:network-instances/"
                                     "network-instance[name=default]/afts",
                                     {{"openconfig-network-instance:afts", afts}}),
                              update("/openconfig-lldp:lldp/interfaces/interface[name=*]",
                                     {{"openconfig-lldp:interface", lldp_interfaces}})}),
                         port, "Ethernet4");
}

TEST(VendorReplies, EosAftAndLldpWithQualifiedMembersAndLargeIds) {
  // Arista EOS (JSON_IETF), following Arista's OpenConfig/gNMI documentation (plain paths, a
  // wildcard Get answered with one update per matched entry at its concrete path, the value's
  // top members module-qualified as RFC 7951 puts them) and openconfig-aft: next-hop-group ids
  // and next-hop indexes are uint64, here beyond 32 bits and as strings; a gateway next hop
  // carries its egress interface next to ip-address (the ip-address is the snapshot's next
  // hop); a connected route's next hop only an interface-ref. Assumed rather than seen in an
  // EOS example: ids beyond 32 bits and the exact split of the reply into updates.
  const std::string port = "Ethernet1";
  const std::string aft = "/network-instances/network-instance[name=default]/afts";
  auto hop = [](const char* index, const json& state, const char* interface) {
    json entry = {{"index", index}, {"state", state}};
    entry["state"]["index"] = index;
    if (interface != nullptr) entry["interface-ref"] = {{"state", {{"interface", interface}}}};
    return entry;
  };
  auto group = [](const char* id, std::vector<const char*> members) {
    json hops = json::array();
    for (const char* index : members) hops.push_back({{"index", index}});
    return json{{"id", id}, {"state", {{"id", id}}}, {"next-hops", {{"next-hop", hops}}}};
  };
  auto entry = [](const char* prefix, const char* protocol, const char* nhg) {
    return json{{"prefix", prefix},
                {"state",
                 {{"prefix", prefix},
                  {"origin-protocol", std::string("openconfig-policy-types:") + protocol},
                  {"next-hop-group", nhg}}}};
  };
  const std::string lldp = "/lldp/interfaces/interface";
  expect_routes_and_lldp(
      one({update(aft,
                  {{"openconfig-network-instance:ipv4-unicast",
                    {{"ipv4-entry",
                      {entry("10.0.0.0/31", "DIRECTLY_CONNECTED", "4294967299"),
                       entry("10.0.2.0/24", "BGP", "4294967297")}}}},
                   {"openconfig-network-instance:ipv6-unicast",
                    {{"ipv6-entry",
                      {entry("2001:db8:2::/64", "BGP", "4294967298"),
                       entry("::/0", "STATIC", "4294967300")}}}},
                   {"openconfig-network-instance:next-hop-groups",
                    {{"next-hop-group",
                      {group("4294967297", {"8589934593", "8589934594"}),
                       group("4294967298", {"8589934596", "8589934597"}),
                       group("4294967299", {"8589934595"}), group("4294967300", {"8589934596"})}}}},
                   {"openconfig-network-instance:next-hops",
                    {{"next-hop",
                      {hop("8589934593", {{"ip-address", "10.0.0.0"}}, "Ethernet1"),
                       hop("8589934594", {{"ip-address", "10.0.0.2"}}, "Ethernet2"),
                       hop("8589934595", json::object(), "Ethernet1"),
                       hop("8589934596", {{"ip-address", "2001:db8::"}}, "Ethernet1"),
                       hop("8589934597", {{"ip-address", "2001:db8::2"}}, "Ethernet2")}}}}}),
           update(lldp + "[name=Ethernet1]",
                  {{"openconfig-lldp:name", port},
                   {"openconfig-lldp:state", {{"name", port}, {"enabled", true}}},
                   {"openconfig-lldp:neighbors",
                    {{"neighbor",
                      json::array(
                          {{{"id", "1"},
                            {"state", lldp_neighbor_state(
                                          {{"id", "1"}, {"last-update", "1700000000"}})}}})}}}}),
           update(lldp + "[name=Management1]",
                  {{"openconfig-lldp:name", "Management1"},
                   {"openconfig-lldp:state", {{"name", "Management1"}, {"enabled", true}}}})}),
      port, "Management1");
}

TEST(VendorReplies, SrLinuxAftAndLldpUnderOriginOpenconfig) {
  // Nokia SR Linux (JSON_IETF), following Nokia's SR Linux gNMI and OpenConfig documentation
  // (OpenConfig paths under origin "openconfig", interface names "ethernet-1/1", one update per
  // requested path) and openconfig-aft / openconfig-lldp for the leaves; uint64 as strings and
  // identityrefs module-qualified (RFC 7951), the ipv6-entry prefix key in the update's path.
  // Assumed rather than seen in an SR Linux example: the AFT split into one update per entry's
  // state and per next-hop container.
  const std::string port = "ethernet-1/1";
  const std::string aft = "openconfig:/network-instances/network-instance[name=default]/afts";
  json groups = {
      {"next-hop-group",
       {{{"id", "10"}, {"next-hops", {{"next-hop", {{{"index", "100"}}, {{"index", "101"}}}}}}},
        {{"id", "11"}, {"next-hops", {{"next-hop", {{{"index", "102"}}}}}}},
        {{"id", "12"}, {"next-hops", {{"next-hop", {{{"index", "103"}}, {{"index", "104"}}}}}}},
        {{"id", "13"}, {"next-hops", {{"next-hop", {{{"index", "103"}}}}}}}}}};
  json hops = {{"next-hop",
                {{{"index", "100"}, {"state", {{"ip-address", "10.0.0.0"}}}},
                 {{"index", "101"}, {"state", {{"ip-address", "10.0.0.2"}}}},
                 {{"index", "102"}, {"interface-ref", {{"state", {{"interface", port}}}}}},
                 {{"index", "103"}, {"state", {{"ip-address", "2001:db8::"}}}},
                 {{"index", "104"}, {"state", {{"ip-address", "2001:db8::2"}}}}}}};
  auto state = [](const char* protocol, const char* nhg) {
    return json{{"origin-protocol", std::string("openconfig-policy-types:") + protocol},
                {"next-hop-group", nhg}};
  };
  const std::string lldp = "openconfig:/lldp/interfaces/interface";
  expect_routes_and_lldp(
      one({update(aft + "/next-hop-groups", groups), update(aft + "/next-hops", hops),
           update(aft + "/ipv4-unicast/ipv4-entry[prefix=10.0.0.0/31]/state",
                  state("DIRECTLY_CONNECTED", "11")),
           update(aft + "/ipv4-unicast/ipv4-entry[prefix=10.0.2.0/24]/state", state("BGP", "10")),
           update(aft + "/ipv6-unicast/ipv6-entry[prefix=2001:db8:2::/64]/state",
                  state("BGP", "12")),
           update(aft + "/ipv6-unicast/ipv6-entry[prefix=::/0]/state", state("STATIC", "13")),
           update(lldp + "[name=ethernet-1/1]/neighbors",
                  {{"neighbor", json::array({{{"id", "00:1C:73:AA:BB:01"},
                                              {"state", lldp_neighbor_state({{"ttl", 120}})}}})}}),
           update(lldp + "[name=ethernet-1/2]/state", {{"name", "ethernet-1/2"}})}),
      port, "ethernet-1/2");
}

TEST(VendorReplies, JunosAftAndLldpOneUpdatePerLeaf) {
  // Juniper Junos (JSON), following Juniper's OpenConfig/gNMI documentation (JSON encoding
  // with numbers as JSON numbers, one update per leaf, interface names such as et-0/0/0:1)
  // and openconfig-aft / openconfig-lldp for the paths; identityrefs without module, as the
  // JSON (not JSON_IETF) encoding lets a target send them. List keys live only in the paths.
  // Assumed rather than seen in a Junos example: the AFT and LLDP trees leaf by leaf.
  const std::string port = "et-0/0/0:1";
  const std::string aft = "/network-instances/network-instance[name=default]/afts";
  const std::string lldp = "/lldp/interfaces/interface[name=" + port + "]/neighbors/neighbor[id=1]";
  std::vector<GnmiUpdate> updates;
  auto route = [&](const std::string& family, const std::string& prefix, const char* protocol,
                   std::uint64_t nhg) {
    std::string entry = aft + "/" + family + "-unicast/" + family + "-entry[prefix=" + prefix + "]";
    updates.push_back(update(entry + "/state/origin-protocol", protocol));
    updates.push_back(update(entry + "/state/next-hop-group", nhg));
  };
  auto member = [&](std::uint64_t group, std::uint64_t index) {
    updates.push_back(update(aft + "/next-hop-groups/next-hop-group[id=" + std::to_string(group) +
                                 "]/next-hops/next-hop[index=" + std::to_string(index) +
                                 "]/state/index",
                             index));
  };
  auto hop = [&](std::uint64_t index, const std::string& leaf, const std::string& value) {
    updates.push_back(
        update(aft + "/next-hops/next-hop[index=" + std::to_string(index) + "]/" + leaf, value));
  };
  route("ipv4", "10.0.0.0/31", "DIRECTLY_CONNECTED", 1048579);
  route("ipv4", "10.0.2.0/24", "BGP", 1048577);
  route("ipv6", "2001:db8:2::/64", "BGP", 1048578);
  route("ipv6", "::/0", "STATIC", 1048580);
  member(1048577, 131070);
  member(1048577, 131071);
  member(1048578, 131073);
  member(1048578, 131074);
  member(1048579, 131072);
  member(1048580, 131073);
  hop(131070, "state/ip-address", "10.0.0.0");
  hop(131071, "state/ip-address", "10.0.0.2");
  hop(131072, "interface-ref/state/interface", port);
  hop(131073, "state/ip-address", "2001:db8::");
  hop(131074, "state/ip-address", "2001:db8::2");
  const json neighbor = lldp_neighbor_state(json::object());
  for (const auto& [leaf, value] : neighbor.items())
    updates.push_back(update(lldp + "/state/" + leaf, value));
  updates.push_back(update(lldp + "/state/ttl", 120));
  updates.push_back(update("/lldp/interfaces/interface[name=et-0/0/1]/state/enabled", true));
  expect_routes_and_lldp(one(std::move(updates)), port, "et-0/0/1");
}

TEST(VendorReplies, NxosAftAndLldpAsWholeContainers) {
  // Cisco NX-OS (JSON, origin openconfig), following Cisco's NX-OS programmability guide for
  // OpenConfig over gNMI (paths under origin "openconfig", whole containers in one update,
  // numbers as JSON numbers, interface names eth1/1) and openconfig-aft / openconfig-lldp.
  // Assumed rather than seen in an NX-OS example: /lldp and the AFT each as one container.
  const std::string port = "eth1/1";
  json afts = {
      {"ipv4-unicast",
       {{"ipv4-entry",
         {{{"prefix", "10.0.2.0/24"},
           {"state",
            {{"prefix", "10.0.2.0/24"}, {"origin-protocol", "BGP"}, {"next-hop-group", 1}}}},
          {{"prefix", "10.0.0.0/31"},
           {"state",
            {{"prefix", "10.0.0.0/31"},
             {"origin-protocol", "DIRECTLY_CONNECTED"},
             {"next-hop-group", 3}}}}}}}},
      {"ipv6-unicast",
       {{"ipv6-entry",
         {{{"prefix", "::/0"},
           {"state", {{"prefix", "::/0"}, {"origin-protocol", "STATIC"}, {"next-hop-group", 4}}}},
          {{"prefix", "2001:db8:2::/64"},
           {"state",
            {{"prefix", "2001:db8:2::/64"},
             {"origin-protocol", "BGP"},
             {"next-hop-group", 2}}}}}}}},
      {"next-hop-groups",
       {{"next-hop-group",
         {{{"id", 1}, {"next-hops", {{"next-hop", {{{"index", 1}}, {{"index", 2}}}}}}},
          {{"id", 2}, {"next-hops", {{"next-hop", {{{"index", 4}}, {{"index", 5}}}}}}},
          {{"id", 3}, {"next-hops", {{"next-hop", {{{"index", 3}}}}}}},
          {{"id", 4}, {"next-hops", {{"next-hop", {{{"index", 4}}}}}}}}}}},
      {"next-hops",
       {{"next-hop",
         {{{"index", 1}, {"state", {{"index", 1}, {"ip-address", "10.0.0.0"}}}},
          {{"index", 2}, {"state", {{"index", 2}, {"ip-address", "10.0.0.2"}}}},
          {{"index", 3}, {"interface-ref", {{"state", {{"interface", port}}}}}},
          {{"index", 4}, {"state", {{"index", 4}, {"ip-address", "2001:db8::"}}}},
          {{"index", 5}, {"state", {{"index", 5}, {"ip-address", "2001:db8::2"}}}}}}}}};
  json lldp = {{"interfaces",
                {{"interface",
                  {{{"name", port},
                    {"neighbors",
                     {{"neighbor",
                       {{{"id", "00:1c:73:aa:bb:01-Ethernet1"},
                         {"state", lldp_neighbor_state({{"ttl", 120}, {"age", 30}})}}}}}}},
                   {{"name", "eth1/2"}, {"state", {{"name", "eth1/2"}, {"enabled", true}}}}}}}}};
  expect_routes_and_lldp(
      one({update("openconfig:/network-instances/network-instance[name=default]/afts", afts),
           update("openconfig:/lldp", lldp)}),
      port, "eth1/2");
}
}  // namespace
}  // namespace fabgate::gnmi
