#include "gates/hostfacts/ethtool_facts.h"

#include <gtest/gtest.h>

#include "tests/gates/hostfacts/test_data.h"

namespace fabgate::hostfacts {
namespace {

using testing::read_sample;

TEST(EthtoolCongestion, PfcCountersPerPriorityAndPauseStorms) {
  // Given mlx5 `ethtool -S`, then pause, pause duration and transitions are grouped per
  // priority, the storm counters and port drops are kept, and per-ring counters are not.
  auto facts = parse_ethtool_congestion(read_sample("ethtool_S_mlx5.txt"));
  ASSERT_TRUE(facts.ok()) << facts.error().reason;
  const auto& prio3 = facts.value()["priorities"]["3"];
  EXPECT_EQ(prio3["rx_pause"], 1520);
  EXPECT_EQ(prio3["rx_pause_duration"], 48213);
  EXPECT_EQ(prio3["tx_pause"], 310);
  EXPECT_EQ(prio3["tx_pause_duration"], 9911);
  EXPECT_EQ(prio3["rx_pause_transition"], 760);
  EXPECT_EQ(prio3["rx_marked"], 2048);
  EXPECT_EQ(prio3["rx_bytes"], 99999999);
  EXPECT_EQ(facts.value()["priorities"]["0"]["rx_pause"], 0);
  EXPECT_EQ(facts.value()["pause_storm"]["warning_events"], 2);
  EXPECT_EQ(facts.value()["pause_storm"]["error_events"], 0);
  EXPECT_EQ(facts.value()["global_pause"]["rx_pause"], 0);
  EXPECT_EQ(facts.value()["port"]["rx_out_of_buffer"], 12);
  EXPECT_EQ(facts.value()["port"]["rx_ecn_mark"], 17);
  EXPECT_FALSE(facts.value()["port"].contains("rx0_packets"));
}

TEST(EthtoolCongestion, NonMlx5NamingIsUnsupportedNotEmpty) {
  // Given a virtio NIC's statistics, then there is no PFC evidence: unsupported, never an
  // empty priorities table that would read as "no pauses".
  auto facts = parse_ethtool_congestion(read_sample("ethtool_S_virtio.txt"));
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.error().kind, FactsFailureKind::unsupported);
}

TEST(EthtoolCongestion, ErrorTextIsUnparsable) {
  // Given ethtool's error instead of statistics, then it is unparsable.
  auto facts = parse_ethtool_congestion("no stats available\n");
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.error().kind, FactsFailureKind::unparsable);
}

TEST(EthtoolDriverInfo, IdentityFieldsForTheCompatibilityMatrix) {
  // Given `ethtool -i`, then driver, driver version, firmware and bus are identity fields.
  auto nic = parse_ethtool_driver_info(read_sample("ethtool_i_mlx5.txt"));
  ASSERT_TRUE(nic.ok());
  EXPECT_EQ(nic.value()["driver"], "mlx5_core");
  EXPECT_EQ(nic.value()["driver_version"], "6.1.0-18-amd64");
  EXPECT_EQ(nic.value()["firmware"], "28.39.1002 (MT_0000000838)");
  EXPECT_EQ(nic.value()["bus_info"], "0000:3b:00.0");
  EXPECT_FALSE(parse_ethtool_driver_info("Cannot get driver information: No such device\n").ok());
}

}  // namespace
}  // namespace fabgate::hostfacts
