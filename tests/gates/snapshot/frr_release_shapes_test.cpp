// Given vtysh JSON in the shapes of FRR releases still running in the field (Cumulus Linux
// 3.7's FRR 4.0, FRR 7.x, Debian's 8.4, 8.5 and later; testdata/frr-releases/README.md says
// where each shape's facts come from), then the FRR normalizers read every one of them into
// the same snapshot facts, and refuse (no-evidence, naming command, place and shape) what is
// none of them. docs/frr-releases.md lists the shapes per command.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "gates/snapshot/json_sequence.h"
#include "gates/snapshot/normalizers.h"
#include "gates/snapshot/snapshot.h"
#include "tests/support/temp_dir.h"

namespace fabgate::snapshot {
namespace {

using nlohmann::json;

std::string shape(const std::string& name) {
  return testing::read_file(std::string(FABGATE_SOURCE_DIR) +
                            "/tests/gates/snapshot/testdata/frr-releases/" + name);
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The evpn category of the leaf in testdata/frr-releases as the frr collector profile fills it
// (its commands in profile order, the kernel's vxlan-links left out), with `detail` and
// `bgp_evpn_summary` in one release's shape. The VNI summary and the MAC table have had the keys
// read here since FRR 4.0, so one file serves every release.
json evpn_category(const std::string& detail, const std::string& bgp_evpn_summary) {
  json evpn;
  EXPECT_TRUE(parse_evpn_vni(shape("frr-4.0-cl3.7-evpn-vni.json"), evpn));
  auto read = parse_evpn_vni_detail(shape(detail), evpn);
  EXPECT_TRUE(read) << detail << ": " << (read ? "" : read.error());
  EXPECT_TRUE(parse_evpn_mac(shape("frr-4.0-cl3.7-evpn-mac-vni-all.json"), evpn));
  EXPECT_TRUE(parse_bgp_evpn_summary(bgp_evpn_summary, evpn));
  return evpn;
}

std::string clos_lab(const std::string& name) {
  return testing::read_file(std::string(FABGATE_SOURCE_DIR) +
                            "/tests/gates/snapshot/testdata/clos-lab/" + name);
}

TEST(FrrReleaseShapes, BackToBackVniObjectsOfFrr7AndCumulus37AreEveryVni) {
  // Given `show evpn vni detail json` of FRR 7.2 and of Cumulus Linux 3.7 (one object per VNI
  // back to back, with and without blank lines between, closed by an empty {}), then each VNI
  // is read with its local VTEP and remote VTEP set, and the closing {} is no VNI.
  for (const char* name : {"frr-7.2-evpn-vni-detail-back-to-back.json",
                           "frr-4.0-cl3.7-evpn-vni-detail-back-to-back.json"}) {
    json evpn;
    auto read = parse_evpn_vni_detail(shape(name), evpn);
    ASSERT_TRUE(read) << name << ": " << read.error();
    const json& vnis = evpn.at("vnis");
    EXPECT_EQ(vnis.size(), 3u) << name;
    EXPECT_EQ(vnis.at("10100").at("local_vtep"), "10.0.255.11");
    EXPECT_EQ(vnis.at("10100").at("remote_vteps"), json::array({"10.0.255.12", "10.0.255.13"}));
    EXPECT_EQ(vnis.at("10100").at("vtep_count"), 2);
    EXPECT_EQ(vnis.at("10200").at("remote_vteps"), json::array());
    EXPECT_EQ(vnis.at("50001").at("type"), "L3");
    EXPECT_EQ(vnis.at("50001").at("local_vtep"), "10.0.255.11");
  }
}

TEST(FrrReleaseShapes, L3VnisAreReadFromTheirOwnKeyNames) {
  // Given an L3 VNI in `show evpn vni detail json` (every release prints it as localVtepIp,
  // vxlanIntf, sviIntf, state, vrf), then it has its local VTEP, VXLAN device, SVI, zebra's
  // state, VRF and routed L2 VNIs, and no remote VTEP set (L3 VNIs have none).
  json evpn;
  ASSERT_TRUE(parse_evpn_vni_detail(shape("frr-8.4-evpn-vni-detail-list.json"), evpn));
  const json& l3 = evpn.at("vnis").at("50001");
  EXPECT_EQ(l3.at("local_vtep"), "10.0.255.11");
  EXPECT_EQ(l3.at("vxlan_if"), "vxlan50001");
  EXPECT_EQ(l3.at("bridge"), "br50001");
  EXPECT_EQ(l3.at("zebra_state"), "up");
  EXPECT_EQ(l3.at("tenant_vrf"), "vrf-tenant1");
  EXPECT_EQ(l3.at("l2_vnis"), json::array({10100, 10200}));
  EXPECT_FALSE(l3.contains("remote_vteps"));
}

TEST(FrrReleaseShapes, Frr85RemoteVtepObjectsAreTheSameRemoteVtepSet) {
  // Given FRR 8.5 and later's `show evpn vni detail json`, where "numRemoteVteps" became a
  // count and the VTEPs moved to "remoteVteps" as {ip, flood} objects, then the remote VTEP
  // set is read from them (not taken as empty because the count is not a list), and a VNI
  // counting 0 has an empty set.
  json evpn;
  ASSERT_TRUE(parse_evpn_vni_detail(shape("frr-8.5-evpn-vni-detail-list.json"), evpn));
  const json& vnis = evpn.at("vnis");
  EXPECT_EQ(vnis.at("10100").at("remote_vteps"), json::array({"10.0.255.12", "10.0.255.13"}));
  EXPECT_EQ(vnis.at("10100").at("vtep_count"), 2);
  EXPECT_EQ(vnis.at("10100").at("tenant_vrf"), "vrf-tenant1");
  EXPECT_EQ(vnis.at("10200").at("remote_vteps"), json::array());
}

TEST(FrrReleaseShapes, TheSameVnisNormalizeEquallyWhateverTheReleaseShape) {
  // Given the same leaf's evpn commands in the shapes of Cumulus Linux 3.7, FRR 7.2, 8.4 and
  // 8.5, then its evpn facts are equal: a compare across an FRR upgrade sees no difference from
  // shape alone. What an older release does not print is absent there, never invented: the L2
  // VNIs' SVI (FRR 7 and before) and the EVPN sessions' sent prefix counts (before FRR 7.0).
  const std::string evpn_summary_84 = clos_lab("leaf1-bgp-l2vpn-evpn-summary.json");
  const std::string evpn_summary_40 = shape("frr-4.0-cl3.7-bgp-l2vpn-evpn-summary.json");
  const json frr85 = evpn_category("frr-8.5-evpn-vni-detail-list.json", evpn_summary_84);
  const json frr84 = evpn_category("frr-8.4-evpn-vni-detail-list.json", evpn_summary_84);
  const json frr72 = evpn_category("frr-7.2-evpn-vni-detail-back-to-back.json", evpn_summary_84);
  const json cl37 =
      evpn_category("frr-4.0-cl3.7-evpn-vni-detail-back-to-back.json", evpn_summary_40);
  EXPECT_EQ(frr84, frr85) << frr84.dump(1) << "\n" << frr85.dump(1);

  json frr84_as_frr7_prints_it = frr84;
  for (const char* l2 : {"10100", "10200"}) {
    EXPECT_TRUE(frr84.at("vnis").at(l2).contains("bridge"));
    frr84_as_frr7_prints_it["vnis"][l2].erase("bridge");
  }
  EXPECT_EQ(frr72, frr84_as_frr7_prints_it) << frr72.dump(1);

  json as_frr40_prints_it = frr84_as_frr7_prints_it;
  for (auto& peer : as_frr40_prints_it["peers"]) peer.erase("prefixes_sent");
  EXPECT_EQ(cl37, as_frr40_prints_it) << cl37.dump(1);
  EXPECT_EQ(cl37.at("peers").at("10.0.1.0").at("prefixes_received"), 2);
}

TEST(FrrReleaseShapes, EvpnOffOrNoVniIsAnEmptyAnswerInEveryRelease) {
  // Given a switch without VNIs: FRR up to 8.4 prints nothing when EVPN is off, 9.0 and later
  // print {} (pretty or not), FRR 7.0 - 7.2 print only the closing {}, 7.3 and later [] when
  // EVPN is on; then each is "no VNIs", a real answer.
  for (const char* output : {"", "{}\n", "{\n}\n", "[\n]\n", "  {}  "}) {
    json evpn;
    auto read = parse_evpn_vni_detail(output, evpn);
    ASSERT_TRUE(read) << "'" << output << "': " << read.error();
    EXPECT_TRUE(evpn.at("vnis").is_object());
    EXPECT_TRUE(evpn.at("vnis").empty());
  }
}

TEST(FrrReleaseShapes, ObjectsBackToBackAreBoundedAndGarbageIsPlacedByByteLineAndColumn) {
  // Given output that is not JSON objects back to back closed by {}, then the reader says what
  // is wrong and where (byte, line, column), within its size, depth and count bounds, and never
  // throws.
  auto error_of = [](std::string_view text, JsonSequenceLimits limits = {}) {
    auto read = parse_json_object_sequence(text, limits);
    EXPECT_FALSE(read) << text;
    return read ? std::string() : read.error();
  };
  const std::string cut = error_of("{\"vni\":1}\n{\"vni\":2}\n");
  EXPECT_TRUE(mentions(cut, "ends without the empty {}")) << cut;
  const std::string between = error_of("{\"vni\":1}\n% Unknown command\n{}");
  EXPECT_TRUE(mentions(between, "expected '{' at byte 11 (line 2, column 1), found '% Unknown"))
      << between;
  const std::string unclosed = error_of("{\"vni\":1}\n{\"vni\":2, \"a\":[1,2}\n");
  EXPECT_TRUE(mentions(unclosed, "unexpected '}' at byte 29 (line 2, column 19)")) << unclosed;
  const std::string open_end = error_of("{\"vni\":1}\n{\"vni\":");
  EXPECT_TRUE(mentions(open_end, "the object at byte 11 (line 2, column 1) is not closed"))
      << open_end;
  const std::string bad_value = error_of("{\"vni\":1}\n{\"vni\": tru}\n{}");
  EXPECT_TRUE(mentions(bad_value,
                       "the object at byte 11 (line 2, column 1) is not JSON: it "
                       "breaks at byte 22 (line 2, column 12)"))
      << bad_value;
  const std::string early_end = error_of("{\"vni\":1}\n{}\n{\"vni\":2}\n{}");
  EXPECT_TRUE(mentions(early_end, "the empty {} at byte 11 (line 2, column 1)")) << early_end;
  EXPECT_TRUE(mentions(error_of("[{\"vni\":1}]"), "expected '{' at byte 1"));
  EXPECT_TRUE(mentions(error_of("{\"a\":\"}\"}"), "ends without the empty {}"));  // } in a string

  const std::string deep = std::string(65, '[');
  const std::string too_deep = error_of("{\"a\":" + deep);
  EXPECT_TRUE(mentions(too_deep, "nests deeper than 64 levels")) << too_deep;
  EXPECT_TRUE(mentions(error_of("{\"a\":1}{\"a\":2}{\"a\":3}{}", {1024, 2, 64}),
                       "more than 2 JSON objects back to back (the next at byte 15"));
  EXPECT_TRUE(mentions(error_of(std::string(2000, ' ') + "{}", {1024, 10, 64}),
                       "the output is 2002 bytes, more than the 1024"));

  auto read = parse_json_object_sequence("{\"a\":1}\n\n{\"b\":{\"c\":\"{\\\"}\"}}\n{\n}\n");
  ASSERT_TRUE(read) << read.error();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ(read->at(1).byte, 10u);
  EXPECT_EQ(read->at(1).value.at("b").at("c"), "{\"}");
}

TEST(FrrReleaseShapes, UnknownVniDetailShapesAreRefusedNamingTheShape) {
  // Given `show evpn vni detail json` output in a shape no release prints, then the normalizer
  // refuses it (the evpn category becomes no-evidence) naming the entry and what is unexpected,
  // rather than recording VNIs without remote VTEPs or local addresses.
  auto refused = [](const std::string& output) {
    json evpn;
    auto read = parse_evpn_vni_detail(output, evpn);
    EXPECT_FALSE(read) << output;
    return read ? std::string() : read.error();
  };
  EXPECT_TRUE(mentions(refused(R"([{"vni": 7, "type": "L4", "vtepIp": "10.0.0.1"}])"),
                       "entry [0] (VNI 7): unexpected shape: type 'L4' is neither L2 nor L3"));
  EXPECT_TRUE(mentions(refused(R"([{"vni": 7, "type": "L2", "localVtep": "10.0.0.1"}])"),
                       "entry [0] (VNI 7): unexpected shape: an L2 VNI without 'vtepIp'"));
  EXPECT_TRUE(mentions(refused(R"([{"vni": 7, "type": "L3", "vtepIp": "10.0.0.1"}])"),
                       "an L3 VNI without 'localVtepIp'"));
  EXPECT_TRUE(mentions(
      refused(R"([{"vni": 7, "type": "L2", "vtepIp": "10.0.0.1", "numRemoteVteps": "n/a"}])"),
      "'numRemoteVteps' is a string and there is no 'remoteVteps' list"));
  EXPECT_TRUE(mentions(refused(R"([{"vni": 7, "type": "L2", "vtepIp": "10.0.0.1",
                                   "numRemoteVteps": 2, "remoteVteps": [{"ip": "10.0.0.2"}]}])"),
                       "'numRemoteVteps' is 2 but 1 remote VTEPs are listed"));
  EXPECT_TRUE(mentions(refused(R"([{"vni": 7, "type": "L2", "vtepIp": "10.0.0.1",
                                   "remoteVteps": [167772162]}])"),
                       "a remote VTEP is an integer, neither an address nor an {\"ip\"} object"));
  EXPECT_TRUE(mentions(refused(R"([{"vni": 7, "type": "L2", "vtepIp": 167772161}])"),
                       "field '[0].vtepIp' is an integer, not a string"));
  const std::string typed = refused("{\"vni\":1,\"type\":\"L2\",\"vtepIp\":[\"10.0.0.1\"]}\n{}");
  EXPECT_TRUE(mentions(typed,
                       "the object at byte 1 (line 1, column 1): field 'vtepIp' is an "
                       "array, not a string"))
      << typed;
  EXPECT_TRUE(mentions(refused("\"10100\""), "expected a JSON list of VNIs"));
  const std::string one_object = refused(R"({"vnis": [{"vni": 7}]})");
  EXPECT_TRUE(mentions(one_object,
                       "neither a JSON list of VNIs (FRR 7.3 on) nor one object per "
                       "VNI closed by {} (FRR 7.0 - 7.2)"))
      << one_object;
  const std::string second = refused(
      "{\"vni\":1,\"type\":\"L2\",\"vtepIp\":\"10.0.0.1\"}\n"
      "{\"type\":\"L2\"}\n{}\n");
  EXPECT_TRUE(mentions(second, "the object at byte 43 (line 2, column 1) without a numeric 'vni'"))
      << second;
}

TEST(FrrReleaseShapes, BgpdBefore70CountsReceivedPrefixesUnderItsOldName) {
  // Given `show bgp summary json` and `show bgp l2vpn evpn summary json` of bgpd before FRR 7.0
  // (Cumulus Linux 3.7), which count received prefixes as "prefixReceivedCount" and print no
  // sent count, then the prefix counts are the device's (not 0), and no sent count is invented.
  json bgp;
  ASSERT_TRUE(parse_bgp_summary(shape("frr-4.0-cl3.7-bgp-summary.json"), bgp));
  const json& peer = bgp.at("peers").at("10.0.1.0");
  EXPECT_EQ(peer.at("prefixes_received"), 7);
  EXPECT_EQ(peer.at("address_families").at("l2_vpn_evpn").at("prefixes_received"), 2);
  EXPECT_FALSE(peer.at("address_families").at("ipv4_unicast").contains("prefixes_sent"));
  json evpn;
  ASSERT_TRUE(parse_bgp_evpn_summary(shape("frr-4.0-cl3.7-bgp-l2vpn-evpn-summary.json"), evpn));
  EXPECT_EQ(evpn.at("peers").at("10.0.2.0").at("prefixes_received"), 2);
  EXPECT_FALSE(evpn.at("peers").at("10.0.2.0").contains("prefixes_sent"));
}

TEST(FrrReleaseShapes, MultihomedRemoteMacsAreCountedPerEthernetSegment) {
  // Given `show evpn mac vni all json` with EVPN multihoming, where a remote MAC behind an
  // Ethernet segment has "remoteEs" instead of "remoteVtep", then it is counted per segment,
  // not under an empty VTEP name; a remote MAC with neither is refused.
  json evpn;
  ASSERT_TRUE(parse_evpn_mac(shape("frr-8.5-evpn-mac-vni-all-multihoming.json"), evpn));
  const json& vni = evpn.at("vnis").at("10100");
  EXPECT_EQ(vni.at("macs_remote"), 2);
  EXPECT_EQ(vni.at("macs_per_remote_vtep"), (json{{"10.0.255.12", 1}}));
  EXPECT_EQ(vni.at("macs_per_remote_es"), (json{{"03:44:38:39:ff:ff:02:00:00:02", 1}}));
  json broken;
  auto read = parse_evpn_mac(R"({"10100": {"numMacs": 1, "macs": {"00:02:00:00:00:0d":
      {"type": "remote"}}}})",
                             broken);
  ASSERT_FALSE(read);
  EXPECT_TRUE(mentions(read.error(), "neither 'remoteVtep' nor 'remoteEs'")) << read.error();
}

// A Cumulus Linux 3.7 leaf answering the frr profile's evpn commands; `detail` is its answer to
// `show evpn vni detail json`, every command outside the evpn source exits 127.
class Cumulus37Leaf final : public ssh::ShellConnector {
 public:
  explicit Cumulus37Leaf(std::string detail) : detail_(std::move(detail)) {}

  Expected<std::unique_ptr<ssh::RemoteShell>, ssh::SshFailure> connect(
      const ssh::SshDevice&, ssh::CredentialRole) override {
    return std::unique_ptr<ssh::RemoteShell>(new Shell(
        {{"vtysh -c 'show evpn vni json'", shape("frr-4.0-cl3.7-evpn-vni.json")},
         {"vtysh -c 'show evpn vni detail json'", detail_},
         {"vtysh -c 'show evpn mac vni all json'", shape("frr-4.0-cl3.7-evpn-mac-vni-all.json")},
         {"vtysh -c 'show bgp l2vpn evpn summary json'",
          shape("frr-4.0-cl3.7-bgp-l2vpn-evpn-summary.json")},
         {"ip -j -d link show type vxlan", "[]"}}));
  }

 private:
  class Shell final : public ssh::RemoteShell {
   public:
    explicit Shell(std::map<std::string, std::string> answers) : answers_(std::move(answers)) {}
    Expected<ssh::CommandResult, ssh::SshFailure> run(const std::string& command,
                                                      Duration) override {
      ssh::CommandResult result;
      auto found = answers_.find(command);
      result.exit_status = found == answers_.end() ? 127 : 0;
      if (found != answers_.end()) result.stdout_text = found->second;
      return result;
    }

   private:
    std::map<std::string, std::string> answers_;
  };

  std::string detail_;
};

json evpn_source_of(Cumulus37Leaf& leaf, json* facts = nullptr) {
  static const ProfileSet profiles = load_profiles().value();
  ssh::ConnectionCache cache(leaf);
  auto snapshot = take_snapshot({{{"leaf1", "10.0.0.11", 22, {}, {}}, &profiles.at("frr")}}, cache,
                                1, "abc123");
  const json& device = snapshot.document.at("devices").at("leaf1");
  if (facts && device.contains("evpn")) *facts = device.at("evpn");
  return device.at("sources").at("evpn");
}

TEST(FrrReleaseShapes, ACumulus37LeafHasEvpnEvidenceAndItsGarbageIsNamedByCommandAndByte) {
  // Given a Cumulus Linux 3.7 leaf collected with the shipped frr profile, then its evpn
  // category is collected (it was no-evidence, refusing every change on such switches); and
  // when its detail output is cut short or garbled, the category is no-evidence with a reason
  // naming the command and the byte where the output stops making sense.
  Cumulus37Leaf leaf(shape("frr-4.0-cl3.7-evpn-vni-detail-back-to-back.json"));
  json evpn;
  const json source = evpn_source_of(leaf, &evpn);
  EXPECT_EQ(source.at("status"), "ok") << source.dump();
  EXPECT_EQ(evpn.at("vnis").at("10100").at("remote_vteps"),
            json::array({"10.0.255.12", "10.0.255.13"}));
  EXPECT_EQ(evpn.at("vnis").at("50001").at("local_vtep"), "10.0.255.11");
  EXPECT_EQ(evpn.at("peers").at("10.0.1.0").at("prefixes_received"), 2);

  Cumulus37Leaf garbled(
      "{\"vni\":10100,\"type\":\"L2\",\"vtepIp\":\"10.0.255.11\"}\n"
      "{\"vni\":10200,\"type\":\"L2\",\"vtepIp\":\"10.0.2");
  const json refused = evpn_source_of(garbled);
  EXPECT_EQ(refused.at("status"), "no-evidence");
  const std::string reason = refused.at("reason");
  EXPECT_TRUE(mentions(reason, "vtysh -c 'show evpn vni detail json': unparsable output"))
      << reason;
  EXPECT_TRUE(mentions(reason, "the object at byte 50 (line 2, column 1) is not closed")) << reason;
}

}  // namespace
}  // namespace fabgate::snapshot
