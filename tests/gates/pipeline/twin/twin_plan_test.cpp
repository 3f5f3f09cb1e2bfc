// The twin's plan from a pre snapshot: which devices, which links, what each node runs, and what
// it cannot reproduce (pure logic; twin_fabric_test builds one for real).

#include "gates/pipeline/twin/twin_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "gates/pipeline/twin/twin_rehearsal.h"

namespace fabgate::pipeline::twin {
namespace {

using nlohmann::json;

intent::Device device(const std::string& name, const std::string& platform,
                      std::vector<std::string> data_addresses = {}) {
  intent::Device made;
  made.name = name;
  made.platform = platform;
  made.data_addresses = std::move(data_addresses);
  return made;
}

json interface(std::vector<std::string> addresses, int mtu = 9000, const std::string& master = "") {
  json entry = {{"admin", "up"}, {"oper", "up"}, {"mtu", mtu}, {"addresses", addresses}};
  if (!master.empty()) entry["master"] = master;
  return entry;
}

json frr_switch(const std::string& name, json interfaces) {
  return {{"identity", {{"hostname", name}}},
          {"interfaces", std::move(interfaces)},
          {"config",
           {{"format", "text"},
            {"text", "Building configuration...\n\nCurrent configuration:\n!\nfrr defaults "
                     "datacenter\nhostname " + name + "\n!\nend\n"}}}};
}

// Two spines, two leaves (leaf2 a VTEP with a host bridge), two hosts, LLDP only between spine1
// and leaf1: every other link must be found by address.
struct Fabric {
  intent::Inventory inventory;
  HeldSnapshot pre;
  Fabric() {
    inventory.devices = {device("spine1", "frr"), device("spine2", "frr"),
                         device("leaf1", "frr"),  device("leaf2", "frr"),
                         device("host1", "linux", {"10.1.1.11"}),
                         device("host3", "linux", {"10.1.2.11"})};
    json devices;
    devices["spine1"] = frr_switch("spine1", {{"lo", interface({"10.0.255.1/32"}, 65536)},
                                              {"to-leaf1", interface({"10.0.1.0/31"})},
                                              {"to-leaf2", interface({"10.0.1.2/31"})}});
    devices["spine1"]["lldp"] = {
        {"neighbors",
         {{"to-leaf1", json::array({{{"system_name", "leaf1"}, {"port_id", "to-spine1"}}})}}}};
    devices["spine2"] = frr_switch("spine2", {{"to-leaf1", interface({"10.0.2.0/31"})},
                                              {"to-leaf2", interface({"10.0.2.2/31"})}});
    devices["leaf1"] = frr_switch("leaf1", {{"to-spine1", interface({"10.0.1.1/31"})},
                                            {"to-spine2", interface({"10.0.2.1/31"})},
                                            {"hosts", interface({"10.1.1.1/24"}, 1500)},
                                            {"to-host1", interface({}, 1500, "hosts")}});
    devices["leaf2"] = frr_switch("leaf2", {{"to-spine1", interface({"10.0.1.3/31"})},
                                            {"to-spine2", interface({"10.0.2.3/31"})},
                                            {"hosts", interface({"10.1.2.1/24"}, 1500)},
                                            {"to-host3", interface({}, 1500, "hosts")},
                                            {"br10100", interface({}, 1500)},
                                            {"vxlan10100", interface({}, 1500, "br10100")}});
    devices["leaf2"]["evpn"] = {
        {"vnis",
         {{"10100", {{"vxlan_if", "vxlan10100"}, {"local_vtep", "10.0.255.12"}, {"udp_port", 4789}}}}}};
    devices["host1"] = {{"interfaces", {{"eth0", interface({"10.1.1.11/24"}, 1500)}}},
                        {"routes",
                         {{"ipv4", json::array({{{"prefix", "0.0.0.0/0"},
                                                 {"protocol", "boot"},
                                                 {"nexthops", {"10.1.1.1"}}},
                                                {{"prefix", "10.1.1.0/24"},
                                                 {"protocol", "kernel"},
                                                 {"nexthops", {"dev:eth0"}}}})}}}};
    devices["host3"] = {{"interfaces", {{"eth0", interface({"10.1.2.11/24"}, 1500)}}}};
    pre.document = {{"devices", devices}};
  }
};

intent::Change change_on(std::vector<std::string> targets, bool with_probe) {
  intent::Change change;
  change.id = "test";
  change.targets = std::move(targets);
  if (with_probe) {
    intent::Probe probe;
    probe.name = "host1-to-host3";
    probe.kind = "flows";
    probe.host = "host1";
    probe.target = "10.1.2.11";
    change.acceptance.probes.push_back(probe);
  }
  return change;
}

const TwinInterface* interface_of(const TwinPlan& plan, const std::string& node,
                                  const std::string& name) {
  const TwinNode* found = plan.find(node);
  if (!found) return nullptr;
  for (const auto& entry : found->interfaces)
    if (entry.name == name) return &entry;
  return nullptr;
}

bool linked(const TwinPlan& plan, const std::string& a, const std::string& a_port,
            const std::string& b, const std::string& b_port) {
  return std::any_of(plan.links.begin(), plan.links.end(), [&](const TwinLink& link) {
    return (link.node_a == a && link.interface_a == a_port && link.node_b == b &&
            link.interface_b == b_port) ||
           (link.node_a == b && link.interface_a == b_port && link.node_b == a &&
            link.interface_b == a_port);
  });
}

TEST(TwinScope, TargetsAloneAtRadiusZero) {
  // Given a change on spine1 without probes and radius 0, then the twin is spine1 alone.
  Fabric fabric;
  auto change = change_on({"spine1"}, false);
  EXPECT_EQ(twin_scope({fabric.inventory, change, fabric.pre, 0}),
            std::vector<std::string>{"spine1"});
}

TEST(TwinScope, OneHopFromTheTargetsByLldpAndByAddress) {
  // Given radius 1 from spine1, then leaf1 (LLDP) and leaf2 (a shared /31) are in, spine2 not.
  Fabric fabric;
  auto change = change_on({"spine1"}, false);
  EXPECT_EQ(twin_scope({fabric.inventory, change, fabric.pre, 1}),
            (std::vector<std::string>{"leaf1", "leaf2", "spine1"}));
}

TEST(TwinScope, ProbePathsBringTheOtherSpine) {
  // Given a probe from host1 to host3, then both hosts, their leaves and the spines beyond are
  // in: draining spine1 on a twin without spine2 would blame the change for a missing path.
  Fabric fabric;
  auto change = change_on({"spine1"}, true);
  EXPECT_EQ(twin_scope({fabric.inventory, change, fabric.pre, 1}),
            (std::vector<std::string>{"host1", "host3", "leaf1", "leaf2", "spine1", "spine2"}));
}

TEST(TwinPlan, WiresLinksAddressesBridgesAndVxlanAsCaptured) {
  Fabric fabric;
  auto change = change_on({"spine1"}, true);
  auto plan = plan_twin({fabric.inventory, change, fabric.pre, 1});
  EXPECT_TRUE(plan.cannot_build.empty());
  // LLDP and a /31 shared by two interfaces make veth pairs.
  EXPECT_TRUE(linked(plan, "spine1", "to-leaf1", "leaf1", "to-spine1"));
  EXPECT_TRUE(linked(plan, "spine2", "to-leaf2", "leaf2", "to-spine2"));
  // A host in a leaf's bridge subnet hangs off that bridge on a port of its own.
  EXPECT_TRUE(linked(plan, "host1", "eth0", "leaf1", "tw-host1"));
  const auto* port = interface_of(plan, "leaf1", "tw-host1");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->master, "hosts");
  // The captured MTU and address; the VXLAN device with its VNI and local VTEP.
  const auto* uplink = interface_of(plan, "leaf1", "to-spine1");
  ASSERT_NE(uplink, nullptr);
  EXPECT_EQ(uplink->mtu, 9000);
  EXPECT_EQ(uplink->addresses, std::vector<std::string>{"10.0.1.1/31"});
  const auto* vxlan = interface_of(plan, "leaf2", "vxlan10100");
  ASSERT_NE(vxlan, nullptr);
  EXPECT_EQ(vxlan->kind, TwinInterface::Kind::vxlan);
  EXPECT_EQ(vxlan->vni, 10100);
  EXPECT_EQ(vxlan->vxlan_local, "10.0.255.12");
  EXPECT_EQ(vxlan->master, "br10100");
  // A bridge comes before its ports, so a port can join it when it is made.
  const auto& leaf2 = *plan.find("leaf2");
  auto position = [&](const std::string& name) {
    for (std::size_t i = 0; i < leaf2.interfaces.size(); ++i)
      if (leaf2.interfaces[i].name == name) return i;
    return leaf2.interfaces.size();
  };
  EXPECT_LT(position("br10100"), position("vxlan10100"));
  // The switch runs its captured configuration without vtysh's banner; the host its own route.
  const auto& spine1 = *plan.find("spine1");
  EXPECT_EQ(spine1.emulator, Emulator::frr);
  EXPECT_EQ(spine1.frr_config.find("Building configuration"), std::string::npos);
  EXPECT_NE(spine1.frr_config.find("hostname spine1"), std::string::npos);
  EXPECT_EQ(spine1.loopback_addresses, std::vector<std::string>{"10.0.255.1/32"});
  EXPECT_EQ(plan.find("host1")->static_routes, std::vector<std::string>{"default via 10.1.1.1"});
}

TEST(TwinPlan, APlatformWithoutEmulatorOrAMissingConfigurationCannotBeBuilt) {
  // Given spine2 on a vendor platform and leaf1 without a captured configuration, then the
  // plan names both reasons instead of building a twin that would run something else.
  Fabric fabric;
  fabric.inventory.devices[1].platform = "eos";
  fabric.pre.document["devices"]["leaf1"].erase("config");
  auto change = change_on({"spine1"}, true);
  auto plan = plan_twin({fabric.inventory, change, fabric.pre, 1});
  ASSERT_EQ(plan.cannot_build.size(), 2u);
  EXPECT_NE(plan.cannot_build[0].find("leaf1: no running configuration"), std::string::npos)
      << plan.cannot_build[0];
  EXPECT_NE(plan.cannot_build[1].find("spine2: platform 'eos' has no emulator"), std::string::npos)
      << plan.cannot_build[1];
}

TEST(TwinPlan, HostileNamesAndAddressesFromADeviceAreLeftOutAndSaid) {
  // Given an interface name and an address that would be shell or `ip` syntax, then neither
  // reaches the twin, and its report says what was left out.
  Fabric fabric;
  fabric.pre.document["devices"]["spine1"]["interfaces"]["x;reboot"] = interface({"10.9.9.9/24"});
  fabric.pre.document["devices"]["spine1"]["interfaces"]["to-leaf2"]["addresses"] =
      json::array({"10.0.1.2/31 dev lo", "10.0.1.2/31"});
  auto change = change_on({"spine1"}, false);
  auto plan = plan_twin({fabric.inventory, change, fabric.pre, 0});
  EXPECT_EQ(interface_of(plan, "spine1", "x;reboot"), nullptr);
  EXPECT_EQ(interface_of(plan, "spine1", "to-leaf2")->addresses,
            std::vector<std::string>{"10.0.1.2/31"});
  auto said = [&](const std::string& text) {
    return std::any_of(plan.fidelity_gaps.begin(), plan.fidelity_gaps.end(),
                       [&](const std::string& gap) { return gap.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(said("spine1 x;reboot: not a name the twin can create"));
  EXPECT_TRUE(said("spine1 to-leaf2: an address that is not an IP prefix was left out"));
  EXPECT_FALSE(valid_interface_name("a/b"));
  EXPECT_FALSE(valid_interface_name("sixteen-chars-xx"));
  EXPECT_TRUE(valid_interface_name("swp1.100"));
}

TEST(TwinPlan, TheCapturedNftablesRulesetBecomesNftCommandsAndWhatCannotIsSaid) {
  // Given leaf1's packet_filter with a table, a set, a base chain, a regular chain and rules,
  // plus a hostile table name and a rule with a second command after `;`, then the twin's
  // node gets the table, set (with its elements), chains and rules in order as nft commands,
  // and the hostile parts are left out and named.
  Fabric fabric;
  fabric.pre.document["devices"]["leaf1"]["packet_filter"] = json::parse(R"({
    "tables": {"inet acct": {"chains": ["count", "input"], "sets": ["watched"]},
               "inet x;flush ruleset": {"chains": []}},
    "chains": {
      "inet acct input": {"type": "filter", "hook": "input", "priority": 0, "policy": "accept",
                          "rules": ["ip saddr @watched counter", "jump count",
                                    "accept; flush ruleset"]},
      "inet acct count": {"rules": ["counter comment \"storage\""]}},
    "sets": {"inet acct watched": {"kind": "set", "type": "ipv4_addr", "flags": ["interval"],
                                   "elements": ["10.9.0.0/16", "10.8.8.8"]}},
    "handles": {}, "counters": {}})");
  auto change = change_on({"leaf1"}, false);
  auto plan = plan_twin({fabric.inventory, change, fabric.pre, 0});
  const TwinNode* leaf1 = plan.find("leaf1");
  ASSERT_NE(leaf1, nullptr);
  EXPECT_EQ(leaf1->nft_objects,
            (std::vector<std::string>{
                "add table inet acct",
                "add set inet acct watched { type ipv4_addr; flags interval; }",
                "add element inet acct watched { 10.9.0.0/16, 10.8.8.8 }",
                "add chain inet acct count",
                "add chain inet acct input { type filter hook input priority 0; policy accept; }"}));
  EXPECT_EQ(leaf1->nft_rules,
            (std::vector<std::string>{"add rule inet acct count counter comment \"storage\"",
                                      "add rule inet acct input ip saddr @watched counter",
                                      "add rule inet acct input jump count"}));
  auto said = [&](const std::string& text) {
    return std::any_of(plan.fidelity_gaps.begin(), plan.fidelity_gaps.end(),
                       [&](const std::string& gap) { return gap.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(said("leaf1 nftables: table 'inet x;flush ruleset' is not a name"));
  EXPECT_TRUE(said("leaf1 nftables: a rule of chain 'inet acct input' is not one nft command"));
}

TEST(TwinConvergence, SessionsUpBetweenTwinDevicesWithTheirRoutes) {
  Fabric fabric;
  auto change = change_on({"spine1"}, true);
  auto plan = plan_twin({fabric.inventory, change, fabric.pre, 1});
  json production = {{"devices",
                      {{"leaf1",
                        {{"bgp",
                          {{"peers",
                            {{"10.0.1.0", {{"state", "Established"}, {"prefixes_received", 3}}},
                             {"10.0.2.0", {{"state", "Established"}, {"prefixes_received", 3}}},
                             // Its far end is no twin device: not required.
                             {"192.0.2.1", {{"state", "Established"}}}}}}}}}}}};
  json twin = {{"devices",
                {{"leaf1",
                  {{"bgp",
                    {{"peers",
                      {{"10.0.1.0", {{"state", "Established"}, {"prefixes_received", 1}}},
                       {"10.0.2.0", {{"state", "Active"}}}}}}}}}}}};
  auto behind = unconverged(plan, production, twin);
  ASSERT_EQ(behind.size(), 2u);
  EXPECT_NE(behind[0].find("leaf1: bgp peer 10.0.1.0 has 1 prefixes (production: 3)"),
            std::string::npos)
      << behind[0];
  EXPECT_EQ(behind[1], "leaf1: bgp peer 10.0.2.0 is Active (production: Established)");
  // Then converged once both sessions are up with their routes.
  twin["devices"]["leaf1"]["bgp"]["peers"]["10.0.1.0"]["prefixes_received"] = 3;
  twin["devices"]["leaf1"]["bgp"]["peers"]["10.0.2.0"] = {{"state", "Established"},
                                                          {"prefixes_received", 3}};
  EXPECT_TRUE(unconverged(plan, production, twin).empty());
  // A BFD session up in production and still down on the twin holds it back (taken as the
  // baseline, its coming up would read as the change's doing).
  production["devices"]["leaf1"]["bfd"]["peers"]["10.0.2.0"] = {{"status", "up"}};
  twin["devices"]["leaf1"]["bfd"]["peers"]["10.0.2.0"] = {{"status", "down"}};
  behind = unconverged(plan, production, twin);
  ASSERT_EQ(behind.size(), 1u);
  EXPECT_EQ(behind[0], "leaf1: bfd peer 10.0.2.0 is down (production: up)");
  twin["devices"]["leaf1"]["bfd"]["peers"]["10.0.2.0"]["status"] = "up";
  EXPECT_TRUE(unconverged(plan, production, twin).empty());
}

TEST(TwinSessions, ASessionYoungerThanTheChangeWasResetUnlessExpected) {
  // Given three sessions up at the twin's baseline and after a change 10 s later: one aged
  // 10 s (untouched), one now 2 s old (went down and came back), one that came up during the
  // change (not Established before: an undrain), then only the second was reset; listed in
  // expected_flaps it is not.
  auto peers = [](json entries) { return json{{"devices", {{"leaf1", {{"bgp", {{"peers", entries}}}}}}}}; };
  json before = peers({{"10.0.1.0", {{"state", "Established"}, {"uptime_ms", 60'000}}},
                       {"10.0.2.0", {{"state", "Established"}, {"uptime_ms", 60'000}}},
                       {"10.0.3.0", {{"state", "Idle"}, {"uptime_ms", 0}}}});
  json after = peers({{"10.0.1.0", {{"state", "Established"}, {"uptime_ms", 70'000}}},
                      {"10.0.2.0", {{"state", "Established"}, {"uptime_ms", 2'000}}},
                      {"10.0.3.0", {{"state", "Established"}, {"uptime_ms", 3'000}}}});
  auto reset = sessions_reset(before, after, Duration{10'000}, {});
  ASSERT_EQ(reset.size(), 1u);
  EXPECT_EQ(reset[0].rfind("leaf1: bgp peer 10.0.2.0 was reset during the change", 0), 0u)
      << reset[0];
  EXPECT_TRUE(sessions_reset(before, after, Duration{10'000}, {"leaf1:bgp 10.0.2.0"}).empty());
  // A session that just came up before the baseline ages by the time between the readings.
  json young = peers({{"10.0.2.0", {{"state", "Established"}, {"uptime_ms", 500}}}});
  json older = peers({{"10.0.2.0", {{"state", "Established"}, {"uptime_ms", 10'400}}}});
  EXPECT_TRUE(sessions_reset(young, older, Duration{10'000}, {}).empty());
}

TEST(TwinColdStart, WhatOnlyProductionHasLearnedIsTheTwinsBaselineAndSaidSo) {
  // Given production with leaf1's drained peer 10.0.1.0 remembering AS 65000 and its BFD
  // session bound to to-spine1, and a twin started cold (remote_as 0, BFD session unbound, made
  // again when the undrain brings BGP up: one down event), then twin-before takes AS 65000 and
  // twin-after's event counts, twin-after is untouched, and each is a line; a peer the twin
  // learned itself, and one production never learned, are left alone.
  json production = {
      {"devices",
       {{"leaf1",
         {{"bgp",
           {{"peers", {{"10.0.1.0", {{"remote_as", 65000}}}, {"10.0.2.0", {{"remote_as", 0}}}}}}},
          {"bfd", {{"peers", {{"10.0.1.0", {{"interface", "to-spine1"}}}}}}}}}}}};
  json twin_before = {
      {"devices",
       {{"leaf1",
         {{"bgp",
           {{"peers", {{"10.0.1.0", {{"remote_as", 0}}}, {"10.0.2.0", {{"remote_as", 0}}}}}}},
          {"bfd", {{"peers", {{"10.0.1.0", {{"status", "up"}, {"session_down_events", 0}}}}}}}}}}}};
  json twin_after = twin_before;
  twin_after["devices"]["leaf1"]["bgp"]["peers"]["10.0.1.0"]["remote_as"] = 65000;
  twin_after["devices"]["leaf1"]["bfd"]["peers"]["10.0.1.0"] = {
      {"status", "up"}, {"interface", "to-spine1"}, {"session_down_events", 1}};
  HeldSnapshot before{twin_before, {}}, after{twin_after, {}};
  auto lines = align_cold_start(before, after, production);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("leaf1: bgp peer 10.0.1.0 has not come up on the twin"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("leaf1: bfd peer 10.0.1.0 is bound to no interface"), std::string::npos)
      << lines[1];
  const auto& leaf1 = before.document["devices"]["leaf1"];
  EXPECT_EQ(leaf1["bgp"]["peers"]["10.0.1.0"]["remote_as"], 65000);
  EXPECT_EQ(leaf1["bgp"]["peers"]["10.0.2.0"]["remote_as"], 0);
  EXPECT_EQ(leaf1["bfd"]["peers"]["10.0.1.0"]["session_down_events"], 1);
  EXPECT_EQ(after.document, twin_after);
  // A twin whose sessions came up as production's did: nothing to align.
  HeldSnapshot up{twin_after, {}};
  EXPECT_TRUE(align_cold_start(up, after, production).empty());
  EXPECT_NO_THROW(align_cold_start(up, after, json::array()));
}

}  // namespace
}  // namespace fabgate::pipeline::twin
