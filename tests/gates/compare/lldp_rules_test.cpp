// The shipped fabric-default rule set's LLDP rule (lldp-neighbors) against lldp facts laid out
// by the FRR profile's LLDP normalizers from lldpcli output captured in the Clos lab
// (tests/gates/snapshot/testdata/clos-lab/leaf1-lldp-*.json): a neighbour lost or changed on
// any port fails, unless the change expects it; an unchanged port passes.

#include <gtest/gtest.h>

#include <string>

#include "gates/compare/default_rules.h"
#include "gates/snapshot/normalizers.h"
#include "tests/gates/compare/fixtures.h"
#include "tests/support/temp_dir.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using testing::document;
using testing::leaf;

RuleSet fabric_default() {
  auto set = load_rule_set(default_rule_set_text(), kDefaultRuleSetName);
  if (!set) {
    ADD_FAILURE() << set.error().message;
    return RuleSet{};
  }
  return std::move(set).value();
}

// leaf1's lldp category as `fabgate snapshot` builds it from the lab's lldpcli output.
json leaf1_lldp() {
  auto captured = [](const std::string& name) {
    return fabgate::testing::read_file(std::string(FABGATE_SOURCE_DIR) +
                                       "/tests/gates/snapshot/testdata/clos-lab/" + name);
  };
  json lldp;
  EXPECT_TRUE(snapshot::parse_lldp_interfaces(captured("leaf1-lldp-interfaces.json"), lldp));
  EXPECT_TRUE(snapshot::parse_lldp_neighbors(captured("leaf1-lldp-neighbors.json"), lldp));
  return lldp;
}

Report compare(const json& pre_lldp, const json& post_lldp,
               std::vector<intent::ExpectedDifference> expected = {}) {
  return testing::run(document({{"leaf1", leaf({{"lldp", pre_lldp}})}}),
                      document({{"leaf1", leaf({{"lldp", post_lldp}})}}), fabric_default(),
                      std::move(expected));
}

// rule verdict per port ("to-host2" -> "fail").
std::map<std::string, std::string> lldp_verdicts(const Report& report) {
  std::map<std::string, std::string> out;
  const std::string prefix = "devices.leaf1.lldp.neighbors.";
  for (const auto& result : report.results) {
    if (result.rule != "lldp-neighbors") continue;
    EXPECT_EQ(result.path.rfind(prefix, 0), 0u) << result.path;
    out[result.path.substr(prefix.size())] = std::string(to_string(result.verdict));
  }
  return out;
}

TEST(LldpRule, UnchangedNeighboursPassOnEveryPort) {
  // Given leaf1's four LLDP ports unchanged between the snapshots, then each port is checked
  // and passes, and the report passes.
  json lldp = leaf1_lldp();
  Report report = compare(lldp, lldp);
  EXPECT_EQ(lldp_verdicts(report), (std::map<std::string, std::string>{{"to-host1", "pass"},
                                                                       {"to-host2", "pass"},
                                                                       {"to-spine1", "pass"},
                                                                       {"to-spine2", "pass"}}));
  EXPECT_EQ(report.verdict(), Verdict::pass);
}

TEST(LldpRule, ANeighbourLostOrChangedFailsOnItsPort) {
  // Given host2 no longer heard on to-host2 (its port is empty after the change) and spine2's
  // port id on to-spine2 changed, then both ports fail naming what was there and what is, the
  // other ports pass, and the first disproven hypothesis is at the link layer.
  json pre = leaf1_lldp();
  json post = pre;
  post["neighbors"]["to-host2"] = json::array();
  post["neighbors"]["to-spine2"][0]["port_id"] = "to-leaf9";
  Report report = compare(pre, post);
  EXPECT_EQ(lldp_verdicts(report), (std::map<std::string, std::string>{{"to-host1", "pass"},
                                                                       {"to-host2", "fail"},
                                                                       {"to-spine1", "pass"},
                                                                       {"to-spine2", "fail"}}));
  EXPECT_EQ(report.verdict(), Verdict::fail);
  for (const auto& result : report.results) {
    if (result.rule == "lldp-neighbors" && result.verdict == Verdict::fail) {
      EXPECT_EQ(result.layer, Layer::link);
      EXPECT_NE(result.reason.find("changed from"), std::string::npos) << result.reason;
    }
  }
  ASSERT_TRUE(report.first_disproven.has_value());
  EXPECT_EQ(report.results[*report.first_disproven].rule, "lldp-neighbors");
}

TEST(LldpRule, ALossTheChangeExpectsPasses) {
  // Given the same loss on to-host2, declared by the change as an expected difference of
  // lldp.neighbors.to-host2, then that port passes as expected and the report passes.
  json pre = leaf1_lldp();
  json post = pre;
  post["neighbors"]["to-host2"] = json::array();
  intent::ExpectedDifference expected;
  expected.device = "leaf1";
  expected.path = "lldp.neighbors.to-host2";
  Report report = compare(pre, post, {expected});
  EXPECT_EQ(lldp_verdicts(report)["to-host2"], "pass");
  EXPECT_EQ(report.verdict(), Verdict::pass);
}

}  // namespace
}  // namespace fabgate::compare
