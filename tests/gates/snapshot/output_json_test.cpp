// The JSON normalizers read a device's command output with typed, depth-limited lookups
// (gates/snapshot/output_json.h): a wrongly typed member is the normalizer's failure naming
// the field, and 300,000 levels of nesting are refused before they are parsed, through the same
// normalize() the collector calls, never a type_error or a stack overflow.

#include "gates/snapshot/output_json.h"

#include <gtest/gtest.h>

#include "gates/snapshot/normalizers.h"

namespace fabgate::snapshot {
namespace {

using nlohmann::json;

const std::string kDeep = std::string(300'000, '[') + std::string(300'000, ']');

Expected<Ok, std::string> run(std::string_view normalizer, const std::string& output) {
  const Normalizer* found = find_normalizer(normalizer);
  EXPECT_NE(found, nullptr) << normalizer;
  if (!found) return std::string("no such normalizer");
  json into;
  return normalize(*found, output, into);
}

struct WronglyTyped {
  const char* normalizer;
  const char* output;
  const char* failure;
};

TEST(OutputJson, AWronglyTypedMemberIsTheNormalizersFailureNamingTheField) {
  // Given each JSON normalizer's output with one member of another type than it reads, then
  // the normalizer fails (the source is no-evidence) and says which field held what.
  const WronglyTyped cases[] = {
      {"bgp-summary",
       R"({"ipv4Unicast":{"peers":{"10.0.0.1":{"state":"Established","pfxRcd":"12"}}}})",
       "field 'ipv4Unicast.peers.10.0.0.1.pfxRcd' is a string, not an integer"},
      {"bgp-summary", R"({"ipv4Unicast":{"peers":{"10.0.0.1":"Established"}}})",
       "field 'ipv4Unicast.peers.10.0.0.1' is a string, not an object"},
      {"bfd-peers", R"([{"peer":"10.0.0.2","status":"up","multihop":"no"}])",
       "field '[0].multihop' is a string, not a boolean"},
      {"bfd-counters", R"([{"peer":7,"session-down":0}])",
       "field '[0].peer' is an integer, not a string"},
      {"evpn-vni", R"({"100":{"type":"L2","vxlanIf":["vx100"]}})",
       "field '100.vxlanIf' is an array, not a string"},
      {"evpn-vni-detail", R"([{"vni":100,"type":2}])",
       "field '[0].type' is an integer, not a string"},
      {"evpn-mac", R"({"100":{"macs":{"aa:bb:cc:00:00:01":{"type":"remote","remoteVtep":5}}}})",
       "field '100.macs.aa:bb:cc:00:00:01.remoteVtep' is an integer, not a string"},
      {"bgp-evpn-summary", R"({"peers":{"10.0.0.1":{"state":"Established","remoteAs":"65001"}}})",
       "field 'peers.10.0.0.1.remoteAs' is a string, not an integer"},
      {"vxlan-links", R"([{"ifname":"vx100","linkinfo":"vxlan"}])",
       "field '[0].linkinfo' is a string, not an object"},
      {"ip-link", R"([{"ifname":"eth0","mtu":1500,"flags":"UP"}])",
       "field '[0].flags' is a string, not an array"},
      {"ip-link", R"([{"ifname":"eth0","mtu":1500,"stats64":{"rx":[],"tx":{}}}])",
       "field '[0].stats64.rx' is an array, not an object"},
      {"ip-addr", R"([{"ifname":"eth0","addr_info":[{"local":"10.0.0.1","prefixlen":"24"}]}])",
       "field '[0].addr_info[0].prefixlen' is a string, not an integer"},
      {"ip-route-v4", R"([{"dst":"default","metric":"100","gateway":"10.0.0.254"}])",
       "field '[0].metric' is a string, not an integer"},
      {"ip-route-v6", R"([{"dst":"::/0","nexthops":[{"gateway":false}]}])",
       "field '[0].nexthops[0].gateway' is a boolean, not a string"},
  };
  for (const auto& wrong : cases) {
    SCOPED_TRACE(wrong.normalizer);
    Expected<Ok, std::string> result = Ok{};
    ASSERT_NO_THROW(result = run(wrong.normalizer, wrong.output));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), wrong.failure);
  }
}

TEST(OutputJson, WellTypedMembersStillReadAsBefore) {
  // Given well-typed output with optional members left out, then the normalizers read it and
  // the absent members take their defaults.
  json bgp;
  ASSERT_TRUE(parse_bgp_summary(
      R"({"ipv4Unicast":{"peers":{"10.0.0.1":{"state":"Established","pfxRcd":3}}}})", bgp));
  EXPECT_EQ(bgp["peers"]["10.0.0.1"]["prefixes_received"], 3);
  EXPECT_EQ(bgp["peers"]["10.0.0.1"]["remote_as"], 0);
  json routes;
  ASSERT_TRUE(parse_ip_route_v4(R"([{"dst":"10.0.0.0/24","dev":"eth0"}])", routes));
  EXPECT_EQ(routes["ipv4"][0]["protocol"], "boot");
  EXPECT_EQ(routes["ipv4"][0]["nexthops"][0], "dev:eth0");
}

TEST(OutputJson, DeepNestingIsRefusedByEveryJsonNormalizer) {
  // Given 300,000 levels of nesting as a device's output, then every normalizer that reads JSON
  // refuses it saying so, before anything is stored in the snapshot.
  for (const char* normalizer :
       {"bgp-summary", "bfd-peers", "bfd-counters", "evpn-vni", "evpn-vni-detail", "evpn-mac",
        "bgp-evpn-summary", "vxlan-links", "ip-link", "ip-addr", "ip-route-v4", "ip-route-v6",
        "lldp-interfaces", "lldp-neighbors"}) {
    SCOPED_TRACE(normalizer);
    Expected<Ok, std::string> result = Ok{};
    ASSERT_NO_THROW(result = run(normalizer, kDeep));
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().find("nested deeper than 64 levels"), std::string::npos)
        << result.error().substr(0, 200);
  }
}

TEST(OutputJson, ADeepValueWhereTheSnapshotCopiesOneIsRefused) {
  // Given a BGP peer whose state nests 300,000 levels (the normalizer copies the state into the
  // snapshot, recursively), then the output is refused before that copy.
  const std::string output = R"({"ipv4Unicast":{"peers":{"10.0.0.1":{"state":)" + kDeep + "}}}}";
  auto result = run("bgp-summary", output);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error(), "nested deeper than 64 levels");
}

}  // namespace
}  // namespace fabgate::snapshot
