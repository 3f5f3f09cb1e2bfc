// Normalizer tests for RoCE/GPU hosts on the hand-written samples in tests/gates/hostfacts/data
// (documented formats; nothing here was captured on RDMA or GPU hardware). The rdma-sysfs
// test runs the rdma-host profile's own command, with grep, over the sample sysfs tree.

#include <gtest/gtest.h>

#include "gates/hostfacts/gpu_facts.h"
#include "gates/hostfacts/rdma_facts.h"
#include "gates/snapshot/collector_profile.h"
#include "gates/snapshot/normalizers.h"
#include "tests/gates/hostfacts/test_data.h"
#include "tests/support/shell.h"

namespace fabgate::snapshot {
namespace {

using hostfacts::testing::data_path;
using hostfacts::testing::read_sample;
using nlohmann::json;

const CollectorCommand& profile_command(const std::string& parse) {
  static const auto profiles = load_profiles();
  for (const auto& source : profiles->at("rdma-host").sources)
    for (const auto& command : source.commands)
      if (command.parse == parse) return command;
  ADD_FAILURE() << "rdma-host profile has no '" << parse << "' command";
  static const CollectorCommand none;
  return none;
}

// The profile's sysfs dump command, run against the sample tree instead of /sys.
std::string dump_sample_tree() {
  std::string command = profile_command("rdma-sysfs").run;
  const std::string live = "/sys/class/infiniband";
  if (command.find(live) == std::string::npos) return {};
  command.replace(command.find(live), live.size(),
                  testing::shell_quoted(data_path("sysfs_infiniband").string()));
  auto result = testing::run_shell(command);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return result.output;
}

TEST(HostNormalizers, SysfsDumpFromTheProfileCommandReadsLikeTheTree) {
  // Given the rdma-host profile's grep dump of a sysfs tree, then the rdma category equals
  // what reading the tree directly gives: state, GIDs and every hw counter survive the trip.
  json rdma;
  auto parsed = parse_rdma_sysfs(dump_sample_tree(), rdma);
  ASSERT_TRUE(parsed) << parsed.error();
  auto direct = hostfacts::read_rdma_sysfs(data_path("sysfs_infiniband"));
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(rdma, direct.value());
  const auto& port = rdma["devices"]["mlx5_0"]["ports"]["1"];
  EXPECT_EQ(port["state"], "ACTIVE");
  EXPECT_EQ(port["hw_counters"]["packet_seq_err"], 2);
  EXPECT_EQ(port["gids"]["3"]["type"], "RoCE v2");
}

TEST(HostNormalizers, RdmaLinkAndDevinfoAddNetdevAndActiveMtu) {
  // Given the sysfs dump followed by `rdma -j link` and `ibv_devinfo`, then the port gains its
  // netdev, physical state and active MTU; links for devices sysfs lacks are not invented.
  json rdma;
  ASSERT_TRUE(parse_rdma_sysfs(dump_sample_tree(), rdma));
  ASSERT_TRUE(parse_rdma_link(read_sample("rdma_link.json"), rdma));
  ASSERT_TRUE(parse_ibv_devinfo(read_sample("ibv_devinfo.txt"), rdma));
  const auto& port = rdma["devices"]["mlx5_0"]["ports"]["1"];
  EXPECT_EQ(port["netdev"], "ens1f0np0");
  EXPECT_EQ(port["physical_state"], "LINK_UP");
  EXPECT_EQ(port["active_mtu"], 4096);
  EXPECT_FALSE(rdma["devices"].contains("mlx5_1"));
}

TEST(HostNormalizers, MissingRdmaInputIsAnErrorNotAnEmptyCategory) {
  // Given an empty dump (no RDMA device), a stray line, or rdma-link without a sysfs dump
  // first, then each normalizer fails with a reason and leaves no healthy-looking category.
  json rdma;
  auto empty = parse_rdma_sysfs("", rdma);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().find("unavailable"), std::string::npos) << empty.error();
  EXPECT_TRUE(rdma.is_null());
  EXPECT_FALSE(parse_rdma_sysfs("permission denied\n", rdma));
  auto orphan = parse_rdma_link(read_sample("rdma_link.json"), rdma);
  ASSERT_FALSE(orphan);
  EXPECT_EQ(orphan.error(), "rdma-link must follow rdma-sysfs in the rdma source");
}

TEST(HostNormalizers, EthtoolStatsKeepMlx5PfcAndNameTheRest) {
  // Given ethtool -S sections for an mlx5 netdev, a virtio one and one that printed nothing,
  // then the mlx5 one carries PFC pauses and pause-storm events, and the other two are named
  // under `unsupported` with their reason instead of vanishing.
  std::string output = "== ens1f0np0\n" + read_sample("ethtool_S_mlx5.txt") + "== eth0\n" +
                       read_sample("ethtool_S_virtio.txt") + "== lo\n";
  json congestion;
  auto parsed = parse_ethtool_stats(output, congestion);
  ASSERT_TRUE(parsed) << parsed.error();
  const auto& nic = congestion["interfaces"]["ens1f0np0"];
  EXPECT_EQ(nic["priorities"]["3"]["rx_pause"], 1520);
  EXPECT_EQ(nic["pause_storm"]["warning_events"], 2);
  EXPECT_EQ(nic["port"]["rx_discards_phy"], 3);
  EXPECT_EQ(congestion["interfaces"].size(), 1u);
  EXPECT_TRUE(congestion["unsupported"].contains("eth0"));
  EXPECT_EQ(congestion["unsupported"]["lo"], "ethtool -S printed nothing");
}

TEST(HostNormalizers, EthtoolStatsWithoutPfcCountersIsAnError) {
  // Given only a virtio netdev, or no sections at all, then congestion is no-evidence: an
  // empty PFC table would read as "no pauses".
  json congestion;
  auto virtio = parse_ethtool_stats("== eth0\n" + read_sample("ethtool_S_virtio.txt"), congestion);
  ASSERT_FALSE(virtio);
  EXPECT_NE(virtio.error().find("no interface with PFC counters"), std::string::npos);
  EXPECT_FALSE(parse_ethtool_stats("", congestion));
  EXPECT_TRUE(congestion.is_null());
}

TEST(HostNormalizers, NvidiaSmiFillsGpuAndIdentityAndSetsAsideUnsupportedFields) {
  // Given the nvidia-smi CSV, then gpu.gpus is keyed by PCI bus id with ECC counters, fields
  // the GPU reports as [N/A] are listed under not_supported rather than set to null or 0, and
  // identity.gpu_driver is the driver version.
  json gpu;
  auto parsed = parse_nvidia_smi(read_sample("nvidia_smi.csv"), gpu);
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(gpu["driver_version"], "550.54.15");
  const auto& faulty = gpu["gpus"]["00000000:2A:00.0"];
  EXPECT_EQ(faulty["ecc_uncorrected_volatile"], 1);
  EXPECT_EQ(faulty["remapped_rows_pending"], true);
  EXPECT_FALSE(faulty.contains("retired_pages_double_bit"));
  EXPECT_EQ(faulty["not_supported"], (json{"retired_pages_double_bit", "retired_pages_pending",
                                           "retired_pages_single_bit"}));
  json identity;
  ASSERT_TRUE(parse_nvidia_smi_driver(read_sample("nvidia_smi.csv"), identity));
  EXPECT_EQ(identity["gpu_driver"], "550.54.15");
}

TEST(HostNormalizers, NvidiaSmiFailureIsAnError) {
  // Given nvidia-smi's "has failed" text, then both GPU normalizers fail with it.
  json gpu;
  json identity;
  auto failed = parse_nvidia_smi(read_sample("nvidia_smi_failed.txt"), gpu);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().find("NVIDIA-SMI has failed"), std::string::npos);
  EXPECT_FALSE(parse_nvidia_smi_driver(read_sample("nvidia_smi_failed.txt"), identity));
  EXPECT_FALSE(identity.contains("gpu_driver"));
}

TEST(HostNormalizers, XidCountsEventsAndAnUnreadableLogIsAnError) {
  // Given kernel log lines with three Xids, then xid counts them by code; given dmesg's
  // permission failure, then the source has no evidence rather than zero Xids.
  json xid;
  ASSERT_TRUE(parse_xid(read_sample("dmesg_xid.txt"), xid));
  EXPECT_EQ(xid["total"], 3);
  EXPECT_EQ(xid["by_code"]["13"], 2);
  json denied;
  auto failed = parse_xid(read_sample("dmesg_denied.txt"), denied);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().find("kernel log not readable"), std::string::npos);
  EXPECT_TRUE(denied.is_null());
}

TEST(HostNormalizers, RdmaHostProfileLoadsWithEveryHostCategory) {
  // Given the shipped rdma-host profile, then it loads, collects the linux categories (the
  // multipath hash and IP stack errors included) plus rdma, congestion, gpu and xid, and its GPU query is the one the CSV parser documents.
  auto profiles = load_profiles();
  ASSERT_TRUE(profiles) << profiles.error().message;
  ASSERT_EQ(profiles->count("rdma-host"), 1u);
  std::vector<std::string> categories;
  for (const auto& source : profiles->at("rdma-host").sources)
    categories.push_back(source.category);
  EXPECT_EQ(categories,
            (std::vector<std::string>{"identity", "interfaces", "routes", "multipath",
                                      "ip_stack", "rdma", "congestion", "gpu", "xid"}));
  EXPECT_EQ(profile_command("nvidia-smi").run, hostfacts::kNvidiaSmiQuery);
}

}  // namespace
}  // namespace fabgate::snapshot
