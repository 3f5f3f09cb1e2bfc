// Given replies shaped as each NOS documents its gNMI/OpenConfig answers (SONiC, Arista EOS,
// Nokia SR Linux, Juniper Junos, Cisco NX-OS) for the same switch state, then
// snapshot_facts() gives the same snapshot facts for every one of them, so the compare rules
// apply unchanged whichever platform profile collected the device. The shapes follow the
// vendors' public documentation; none was recorded from a real device (docs/gnmi.md).

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fabgate::gnmi
