#include "gates/hostfacts/rdma_facts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/gates/hostfacts/test_data.h"

namespace fabgate::hostfacts {
namespace {

namespace fs = std::filesystem;
using testing::data_path;
using testing::read_sample;

// A copy of the sample sysfs tree in a fresh temporary directory, removed on destruction, for
// tests that break the tree.
class TreeCopy {
 public:
  TreeCopy() {
    root_ = fs::temp_directory_path() / ("fabgate-sysfs-" + std::to_string(getpid()) + "-" +
                                         std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::copy(data_path("sysfs_infiniband"), root_, fs::copy_options::recursive);
  }
  ~TreeCopy() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

TEST(RdmaSysfs, PortStateGidsAndCountersAreRead) {
  // Given an mlx5 sysfs tree, then the category carries firmware, port state names, link
  // layer, set GIDs with their RoCE type and netdev, and every counter as an integer.
  auto facts = read_rdma_sysfs(data_path("sysfs_infiniband"));
  ASSERT_TRUE(facts.ok()) << facts.error().reason;
  const auto& device = facts.value()["devices"]["mlx5_0"];
  EXPECT_EQ(device["fw_ver"], "28.39.1002");
  const auto& port = device["ports"]["1"];
  EXPECT_EQ(port["state"], "ACTIVE");
  EXPECT_EQ(port["phys_state"], "LinkUp");
  EXPECT_EQ(port["link_layer"], "Ethernet");
  EXPECT_EQ(port["rate"], "400 Gb/sec (4X NDR)");
  EXPECT_EQ(port["gids"].size(), 4u);  // the all-zero entry 4 is unset, not a GID
  EXPECT_EQ(port["gids"]["3"]["type"], "RoCE v2");
  EXPECT_EQ(port["gids"]["3"]["gid"], "0000:0000:0000:0000:0000:ffff:0a00:0102");
  EXPECT_EQ(port["gids"]["3"]["netdev"], "ens1f0np0");
  EXPECT_EQ(port["hw_counters"]["out_of_sequence"], 7);
  EXPECT_EQ(port["hw_counters"]["packet_seq_err"], 2);
  EXPECT_EQ(port["hw_counters"]["np_cnp_sent"], 1840);
  EXPECT_EQ(port["hw_counters"]["rp_cnp_handled"], 1795);
  EXPECT_EQ(port["hw_counters"]["np_ecn_marked_roce_packets"], 2048);
  EXPECT_EQ(port["counters"]["port_xmit_discards"], 4);
  EXPECT_FALSE(port.contains("unreadable_counters"));
}

TEST(RdmaSysfs, NoTreeIsUnavailableNotEmpty) {
  // Given a host without /sys/class/infiniband, or an empty one, then the result is a typed
  // failure, never {"devices": {}}.
  auto missing = read_rdma_sysfs("/nonexistent/infiniband");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, FactsFailureKind::unavailable);
  TreeCopy tree;
  fs::remove_all(tree.root() / "mlx5_0");
  auto empty = read_rdma_sysfs(tree.root());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, FactsFailureKind::unavailable);
}

TEST(RdmaSysfs, PortWithoutStateIsUnparsable) {
  // Given a port whose state file is gone, then the whole category fails with the port named:
  // a port of unknown state must not read as healthy.
  TreeCopy tree;
  fs::remove(tree.root() / "mlx5_0/ports/1/state");
  auto facts = read_rdma_sysfs(tree.root());
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.error().kind, FactsFailureKind::unparsable);
  EXPECT_EQ(facts.error().reason, "mlx5_0 port 1: cannot read state");
}

TEST(RdmaSysfs, UnreadableCounterIsNamedAndLeftOut) {
  // Given a hw counter that cannot be read as an integer, then it is absent from the counters
  // (so a rule on it gets no evidence) and named under unreadable_counters.
  TreeCopy tree;
  fs::create_directory(tree.root() / "mlx5_0/ports/1/hw_counters/rx_atomic_requests");
  auto facts = read_rdma_sysfs(tree.root());
  ASSERT_TRUE(facts.ok());
  const auto& port = facts.value()["devices"]["mlx5_0"]["ports"]["1"];
  EXPECT_FALSE(port["hw_counters"].contains("rx_atomic_requests"));
  EXPECT_EQ(port["unreadable_counters"], nlohmann::json::array({"hw_counters/rx_atomic_requests"}));
}

TEST(RdmaLink, NetdevAndPhysicalStatePerPort) {
  // Given `rdma -j link` output, then ports are keyed device -> port with state and netdev.
  auto links = parse_rdma_link_json(read_sample("rdma_link.json"));
  ASSERT_TRUE(links.ok()) << links.error().reason;
  EXPECT_EQ(links.value()["mlx5_0"]["1"]["netdev"], "ens1f0np0");
  EXPECT_EQ(links.value()["mlx5_1"]["1"]["state"], "DOWN");
  EXPECT_EQ(links.value()["mlx5_1"]["1"]["physical_state"], "DISABLED");
}

TEST(RdmaLink, EmptyOrBrokenOutputIsAFailure) {
  // Given no ports, text that is not JSON (the tool's error on a kernel without RDMA netlink),
  // or an entry without ifname, then each is a typed failure.
  EXPECT_EQ(parse_rdma_link_json("[]").error().kind, FactsFailureKind::unavailable);
  EXPECT_EQ(parse_rdma_link_json("Failed to open NETLINK_RDMA socket").error().kind,
            FactsFailureKind::unparsable);
  EXPECT_EQ(parse_rdma_link_json(R"([{"port":1}])").error().kind, FactsFailureKind::unparsable);
}

TEST(RdmaLink, AWronglyTypedMemberIsUnparsableNamingTheField) {
  // Given a port whose ifname is a number, or whose state is one, then the output is
  // unparsable and the reason names the port and the field (no member is silently dropped).
  auto ifname = parse_rdma_link_json(R"([{"ifname":5,"state":"ACTIVE"}])");
  ASSERT_FALSE(ifname.ok());
  EXPECT_EQ(ifname.error().kind, FactsFailureKind::unparsable);
  EXPECT_EQ(ifname.error().reason,
            "rdma -j link: port [0]: field 'ifname' is an integer, not a string");
  auto state = parse_rdma_link_json(
      R"([{"ifname":"mlx5_0/1","state":"ACTIVE"},{"ifname":"mlx5_1/1","state":4}])");
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().reason,
            "rdma -j link: port [1]: field 'state' is an integer, not a string");
}

TEST(RdmaLink, DeepNestingIsUnparsableWithTheDepth) {
  // Given 300,000 levels of nesting as `rdma -j link` output, then it is refused before it is
  // parsed, saying so.
  auto deep = parse_rdma_link_json(std::string(300'000, '[') + std::string(300'000, ']'));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().kind, FactsFailureKind::unparsable);
  EXPECT_EQ(deep.error().reason, "rdma -j link: nested deeper than 64 levels");
}

TEST(IbvDevinfo, ActiveMtuAndStatePerPort) {
  // Given `ibv_devinfo` output for two devices, then each port has active and max MTU in bytes.
  auto devinfo = parse_ibv_devinfo(read_sample("ibv_devinfo.txt"));
  ASSERT_TRUE(devinfo.ok()) << devinfo.error().reason;
  EXPECT_EQ(devinfo.value()["mlx5_0"]["ports"]["1"]["active_mtu"], 4096);
  EXPECT_EQ(devinfo.value()["mlx5_1"]["ports"]["1"]["active_mtu"], 1024);
  EXPECT_EQ(devinfo.value()["mlx5_1"]["ports"]["1"]["state"], "PORT_DOWN");
  EXPECT_EQ(devinfo.value()["mlx5_0"]["fw_ver"], "28.39.1002");
  EXPECT_EQ(parse_ibv_devinfo("No IB devices found\n").error().kind, FactsFailureKind::unavailable);
}

TEST(RdmaCategory, SourcesMergeIntoTheSysfsPorts) {
  // Given all three sources, then the sysfs port gains netdev and active MTU, and ports that
  // sysfs does not have (mlx5_1) are not invented.
  auto category = read_rdma_sysfs(data_path("sysfs_infiniband")).value();
  merge_rdma_link(category, parse_rdma_link_json(read_sample("rdma_link.json")).value());
  merge_ibv_devinfo(category, parse_ibv_devinfo(read_sample("ibv_devinfo.txt")).value());
  const auto& port = category["devices"]["mlx5_0"]["ports"]["1"];
  EXPECT_EQ(port["netdev"], "ens1f0np0");
  EXPECT_EQ(port["active_mtu"], 4096);
  EXPECT_FALSE(category["devices"].contains("mlx5_1"));
}

TEST(RdmaSysfsDump, AbsolutePathsAndMultiplePortsAreRead) {
  // Given a dump with absolute paths, two ports and a GID value holding colons, then each
  // port is read, the value keeps everything after the first colon, and a counter that is
  // not a number is named as unreadable.
  const char* dump =
      "/sys/class/infiniband/mlx5_0/fw_ver:28.39.1002\n"
      "/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n"
      "/sys/class/infiniband/mlx5_0/ports/1/phys_state:5: LinkUp\n"
      "/sys/class/infiniband/mlx5_0/ports/1/link_layer:Ethernet\n"
      "/sys/class/infiniband/mlx5_0/ports/1/gids/0:fe80:0000:0000:0000:ba3f:d2ff:fe12:3456\n"
      "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:9\n"
      "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/lifespan:ten\n"
      "/sys/class/infiniband/mlx5_0/ports/2/state:1: DOWN\n"
      "/sys/class/infiniband/mlx5_0/ports/2/phys_state:3: Disabled\n"
      "/sys/class/infiniband/mlx5_0/ports/2/link_layer:Ethernet\n";
  auto facts = read_rdma_sysfs_dump(dump);
  ASSERT_TRUE(facts.ok()) << facts.error().reason;
  const auto& ports = facts.value()["devices"]["mlx5_0"]["ports"];
  EXPECT_EQ(ports["1"]["state"], "ACTIVE");
  EXPECT_EQ(ports["1"]["gids"]["0"]["gid"], "fe80:0000:0000:0000:ba3f:d2ff:fe12:3456");
  EXPECT_EQ(ports["1"]["hw_counters"]["out_of_sequence"], 9);
  EXPECT_EQ(ports["1"]["unreadable_counters"], nlohmann::json{"hw_counters/lifespan"});
  EXPECT_EQ(ports["2"]["phys_state"], "Disabled");
}

TEST(RdmaSysfsDump, EmptyOrForeignTextIsAFailure) {
  // Given an empty dump, a line that is not PATH:VALUE, or a port without its state, then the
  // result is a typed failure naming the problem.
  auto empty = read_rdma_sysfs_dump("\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, FactsFailureKind::unavailable);
  auto foreign = read_rdma_sysfs_dump("grep: warning\n");
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.error().kind, FactsFailureKind::unparsable);
  auto stateless = read_rdma_sysfs_dump("mlx5_0/ports/1/link_layer:Ethernet\n");
  ASSERT_FALSE(stateless.ok());
  EXPECT_EQ(stateless.error().reason, "mlx5_0 port 1: cannot read state");
}

}  // namespace
}  // namespace fabgate::hostfacts
