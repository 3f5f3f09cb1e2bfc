#include "adapters/rdma/write_probe.h"

#include <gtest/gtest.h>

namespace fabgate::rdma {
namespace {

WritePlan client_plan() {
  RdmaWriteOptions options;
  options.connect_host = "192.0.2.1";
  options.reconnect = true;
  auto plan = validate_write_options(options);
  EXPECT_TRUE(plan.ok());
  return plan.value();
}

DeviceScan no_devices() {
  return DeviceScan{};
}
DeviceScan list_failed() {
  return DeviceScan{0, {}, "ibv_get_device_list: Function not implemented"};
}
DeviceScan port_down() {
  DeviceScan scan;
  scan.device_count = 1;
  scan.ports.push_back({"mlx5_0", 1, "PORT_DOWN", false, "Ethernet", 1024});
  return scan;
}

TEST(NoUsablePort, NamesWhatIsMissing) {
  // Given hosts without devices, with a down port, or without the requested device, then the
  // reason says which, so the operator knows what to fix.
  EXPECT_EQ(*no_usable_port_reason(no_devices(), "", 0),
            "no RDMA device on this host (ibv_get_device_list found none)");
  EXPECT_NE(no_usable_port_reason(list_failed(), "", 0)->find("Function not implemented"),
            std::string::npos);
  EXPECT_EQ(*no_usable_port_reason(port_down(), "", 0),
            "no RDMA port is active: mlx5_0 port 1 PORT_DOWN");
  EXPECT_EQ(*no_usable_port_reason(port_down(), "mlx5_1", 0),
            "RDMA device mlx5_1 not found on this host");
  EXPECT_EQ(*no_usable_port_reason(port_down(), "mlx5_0", 2), "RDMA device mlx5_0 has no port 2");
}

TEST(NoUsablePort, AnActivePortIsUsable) {
  // Given one active port among down ones, then the host is usable (and only for that port).
  auto scan = port_down();
  scan.ports.push_back({"mlx5_0", 2, "PORT_ACTIVE", true, "Ethernet", 4096});
  EXPECT_FALSE(no_usable_port_reason(scan, "", 0).has_value());
  EXPECT_FALSE(no_usable_port_reason(scan, "mlx5_0", 2).has_value());
  EXPECT_TRUE(no_usable_port_reason(scan, "mlx5_0", 1).has_value());
}

TEST(RunRdmaWrite, NoActivePortIsNoEvidenceWithTheReasonAndNoMeasurements) {
  // Given a host whose only port is down, then the probe touches no network, reports
  // no-evidence with the reason, null measurements, and an unattempted reconnect.
  auto result = run_rdma_write(client_plan(), port_down);
  EXPECT_EQ(result.verdict, Verdict::no_evidence);
  auto json = to_json(result);
  EXPECT_EQ(json["probe"], "rdma-write");
  EXPECT_EQ(json["verdict"], "no-evidence");
  EXPECT_EQ(json["reason"], "no RDMA port is active: mlx5_0 port 1 PORT_DOWN");
  EXPECT_TRUE(json["bandwidth_gbps"].is_null());
  EXPECT_TRUE(json["latency_us"].is_null());
  EXPECT_EQ(json["writes_completed"], 0);
  EXPECT_EQ(json["reconnect"]["attempted"], false);
  EXPECT_TRUE(json["reconnect"]["existing_qp_recovered"].is_null());
  EXPECT_TRUE(json["reconnect"]["fresh_qp_succeeded"].is_null());
  EXPECT_TRUE(json["timings"].contains("device_scan_ms"));
}

TEST(RdmaWriteResultJson, FailureCarriesNamedErrorsAndSeparateReconnectFacts) {
  // Given a failed run with a retry-exceeded completion, flushed requests and a reconnect in
  // which only the fresh pair worked, then the JSON keeps all of it apart.
  RdmaWriteResult result;
  result.verdict = Verdict::fail;
  result.reason = "QP 0 wr 41: status 12 (transport retry counter exceeded), vendor_err 0x81";
  result.latency = LatencySummary{3.5, 9.0, 12.0, 40};
  result.bandwidth_gbps = 42.5;
  record_error(result, describe_completion(0, 0x99, 41, 12, 0x81));
  result.flushed = 15;
  result.reconnect =
      ReconnectOutcome{true, false, "QP 0: state ERR", true, "fresh QP wrote 100 x 65536 bytes"};
  auto json = to_json(result);
  EXPECT_EQ(json["verdict"], "fail");
  ASSERT_EQ(json["errors"].size(), 1u);
  EXPECT_EQ(json["errors"][0]["status"], 12);
  EXPECT_EQ(json["errors"][0]["vendor_err"], "0x81");
  EXPECT_EQ(json["flushed"], 15);
  EXPECT_EQ(json["latency_us"]["p99"], 9.0);
  EXPECT_EQ(json["reconnect"]["existing_qp_recovered"], false);
  EXPECT_EQ(json["reconnect"]["fresh_qp_succeeded"], true);
}

TEST(RdmaWriteResultJson, ErrorListIsCapped) {
  // Given more failed completions than the cap, then the rest are counted, not listed.
  RdmaWriteResult result;
  for (int i = 0; i < 70; ++i) record_error(result, describe_completion(0, 1, i, 12, 0x81));
  EXPECT_EQ(result.errors.size(), kMaxListedErrors);
  EXPECT_EQ(result.errors_not_listed, 70 - kMaxListedErrors);
}

}  // namespace
}  // namespace fabgate::rdma
