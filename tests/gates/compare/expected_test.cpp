// A change's expected differences replace every rule on the elements they name.

#include <gtest/gtest.h>

#include "tests/gates/compare/fixtures.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using namespace testing;

json device(const char* p1_state, bool with_p2 = true) {
  json peers = {{"p1", {{"state", p1_state}}}};
  if (with_p2) peers["p2"] = {{"state", "Established"}};
  return leaf({{"bgp", {{"peers", peers}}}});
}

intent::ExpectedDifference expect(std::string dev, std::string path,
                                  std::vector<std::string> values, bool absent = false) {
  intent::ExpectedDifference difference;
  difference.device = std::move(dev);
  difference.path = std::move(path);
  difference.values = std::move(values);
  difference.absent = absent;
  return difference;
}

RuleSet state_rule() {
  return rule("    path: devices.*.bgp.peers.*.state\n    operator: no-change\n");
}

TEST(Expected, AllowedPostValuePassesAndEverythingElseMustHold) {
  // Given a drain expecting p1 to go Idle, then p1 Idle passes and p2 stays under no-change.
  auto report =
      run(document({{"leaf1", device("Established")}}), document({{"leaf1", device("Idle")}}),
          state_rule(), {expect("leaf1", "bgp.peers.p1.state", {"Idle", "Active"})});
  ASSERT_EQ(verdicts(report), "pass pass");
  EXPECT_NE(report.results[0].reason.find("expected difference"), std::string::npos);
}

TEST(Expected, DeclarationOverridesADeltaRuleOnTheSameElement) {
  // Given a delta rule bounding prefixes_received to 10 % and a drain that declares p1's
  // prefixes may change, then p1 dropping to 0 passes while p2 is still bounded.
  auto peers = [](int p1, int p2) {
    return leaf({{"bgp",
                  {{"peers",
                    {{"p1", {{"prefixes_received", p1}}}, {"p2", {{"prefixes_received", p2}}}}}}}});
  };
  auto delta = rule(
      "    path: devices.*.bgp.peers.*.prefixes_received\n    operator: delta\n"
      "    max: 10%\n");
  auto report = run(document({{"leaf1", peers(3, 3)}}), document({{"leaf1", peers(0, 0)}}), delta,
                    {expect("leaf1", "bgp.peers.p1.prefixes_received", {})});
  ASSERT_EQ(verdicts(report), "pass fail");
  EXPECT_NE(report.results[0].reason.find("expected difference"), std::string::npos);
}

TEST(Expected, DisallowedPostValueFails) {
  // Given p1 expected Idle but found Connect, then it fails naming the allowed values.
  auto report =
      run(document({{"leaf1", device("Established")}}), document({{"leaf1", device("Connect")}}),
          state_rule(), {expect("leaf1", "bgp.peers.p1.state", {"Idle"})});
  ASSERT_EQ(verdicts(report), "fail pass");
  EXPECT_NE(report.results[0].reason.find("Idle"), std::string::npos);
}

TEST(Expected, AbsentPassesOnlyWhenTheElementIsGone) {
  // Given p2 expected to be removed, then its disappearance passes; if it stays, it fails.
  auto diff = expect("leaf1", "bgp.peers.p2", {}, true);
  auto gone = run(document({{"leaf1", device("Established")}}),
                  document({{"leaf1", device("Established", false)}}), state_rule(), {diff});
  EXPECT_EQ(verdicts(gone), "pass pass");
  auto stays = run(document({{"leaf1", device("Established")}}),
                   document({{"leaf1", device("Established")}}), state_rule(), {diff});
  EXPECT_EQ(verdicts(stays), "pass fail");
}

TEST(Expected, DeviceStarAppliesToEveryDevice) {
  // Given device "*" and a wildcard path, then p1 on both leaves is judged by the declaration.
  auto pre = document({{"leaf1", device("Established")}, {"leaf2", device("Established")}});
  auto post = document({{"leaf1", device("Idle")}, {"leaf2", device("Idle")}});
  auto report = run(pre, post, state_rule(), {expect("*", "bgp.peers.p1.*", {"Idle"})});
  EXPECT_EQ(verdicts(report), "pass pass pass pass");
  auto without = run(pre, post, state_rule());
  EXPECT_EQ(verdicts(without), "fail pass fail pass");
}

TEST(Expected, DeclarationThatMatchesNothingIsReported) {
  // Given an expected difference with a typo in its path, then it is a no-evidence result
  // rather than silently unchecked.
  auto report = run(document({{"leaf1", device("Established")}}),
                    document({{"leaf1", device("Established")}}), state_rule(),
                    {expect("leaf1", "bgp.peer.p1.state", {"Idle"})});
  ASSERT_EQ(verdicts(report), "pass pass no-evidence");
  EXPECT_EQ(report.results[2].rule, "expected-difference");
  EXPECT_EQ(report.results[2].path, "devices.leaf1.bgp.peer.p1.state");
}

TEST(Expected, RouteTableChangesAllowedByDeclaration) {
  // Given a route withdrawn and the change declaring routes.ipv4 may change, then it passes
  // and still lists what changed.
  auto table = [](bool both) {
    json routes = json::array({{{"prefix", "10.0.1.0/24"}, {"nexthops", {"a"}}}});
    if (both) routes.push_back({{"prefix", "10.0.2.0/24"}, {"nexthops", {"a"}}});
    return leaf({{"routes", {{"ipv4", routes}}}});
  };
  auto set = rules(
      "name: t\nrules:\n  - {name: routes, layer: forwarding, path: devices.*.routes.*, operator: "
      "no-change}\n");
  auto report = run(document({{"leaf1", table(true)}}), document({{"leaf1", table(false)}}), set,
                    {expect("leaf1", "routes.ipv4", {})});
  ASSERT_EQ(verdicts(report), "pass");
  EXPECT_NE(report.results[0].reason.find("1 removed"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::compare
