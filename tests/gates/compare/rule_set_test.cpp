#include "gates/compare/rule_set.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "adapters/core/text.h"
#include "gates/compare/default_rules.h"

namespace fabgate::compare {
namespace {

std::string all_problems(const Error& error) {
  return join(error.details, "\n");
}

TEST(RuleSet, ParsesEveryOperatorWithItsArguments) {
  // Given one rule per operator, then each carries its arguments.
  auto set = load_rule_set(R"(name: all
ignore: [devices.*.bgp.peers.*.uptime_ms]
rules:
  - {name: a, layer: link, path: devices.*.interfaces.*.oper, operator: no-change}
  - {name: b, layer: link, path: devices.*.interfaces.*.mtu, operator: equal, value: 9000}
  - {name: c, layer: control-plane, path: devices.*.bgp.peers.*.state, operator: in, values: [Established]}
  - {name: d, layer: link, path: devices.*.interfaces.*.mtu, operator: range, min: 1500, max: 9216}
  - {name: e, layer: control-plane, path: devices.*.bgp.peers.*.prefixes_received, operator: delta, max: 10%}
  - {name: f, layer: link, path: devices.*.interfaces.*.counters.rx_errors, operator: increase, max: 5}
  - {name: g, layer: control-plane, path: devices.*.bgp.peers.*, operator: count, compare: ">=", value: 2}
  - {name: h, layer: control-plane, path: devices.*.evpn.vnis.*, operator: exists}
  - {name: i, layer: forwarding, path: devices.*.routes.ipv4, operator: absent}
)",
                           "all.yaml");
  ASSERT_TRUE(set) << all_problems(set.error());
  ASSERT_EQ(set->rules.size(), 9u);
  EXPECT_EQ(set->ignore.size(), 1u);
  EXPECT_EQ(set->rules[1].value, "9000");
  EXPECT_EQ(set->rules[2].values, std::vector<std::string>{"Established"});
  EXPECT_EQ(*set->rules[3].max, 9216);
  EXPECT_TRUE(set->rules[4].percent);
  EXPECT_EQ(*set->rules[4].max, 10);
  EXPECT_EQ(*set->rules[5].min, 0);
  EXPECT_EQ(set->rules[6].comparison, Comparison::ge);
  EXPECT_EQ(set->rules[6].count, 2);
  EXPECT_EQ(set->rules[8].layer, Layer::forwarding);
}

TEST(RuleSet, MalformedFileReportsEveryProblemWithFileLineColumn) {
  // Given a misspelt key, an unknown operator, a bad layer, a missing argument and a path
  // that does not start at devices, then all five are reported with their locations.
  auto set = load_rule_set(R"(name: broken
rules:
  - name: a
    layer: link
    pth: devices.*.interfaces.*.oper
    operator: no-change
  - name: b
    layer: link
    path: devices.*.interfaces.*.oper
    operator: no-chnage
  - name: c
    layer: fabric
    path: devices.*.interfaces.*.oper
    operator: no-change
  - name: d
    layer: link
    path: devices.*.interfaces.*.mtu
    operator: equal
  - name: e
    layer: link
    path: interfaces.*.mtu
    operator: no-change
)",
                           "policies/compare/broken.yaml");
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().exit_code, ExitCode::invalid_input);
  std::string text = all_problems(set.error());
  EXPECT_NE(text.find("broken.yaml:5:5: error: unknown key 'pth'"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'path'?"), std::string::npos) << text;
  EXPECT_NE(text.find("broken.yaml:10:15:"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'no-change'?"), std::string::npos) << text;
  EXPECT_NE(text.find("broken.yaml:12:12:"), std::string::npos) << text;
  EXPECT_NE(text.find("missing required key 'value'"), std::string::npos) << text;
  EXPECT_NE(text.find("broken.yaml:21:11:"), std::string::npos) << text;
  EXPECT_GE(set.error().details.size(), 5u);
}

TEST(RuleSet, YamlSyntaxErrorNamesTheLocation) {
  // Given a YAML syntax error on line 2, then the error names the file and line.
  auto set = load_rule_set("name: x\nrules: [\n", "bad.yaml");
  ASSERT_FALSE(set);
  EXPECT_NE(set.error().message.find("bad.yaml:"), std::string::npos) << set.error().message;
}

TEST(RuleSet, RouteTablesTakeOnlyTableOperators) {
  // Given range on a route table and a path below a table, then both are refused with a hint.
  auto set = load_rule_set(R"(name: r
rules:
  - {name: a, layer: forwarding, path: devices.*.routes.ipv4, operator: range, min: 1}
  - {name: b, layer: forwarding, path: devices.*.routes.ipv4.0.prefix, operator: no-change}
)",
                           "r.yaml");
  ASSERT_FALSE(set);
  std::string text = all_problems(set.error());
  EXPECT_NE(text.find("r.yaml:3:"), std::string::npos) << text;
  EXPECT_NE(text.find("cannot check a route table"), std::string::npos) << text;
  EXPECT_NE(text.find("r.yaml:4:"), std::string::npos) << text;
}

TEST(RuleSet, ShippedDefaultParsesAndMatchesTheEmbeddedCopy) {
  // Given policies/compare/fabric-default.yaml, then it loads, and the copy compiled into the
  // binary is the same text.
  std::ifstream in(FABGATE_SOURCE_DIR "/policies/compare/fabric-default.yaml");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), default_rule_set_text());
  auto set = load_rule_set(default_rule_set_text(), kDefaultRuleSetName);
  ASSERT_TRUE(set) << all_problems(set.error());
  EXPECT_EQ(set->name, "fabric-default");
  EXPECT_GE(set->rules.size(), 10u);
  EXPECT_FALSE(set->ignore.empty());
}

}  // namespace
}  // namespace fabgate::compare
