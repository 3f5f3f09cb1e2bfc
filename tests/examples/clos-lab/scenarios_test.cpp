// The lab's three gated changes, run by the real fabgate binary from the lab's management
// namespace against FRR and sshd in network namespaces:
//   1. drain spine1          -> accepted (exit 0)
//   2. bad prefix filter     -> rolled back and verified (exit 4)
//   3. silent drop on spine1 -> rolled back and verified (exit 4); BGP held while flows died
//   4. leaf1 MTU over gNMI   -> accepted (exit 0); the Set reached leaf1's interface, and
//      the snapshots read the switches' interfaces with a gNMI Get (the lab's collector)
// plus, written by the test, an interface disable over gNMI that is rolled back over gNMI.
// After each rolled-back change, routes and BGP state equal the pre-change snapshot. A probe
// of the silent drop with one flow versus many shows why many are needed.
//
// Needs root, FRR, sshd, jq and nft; skips with the reason otherwise. The lab runs under its own
// namespace prefix and state directory, so a lab in use on the machine is never touched.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/examples/clos-lab/lab_harness.h"

namespace fabgate {
namespace {

using nlohmann::json;
using testing::CommandOutput;
using testing::run_shell;
using testing::shell_quoted;
using testing::clos_lab::control_plane;
using testing::clos_lab::evidence_of;
using testing::clos_lab::kProbe;
using testing::clos_lab::Lab;
using testing::clos_lab::read_json;

const Lab lab("fgs-", "/run/fabgate-lab-scenarios");

// One lab for the whole suite: bringing it up costs seconds, and each scenario leaves the
// fabric as it found it (that is what the scenarios prove).
class LabScenarios : public testing::clos_lab::SharedLabSuite {
 protected:
  static void SetUpTestSuite() { bring_up(lab, "lab intent for the scenario test"); }
};

TEST_F(LabScenarios, DrainSpine1IsAccepted) {
  // Given a drain of spine1 with its expected differences declared, then fabgate accepts it:
  // flows still complete through spine2 and the continuous probe saw at most 1 s of loss.
  auto out = fabgate("apply drain-spine1");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  auto manifest = read_json(evidence_of(out) / "manifest.json");
  EXPECT_EQ(manifest["exit_code"], 0);
  auto during = read_json(evidence_of(out) / "probes/during.json");
  EXPECT_EQ(during["verdict"], "pass") << during.dump(2);
  std::cout << "[ figures ] drain-spine1: longest interruption seen by watch: "
            << during["detail"].value("longest_interruption_ms", -1) << " ms\n";
  // Undrain for the next scenarios (the drain is meant to stay until its own undrain change).
  auto undrain = lab.run("status --json | jq -r '.mechanisms.drain_spine1.rollback[0]'");
  ASSERT_EQ(lab.run("exec spine1 sh -c " + shell_quoted(undrain.output)).exit_code, 0);
}

TEST_F(LabScenarios, BadPrefixFilterIsRolledBackAndTheBaselineVerified) {
  // Given a prefix filter that withdraws leaf2's host subnet, then the flows probe fails,
  // fabgate rolls back, and routes and BGP after the rollback equal the baseline.
  auto out = fabgate("apply bad-prefix-filter-leaf2");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto bundle = evidence_of(out);
  auto manifest = read_json(bundle / "manifest.json");
  EXPECT_NE(manifest["first_disproven"].get<std::string>().find("host1-to-host3"),
            std::string::npos)
      << manifest["first_disproven"];
  EXPECT_EQ(control_plane(read_json(bundle / "snapshots/restored.json")),
            control_plane(read_json(bundle / "snapshots/pre.json")));
  ASSERT_TRUE(manifest.contains("detection_to_restore_ms"));
  std::cout << "[ figures ] bad-prefix-filter: failure detected -> restored and verified: "
            << manifest["detection_to_restore_ms"].get<long>() << " ms\n";
}

TEST_F(LabScenarios, SilentDropIsCaughtByManyFlowsAndRolledBack) {
  // Given a drop on one spine's data path that leaves BGP and interfaces up, then the
  // multi-flow probe fails, the report says the control plane held while forwarding failed,
  // and the rollback restores the baseline.
  auto out = fabgate("apply silent-drop-spine1");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto bundle = evidence_of(out);
  auto manifest = read_json(bundle / "manifest.json");
  std::string diagnosis = manifest["diagnosis"].dump();
  EXPECT_NE(diagnosis.find("control plane held while forwarding failed"), std::string::npos)
      << out.output;
  auto report = testing::read_file((bundle / "report.md").string());
  EXPECT_NE(report.find("every BGP session check held"), std::string::npos);
  EXPECT_EQ(control_plane(read_json(bundle / "snapshots/restored.json")),
            control_plane(read_json(bundle / "snapshots/pre.json")));
}

TEST_F(LabScenarios, OneFlowCanMissTheSilentDropManyFlowsCannot) {
  // Given the silent drop applied by hand, then single-flow probes do not reliably see it
  // (each one hashes onto one spine), while one 16-flow probe always does.
  auto mechanisms =
      json::parse(lab.run("status --json").output)["mechanisms"]["silent_drop_spine1_to_leaf2"];
  std::string apply = mechanisms["apply"][0], rollback = mechanisms["rollback"][0];
  ASSERT_EQ(lab.run("exec spine1 sh -c " + shell_quoted(apply)).exit_code, 0);
  std::string host1 = lab.in_ns("host1");
  int single_passed = 0;
  CommandOutput many;
  {
    testing::clos_lab::FlowsResponder responder(lab, "host3", "10.1.2.11", 7001,
                                                std::chrono::seconds(60));
    EXPECT_TRUE(responder.ready()) << "the responder on host3 did not start";
    for (int i = 0; i < 12; ++i) {
      auto one = run_shell(host1 + kProbe +
                           " flows --to 10.1.2.11 --port 7001 --count 1 --proto udp --timeout 3s");
      single_passed += one.exit_code == 0;
    }
    many = run_shell(host1 + kProbe +
                     " flows --to 10.1.2.11 --port 7001 --count 16 --proto udp --timeout 4s");
  }
  lab.run("exec spine1 sh -c " + shell_quoted(rollback));
  EXPECT_EQ(many.exit_code, 3) << many.output;  // fail: some of the 16 flows were dropped
  std::cout << "[ figures ] silent drop: single-flow probes passed " << single_passed
            << "/12, the 16-flow probe failed\n";
  // A single flow is a coin toss between the spines; with 16 flows the chance that all of them
  // avoid spine1 is 2^-16, and the chance that 12 single flows all hit it is 2^-12. That a
  // single flow passed shows a one-flow probe would have called this fabric healthy.
  EXPECT_GE(single_passed, 1) << "every single flow hit the drop: the ECMP spread is broken";
}

// The MTU of one interface of a lab node, read on the device itself (-1 when unreadable).
int mtu_on(const std::string& node, const std::string& interface) {
  auto out = lab.run("exec " + node + " cat /sys/class/net/" + interface + "/mtu");
  if (out.exit_code != 0) return -1;
  try {
    return std::stoi(out.output);
  } catch (const std::exception&) {
    return -1;
  }
}

// The gNMI records of a run's commands.jsonl: Sets of steps and rollbacks, or (with
// `snapshot_gets`) the Gets the snapshots sent for gNMI collector sources.
std::vector<json> gnmi_commands(const std::filesystem::path& bundle, bool snapshot_gets = false) {
  std::vector<json> out;
  std::ifstream in(bundle / "commands.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto record = json::parse(line, nullptr, false);
    if (!record.is_object() || record.value("transport", "") != "gnmi") continue;
    if ((record.value("purpose", "") == "snapshot") == snapshot_gets) out.push_back(record);
  }
  return out;
}

TEST_F(LabScenarios, Leaf1MtuChangeGoesThroughGnmiEndToEnd) {
  // Given leaf1's jumbo-MTU change written as a gNMI Set to the fabgate-gnmid the lab runs on
  // every switch, then fabgate accepts it, leaf1's to-host1 really has MTU 9000 afterwards, and
  // the evidence records the Set as a gNMI step, not an SSH command.
  ASSERT_EQ(mtu_on("leaf1", "to-host1"), 1500) << "the scenario needs the lab's default MTU";
  auto out = fabgate("apply leaf1-mtu-gnmi");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(mtu_on("leaf1", "to-host1"), 9000);
  auto sets = gnmi_commands(evidence_of(out));
  ASSERT_EQ(sets.size(), 1u) << out.output;
  EXPECT_EQ(sets[0]["device"], "leaf1");
  EXPECT_EQ(sets[0]["purpose"], "step");
  EXPECT_FALSE(sets[0].contains("failure")) << sets[0].dump();
  // The lab collects the switches' identity with a gNMI Get: the pre snapshot says so and has
  // the FRR version and kernel from it; the MTU is read back over SSH (ip link), a path other
  // than the one that set it.
  auto bundle = evidence_of(out);
  auto pre = read_json(bundle / "snapshots/pre.json");
  const json& source = pre["devices"]["leaf1"]["sources"]["identity"];
  EXPECT_EQ(source["status"], "ok") << source.dump(2);
  ASSERT_TRUE(source["commands"].is_array() && source["commands"].size() == 1u) << source.dump(2);
  EXPECT_EQ(source["commands"][0]["path"], "/system/state");
  EXPECT_EQ(source["commands"][0]["transport"], "gnmi");
  EXPECT_EQ(source["commands"][0]["status"], "ok");
  const json& identity = pre["devices"]["leaf1"]["identity"];
  EXPECT_TRUE(identity.contains("frr_version") && identity.contains("kernel")) << identity.dump();
  EXPECT_EQ(pre["devices"]["leaf1"]["interfaces"]["to-host1"]["mtu"], 1500);
  auto post = read_json(bundle / "snapshots/post.json");
  EXPECT_EQ(post["devices"]["leaf1"]["interfaces"]["to-host1"]["mtu"], 9000);
  std::vector<json> leaf1_gets;
  for (auto& get : gnmi_commands(bundle, true))
    if (get["device"] == "leaf1") leaf1_gets.push_back(get);
  ASSERT_FALSE(leaf1_gets.empty()) << "no gNMI Get to leaf1 in commands.jsonl";
  EXPECT_EQ(leaf1_gets[0]["rpc"], "get");
  EXPECT_EQ(leaf1_gets[0]["status"], "ok") << leaf1_gets[0].dump();
  EXPECT_NE(leaf1_gets[0]["reply"].dump().find("leaf1"), std::string::npos);
  // The change is meant to stay; restore the default for later scenarios.
  ASSERT_EQ(lab.run("exec leaf1 ip link set to-host1 mtu 1500").exit_code, 0);
}

TEST_F(LabScenarios, InterfaceDisableOverGnmiIsRolledBackOverGnmi) {
  // Given a change (written by this test) that disables leaf1's port to host1 with a gNMI Set
  // and re-enables it with a gNMI replace, then host1's flows fail, fabgate rolls back over
  // gNMI (exit 4), the port is up again on the device and the routes equal the baseline.
  repo().write("changes/9-test-disable-to-host1.yaml", R"(id: test-disable-to-host1
title: Disable leaf1's port to host1 (gNMI; cuts host1 off)
targets: [leaf1]
bounds: {max_targets: 1, step_timeout: 20s, deadline: 2m}
steps:
  - device: leaf1
    gnmi:
      - {op: update, path: "/interfaces/interface[name=to-host1]/config/enabled", value: false}
rollback:
  - device: leaf1
    gnmi:
      - {op: replace, path: "/interfaces/interface[name=to-host1]/config/enabled", value: true}
acceptance:
  settle: 1s
  probes:
    - {name: host1-to-host3, layer: forwarding, host: host1, kind: flows, target: host3, flows: 4, timeout: 5s}
)");
  repo().commit_all("a gNMI change that must be rolled back");
  auto out = fabgate("apply test-disable-to-host1");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto bundle = evidence_of(out);
  auto sets = gnmi_commands(bundle);
  ASSERT_EQ(sets.size(), 2u) << out.output;
  EXPECT_EQ(sets[0]["purpose"], "step");
  EXPECT_EQ(sets[1]["purpose"], "rollback");
  EXPECT_FALSE(sets[1].contains("failure")) << sets[1].dump();
  auto link = lab.run("exec leaf1 ip -j link show to-host1");
  auto flags = json::parse(link.output, nullptr, false);
  ASSERT_TRUE(flags.is_array() && !flags.empty()) << link.output;
  EXPECT_NE(flags[0]["flags"].dump().find("\"UP\""), std::string::npos) << link.output;
  EXPECT_EQ(control_plane(read_json(bundle / "snapshots/restored.json")),
            control_plane(read_json(bundle / "snapshots/pre.json")));
}

}  // namespace
}  // namespace fabgate
