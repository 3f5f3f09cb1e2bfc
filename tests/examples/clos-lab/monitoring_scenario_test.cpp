// The lab's monitoring as evidence and as a gate, end to end: `lab up` starts a node exporter
// on every node and Prometheus + Alertmanager in the management namespace; the lab's intent
// names them, so the real fabgate binary judges freshness and alerts on every change.
//   - a healthy lab: every target scraped, identities as the inventory says, freshness-pre and
//     alerts-pre pass;
//   - change 9 (leaf1's port to host2 shut): the flows probe passes, the FabricInterfaceDown
//     alert fires, alerts-acceptance fails, the change is rolled back (exit 4) and the alert is
//     named in the report;
//   - a port that goes down and comes back within the settle time is still caught (from
//     Prometheus' ALERTS history; Alertmanager no longer holds the alert);
//   - `lab down` leaves no monitoring process behind.
//
// Needs root, FRR, sshd, jq and the Debian monitoring packages; skips with the reason otherwise.
// Own namespace prefix (fgm-) and state directory, so a lab in use is never touched.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/examples/clos-lab/lab_harness.h"
#include "tests/support/git_repo.h"

namespace fabgate {
namespace {

using nlohmann::json;
using testing::run_shell;
using testing::shell_quoted;
using testing::clos_lab::evidence_of;
using testing::clos_lab::Lab;
using testing::clos_lab::read_json;

const Lab lab("fgm-", "/run/fabgate-lab-monitoring");
const std::string kPrefix = lab.prefix();
const std::string kLabDir = lab.dir();

// What the monitoring stack needs besides the lab (lab_harness.h checks the lab's own tools).
std::optional<std::string> monitoring_unavailable() {
  for (const char* tool : {"/usr/bin/prometheus", "/usr/bin/prometheus-alertmanager",
                           "/usr/bin/prometheus-node-exporter", "/usr/bin/curl"})
    if (!std::filesystem::exists(tool)) return std::string(tool) + " is not installed";
  return std::nullopt;
}

std::string verdict_of(const json& manifest, const std::string& gate) {
  for (const auto& record : manifest["gates"])
    if (record["name"] == gate) return record["verdict"];
  return "(not run)";
}

class LabMonitoring : public testing::clos_lab::SharedLabSuite {
 protected:
  static void SetUpTestSuite() {
    if (monitoring_unavailable()) return;
    bring_up(lab, "lab intent for the monitoring scenario test");
  }
  void SetUp() override {
    if (auto why = monitoring_unavailable()) GTEST_SKIP() << *why;
    SharedLabSuite::SetUp();
  }
  static bool port_up(const std::string& node, const std::string& port) {
    auto flags = lab.json("exec " + node + " ip -j link show " + port);
    return flags.is_array() && !flags.empty() &&
           flags[0]["flags"].dump().find("\"UP\"") != std::string::npos;
  }
};

TEST_F(LabMonitoring, StatusShowsEveryExporterScraped) {
  // Given a lab just brought up, then status --json shows Prometheus and Alertmanager running
  // on the management address and every node's exporter running and scraped.
  auto status = json::parse(lab.run("status --json").output, nullptr, false);
  ASSERT_TRUE(status.is_object());
  const auto& monitoring = status["monitoring"];
  EXPECT_EQ(monitoring["prometheus"]["url"], "http://10.255.0.1:9090");
  EXPECT_EQ(monitoring["prometheus"]["running"], true);
  EXPECT_EQ(monitoring["prometheus"]["targets_up"], 8) << monitoring.dump(2);
  EXPECT_EQ(monitoring["alertmanager"]["running"], true);
  EXPECT_EQ(monitoring["alert_rules"][0]["name"], "FabricInterfaceDown");
  for (const auto& node : status["nodes"]) {
    EXPECT_EQ(node["node_exporter"]["running"], true) << node["name"];
    EXPECT_EQ(node["node_exporter"]["address"], node["mgmt_address"].get<std::string>() + ":9100");
  }
  // The management namespace still has no route out.
  auto routes = lab.run("exec mgmt ip -j route show");
  auto list = json::parse(routes.output, nullptr, false);
  ASSERT_TRUE(list.is_array()) << routes.output;
  for (const auto& route : list) EXPECT_NE(route["dst"], "default") << routes.output;
}

TEST_F(LabMonitoring, HealthyLabPassesFreshnessAndAlertsBeforeTheChange) {
  // Given the healthy lab, then a plan of change 9 passes freshness-pre (leaf1 scraped,
  // node_network_up fresh, node_uname_info says leaf1) and alerts-pre, and records the queries.
  auto out = fabgate("plan link-down-leaf1");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto bundle = evidence_of(out);
  auto manifest = read_json(bundle / "manifest.json");
  EXPECT_EQ(verdict_of(manifest, "freshness-pre"), "pass") << out.output;
  EXPECT_EQ(verdict_of(manifest, "alerts-pre"), "pass") << out.output;
  auto freshness = read_json(bundle / "monitoring/freshness-pre.json");
  ASSERT_TRUE(freshness["queries"].is_array()) << freshness.dump(2);
  std::set<std::string> purposes;
  for (const auto& query : freshness["queries"]) {
    EXPECT_EQ(query["verdict"], "pass") << query.dump(2);
    purposes.insert(query["purpose"]);
  }
  EXPECT_EQ(purposes, (std::set<std::string>{"target-up", "target-up-age", "target-scraped",
                                             "fresh", "identity"}));
}

TEST_F(LabMonitoring, PortShutFiresTheAlertAndIsRolledBack) {
  // Given change 9, which shuts leaf1's port to host2 while the host1-to-host3 flows keep
  // passing, then the FabricInterfaceDown alert fires, alerts-acceptance fails, fabgate rolls
  // back with the baseline verified (exit 4), the report names the alert, freshness still
  // holds, the silence is expired, and the port is up again.
  auto out = fabgate("apply link-down-leaf1");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto bundle = evidence_of(out);
  auto manifest = read_json(bundle / "manifest.json");
  EXPECT_EQ(verdict_of(manifest, "acceptance"), "pass") << out.output;
  EXPECT_EQ(verdict_of(manifest, "alerts-acceptance"), "fail") << out.output;
  EXPECT_EQ(verdict_of(manifest, "freshness-pre"), "pass") << out.output;
  EXPECT_EQ(verdict_of(manifest, "freshness-post"), "pass") << out.output;
  EXPECT_EQ(verdict_of(manifest, "silence-expire"), "pass") << out.output;
  EXPECT_NE(manifest["first_disproven"].get<std::string>().find("FabricInterfaceDown"),
            std::string::npos)
      << manifest["first_disproven"];
  auto report = testing::read_file((bundle / "report.md").string());
  EXPECT_NE(report.find("FabricInterfaceDown"), std::string::npos);
  EXPECT_NE(report.find("to-host2"), std::string::npos);
  EXPECT_TRUE(port_up("leaf1", "to-host2"));
}

TEST_F(LabMonitoring, APortThatFlapsWithinTheSettleTimeIsStillCaught) {
  // Given a change (written by this test) whose step shuts leaf1's port to host2 for 3 s and
  // brings it back, with a settle time after which Alertmanager no longer holds the alert,
  // then alerts-acceptance still fails from Prometheus' ALERTS history, naming the alert as
  // resolved, and the change is rolled back (exit 4). The flap is declared to the telemetry
  // layer (expected_flaps), which would otherwise catch it first and stop the run before the
  // alert gate this test is about.
  repo().write("changes/10-test-flap-to-host2.yaml", R"(id: test-flap-to-host2
title: Flap leaf1's port to host2 (down 3 s)
targets: [leaf1]
bounds: {max_targets: 1, step_timeout: 20s, deadline: 2m}
steps:
  - device: leaf1
    run: ip link set to-host2 down && sleep 3 && ip link set to-host2 up
rollback:
  - device: leaf1
    run: ip link set to-host2 up
acceptance:
  settle: 6s
  expected_flaps: ["leaf1:to-host2"]
  probes:
    - {name: host1-to-host3, layer: forwarding, host: host1, kind: flows, target: host3, flows: 4, timeout: 5s}
)");
  repo().commit_all("a port flap within the settle time");
  auto out = fabgate("apply test-flap-to-host2");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto manifest = read_json(evidence_of(out) / "manifest.json");
  EXPECT_EQ(verdict_of(manifest, "alerts-acceptance"), "fail") << out.output;
  EXPECT_NE(out.output.find("FabricInterfaceDown{device=\"to-host2\""), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("resolved before this check"), std::string::npos) << out.output;
  EXPECT_TRUE(port_up("leaf1", "to-host2"));
}

TEST_F(LabMonitoring, DownLeavesNoMonitoringProcess) {
  // Given the lab with its monitoring stack (this suite's last test), then `lab down` stops
  // Prometheus, Alertmanager and every exporter and removes their data with the state folder.
  // The monitoring processes, found by namespace: other labs on this machine run their own.
  auto pids = run_shell("for ns in $(ip netns list | awk '{print $1}' | grep '^" + kPrefix +
                        "'); do for pid in $(ip netns pids $ns 2>/dev/null); do case $(cat /proc/$pid/comm) in "
                        "prometheus*) echo $pid;; esac; done; done");
  std::istringstream lines(pids.output);
  std::vector<std::string> monitoring;
  // Pids only: `ip netns pids` complains on stderr ("Peer netns reference is invalid") about
  // processes whose namespace another test is creating or deleting at that moment, and a CI run
  // once counted those words as 24 processes.
  for (std::string pid; lines >> pid;)
    if (pid.find_first_not_of("0123456789") == std::string::npos) monitoring.push_back(pid);
  EXPECT_EQ(monitoring.size(), 10u) << "8 exporters, Prometheus, Alertmanager: " << pids.output;
  ASSERT_EQ(lab.run("down").exit_code, 0);
  // An exiting process leaves its namespaces before its parent (init) reaps it: gone or a
  // zombie within 3 s counts as stopped.
  auto running = [](const std::string& pid) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto state = text.rfind(')');
    return !text.empty() && state != std::string::npos && state + 2 < text.size() &&
           text[state + 2] != 'Z';
  };
  for (const auto& pid : monitoring) {
    for (int attempt = 0; attempt < 30 && running(pid); ++attempt)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(running(pid)) << "process " << pid << " survived `lab down`";
  }
  EXPECT_FALSE(std::filesystem::exists(kLabDir));
}

}  // namespace
}  // namespace fabgate
