#include "gates/hostfacts/gpu_facts.h"

#include <gtest/gtest.h>

#include "tests/gates/hostfacts/test_data.h"

namespace fabgate::hostfacts {
namespace {

using testing::read_sample;

TEST(NvidiaSmiCsv, HealthFieldsPerGpuKeyedByBusId) {
  // Given the documented query for two H100s, then each GPU is keyed by PCI bus id with
  // temperature, ECC, remapped rows and decoded throttle reasons, and the driver version is
  // one host-level value.
  auto facts = parse_nvidia_smi_csv(read_sample("nvidia_smi.csv"));
  ASSERT_TRUE(facts.ok()) << facts.error().reason;
  EXPECT_EQ(facts.value()["driver_version"], "550.54.15");
  const auto& healthy = facts.value()["gpus"]["00000000:18:00.0"];
  EXPECT_EQ(healthy["index"], 0);
  EXPECT_EQ(healthy["temperature_c"], 34);
  EXPECT_EQ(healthy["throttle_reasons"]["active"], nlohmann::json::array({"gpu_idle"}));
  const auto& sick = facts.value()["gpus"]["00000000:2A:00.0"];
  EXPECT_EQ(sick["ecc_uncorrected_volatile"], 1);
  EXPECT_EQ(sick["remapped_rows_uncorrectable"], 1);
  EXPECT_EQ(sick["remapped_rows_pending"], true);
  EXPECT_EQ(sick["throttle_reasons"]["mask"], 0x44);
  EXPECT_EQ(sick["throttle_reasons"]["active"],
            nlohmann::json::array({"sw_power_cap", "hw_thermal_slowdown"}));
}

TEST(NvidiaSmiCsv, NotAvailableIsNullNeverZero) {
  // Given "[N/A]" for retired pages (H100 uses row remapping instead), then the value is an
  // explicit null, not 0: "unsupported" must not look like "no retired pages".
  auto facts = parse_nvidia_smi_csv(read_sample("nvidia_smi.csv"));
  ASSERT_TRUE(facts.ok());
  const auto& gpu = facts.value()["gpus"]["00000000:18:00.0"];
  ASSERT_TRUE(gpu.contains("retired_pages_pending"));
  EXPECT_TRUE(gpu["retired_pages_pending"].is_null());
}

TEST(NvidiaSmiCsv, NewerFieldSpellingAndUnitsInHeaderAreRead) {
  // Given a driver that names the field clocks_event_reasons.active and a header with units,
  // then it parses the same way and ignores columns it does not interpret.
  auto facts = parse_nvidia_smi_csv(read_sample("nvidia_smi_event_reasons.csv"));
  ASSERT_TRUE(facts.ok()) << facts.error().reason;
  EXPECT_EQ(facts.value()["gpus"]["00000000:18:00.0"]["throttle_reasons"]["mask"], 0);
  EXPECT_FALSE(facts.value()["gpus"]["00000000:18:00.0"].contains("memory.used"));
}

TEST(NvidiaSmiCsv, FailuresAreTyped) {
  // Given nvidia-smi's driver failure, no header, a ragged row or a non-number temperature,
  // then each is a typed failure naming the problem.
  EXPECT_EQ(parse_nvidia_smi_csv(read_sample("nvidia_smi_failed.txt")).error().kind,
            FactsFailureKind::unavailable);
  EXPECT_EQ(parse_nvidia_smi_csv("").error().kind, FactsFailureKind::unavailable);
  EXPECT_EQ(parse_nvidia_smi_csv("0, 550.54.15, 34\n").error().kind, FactsFailureKind::unparsable);
  auto ragged = parse_nvidia_smi_csv("index, temperature.gpu\n0, 34, 9\n");
  EXPECT_EQ(ragged.error().reason, "nvidia-smi CSV line 2: 3 fields, header has 2");
  auto hot = parse_nvidia_smi_csv("index, temperature.gpu\n0, hot\n");
  EXPECT_EQ(hot.error().reason, "nvidia-smi CSV line 2: temperature.gpu = 'hot' is not a number");
}

TEST(XidEvents, CountedByCodeWithTheirGpu) {
  // Given a kernel log with two Xid 13 and one Xid 79, then they are counted per code and
  // listed with the GPU's PCI address; other NVRM lines are not Xids.
  auto facts = parse_xid_events(read_sample("dmesg_xid.txt"));
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts.value()["total"], 3);
  EXPECT_EQ(facts.value()["by_code"]["13"], 2);
  EXPECT_EQ(facts.value()["by_code"]["79"], 1);
  EXPECT_EQ(facts.value()["events"][2]["pci"], "0000:18:00");
  EXPECT_EQ(facts.value()["events"][2]["detail"],
            "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
}

TEST(XidEvents, CleanLogIsZeroButUnreadableLogIsNoEvidence) {
  // Given a readable log without Xids, then total is 0 (evidence of none); given dmesg's
  // permission error, then it is unavailable, not zero.
  EXPECT_EQ(parse_xid_events("[    1.0] Linux version 6.1.0\n").value()["total"], 0);
  auto denied = parse_xid_events(read_sample("dmesg_denied.txt"));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().kind, FactsFailureKind::unavailable);
}

}  // namespace
}  // namespace fabgate::hostfacts
