// The monitoring parts of an intent repository (docs/monitoring.md): the identity a device
// declares in the inventory, the monitoring settings and promql probes.

#include <gtest/gtest.h>

#include "gates/intent/loader.h"
#include "tests/gates/intent/load_helpers.h"
#include "tests/support/memory_tree.h"

namespace fabgate::intent {
namespace {

using testing::MemoryTree;

MemoryTree tree_with_devices(const std::string& devices) {
  MemoryTree tree;
  tree.files["fabgate.yaml"] = "version: 1\n";
  tree.files["inventory.yaml"] =
      "credentials:\n"
      "  read:   {user: ro, identity_file: ~/.ssh/ro}\n"
      "  change: {user: rw, identity_file: ~/.ssh/rw}\n"
      "devices:\n" +
      devices;
  return tree;
}

using testing_helpers::all_lines;
using testing_helpers::load;

TEST(InventoryIdentity, AScalarIsTheHostnameAndAMapNamesEachField) {
  // Given leaf1 declaring `identity: leaf1` and leaf2 a hostname, serial and upper-case MAC,
  // then both load: leaf1 expects hostname leaf1, leaf2 all three (the MAC in lower case), and a
  // device without identity expects nothing.
  auto outcome = load(tree_with_devices(
      "  leaf1: {platform: frr, role: leaf, ssh: {host: 192.0.2.11}, identity: leaf1}\n"
      "  leaf2:\n"
      "    platform: frr\n"
      "    role: leaf\n"
      "    ssh: {host: 192.0.2.12}\n"
      "    identity: {hostname: leaf2, serial: SN123, system_mac: '02:AB:00:00:00:02'}\n"
      "  host1: {platform: linux, role: host, ssh: {host: 192.0.2.21}}\n"));
  ASSERT_TRUE(outcome.repository) << all_lines(outcome);
  const auto& inventory = outcome.repository->inventory;
  ASSERT_TRUE(inventory.find("leaf1")->identity);
  EXPECT_EQ(inventory.find("leaf1")->identity->hostname, "leaf1");
  EXPECT_TRUE(inventory.find("leaf1")->identity->serial.empty());
  const auto& leaf2 = *inventory.find("leaf2")->identity;
  EXPECT_EQ(leaf2.hostname, "leaf2");
  EXPECT_EQ(leaf2.serial, "SN123");
  EXPECT_EQ(leaf2.system_mac, "02:ab:00:00:00:02");
  EXPECT_EQ(leaf2.where.line, 10);
  EXPECT_FALSE(inventory.find("host1")->identity);
}

TEST(InventoryIdentity, ABadMacAnUnknownFieldAndAnEmptyIdentityAreEachReportedWithTheirPlace) {
  // Given three mistakes in three devices, then all three are reported with their line.
  auto outcome = load(tree_with_devices(
      "  leaf1: {platform: frr, role: leaf, ssh: {host: a}, identity: {system_mac: 02-00}}\n"
      "  leaf2: {platform: frr, role: leaf, ssh: {host: b}, identity: {hostnme: leaf2}}\n"
      "  leaf3: {platform: frr, role: leaf, ssh: {host: c}, identity: {}}\n"));
  ASSERT_FALSE(outcome.repository);
  std::string all = all_lines(outcome);
  EXPECT_NE(all.find("inventory.yaml:5:"), std::string::npos) << all;
  EXPECT_NE(all.find("'02-00' is not a MAC address"), std::string::npos) << all;
  EXPECT_NE(all.find("inventory.yaml:6:"), std::string::npos) << all;
  EXPECT_NE(all.find("hostnme"), std::string::npos) << all;
  EXPECT_NE(all.find("inventory.yaml:7:"), std::string::npos) << all;
  EXPECT_NE(all.find("declares nothing to check"), std::string::npos) << all;
}

LoadOutcome load_monitoring(const std::string& monitoring, const std::string& probe) {
  MemoryTree tree =
      tree_with_devices("  leaf1: {platform: frr, role: leaf, ssh: {host: 192.0.2.11}}\n");
  tree.files["fabgate.yaml"] = "version: 1\n" + monitoring;
  tree.files["changes/c.yaml"] =
      "id: c\ntitle: t\ntargets: [leaf1]\nbounds: {max_targets: 1, step_timeout: 10s, deadline: "
      "1m}\n"
      "steps: [{device: leaf1, run: 'true'}]\nrollback: [{device: leaf1, run: 'true'}]\n"
      "acceptance:\n  expected_alerts: [BGPPeerDown]\n  probes:\n" +
      probe;
  return load(tree);
}

const char* kMonitoring =
    "monitoring:\n"
    "  prometheus:\n"
    "    url: https://prom.example:9090\n"
    "    ca_file: policies/ca.pem\n"
    "    token_env: PROM_TOKEN\n"
    "    series: 'device=\"{{name}}\"'\n"
    "    max_age: 30s\n"
    "    fresh: [node_network_up]\n"
    "  alertmanager:\n"
    "    url: http://127.0.0.1:9093\n"
    "    failure_domain: [rack]\n"
    "    silence: false\n";

TEST(MonitoringSettings, EndpointsSeriesAndPromqlProbesLoadWithEveryField) {
  // Given Prometheus and Alertmanager settings and a range promql probe, then every field is in
  // the model, defaults included, and the change's expected alerts are kept.
  auto outcome = load_monitoring(
      kMonitoring,
      "    - {name: drops, kind: promql, layer: link, host: leaf1, range: true,\n"
      "       query: 'sum(rate(x{ {{series}} }[1m]))', expect: '< 5', empty_is_zero: true}\n");
  ASSERT_TRUE(outcome.repository) << all_lines(outcome);
  const auto& monitoring = outcome.repository->settings.monitoring;
  ASSERT_TRUE(monitoring.prometheus);
  EXPECT_EQ(monitoring.prometheus->endpoint.token_env, "PROM_TOKEN");
  EXPECT_EQ(monitoring.prometheus->series, "device=\"{{name}}\"");
  EXPECT_EQ(monitoring.prometheus->max_age, std::chrono::seconds(30));
  EXPECT_EQ(monitoring.prometheus->fresh, std::vector<std::string>{"node_network_up"});
  EXPECT_EQ(monitoring.prometheus->identity_metric, "node_uname_info");
  ASSERT_TRUE(monitoring.alertmanager);
  EXPECT_FALSE(monitoring.alertmanager->silence);
  EXPECT_EQ(monitoring.alertmanager->device_label, "device");
  const auto& change = outcome.repository->changes.at(0);
  EXPECT_EQ(change.acceptance.expected_alerts, std::vector<std::string>{"BGPPeerDown"});
  const auto& probe = change.acceptance.probes.at(0);
  EXPECT_EQ(probe.kind, "promql");
  EXPECT_EQ(probe.expect, "< 5");
  EXPECT_TRUE(probe.range);
  EXPECT_TRUE(probe.empty_is_zero);
}

TEST(MonitoringSettings, ATokenOverHttpABadComparisonAndAPromqlProbeWithoutPrometheusAreRefused) {
  // Given a bearer token over plain http, then it is refused at its line; given a promql probe
  // without a comparison, or with no monitoring.prometheus at all, then each is reported.
  auto token =
      load_monitoring("monitoring:\n  prometheus:\n    url: http://prom:9090\n    token_env: T\n",
                      "    - {name: p, kind: promql, host: leaf1, query: up, expect: '== 1'}\n");
  EXPECT_NE(all_lines(token).find("fabgate.yaml:5:"), std::string::npos) << all_lines(token);
  EXPECT_NE(all_lines(token).find("bearer token over plain http"), std::string::npos);

  auto comparison = load_monitoring(
      kMonitoring, "    - {name: p, kind: promql, host: leaf1, query: up, expect: 'about 1'}\n");
  EXPECT_NE(all_lines(comparison).find("needs 'expect', a comparison"), std::string::npos)
      << all_lines(comparison);

  auto without = load_monitoring(
      "", "    - {name: p, kind: promql, host: leaf1, query: up, expect: '== 1'}\n");
  EXPECT_NE(all_lines(without).find("fabgate.yaml has no monitoring.prometheus"), std::string::npos)
      << all_lines(without);
}

TEST(MonitoringSettings, AUrlWithAUserNameOrPasswordIsRefusedAtItsLineWithoutEchoingIt) {
  // Given monitoring URLs carrying user:password@ (Prometheus) and a user alone (Alertmanager),
  // then each is refused at its own line and column and the password appears in no message;
  // the same URLs without user information load.
  const std::string with_userinfo =
      "monitoring:\n"
      "  prometheus:\n"
      "    url: https://scrape:CanaryPw9@prom.example:9090\n"
      "  alertmanager:\n"
      "    url: http://ops@am.example:9093/path@x\n";
  auto refused = load_monitoring(with_userinfo, "");
  std::string lines = all_lines(refused);
  EXPECT_NE(lines.find("fabgate.yaml:4:10: error: monitoring.prometheus url carries a user name or "
                       "password (user:pass@host)"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("fabgate.yaml:6:10: error: monitoring.alertmanager url carries a user name"),
            std::string::npos)
      << lines;
  EXPECT_EQ(lines.find("CanaryPw9"), std::string::npos) << lines;
  EXPECT_FALSE(refused.repository);

  auto accepted = load_monitoring(
      "monitoring:\n  prometheus:\n    url: https://prom.example:9090/api@v1\n"
      "  alertmanager:\n    url: http://am.example:9093\n",
      "    - {name: p, kind: promql, host: leaf1, query: up, expect: '== 1'}\n");
  EXPECT_TRUE(accepted.repository) << all_lines(accepted);
}

}  // namespace
}  // namespace fabgate::intent
