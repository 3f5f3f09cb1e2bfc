// Load spread: equal-cost groups found in a snapshot's routes, the members' packets between two
// counter reads, and the judgement against the baseline window, on snapshot documents shaped
// like the Clos lab's (two uplinks per leaf).

#include "gates/pipeline/families/load_spread.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

// A leaf with two uplinks (10.0.1.1/31 to spine1, 10.0.2.1/31 to spine2), a hosts subnet, and
// the remote hosts' prefix over both spines; each uplink has sent `tx1` and `tx2` packets.
json leaf(std::int64_t tx1, std::int64_t tx2) {
  auto interface = [](const char* address, std::int64_t tx) {
    return json{{"addresses", {address}}, {"counters", {{"tx_packets", tx}, {"rx_packets", 0}}}};
  };
  json ok = {{"status", "ok"}};
  return {{"sources", {{"interfaces", ok}, {"routes", ok}}},
          {"interfaces",
           {{"to-spine1", interface("10.0.1.1/31", tx1)},
            {"to-spine2", interface("10.0.2.1/31", tx2)},
            {"hosts", interface("10.1.1.1/24", 0)}}},
          {"routes",
           {{"ipv4",
             {{{"prefix", "10.0.1.0/31"}, {"nexthops", {"dev:to-spine1"}}},
              {{"prefix", "10.0.255.1/32"}, {"nexthops", {"10.0.1.0"}}},
              {{"prefix", "10.1.2.0/24"}, {"nexthops", {"10.0.1.0", "10.0.2.0"}}},
              {{"prefix", "10.0.255.12/32"}, {"nexthops", {"10.0.1.0", "10.0.2.0"}}}}}}}};
}

json snapshot(std::int64_t tx1, std::int64_t tx2) { return {{"devices", {{"leaf1", leaf(tx1, tx2)}}}}; }

std::vector<GroupSpread> window(std::int64_t sent1, std::int64_t sent2) {
  auto before = snapshot(1000, 5000), after = snapshot(1000 + sent1, 5000 + sent2);
  return measure_spread(ecmp_groups(before).groups, before, after);
}

TEST(LoadSpread, TwoGatewaysOnTwoUplinksAreOneGroupOfThoseInterfaces) {
  // Given a leaf whose two multipath routes use the same two gateways, then it has one group,
  // its members the uplinks holding those gateways and both prefixes listed.
  auto found = ecmp_groups(snapshot(0, 0));
  ASSERT_EQ(found.groups.size(), 1u);
  EXPECT_EQ(found.groups[0].name(), "leaf1 to-spine1/to-spine2");
  EXPECT_EQ(found.groups[0].prefixes, (std::vector<std::string>{"10.0.255.12/32", "10.1.2.0/24"}));
  EXPECT_TRUE(found.unresolved.empty());
  EXPECT_EQ(found.routes_read, (std::set<std::string>{"leaf1"}));
}

TEST(LoadSpread, TablesKeptApartFromTheDocumentGiveTheSameGroupsAsItsLists) {
  // Given the same leaf with its routes as a table beside the document (as a gated run holds
  // them) instead of lists in it, then the groups, their prefixes and the devices read are the
  // same; with its routes source not ok, the table is not read.
  json device = leaf(0, 0);
  compare::RouteTable table(compare::Family::ipv4);
  std::string error;
  for (const auto& route : device["routes"]["ipv4"]) {
    std::vector<std::string> hops = route["nexthops"].get<std::vector<std::string>>();
    std::vector<std::string_view> views(hops.begin(), hops.end());
    ASSERT_TRUE(table.add("default", route["prefix"].get<std::string>(), "bgp", 20, views, &error))
        << error;
  }
  ASSERT_TRUE(table.finalize(&error)) << error;
  device.erase("routes");
  auto tables = std::make_shared<snapshot::RouteTables>();
  tables->emplace("ipv4", std::move(table));
  DeviceRouteTables apart{{"leaf1", tables}};

  auto from_lists = ecmp_groups(snapshot(0, 0));
  auto from_tables = ecmp_groups(json{{"devices", {{"leaf1", device}}}}, apart);
  ASSERT_EQ(from_tables.groups.size(), 1u);
  EXPECT_EQ(from_tables.groups[0].name(), from_lists.groups[0].name());
  EXPECT_EQ(from_tables.groups[0].prefixes, from_lists.groups[0].prefixes);
  EXPECT_EQ(from_tables.routes_read, from_lists.routes_read);
  EXPECT_TRUE(from_tables.unresolved.empty());

  device["sources"]["routes"]["status"] = "no-evidence";
  auto unread = ecmp_groups(json{{"devices", {{"leaf1", device}}}}, apart);
  EXPECT_TRUE(unread.groups.empty());
  EXPECT_TRUE(unread.routes_read.empty());
}

TEST(LoadSpread, ADeviceWhoseRoutesWereNotReadIsNotCountedAsRead) {
  // Given leaf1's routes source timed out, then it has no groups and is not among those read
  // (the spread gate then keeps its baseline groups instead of reading "no group left").
  json device = leaf(0, 0);
  device["sources"]["routes"]["status"] = "timeout";
  auto found = ecmp_groups(json{{"devices", {{"leaf1", device}}}});
  EXPECT_TRUE(found.groups.empty());
  EXPECT_TRUE(found.routes_read.empty());
}

TEST(LoadSpread, AConnectedPrefixOnEveryPortIsNoGroup) {
  // Given fe80::/64 on both uplinks and the hosts port (the kernel lists it once per interface
  // with IPv6, the snapshot merges them), then it is no group: only the routed prefixes are.
  json document = snapshot(0, 0);
  document["devices"]["leaf1"]["routes"]["ipv6"] = {
      {{"prefix", "fe80::/64"}, {"nexthops", {"dev:to-spine1", "dev:to-spine2", "dev:hosts"}}}};
  auto groups = ecmp_groups(document).groups;
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members, (std::vector<std::string>{"to-spine1", "to-spine2"}));
  EXPECT_EQ(std::count(groups[0].prefixes.begin(), groups[0].prefixes.end(), "fe80::/64"), 0);
}

TEST(LoadSpread, ALinkLocalGatewayIsUnresolvedNotGuessed) {
  // Given an IPv6 route over two link-local gateways (every interface has fe80::/64), then no
  // group is made of it and the device is named as not measured.
  json device = leaf(0, 0);
  device["routes"]["ipv6"] = {{{"prefix", "2001:db8::/64"}, {"nexthops", {"fe80::1", "fe80::2"}}}};
  auto found = ecmp_groups(json{{"devices", {{"leaf1", device}}}});
  EXPECT_EQ(found.groups.size(), 1u);
  ASSERT_EQ(found.unresolved.size(), 1u);
  EXPECT_NE(found.unresolved[0].find("2001:db8::/64"), std::string::npos) << found.unresolved[0];
}

TEST(LoadSpread, PacketsAreTheMembersTransmitDeltas) {
  // Given 700 and 580 packets sent on the uplinks in the window, then the shares are 55/45.
  auto spreads = window(700, 580);
  ASSERT_EQ(spreads.size(), 1u);
  EXPECT_EQ(spreads[0].total, 1280);
  EXPECT_EQ(spreads[0].shares_text(), "55 % on to-spine1, 45 % on to-spine2");
}

TEST(LoadSpread, AResetCounterIsNoEvidenceNotAShare) {
  // Given a member whose counter went backwards, then the group is missing, naming the member.
  auto before = snapshot(1000, 5000), after = snapshot(1500, 10);
  auto spreads = measure_spread(ecmp_groups(before).groups, before, after);
  ASSERT_EQ(spreads.size(), 1u);
  EXPECT_NE(spreads[0].missing.find("to-spine2"), std::string::npos) << spreads[0].missing;
  auto judgement = judge_spread(window(640, 640), spreads, {}, {});
  EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
}

TEST(LoadSpread, ADeviceThatDidNotAnswerIsNoEvidence) {
  auto before = snapshot(1000, 5000);
  json after = before;
  after["devices"]["leaf1"]["sources"]["interfaces"]["status"] = "timeout";
  auto spreads = measure_spread(ecmp_groups(before).groups, before, after);
  ASSERT_EQ(spreads.size(), 1u);
  EXPECT_NE(spreads[0].missing.find("did not answer"), std::string::npos) << spreads[0].missing;
}

TEST(LoadSpread, AGroupThatWasSpreadAndNowCarriesNearlyAllOnOneMemberFails) {
  // Given 55/45 before and 97/3 after, then the spread fails naming the group, members and
  // both shares, the way a reader compares them.
  auto judgement = judge_spread(window(700, 580), window(1240, 40), {}, {});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  ASSERT_EQ(judgement.failures.size(), 1u);
  EXPECT_EQ(judgement.failures[0],
            "leaf1 to-spine1/to-spine2: 97 % on to-spine1, 3 % on to-spine2; before 55 % / 45 % "
            "(concentrated on one member)");
}

TEST(LoadSpread, ASpreadAsBeforePasses) {
  // Given 55/45 before and 48/52 after (another sample of the hash), then it passes.
  auto judgement = judge_spread(window(700, 580), window(620, 660), {}, {});
  EXPECT_EQ(judgement.verdict, Verdict::pass);
  EXPECT_EQ(judgement.judged, 1u);
}

TEST(LoadSpread, AFarMoveWithoutConcentrationFails) {
  // Given 50/50 before and 88/12 after (a weight of about 7:1), then it fails as moved.
  auto judgement = judge_spread(window(640, 640), window(1126, 154), {}, {});
  EXPECT_EQ(judgement.verdict, Verdict::fail);
  ASSERT_FALSE(judgement.failures.empty());
  EXPECT_NE(judgement.failures[0].find("moved by 38 %"), std::string::npos)
      << judgement.failures[0];
}

TEST(LoadSpread, AnUnevenDesignKeptAsItWasPasses) {
  // Given a group at 92/8 before (weighted on purpose) and 93/7 after, then nothing failed.
  auto judgement = judge_spread(window(1178, 102), window(1190, 90), {}, {});
  EXPECT_EQ(judgement.verdict, Verdict::pass);
}

TEST(LoadSpread, AGroupTheProbesDidNotCrossIsNotJudged) {
  // Given 30 packets in the window (BFD and keepalives), then the group is listed, not judged.
  auto judgement = judge_spread(window(700, 580), window(29, 1), {}, {});
  EXPECT_EQ(judgement.verdict, Verdict::skipped);
  ASSERT_EQ(judgement.lines.size(), 1u);
  EXPECT_NE(judgement.lines[0].find("not judged"), std::string::npos) << judgement.lines[0];
}

TEST(LoadSpread, WithoutABaselineNothingIsJudged) {
  // Given no baseline of the group, then 100/0 is not called concentrated: it may be the design.
  auto judgement = judge_spread({}, window(1280, 0), {}, {});
  EXPECT_EQ(judgement.verdict, Verdict::skipped);
}

TEST(LoadSpread, ADeclaredDeviceIsReportedNotFailed) {
  // Given the change declares leaf1's spread (compare.expected {device: leaf1, path: spread}),
  // then 97/3 is listed as declared and fails nothing.
  auto judgement = judge_spread(window(700, 580), window(1240, 40), {"leaf1"}, {});
  EXPECT_NE(judgement.verdict, Verdict::fail);
  ASSERT_EQ(judgement.lines.size(), 1u);
  EXPECT_NE(judgement.lines[0].find("declared"), std::string::npos) << judgement.lines[0];
}

TEST(LoadSpread, TheWindowRunsOnlyUdpFlowsProbesWithAtLeast64Flows) {
  // Given a udp flows probe of 16 flows, one of 100, a tcp flows probe and a command probe,
  // then the window (production's and the twin's alike) runs the two udp ones, at 64 and 100.
  intent::Probe udp16, udp100, tcp, command;
  udp16.kind = udp100.kind = tcp.kind = "flows";
  udp16.flows = 16;
  udp100.flows = 100;
  tcp.protocol = "tcp";
  command.kind = "command";
  auto window = spread_window_probes({udp16, tcp, udp100, command});
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0].flows, kSpreadFlows);
  EXPECT_EQ(window[1].flows, 100);
}

TEST(LoadSpread, DeclaredDevicesAreTheSpreadPathsOfTheChangesExpectations) {
  // Given expectations on leaf1's spread, on spine1's bgp and on every device's spread, then
  // leaf1 alone is declared by the first, and "*" declares every group device.
  intent::Change change;
  change.compare.expected = {{"leaf1", "spread"}, {"spine1", "bgp.peers.*.state"}};
  EXPECT_EQ(declared_spread_devices(change, {"leaf1", "leaf2"}), std::set<std::string>{"leaf1"});
  change.compare.expected.push_back({"*", "spread"});
  EXPECT_EQ(declared_spread_devices(change, {"leaf1", "leaf2"}),
            (std::set<std::string>{"leaf1", "leaf2"}));
}

TEST(LoadSpread, ForeignShapesAreNoEvidenceNeverAThrow) {
  // Given counters as strings and routes as an object, then nothing throws: no group from the
  // routes, and the counters' group is missing.
  json odd = snapshot(0, 0);
  odd["devices"]["leaf1"]["routes"]["ipv4"] = json::object();
  EXPECT_TRUE(ecmp_groups(odd).groups.empty());
  auto before = snapshot(1, 1);
  json after = before;
  after["devices"]["leaf1"]["interfaces"]["to-spine1"]["counters"]["tx_packets"] = "many";
  auto spreads = measure_spread(ecmp_groups(before).groups, before, after);
  ASSERT_EQ(spreads.size(), 1u);
  EXPECT_FALSE(spreads[0].missing.empty());
  EXPECT_NO_THROW(ecmp_groups(json::array()));
  EXPECT_NO_THROW(measure_spread(ecmp_groups(before).groups, json(42), json("x")));
}

}  // namespace
}  // namespace fabgate::pipeline
