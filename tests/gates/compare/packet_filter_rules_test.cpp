// The shipped fabric-default rule set's packet-filter, multipath-hash and IP-stack rules
// against facts laid out by the snapshot normalizers from real `nft -j list ruleset` output
// (tests/gates/snapshot/testdata/nftables, captured in a throwaway network namespace) and
// /proc/net/snmp: a rule, chain or table added is a difference the change must declare, rule
// counters and handles are not, the hash policy may not change undeclared, and checksum and
// header errors may not grow.

#include <gtest/gtest.h>

#include <map>
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

json packet_filter(const std::string& capture) {
  json facts;
  auto parsed = snapshot::parse_nft_ruleset(
      fabgate::testing::read_file(std::string(FABGATE_SOURCE_DIR) +
                                  "/tests/gates/snapshot/testdata/nftables/" + capture),
      facts);
  EXPECT_TRUE(parsed) << capture << ": " << parsed.error();
  return facts;
}

json ip_stack(int udp_csum_errors, int rcvbuf_errors, int hdr_errors = 0) {
  return {{"ip", {{"in_hdr_errors", hdr_errors}, {"in_addr_errors", 0}}},
          {"icmp", {{"in_csum_errors", 0}}},
          {"udp",
           {{"in_csum_errors", udp_csum_errors},
            {"in_errors", udp_csum_errors + rcvbuf_errors},
            {"rcvbuf_errors", rcvbuf_errors}}}};
}

Report compare(const json& pre, const json& post,
               std::vector<intent::ExpectedDifference> expected = {}) {
  return testing::run(document({{"leaf1", leaf(pre)}}), document({{"leaf1", leaf(post)}}),
                      fabric_default(), std::move(expected));
}

// Verdict per "rule path" for the rules of this test's categories.
std::map<std::string, std::string> verdicts(const Report& report) {
  std::map<std::string, std::string> out;
  for (const auto& result : report.results) {
    if (result.path.find(".packet_filter.") == std::string::npos &&
        result.path.find(".multipath.") == std::string::npos &&
        result.path.find(".ip_stack.") == std::string::npos)
      continue;
    out[result.rule + " " + result.path] = std::string(to_string(result.verdict));
  }
  return out;
}

const CheckResult* find(const Report& report, const std::string& rule, const std::string& path) {
  for (const auto& result : report.results)
    if (result.rule == rule && result.path == path) return &result;
  return nullptr;
}

TEST(PacketFilterRules, AnUnchangedRulesetPassesWhateverItsCountersAndHandles) {
  // Given the same rules before and after, with one rule added again (a new handle, its counter
  // back to 0) and counters moved by traffic, then every table, chain and set passes and
  // nothing about handles or counters is judged.
  Report report = compare({{"packet_filter", packet_filter("ruleset.json")}},
                          {{"packet_filter", packet_filter("ruleset-counted.json")}});
  auto seen = verdicts(report);
  EXPECT_EQ(seen.at("packet-filter-tables devices.leaf1.packet_filter.tables"), "pass");
  EXPECT_EQ(seen.at("packet-filter-chains devices.leaf1.packet_filter.chains.inet fgtest input"),
            "pass");
  EXPECT_EQ(seen.at("packet-filter-sets devices.leaf1.packet_filter.sets.inet fgtest blocked"),
            "pass");
  for (const auto& [key, verdict] : seen) {
    EXPECT_EQ(key.find("counters"), std::string::npos) << key;
    EXPECT_EQ(key.find("handles"), std::string::npos) << key;
    EXPECT_EQ(verdict, "pass") << key;
  }
  EXPECT_EQ(report.verdict(), Verdict::pass);
}

TEST(PacketFilterRules, AnAddedDropRuleIsAnUndeclaredDifference) {
  // Given a drop rule added to the forward chain and nothing declared, then that chain fails
  // at the forwarding layer naming the new rule, the other chains pass, and the report fails.
  Report report = compare({{"packet_filter", packet_filter("ruleset.json")}},
                          {{"packet_filter", packet_filter("ruleset-drop-added.json")}});
  const CheckResult* forward = find(report, "packet-filter-chains",
                              "devices.leaf1.packet_filter.chains.inet fgtest forward");
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(forward->verdict, Verdict::fail);
  EXPECT_EQ(forward->layer, Layer::forwarding);
  EXPECT_NE(forward->reason.find("ip daddr 10.1.2.0/24 meta l4proto udp drop"), std::string::npos)
      << forward->reason;
  const CheckResult* input = find(report, "packet-filter-chains",
                            "devices.leaf1.packet_filter.chains.inet fgtest input");
  ASSERT_NE(input, nullptr);
  EXPECT_EQ(input->verdict, Verdict::pass);
  EXPECT_EQ(report.verdict(), Verdict::fail);
}

TEST(PacketFilterRules, AnAddedTableFailsAndADeclarationAcceptsIt) {
  // Given a table of its own added to an empty ruleset (what the corpus's ACL changes do),
  // then the table list fails; declared by the change as a difference of packet_filter, the
  // same comparison passes.
  json added = packet_filter("ruleset-empty.json");
  json acl = packet_filter("ruleset-drop-added.json");
  added["tables"]["inet fgtest"] = acl["tables"]["inet fgtest"];
  added["chains"]["inet fgtest forward"] = acl["chains"]["inet fgtest forward"];
  json pre = {{"packet_filter", packet_filter("ruleset-empty.json")}};
  json post = {{"packet_filter", added}};
  Report undeclared = compare(pre, post);
  const CheckResult* tables =
      find(undeclared, "packet-filter-tables", "devices.leaf1.packet_filter.tables");
  ASSERT_NE(tables, nullptr);
  EXPECT_EQ(tables->verdict, Verdict::fail);
  EXPECT_NE(undeclared.verdict(), Verdict::pass);

  intent::ExpectedDifference declared;
  declared.device = "leaf1";
  declared.path = "packet_filter";
  Report accepted = compare(pre, post, {declared});
  EXPECT_EQ(accepted.verdict(), Verdict::pass);
}

TEST(MultipathHashRules, AChangedHashPolicyFails) {
  // Given the IPv4 hash policy moved from L4 (1) to L3 (0), then it fails; IPv6's passes.
  json pre = {{"multipath", {{"hash_policy", {{"ipv4", 1}, {"ipv6", 1}}}}}};
  json post = {{"multipath", {{"hash_policy", {{"ipv4", 0}, {"ipv6", 1}}}}}};
  auto seen = verdicts(compare(pre, post));
  EXPECT_EQ(seen.at("multipath-hash-policy devices.leaf1.multipath.hash_policy.ipv4"), "fail");
  EXPECT_EQ(seen.at("multipath-hash-policy devices.leaf1.multipath.hash_policy.ipv6"), "pass");
}

TEST(IpStackRules, ChecksumErrorsMayNotGrowAndBufferOverflowsAreNotJudged) {
  // Given UDP checksum errors grown by 3 and socket-buffer overflows by 500 (a busy receiver),
  // then the checksum rule fails and nothing judges the overflows or in_errors; given only
  // the overflows grown, then the comparison passes.
  auto seen = verdicts(compare({{"ip_stack", ip_stack(0, 0)}}, {{"ip_stack", ip_stack(3, 500)}}));
  EXPECT_EQ(seen.at("ip-stack-udp-checksum-errors devices.leaf1.ip_stack.udp.in_csum_errors"),
            "fail");
  for (const auto& [key, verdict] : seen) {
    EXPECT_EQ(key.find("rcvbuf_errors"), std::string::npos) << key;
    EXPECT_EQ(key.find("udp.in_errors"), std::string::npos) << key;
  }
  Report busy = compare({{"ip_stack", ip_stack(0, 0)}}, {{"ip_stack", ip_stack(0, 500)}});
  EXPECT_EQ(busy.verdict(), Verdict::pass);
  // Given only header errors grown (TTL expiries: a traceroute across the fabric), then the
  // comparison passes: they are recorded, never judged.
  Report traced = compare({{"ip_stack", ip_stack(0, 0)}}, {{"ip_stack", ip_stack(0, 0, 2)}});
  EXPECT_EQ(traced.verdict(), Verdict::pass);
}

}  // namespace
}  // namespace fabgate::compare
