// Given real FRR 8.4 and iproute2 output captured from the Clos lab (examples/clos-lab, leaves
// as EVPN/VXLAN VTEPs for VNI 10100, BFD on every session; testdata/clos-lab/), then the BFD
// and EVPN normalizers fill the snapshot's bfd and evpn categories with what the default
// compare rules check: session status and timers, EVPN sessions and prefix counts, each VNI's
// state, local VTEP, remote VTEP set and MAC count.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gates/snapshot/normalizers.h"
#include "tests/support/temp_dir.h"

namespace fabgate::snapshot {
namespace {

using nlohmann::json;

std::string captured(const std::string& name) {
  return testing::read_file(std::string(FABGATE_SOURCE_DIR) +
                            "/tests/gates/snapshot/testdata/clos-lab/" + name);
}

// The evpn category as the lab's collector profile fills it: its commands in profile order.
json evpn_of(const std::string& node, const std::string& variant = "") {
  json evpn;
  EXPECT_TRUE(parse_evpn_vni(captured(node + "-evpn-vni.json"), evpn));
  EXPECT_TRUE(parse_evpn_vni_detail(captured(node + "-evpn-vni-detail" + variant + ".json"), evpn));
  EXPECT_TRUE(parse_evpn_mac(captured(node + "-evpn-mac-vni-all.json"), evpn));
  EXPECT_TRUE(parse_bgp_evpn_summary(captured(node + "-bgp-l2vpn-evpn-summary.json"), evpn));
  EXPECT_TRUE(parse_vxlan_links(captured(node + "-ip-link-vxlan.json"), evpn));
  return evpn;
}

TEST(OverlayNormalizers, LeafVniCarriesStateVtepsAndMacCounts) {
  // Given a leaf's real output, then VNI 10100 is up on vxlan10100 with its local VTEP, UDP
  // port 4789, the other leaf as its only remote VTEP, and MAC counts split local/remote.
  json evpn = evpn_of("leaf1");
  const json& vni = evpn.at("vnis").at("10100");
  EXPECT_EQ(vni.at("type"), "L2");
  EXPECT_EQ(vni.at("state"), "up");
  EXPECT_EQ(vni.at("vxlan_if"), "vxlan10100");
  EXPECT_EQ(vni.at("bridge"), "br10100");
  EXPECT_EQ(vni.at("local_vtep"), "10.0.255.11");
  EXPECT_EQ(vni.at("udp_port"), 4789);
  EXPECT_EQ(vni.at("learning"), false);
  EXPECT_EQ(vni.at("remote_vteps"), json::array({"10.0.255.12"}));
  EXPECT_EQ(vni.at("vtep_count"), 1);
  EXPECT_EQ(vni.at("macs"), 2);
  EXPECT_EQ(vni.at("macs_local"), 1);
  EXPECT_EQ(vni.at("macs_remote"), 1);
  EXPECT_EQ(vni.at("macs_per_remote_vtep").at("10.0.255.12"), 1);
  // No MAC address itself is kept: they age and move.
  EXPECT_EQ(vni.dump().find("7e:cd:b8"), std::string::npos);
}

TEST(OverlayNormalizers, EvpnSessionsAreEstablishedWithPrefixCounts) {
  // Given a leaf's and a spine's `show bgp l2vpn evpn summary json`, then both EVPN sessions
  // of each are Established with their received prefix counts.
  json leaf = evpn_of("leaf1");
  EXPECT_EQ(leaf.at("peers").size(), 2u);
  EXPECT_EQ(leaf.at("peers").at("10.0.1.0").at("state"), "Established");
  EXPECT_EQ(leaf.at("peers").at("10.0.1.0").at("remote_as"), 65000);
  EXPECT_EQ(leaf.at("peers").at("10.0.1.0").at("prefixes_received"), 2);
  json spine = evpn_of("spine1");
  EXPECT_EQ(spine.at("peers").at("10.0.1.1").at("state"), "Established");
  EXPECT_EQ(spine.at("peers").at("10.0.1.3").at("remote_as"), 65102);
}

TEST(OverlayNormalizers, SpineWithoutVnisIsAnEmptyAnswerNotAnError) {
  // Given a spine, where FRR 8.4 prints nothing at all for `show evpn vni [detail] json` (no
  // VNI is configured there) and `ip link` lists no VXLAN device, then the spine has no VNIs:
  // a real answer, recorded as such.
  EXPECT_TRUE(captured("spine1-evpn-vni.json").empty());
  json evpn = evpn_of("spine1");
  EXPECT_TRUE(evpn.at("vnis").is_object());
  EXPECT_TRUE(evpn.at("vnis").empty());
}

TEST(OverlayNormalizers, WithdrawnVniLeavesAnEmptyRemoteVtepSet) {
  // Given leaf1's `show evpn vni detail json` captured while leaf2's VXLAN device was down (its
  // EVPN routes withdrawn), then VNI 10100 on leaf1 has an empty remote VTEP set (FRR omits
  // the key), so the no-change rule on remote_vteps sees leaf2's VTEP go missing.
  json before, after;
  ASSERT_TRUE(parse_evpn_vni_detail(captured("leaf1-evpn-vni-detail.json"), before));
  ASSERT_TRUE(parse_evpn_vni_detail(captured("leaf1-evpn-vni-detail-withdrawn.json"), after));
  EXPECT_EQ(before.at("vnis").at("10100").at("remote_vteps"), json::array({"10.0.255.12"}));
  EXPECT_EQ(after.at("vnis").at("10100").at("remote_vteps"), json::array());
  EXPECT_EQ(after.at("vnis").at("10100").at("vtep_count"), 0);
}

TEST(OverlayNormalizers, BfdPeersCarryStatusAndBothSidesTimers) {
  // Given the real `show bfd peers json` of a leaf before and after spine1 tightened its
  // profile to 100 ms, then each session is up with its own and its peer's timers, and only
  // the session to spine1 shows spine1's new 100 ms intervals.
  json before, after;
  ASSERT_TRUE(parse_bfd_peers(captured("leaf1-bfd-peers.json"), before));
  ASSERT_TRUE(parse_bfd_peers(captured("leaf1-bfd-peers-spine1-100ms.json"), after));
  const json& to_spine1 = before.at("peers").at("10.0.1.0");
  EXPECT_EQ(to_spine1.at("status"), "up");
  EXPECT_EQ(to_spine1.at("interface"), "to-spine1");
  EXPECT_EQ(to_spine1.at("receive_interval_ms"), 300);
  EXPECT_EQ(to_spine1.at("transmit_interval_ms"), 300);
  EXPECT_EQ(to_spine1.at("detect_multiplier"), 3);
  EXPECT_EQ(to_spine1.at("remote_receive_interval_ms"), 300);
  EXPECT_EQ(after.at("peers").at("10.0.1.0").at("remote_receive_interval_ms"), 100);
  EXPECT_EQ(after.at("peers").at("10.0.1.0").at("remote_transmit_interval_ms"), 100);
  EXPECT_EQ(after.at("peers").at("10.0.2.0").at("remote_receive_interval_ms"), 300);
  EXPECT_EQ(after.at("peers").at("10.0.1.0").at("status"), "up");
}

TEST(OverlayNormalizers, BfdCountersAddUpAndDownEventsToEachPeer) {
  // Given a leaf's real `show bfd peers counters json` after its `show bfd peers json`, then
  // each session carries how often it went down: a flap between two snapshots is visible even
  // when the session is up again.
  json bfd;
  ASSERT_TRUE(parse_bfd_peers(captured("leaf1-bfd-peers.json"), bfd));
  ASSERT_TRUE(parse_bfd_counters(captured("leaf1-bfd-peers-counters.json"), bfd));
  const json& to_spine1 = bfd.at("peers").at("10.0.1.0");
  EXPECT_EQ(to_spine1.at("status"), "up");
  EXPECT_TRUE(to_spine1.at("session_down_events").is_number_integer());
  EXPECT_GE(to_spine1.at("session_up_events").get<int>(), 1);
  EXPECT_FALSE(parse_bfd_counters(R"([{"peer": "10.0.1.0"}])", bfd));
}

TEST(OverlayNormalizers, UnderlayPrefixCountLeavesEvpnOut) {
  // Given a peer carrying both families, then bgp.peers.*.prefixes_received counts only the
  // underlay's (EVPN's move with every MAC and are compared in the evpn category), while the
  // per-family counts keep both.
  json bgp;
  ASSERT_TRUE(parse_bgp_summary(R"({"ipv4Unicast": {"peers": {"10.0.1.0":
      {"state": "Established", "remoteAs": 65000, "pfxRcd": 5, "pfxSnt": 6}}},
      "l2VpnEvpn": {"peers": {"10.0.1.0":
      {"state": "Established", "remoteAs": 65000, "pfxRcd": 7, "pfxSnt": 2}}}})",
                                bgp));
  const json& peer = bgp.at("peers").at("10.0.1.0");
  EXPECT_EQ(peer.at("prefixes_received"), 5);
  EXPECT_EQ(peer.at("address_families").at("l2_vpn_evpn").at("prefixes_received"), 7);
}

TEST(OverlayNormalizers, RefuseWhatIsNotTheirOutput) {
  // Given error text or JSON of the wrong shape, then each overlay normalizer returns an
  // error (the collector makes the source no-evidence) rather than an empty, healthy overlay.
  json into;
  EXPECT_FALSE(parse_evpn_vni("% Unknown command: show evpn vni json", into));
  // ({} alone is "no VNIs": FRR 9.0 on prints it with EVPN off; frr_release_shapes_test.cpp.)
  EXPECT_FALSE(parse_evpn_vni_detail("{\"vnis\": []}", into));
  EXPECT_FALSE(parse_evpn_vni_detail("[{\"type\": \"L2\"}]", into));
  EXPECT_FALSE(parse_evpn_mac("not json", into));
  EXPECT_FALSE(parse_bgp_evpn_summary("", into));
  EXPECT_FALSE(parse_bgp_evpn_summary(R"({"peers": {"10.0.1.0": {"pfxRcd": 1}}})", into));
  EXPECT_FALSE(parse_vxlan_links("", into));
  EXPECT_FALSE(parse_vxlan_links(R"([{"ifname": "vx0", "linkinfo": {}}])", into));
  EXPECT_FALSE(parse_bfd_peers(R"([{"status": "up"}])", into));
  for (const char* name :
       {"evpn-vni-detail", "evpn-mac", "bgp-evpn-summary", "vxlan-links", "bfd-peers"}) {
    const Normalizer* normalizer = find_normalizer(name);
    ASSERT_NE(normalizer, nullptr) << name;
    EXPECT_TRUE(normalizer->target == "evpn" || normalizer->target == "bfd") << name;
  }
}

}  // namespace
}  // namespace fabgate::snapshot
