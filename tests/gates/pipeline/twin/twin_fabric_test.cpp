// A twin built for real on this machine (root): namespaces, veth links, addresses, FRR with a
// captured configuration, commands run inside a node as an SSH login there would run them, and a
// teardown that leaves nothing behind. Skips with the reason without root or FRR.

#include "gates/pipeline/twin/twin_fabric.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/support/shell.h"

namespace fabgate::pipeline::twin {
namespace {

namespace fs = std::filesystem;

// Each test its own state root: CTest may run them at once.
fs::path state_root(const std::string& test) { return "/run/fabgate-twin-test-" + test; }

std::optional<std::string> cannot_build_here() {
  if (::geteuid() != 0) return "needs root (network and mount namespaces)";
  for (const char* tool : {"/usr/bin/nsenter", "/usr/sbin/ip", "/usr/bin/ip"})
    if (fs::exists(tool)) return std::nullopt;
  return "needs nsenter and ip";
}

TwinInterface port(const std::string& name, std::vector<std::string> addresses, int mtu = 1500) {
  TwinInterface made;
  made.name = name;
  made.kind = TwinInterface::Kind::veth;
  made.mtu = mtu;
  made.addresses = std::move(addresses);
  return made;
}

TwinNode host(const std::string& name, TwinInterface interface) {
  TwinNode node;
  node.name = name;
  node.hostname = name;
  node.platform = "linux";
  node.emulator = Emulator::linux_host;
  node.interfaces.push_back(std::move(interface));
  return node;
}

std::string run_in(const TwinFabric& fabric, const std::string& node, const std::string& command,
                   int* exit_status = nullptr) {
  NamespaceConnector connector(fabric);
  auto shell = connector.connect(ssh::SshDevice{node, "", 0, {}, {}}, ssh::CredentialRole::read);
  EXPECT_TRUE(shell.ok());
  if (!shell.ok()) return "";
  auto result = (*shell)->run(command, Duration{10'000});
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  if (!result.ok()) return "";
  if (exit_status) *exit_status = result->exit_status;
  return result->stdout_text + result->stderr_text;
}

TEST(TwinFabric, AnUnconnectedPeerNeverTakesANameTheNodeHas) {
  // Given a node with two interfaces with nothing behind them and a real interface already
  // called tw-u1, then the twin's far ends are tw-u2 and tw-u3 (tw-u1 stays production's, and
  // is compared like any other interface).
  TwinInterface spare0 = port("spare0", {});
  spare0.kind = TwinInterface::Kind::dummy;
  TwinInterface spare1 = spare0;
  spare1.name = "spare1";
  TwinNode node = host("ha", spare0);
  node.interfaces.push_back(port("tw-u1", {"10.9.9.1/31"}));
  node.interfaces.push_back(spare1);
  EXPECT_EQ(unconnected_peer_names(node), (std::vector<std::string>{"tw-u2", "tw-u3"}));
}

TEST(TwinFabric, TwoHostsOnALinkReachEachOtherAndLeaveNothingBehind) {
  if (auto why = cannot_build_here()) GTEST_SKIP() << *why;
  // Given two hosts on a 9000-byte link, when the twin is built, then each has its name, its
  // address and MTU, reaches the other, and cannot write the controller's files.
  TwinPlan plan;
  plan.nodes = {host("ha", port("eth0", {"192.0.2.1/24"}, 9000)),
                host("hb", port("eth0", {"192.0.2.2/24"}, 9000))};
  plan.links = {{"ha", "eth0", "hb", "eth0", 9000}};
  FabricSettings settings;
  settings.state_root = state_root("hosts");
  auto built = TwinFabric::build(plan, settings);
  ASSERT_TRUE(built.ok()) << built.error();
  TwinFabric& fabric = **built;
  fs::path dir = fabric.dir();
  EXPECT_EQ(run_in(fabric, "ha", "hostname"), "ha\n");
  EXPECT_NE(run_in(fabric, "hb", "ip -o addr show dev eth0").find("192.0.2.2/24"),
            std::string::npos);
  EXPECT_EQ(run_in(fabric, "hb", "cat /sys/class/net/eth0/mtu"), "9000\n");
  int status = -1;
  run_in(fabric, "ha", "ping -c 1 -W 2 -M do -s 8972 192.0.2.2", &status);
  EXPECT_EQ(status, 0) << "a full-size frame did not cross the twin's link";
  run_in(fabric, "ha", "touch /etc/fabgate-twin-must-not-exist", &status);
  EXPECT_NE(status, 0);
  EXPECT_FALSE(fs::exists("/etc/fabgate-twin-must-not-exist"));
  run_in(fabric, "ha", "touch /tmp/scratch", &status);
  EXPECT_EQ(status, 0) << "a node's own /tmp is writable";
  // A command past its deadline is stopped and says so.
  NamespaceConnector connector(fabric);
  auto shell = connector.connect(ssh::SshDevice{"ha", "", 0, {}, {}}, ssh::CredentialRole::read);
  ASSERT_TRUE(shell.ok());
  auto slow = (*shell)->run("sleep 5", Duration{300});
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().kind, ssh::SshFailure::Kind::timeout);
  // One that prints without end is stopped at the twin's output limit, not the deadline.
  auto endless = (*shell)->run("yes twin", Duration{60'000});
  ASSERT_FALSE(endless.ok());
  EXPECT_EQ(endless.error().kind, ssh::SshFailure::Kind::output_too_large);
  // A device outside the twin is not reachable through it.
  EXPECT_FALSE(
      connector.connect(ssh::SshDevice{"spine9", "", 0, {}, {}}, ssh::CredentialRole::read).ok());
  pid_t anchor = fabric.anchor_of("ha");
  EXPECT_TRUE(fabric.tear_down().empty());
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(anchor) + "/ns/net"));
  fs::remove(settings.state_root);
}

TEST(TwinFabric, TheCapturedNftablesRulesetIsLoadedAndARuleNftRefusesIsAGap) {
  if (auto why = cannot_build_here()) GTEST_SKIP() << *why;
  if (!fs::exists("/usr/sbin/nft")) GTEST_SKIP() << "needs nft (nftables)";
  // Given a host whose ruleset has a table, a base chain with a counting rule and a rule nft
  // cannot parse, a VXLAN device and an interface with nothing behind it, then the table and
  // the good rule
  // are in the node's own ruleset (not the controller's), the bad rule is a build gap, the
  // build succeeds, and the unconnected interface's far end is a twin-made peer.
  TwinPlan plan;
  TwinInterface alone = port("spare0", {});
  alone.kind = TwinInterface::Kind::dummy;
  plan.nodes = {host("ha", alone)};
  TwinInterface vxlan;
  vxlan.name = "vxlan100";
  vxlan.kind = TwinInterface::Kind::vxlan;
  vxlan.mtu = 1450;
  vxlan.vni = 100;
  vxlan.vxlan_local = "10.9.9.9";
  vxlan.vxlan_port = 4789;
  plan.nodes[0].interfaces.push_back(vxlan);
  plan.nodes[0].nft_objects = {
      "add table inet fgtwin",
      "add chain inet fgtwin input { type filter hook input priority 0; policy accept; }"};
  plan.nodes[0].nft_rules = {"add rule inet fgtwin input udp dport 9999 counter drop",
                             "add rule inet fgtwin input no such statement"};
  FabricSettings settings;
  settings.state_root = state_root("nft");
  auto built = TwinFabric::build(plan, settings);
  ASSERT_TRUE(built.ok()) << built.error();
  TwinFabric& fabric = **built;
  const std::string ruleset = run_in(fabric, "ha", "nft list ruleset");
  EXPECT_NE(ruleset.find("table inet fgtwin"), std::string::npos) << ruleset;
  EXPECT_NE(ruleset.find("udp dport 9999 counter"), std::string::npos) << ruleset;
  // The VXLAN device marks what it sends, so the driver routes each packet (spread as an
  // ASIC spreads encapsulated flows).
  EXPECT_NE(ruleset.find("table netdev fabgate_twin_vxlan"), std::string::npos) << ruleset;
  EXPECT_NE(ruleset.find("meta mark set 0x00007477"), std::string::npos) << ruleset;
  ASSERT_EQ(fabric.build_gaps().size(), 1u);
  EXPECT_NE(fabric.build_gaps()[0].find("ha nftables: not reproduced (add rule inet fgtwin "
                                        "input no such statement)"),
            std::string::npos)
      << fabric.build_gaps()[0];
  EXPECT_NE(fabgate::testing::run_shell("nft list table inet fgtwin").exit_code, 0)
      << "the controller's own ruleset got the twin's table";
  const std::string links = run_in(fabric, "ha", "ip -o link show");
  EXPECT_NE(links.find("spare0@tw-u1"), std::string::npos) << links;
  EXPECT_EQ(unconnected_peer_names(plan.nodes[0]), std::vector<std::string>{"tw-u1"});
  EXPECT_TRUE(fabric.tear_down().empty());
}

TEST(TwinFabric, AFailedBuildTearsDownWhatItMade) {
  if (auto why = cannot_build_here()) GTEST_SKIP() << *why;
  // Given a second node whose address the kernel refuses, then the build fails naming the node
  // and the first node's namespaces are gone too.
  TwinPlan plan;
  plan.nodes = {host("ha", port("eth0", {"192.0.2.1/24"})),
                host("hb", port("eth0", {"192.0.2.1/33"}))};
  plan.links = {{"ha", "eth0", "hb", "eth0", 1500}};
  FabricSettings settings;
  settings.state_root = state_root("failed");
  auto built = TwinFabric::build(plan, settings);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.error().rfind("hb: ip -batch -", 0), 0u) << built.error();
  EXPECT_TRUE(fs::is_empty(settings.state_root));
  fs::remove(settings.state_root);
}

TEST(TwinFabric, FrrNodesRunTheirCapturedConfigurationAndPeer) {
  if (auto why = cannot_build_here()) GTEST_SKIP() << *why;
  if (!fs::exists("/usr/lib/frr/bgpd")) GTEST_SKIP() << "needs FRR (/usr/lib/frr)";
  // Given two routers with captured eBGP configurations, then FRR runs in each node with its
  // own configuration, a plain `vtysh` there reaches that node's daemons, the session comes up
  // and the loopback one advertises is routed at the other.
  auto router = [](const std::string& name, const std::string& address, const std::string& peer,
                   int as, int peer_as, const std::string& loopback) {
    TwinNode node;
    node.name = name;
    node.hostname = name;
    node.platform = "frr";
    node.emulator = Emulator::frr;
    node.loopback_addresses = {loopback + "/32"};
    node.interfaces.push_back(port("to-peer", {address + "/31"}));
    node.frr_config = "frr defaults datacenter\nhostname " + name + "\n!\nrouter bgp " +
                      std::to_string(as) + "\n no bgp ebgp-requires-policy\n timers bgp 1 3\n" +
                      " neighbor " + peer + " remote-as " + std::to_string(peer_as) +
                      "\n neighbor " + peer + " timers connect 1\n address-family ipv4 unicast\n" +
                      "  network " + loopback + "/32\n exit-address-family\n!\n";
    return node;
  };
  TwinPlan plan;
  plan.nodes = {router("r1", "10.9.0.0", "10.9.0.1", 65001, 65002, "10.9.255.1"),
                router("r2", "10.9.0.1", "10.9.0.0", 65002, 65001, "10.9.255.2")};
  plan.links = {{"r1", "to-peer", "r2", "to-peer", 1500}};
  FabricSettings settings;
  settings.state_root = state_root("frr");
  auto built = TwinFabric::build(plan, settings);
  ASSERT_TRUE(built.ok()) << built.error();
  TwinFabric& fabric = **built;
  EXPECT_NE(run_in(fabric, "r2", "vtysh -c 'show running-config'").find("hostname r2"),
            std::string::npos);
  std::string route;
  for (int i = 0; i < 60 && route.find("10.9.255.1") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    route = run_in(fabric, "r2", "ip route show 10.9.255.1");
  }
  EXPECT_NE(route.find("via 10.9.0.0"), std::string::npos) << route;
  auto usage = fabric.usage();
  EXPECT_GE(usage["processes"].get<int>(), 4) << usage.dump();  // zebra and bgpd, twice
  EXPECT_TRUE(fabric.tear_down().empty());
  fs::remove(settings.state_root);
}

}  // namespace
}  // namespace fabgate::pipeline::twin
