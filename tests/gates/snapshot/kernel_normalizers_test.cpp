// Normalizers of packet-filter state, the multipath hash policy and the IP stack's receive
// errors, on output captured on Debian 12 (nftables 1.0.6, kernel 6.x): the rules of
// testdata/nftables/rules.nft loaded into a network namespace created for the capture, then
// `nft -j list ruleset` after pings moved a counter (ruleset.json), after one rule was deleted
// and added again the same (ruleset-readded.json), after more pings (ruleset-counted.json),
// after a drop rule was added (ruleset-drop-added.json) and after `nft flush ruleset`
// (ruleset-empty.json); /proc/net/snmp and the /proc/sys hash policy of the capture machine.

#include <gtest/gtest.h>

#include "gates/snapshot/normalizers.h"
#include "tests/support/temp_dir.h"

namespace fabgate::snapshot {
namespace {

using nlohmann::json;

std::string sample(const std::string& name) {
  return testing::read_file(std::string(FABGATE_SOURCE_DIR) + "/tests/gates/snapshot/testdata/" +
                            name);
}

json ruleset(const std::string& name) {
  json packet_filter;
  auto parsed = parse_nft_ruleset(sample("nftables/" + name), packet_filter);
  EXPECT_TRUE(parsed) << name << ": " << parsed.error();
  return packet_filter;
}

// The packet_filter category without what traffic and re-adds move: what the default rule set
// compares.
json configuration(json packet_filter) {
  packet_filter.erase("handles");
  packet_filter.erase("counters");
  return packet_filter;
}

TEST(NftRuleset, TablesChainsRulesAndSetsAreReadInTheirCanonicalForm) {
  // Given a real ruleset with an inet table (a set, two base chains, a regular chain), an ip
  // nat table and a netdev table, then every table lists its chains and sets, base chains carry
  // type, hook, priority and policy, and each rule reads as one line close to nft's syntax.
  json filter = ruleset("ruleset.json");
  EXPECT_EQ(filter.at("tables"),
            (json{{"inet fgtest", {{"chains", {"fabric_in", "forward", "input"}},
                                   {"sets", {"blocked"}}}},
                  {"ip nat", {{"chains", {"postrouting"}}, {"sets", json::array()}}},
                  {"netdev isolate", {{"chains", {"leaf1"}}, {"sets", json::array()}}}}));
  const json& input = filter.at("chains").at("inet fgtest input");
  EXPECT_EQ(input.at("type"), "filter");
  EXPECT_EQ(input.at("hook"), "input");
  EXPECT_EQ(input.at("priority"), 0);
  EXPECT_EQ(input.at("policy"), "accept");
  EXPECT_EQ(input.at("rules"),
            (json{"ip saddr @blocked counter drop", "tcp dport { 22, 179 } accept",
                  "icmp type echo-request counter accept",
                  "ip daddr 10.1.2.0/24 meta l4proto udp counter drop comment \"storage acl\""}));
  const json& forward = filter.at("chains").at("inet fgtest forward");
  EXPECT_EQ(forward.at("policy"), "drop");
  EXPECT_EQ(forward.at("rules"),
            (json{"ct state established,related accept", "meta iifname to-leaf1 jump fabric_in",
                  "ip daddr 10.1.2.12 numgen mod 100 mode random offset 0 < 2 drop"}));
  // A regular chain (a jump target) has rules and no hook.
  const json& fabric_in = filter.at("chains").at("inet fgtest fabric_in");
  EXPECT_FALSE(fabric_in.contains("hook"));
  EXPECT_EQ(fabric_in.at("rules"),
            (json{"udp dport 3784 reject expr port-unreachable type icmpx",
                  "ip6 nexthdr ipv6-icmp accept", "counter"}));
  EXPECT_EQ(filter.at("chains").at("ip nat postrouting").at("priority"), 100);
  EXPECT_EQ(filter.at("sets").at("inet fgtest blocked"),
            (json{{"kind", "set"},
                  {"flags", json::array()},
                  {"type", "ipv4_addr"},
                  {"elements", {"10.9.9.10", "10.9.9.9"}}}));
}

TEST(NftRuleset, CountersAndHandlesAreKeptApartFromTheRules) {
  // Given the ruleset after three pings matched the echo-request rule, then its counter is
  // under `counters` by chain and handle (3 packets), every rule's handle is under `handles` in
  // rule order, and no counter value is part of a rule's text.
  json filter = ruleset("ruleset.json");
  EXPECT_EQ(filter.at("counters").at("inet fgtest input").at("8"),
            (json{{"packets", 3}, {"bytes", 252}, {"rule", "icmp type echo-request counter accept"}}));
  EXPECT_EQ(filter.at("counters").at("inet fgtest input").size(), 3u);  // three counting rules
  EXPECT_EQ(filter.at("handles").at("inet fgtest input"), (json{5, 7, 8, 9}));
  EXPECT_EQ(filter.at("chains").at("inet fgtest input").at("rules")[2].get<std::string>().find(
                "252"),
            std::string::npos);
}

TEST(NftRuleset, ARuleAddedAgainAndMovingCountersLeaveTheConfigurationAsItWas) {
  // Given the same rule deleted and added again at its place (a new handle, its counter back
  // to 0), and later more pings (counters moved), then the compared configuration is identical
  // each time; only handles and counters differ.
  json before = ruleset("ruleset.json");
  json readded = ruleset("ruleset-readded.json");
  json counted = ruleset("ruleset-counted.json");
  EXPECT_EQ(configuration(readded), configuration(before));
  EXPECT_EQ(configuration(counted), configuration(before));
  EXPECT_NE(readded.at("handles"), before.at("handles"));
  EXPECT_NE(counted.at("counters"), readded.at("counters"));
}

TEST(NftRuleset, AnAddedDropRuleChangesItsChain) {
  // Given a drop rule appended to the forward chain, then that chain's rules differ (the new
  // rule last) and every other chain is unchanged.
  json before = ruleset("ruleset.json");
  json after = ruleset("ruleset-drop-added.json");
  const json& rules = after.at("chains").at("inet fgtest forward").at("rules");
  ASSERT_EQ(rules.size(), 4u);
  EXPECT_EQ(rules[3], "ip daddr 10.1.2.0/24 meta l4proto udp drop");
  EXPECT_EQ(after.at("chains").at("inet fgtest input"), before.at("chains").at("inet fgtest input"));
  EXPECT_EQ(after.at("tables"), before.at("tables"));
}

TEST(NftRuleset, AnEmptyRulesetIsEvidenceOfNoTables) {
  // Given `nft -j list ruleset` with nothing loaded (only its metainfo), then the category is
  // present with no tables, chains or sets: evidence of an empty filter, not a missing one.
  json filter = ruleset("ruleset-empty.json");
  EXPECT_EQ(filter.at("tables"), json::object());
  EXPECT_EQ(filter.at("chains"), json::object());
  EXPECT_EQ(filter.at("sets"), json::object());
}

TEST(NftRuleset, ADynamicSetIsComparedByItsDefinitionOnly) {
  // Given a set the packet path fills (flags dynamic, elements with expiry), then its elements
  // are not read as configuration.
  json filter;
  ASSERT_TRUE(parse_nft_ruleset(
      R"({"nftables": [{"set": {"family": "ip", "table": "t", "name": "seen", "type": "ipv4_addr",
          "flags": ["dynamic", "timeout"], "elem": [{"elem": {"val": "10.0.0.1", "expires": 3}}]}}]})",
      filter));
  EXPECT_EQ(filter.at("sets").at("ip t seen").at("elements"), "dynamic (not compared)");
  EXPECT_EQ(filter.at("tables").at("ip t").at("sets"), (json{"seen"}));
}

TEST(NftRuleset, ForeignShapesAreFailuresNamingTheField) {
  // Given output of other shapes, then each is a failure naming the field (the source becomes
  // no-evidence), never an exception.
  struct Case {
    const char* output;
    const char* names;
  };
  const Case cases[] = {
      {"Error: Could not process rule: Operation not permitted", "not JSON"},
      {"", "not JSON (empty output)"},
      {R"({"tables": []})", "field 'nftables' is missing"},
      {R"({"nftables": {"table": {}}})", "field 'nftables' is an object, not an array"},
      {R"({"nftables": ["table"]})", "field 'nftables[0]' is a string"},
      {R"({"nftables": [{"table": {"family": 2, "name": "x"}}]})",
       "field 'nftables[0].table.family' is an integer, not a string"},
      {R"({"nftables": [{"chain": {"family": "ip", "table": "t", "name": "c", "prio": "high"}}]})",
       "field 'nftables[0].chain.prio' is a string, not an integer"},
      {R"({"nftables": [{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": "4",
          "expr": []}}]})",
       "field 'nftables[0].rule.handle' is a string, not an integer"},
      {R"({"nftables": [{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 4}}]})",
       "field 'nftables[0].rule.expr' is missing"},
      {R"({"nftables": [{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 4,
          "expr": "drop"}}]})",
       "field 'nftables[0].rule.expr' is a string, not an array"},
      {R"({"nftables": [{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 4,
          "expr": [{"drop": null, "accept": null}]}}]})",
       "field 'nftables[0].rule.expr[0]' is an object with 2 members, not a statement"},
      {R"({"nftables": [{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 4,
          "expr": [{"match": {"left": 1, "op": "=="}}]}}]})",
       "field 'nftables[0].rule.expr[0].match.right' is missing"},
      {R"({"nftables": [{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 4,
          "expr": [{"counter": {"packets": "many", "bytes": 0}}]}}]})",
       "field 'nftables[0].rule.expr[0].counter.packets' is a string, not an integer"},
      {R"({"nftables": [{"chain": {"family": "netdev", "table": "t", "name": "c",
          "dev": ["eth0", 7]}}]})",
       "field 'nftables[0].chain.dev[1]' is an integer, not a string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.output);
    json filter;
    auto parsed = parse_nft_ruleset(c.output, filter);
    ASSERT_FALSE(parsed);
    EXPECT_NE(parsed.error().find(c.names), std::string::npos) << parsed.error();
    EXPECT_TRUE(filter.is_null()) << "nothing is written on a failure";
  }
}

TEST(NftRuleset, DeepNestingIsRefusedNamingTheField) {
  // Given a statement nested 40 levels deep (inside the document's 64) and a document nested
  // 100 levels deep, then the first is refused naming the field where the expression limit is
  // passed and the second before it is parsed; neither recurses without bound.
  std::string deep = R"({"nftables": [{"rule": {"family": "ip", "table": "t", "chain": "c",
      "handle": 4, "expr": [{"match": {"op": "==", "left": 1, "right": )";
  for (int i = 0; i < 40; ++i) deep += R"({"x": )";
  deep += "1";
  for (int i = 0; i < 40; ++i) deep += "}";
  deep += "}}]}}]}";
  json filter;
  auto parsed = parse_nft_ruleset(deep, filter);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().find("field 'nftables[0].rule.expr[0].match.right.x.x"),
            std::string::npos)
      << parsed.error();
  EXPECT_NE(parsed.error().find("nests deeper than 24 levels"), std::string::npos)
      << parsed.error();

  std::string deeper = R"({"nftables": )" + std::string(100, '[') + std::string(100, ']') + "}";
  auto refused = parse_nft_ruleset(deeper, filter);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("deeper than 64"), std::string::npos) << refused.error();
}

TEST(MultipathHash, PolicyAndFieldsFromProcSysOrSysctl) {
  // Given the capture machine's `grep -H . /proc/sys/...` (policy 0 both ways), then both
  // families are read; given sysctl's form with the hash fields, then those are read too.
  json multipath;
  ASSERT_TRUE(parse_multipath_hash(sample("multipath-hash-policy.txt"), multipath));
  EXPECT_EQ(multipath.at("hash_policy"), (json{{"ipv4", 0}, {"ipv6", 0}}));
  EXPECT_FALSE(multipath.contains("hash_fields"));

  json lab;
  ASSERT_TRUE(parse_multipath_hash(
      "net.ipv4.fib_multipath_hash_policy = 1\nnet.ipv6.fib_multipath_hash_policy = 1\n"
      "net.ipv4.fib_multipath_hash_fields = 7\n",
      lab));
  EXPECT_EQ(lab.at("hash_policy"), (json{{"ipv4", 1}, {"ipv6", 1}}));
  EXPECT_EQ(lab.at("hash_fields"), (json{{"ipv4", 7}}));
}

TEST(MultipathHash, AMissingOrUnreadablePolicyIsNotEvidence) {
  // Given no IPv4 policy, or a value that is not a number, then the source has no evidence,
  // naming the setting; a kernel without IPv6 has only the IPv4 policy.
  json multipath;
  auto missing = parse_multipath_hash("/proc/sys/net/ipv6/fib_multipath_hash_policy:1\n", multipath);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "no net.ipv4.fib_multipath_hash_policy in the output");
  auto garbled = parse_multipath_hash("/proc/sys/net/ipv4/fib_multipath_hash_policy:one\n", multipath);
  ASSERT_FALSE(garbled);
  EXPECT_EQ(garbled.error(), "net.ipv4.fib_multipath_hash_policy is 'one', not an integer");
  EXPECT_TRUE(multipath.is_null());
  ASSERT_TRUE(parse_multipath_hash("/proc/sys/net/ipv4/fib_multipath_hash_policy:1\n", multipath));
  EXPECT_EQ(multipath.at("hash_policy"), (json{{"ipv4", 1}}));
}

TEST(ProcNetSnmp, ReceiveErrorsOfIpIcmpAndUdp) {
  // Given the capture machine's /proc/net/snmp (8,863 UDP datagrams dropped for a full socket
  // buffer, no checksum errors), then the six receive counters are read by protocol.
  json ip_stack;
  ASSERT_TRUE(parse_proc_net_snmp(sample("proc-net-snmp.txt"), ip_stack));
  EXPECT_EQ(ip_stack.at("ip"), (json{{"in_hdr_errors", 0}, {"in_addr_errors", 0}}));
  EXPECT_EQ(ip_stack.at("icmp"), (json{{"in_csum_errors", 0}}));
  EXPECT_EQ(ip_stack.at("udp"),
            (json{{"in_csum_errors", 0}, {"in_errors", 8863}, {"rcvbuf_errors", 8863}}));
}

TEST(ProcNetSnmp, OtherShapesAreNotEvidence) {
  // Given a kernel without InCsumErrors, lines whose names and values disagree, or a value
  // that is not a counter, then each is a failure naming the protocol and counter.
  const std::string ip = "Ip: InHdrErrors InAddrErrors\nIp: 0 0\n";
  const std::string icmp = "Icmp: InCsumErrors\nIcmp: 0\n";
  struct Case {
    std::string output, names;
  };
  const Case cases[] = {
      {ip + icmp + "Udp: InDatagrams InErrors RcvbufErrors\nUdp: 1 0 0\n",
       "no Udp InCsumErrors"},
      {ip + icmp + "Udp: InCsumErrors InErrors RcvbufErrors\nUdp: 0 0\n",
       "the 'Udp:' lines hold 3 names but 2 values"},
      {ip + icmp + "Udp: InCsumErrors InErrors RcvbufErrors\nUdp: 0 -4 0\n",
       "Udp InErrors is '-4', not a counter"},
      {icmp + "Udp: InCsumErrors InErrors RcvbufErrors\nUdp: 0 0 0\n", "no 'Ip:' lines"},
      {"cat: /proc/net/snmp: No such file or directory\n", "no 'Ip:' lines"},
      {"Ip 0 0\n", "malformed line 'Ip 0 0'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.output);
    json ip_stack;
    auto parsed = parse_proc_net_snmp(c.output, ip_stack);
    ASSERT_FALSE(parsed);
    EXPECT_NE(parsed.error().find(c.names), std::string::npos) << parsed.error();
  }
}

}  // namespace
}  // namespace fabgate::snapshot
