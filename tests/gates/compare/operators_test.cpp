// Every operator on small two-device-free snapshots: one device, one fact, pre and post.

#include <gtest/gtest.h>

#include "tests/gates/compare/fixtures.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using namespace testing;

json peers(json state, json prefixes = 4) {
  return leaf(
      {{"bgp", {{"peers", {{"10.0.1.0", {{"state", state}, {"prefixes_received", prefixes}}}}}}}});
}
json iface(json mtu, json rx_errors = 0) {
  return leaf(
      {{"interfaces",
        {{"eth1", {{"oper", "up"}, {"mtu", mtu}, {"counters", {{"rx_errors", rx_errors}}}}}}}});
}

TEST(Operators, NoChangePassesWhenEqualAndFailsWithBothValues) {
  // Given a peer going Established -> Idle, then no-change fails and shows pre and post.
  auto set = rule("    path: devices.*.bgp.peers.*.state\n    operator: no-change\n");
  auto same = run(document({{"leaf1", peers("Established")}}),
                  document({{"leaf1", peers("Established")}}), set);
  EXPECT_EQ(verdicts(same), "pass");
  auto report =
      run(document({{"leaf1", peers("Established")}}), document({{"leaf1", peers("Idle")}}), set);
  ASSERT_EQ(verdicts(report), "fail");
  const auto& result = report.results[0];
  EXPECT_EQ(result.path, "devices.leaf1.bgp.peers.\"10.0.1.0\".state");
  EXPECT_EQ(*result.pre, "\"Established\"");
  EXPECT_EQ(*result.post, "\"Idle\"");
  EXPECT_EQ(result.rule, "r");
  EXPECT_EQ(result.layer, Layer::control_plane);
  EXPECT_EQ(result.device, "leaf1");
}

TEST(Operators, EqualComparesNumbersByValueAndStringsByText) {
  // Given mtu 9000 and a rule equal 9000 (and another 1500), then the first passes only.
  auto pass =
      run(document({{"leaf1", iface(1500)}}), document({{"leaf1", iface(9000)}}),
          rule("    path: devices.*.interfaces.*.mtu\n    operator: equal\n    value: 9000\n"));
  EXPECT_EQ(verdicts(pass), "pass");
  auto fail =
      run(document({{"leaf1", iface(9000)}}), document({{"leaf1", iface(9000)}}),
          rule("    path: devices.*.interfaces.*.mtu\n    operator: equal\n    value: 1500\n"));
  EXPECT_EQ(verdicts(fail), "fail");
}

TEST(Operators, InAcceptsOnlyListedValues) {
  // Given allowed states [Established], then Idle fails and Established passes.
  auto set =
      rule("    path: devices.*.bgp.peers.*.state\n    operator: in\n    values: [Established]\n");
  EXPECT_EQ(verdicts(run(document({{"leaf1", peers("Idle")}}),
                         document({{"leaf1", peers("Established")}}), set)),
            "pass");
  EXPECT_EQ(verdicts(run(document({{"leaf1", peers("Established")}}),
                         document({{"leaf1", peers("Idle")}}), set)),
            "fail");
}

TEST(Operators, RangeChecksBoundsInclusiveAndRejectsNonNumbers) {
  // Given range [1500, 9216], then 9216 passes, 9217 fails, a string fails.
  auto set = rule(
      "    path: devices.*.interfaces.*.mtu\n    operator: range\n    min: 1500\n    max: 9216\n");
  auto pre = document({{"leaf1", iface(9000)}});
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", iface(9216)}}), set)), "pass");
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", iface(9217)}}), set)), "fail");
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", iface("jumbo")}}), set)), "fail");
}

TEST(Operators, DeltaAbsoluteAndPercent) {
  // Given 100 prefixes before, then +10 is within 10% but +11 is not; absolute 5 fails +6.
  auto percent = rule(
      "    path: devices.*.bgp.peers.*.prefixes_received\n    operator: delta\n    max: 10%\n");
  auto pre = document({{"leaf1", peers("Established", 100)}});
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", peers("Established", 110)}}), percent)), "pass");
  auto over = run(pre, document({{"leaf1", peers("Established", 89)}}), percent);
  EXPECT_EQ(verdicts(over), "fail");
  EXPECT_NE(over.results[0].reason.find("-11"), std::string::npos) << over.results[0].reason;
  auto absolute =
      rule("    path: devices.*.bgp.peers.*.prefixes_received\n    operator: delta\n    max: 5\n");
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", peers("Established", 105)}}), absolute)), "pass");
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", peers("Established", 106)}}), absolute)), "fail");
}

TEST(Operators, IncreaseBoundsCounterGrowthAndCatchesResets) {
  // Given rx_errors bounded to +5, then +5 passes, +6 fails, and a counter going backwards
  // fails as a reset.
  auto set = rule(
      "    path: devices.*.interfaces.*.counters.rx_errors\n    operator: increase\n    max: 5\n");
  auto pre = document({{"leaf1", iface(9000, 10)}});
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", iface(9000, 15)}}), set)), "pass");
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", iface(9000, 16)}}), set)), "fail");
  auto reset = run(pre, document({{"leaf1", iface(9000, 2)}}), set);
  EXPECT_EQ(verdicts(reset), "fail");
  EXPECT_NE(reset.results[0].reason.find("backwards"), std::string::npos);
}

TEST(Operators, IncreaseCountsFromTheCountersSinceSnapshotWhenOneIsGiven) {
  // Given rx_errors 10 before the change, 14 when the fault was captured and a rule allowing no
  // growth, then after the rollback 14 passes counted from the captured snapshot (a counter
  // never returns to 10) and names it, while 15 fails there: one more error since the capture.
  auto set = rule(
      "    path: devices.*.interfaces.*.counters.rx_errors\n    operator: increase\n    max: 0\n");
  auto pre = document({{"leaf1", iface(9000, 10)}});
  const Snapshot captured = snapshot(document({{"leaf1", iface(9000, 14)}}), "post.json");
  CompareOptions options;
  options.counters_since = &captured;
  auto held = run(pre, document({{"leaf1", iface(9000, 14)}}), set, {}, {}, options);
  ASSERT_EQ(verdicts(held), "pass");
  EXPECT_EQ(*held.results[0].pre, "14");
  EXPECT_NE(held.results[0].reason.find("since the post snapshot (post.json)"), std::string::npos)
      << held.results[0].reason;
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", iface(9000, 15)}}), set, {}, {}, options)),
            "fail");
  // Without it, the same restored value fails against the baseline, as before.
  EXPECT_EQ(verdicts(run(pre, document({{"leaf1", iface(9000, 14)}}), set)), "fail");
}

TEST(Operators, CountComparesTheNumberOfMatchedElementsPerDevice) {
  // Given one peer after the change and a rule count >= 2, then one fail for the device.
  auto set = rule(
      "    path: devices.*.bgp.peers.*\n    operator: count\n    compare: \">=\"\n    value: 2\n");
  auto report = run(document({{"leaf1", peers("Established")}}),
                    document({{"leaf1", peers("Established")}}), set);
  ASSERT_EQ(verdicts(report), "fail");
  EXPECT_EQ(*report.results[0].post, "1");
  EXPECT_EQ(report.results[0].path, "devices.leaf1.bgp.peers.*");
  auto one = rule(
      "    path: devices.*.bgp.peers.*\n    operator: count\n    compare: \"==\"\n    value: 1\n");
  EXPECT_EQ(verdicts(run(document({{"leaf1", peers("Established")}}),
                         document({{"leaf1", peers("Established")}}), one)),
            "pass");
}

TEST(Operators, ExistsAndAbsentLookOnlyAtThePostSnapshot) {
  // Given a VNI that disappears, then exists fails for it and absent passes for it.
  auto with = leaf({{"evpn", {{"vnis", {{"10100", {{"type", "L2"}}}}}}}});
  auto without = leaf({{"evpn", {{"vnis", json::object()}}}});
  auto exists = rule("    path: devices.*.evpn.vnis.*\n    operator: exists\n");
  auto absent = rule("    path: devices.*.evpn.vnis.*\n    operator: absent\n");
  EXPECT_EQ(verdicts(run(document({{"leaf1", with}}), document({{"leaf1", without}}), exists)),
            "fail");
  EXPECT_EQ(verdicts(run(document({{"leaf1", with}}), document({{"leaf1", without}}), absent)),
            "pass");
  EXPECT_EQ(verdicts(run(document({{"leaf1", with}}), document({{"leaf1", with}}), absent)),
            "fail");
  EXPECT_EQ(verdicts(run(document({{"leaf1", without}}), document({{"leaf1", without}}), exists)),
            "fail");
}

TEST(Operators, RouteTableNoChangeReportsAddedRemovedChanged) {
  // Given a route removed and one with new next hops, then no-change fails with the counts
  // and examples; count checks the table size.
  auto route = [](const char* prefix, json hops) {
    return json{{"prefix", prefix}, {"protocol", "bgp"}, {"metric", 20}, {"nexthops", hops}};
  };
  auto pre = document(
      {{"leaf1",
        leaf({{"routes",
               {{"ipv4", {route("10.0.1.0/24", {"a"}), route("10.0.2.0/24", {"a"})}}}}})}});
  auto post =
      document({{"leaf1", leaf({{"routes", {{"ipv4", {route("10.0.1.0/24", {"a", "b"})}}}}})}});
  auto report = run(pre, post, rules(R"(name: t
rules:
  - {name: routes, layer: forwarding, path: devices.*.routes.*, operator: no-change}
  - {name: size, layer: forwarding, path: devices.*.routes.ipv4, operator: count, compare: ">=", value: 2}
)"));
  ASSERT_EQ(verdicts(report), "fail fail");
  EXPECT_EQ(report.results[0].path, "devices.leaf1.routes.ipv4");
  EXPECT_EQ(report.results[0].reason, "0 added, 1 removed, 1 changed");
  EXPECT_EQ(*report.results[0].pre, "2 routes");
  ASSERT_EQ(report.results[0].details.size(), 2u);
  EXPECT_EQ(report.results[0].details[0], "- 10.0.2.0/24 bgp metric 20 via a");
  EXPECT_EQ(*report.results[1].post, "1");
}

TEST(Wildcards, MapKeysListIndicesAndSeveralWildcards) {
  // Given two interfaces with two addresses each, then `interfaces.*.addresses.*` checks four
  // elements (map key and list index wildcards together), and only the changed one fails.
  auto make = [](const char* last) {
    return leaf({{"interfaces",
                  {{"eth1", {{"addresses", {"10.0.0.1/31", "10.0.0.3/31"}}}},
                   {"eth2", {{"addresses", {"10.0.1.1/31", last}}}}}}});
  };
  auto report =
      run(document({{"leaf1", make("10.0.1.3/31")}}), document({{"leaf1", make("10.0.1.5/31")}}),
          rule("    path: devices.*.interfaces.*.addresses.*\n    operator: no-change\n"));
  ASSERT_EQ(verdicts(report), "pass pass pass fail");
  EXPECT_EQ(report.results[3].path, "devices.leaf1.interfaces.eth2.addresses.1");

  auto glob =
      run(document({{"leaf1", make("x")}, {"spine1", make("x")}}),
          document({{"leaf1", make("x")}, {"spine1", make("x")}}),
          rule("    path: devices.leaf*.interfaces.eth2.addresses.0\n    operator: no-change\n"));
  ASSERT_EQ(glob.results.size(), 1u);
  EXPECT_EQ(glob.results[0].device, "leaf1");
}

TEST(Volatile, IgnoredFieldsSkipWildcardRulesButNotRulesThatNameThem) {
  // Given counters.* no-change with rx_packets ignored, then only rx_errors is compared; a rule
  // naming counters.rx_packets still checks it; the ignore list counts what it kept out.
  auto make = [](int packets) {
    return leaf(
        {{"interfaces", {{"eth1", {{"counters", {{"rx_packets", packets}, {"rx_errors", 0}}}}}}}});
  };
  auto set = rules(R"(name: t
ignore: [devices.*.interfaces.*.counters.rx_packets]
rules:
  - {name: all, layer: link, path: devices.*.interfaces.*.counters.*, operator: no-change}
  - {name: whole, layer: link, path: devices.*.interfaces.*, operator: no-change}
  - {name: named, layer: link, path: devices.*.interfaces.*.counters.rx_packets, operator: no-change}
)");
  auto report = run(document({{"leaf1", make(10)}}), document({{"leaf1", make(99)}}), set);
  ASSERT_EQ(verdicts(report), "pass pass fail");
  EXPECT_EQ(report.results[0].path, "devices.leaf1.interfaces.eth1.counters.rx_errors");
  EXPECT_EQ(report.results[1].post->find("rx_packets"), std::string::npos);
  ASSERT_EQ(report.ignored.size(), 1u);
  EXPECT_EQ(report.ignored[0].elements, 3u);  // one skip, two stripped (pre and post)
}

}  // namespace
}  // namespace fabgate::compare
