// The lab's three gated changes, run by the real fabgate binary from the lab's management
// namespace against FRR and sshd in network namespaces:
//   1. drain spine1          -> accepted (exit 0), then undrain spine1 -> accepted (exit 0)
//   2. bad prefix filter     -> rolled back and verified (exit 4)
//   3. silent drop on spine1 -> rolled back and verified (exit 4); BGP held while flows died
//   4. leaf1 MTU over gNMI   -> accepted (exit 0); the Set reached leaf1's interface, and
//      the snapshots read the switches' interfaces with a gNMI Get (the lab's collector)
// plus, written by the test, an interface disable over gNMI that is rolled back over gNMI, and
// drain-spine1 and drain-spine2 started at the same instant by two controllers: the lab's
// redundancy budget (one spine of pod p1 in change at once, claimed in the lab's etcd) lets
// exactly one proceed, the winner's spine stays out of service for the budget until its
// undrain change is accepted.
// After each rolled-back change, routes and BGP state equal the pre-change snapshot. A probe
// of the silent drop with one flow versus many shows why many are needed.
//
// Needs root, FRR, sshd, jq and nft; skips with the reason otherwise. The lab runs under its own
// namespace prefix and state directory, so a lab in use on the machine is never touched.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/examples/clos-lab/lab_harness.h"

namespace fabgate {
namespace {

using nlohmann::json;
using testing::CommandOutput;
using testing::read_file;
using testing::run_shell;
using testing::shell_quoted;
using testing::clos_lab::control_plane;
using testing::clos_lab::evidence_of;
using testing::clos_lab::kFabgate;
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
  // The drain stays until its own undrain change, which returns spine1 to service (the
  // lab's etcd counted it out of service until then).
  auto undrain = fabgate("apply undrain-spine1");
  EXPECT_EQ(undrain.exit_code, 0) << undrain.output;
  EXPECT_NE(undrain.output.find("spine1 back in service in "), std::string::npos)
      << undrain.output;
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

// `fabgate apply CHANGE --operator OPERATOR` on the controller CONTROLLER, as a shell command
// line run in the repository: a UTS namespace of its own whose host name is CONTROLLER (fabgate
// writes the host name into its claims as the controller), then the lab's management
// namespace; its evidence goes to EVIDENCE.
std::string apply_on_controller(const std::string& controller, const std::string& operator_name,
                                const std::string& change, const std::string& evidence) {
  return "unshare --uts sh -c 'hostname \"$1\" && shift && exec \"$@\"' sh " + controller + " " +
         lab.in_ns("mgmt") + shell_quoted(kFabgate) + " apply " + change + " --operator " +
         operator_name + " --evidence " + shell_quoted(evidence);
}

// How many times `spine`'s BGP sessions to the leaves have gone down since the lab came up
// (FRR's connectionsDropped over its IPv4 peers); -1 when FRR did not answer.
int sessions_dropped(const std::string& spine) {
  auto summary = lab.json("exec " + spine + " vtysh -c 'show bgp summary json'");
  if (!summary.is_object() || !summary["ipv4Unicast"]["peers"].is_object()) return -1;
  int dropped = 0;
  for (const auto& [peer, facts] : summary["ipv4Unicast"]["peers"].items())
    dropped += facts.value("connectionsDropped", 0);
  return dropped;
}

TEST_F(LabScenarios, TwoControllersDrainingBothSpinesAtOnceOnlyOneProceeds) {
  // Given the lab intent's budget spines-per-pod (at most one spine of pod p1 in change at once,
  // claimed in the lab's three-member etcd), when alice on controller-a applies drain-spine1 and
  // bob on controller-b applies drain-spine2 at the same instant (two fabgate processes with
  // their own controller names and evidence folders), then exactly one is accepted (exit 0)
  // and the other is refused before its first step (exit 3) naming the budget and the holder's
  // run, operator, change and controller; the refused run sent no step, and the refused spine's
  // BGP sessions never went down (its FRR's drop counters did not move) while the other
  // spine's did; and no claim is left in etcd once both ended.
  const int dropped_before[2] = {sessions_dropped("spine1"), sessions_dropped("spine2")};
  ASSERT_GE(dropped_before[0], 0);
  ASSERT_GE(dropped_before[1], 0);
  auto started = std::chrono::steady_clock::now();
  // In a subshell: the repository's `cd DIR && ` must hold for both background runs.
  auto race = repo().run("(" +
                         apply_on_controller("controller-a", "alice", "drain-spine1",
                                             repo().file("evidence/controller-a")) +
                         " >alice.log 2>&1 & a=$!; " +
                         apply_on_controller("controller-b", "bob", "drain-spine2",
                                             repo().file("evidence/controller-b")) +
                         " >bob.log 2>&1 & b=$!; wait $a; echo $? >alice.rc; wait $b; "
                         "echo $? >bob.rc)");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(race.exit_code, 0) << race.output;
  struct Run {
    std::string operator_name, controller, change, spine, log;
    int exit_code;
  } runs[2] = {{"alice", "controller-a", "drain-spine1", "spine1",
                read_file(repo().file("alice.log")), std::stoi(read_file(repo().file("alice.rc")))},
               {"bob", "controller-b", "drain-spine2", "spine2", read_file(repo().file("bob.log")),
                std::stoi(read_file(repo().file("bob.rc")))}};
  std::printf("[ figures ] two drains at once: exits %d (alice) and %d (bob) in %.1f s\n",
              runs[0].exit_code, runs[1].exit_code, seconds);
  ASSERT_EQ(runs[0].exit_code + runs[1].exit_code, 3) << "alice:\n"
                                                      << runs[0].log << "\nbob:\n"
                                                      << runs[1].log;
  const Run& winner = runs[0].exit_code == 0 ? runs[0] : runs[1];
  const Run& refused = runs[0].exit_code == 0 ? runs[1] : runs[0];
  ASSERT_EQ(refused.exit_code, 3) << refused.log;

  auto won = read_json(evidence_of(winner.log) / "manifest.json");
  ASSERT_TRUE(won.is_object()) << winner.log;
  std::string holder = "held by run " + won["run_id"].get<std::string>() + " (" +
                       winner.operator_name + ", change " + winner.change + ", on " +
                       winner.controller + ", alive, holds " + winner.spine + ")";
  EXPECT_NE(refused.log.find("budget spines-per-pod (pod=p1)"), std::string::npos) << refused.log;
  EXPECT_NE(refused.log.find(holder), std::string::npos) << holder << "\n" << refused.log;
  auto bundle = evidence_of(refused.log);
  ASSERT_FALSE(bundle.empty()) << refused.log;
  EXPECT_NE(bundle.string().find("/evidence/" + refused.controller + "/"), std::string::npos)
      << bundle;
  std::istringstream commands(read_file(bundle / "commands.jsonl"));
  for (std::string line; std::getline(commands, line);)
    EXPECT_NE(json::parse(line, nullptr, false).value("purpose", ""), "step") << line;
  // The devices' own record: the winner's spine dropped its two sessions, the other none.
  const int winner_index = winner.spine == "spine1" ? 0 : 1;
  EXPECT_GE(sessions_dropped(winner.spine) - dropped_before[winner_index], 2);
  EXPECT_EQ(sessions_dropped(refused.spine), dropped_before[1 - winner_index]);

  // The accepted drain stays, and so does its spine out of service once the winner's run has
  // ended: the refused drain, asked again, is refused again naming it, and touches nothing.
  auto again = fabgate("apply " + refused.change + " --operator " + refused.operator_name);
  EXPECT_EQ(again.exit_code, 3) << again.output;
  EXPECT_NE(again.output.find(winner.spine + " (out of service since "), std::string::npos)
      << again.output;
  EXPECT_EQ(sessions_dropped(refused.spine), dropped_before[1 - winner_index]);
  // Its undrain, a change of its own, returns it to service; the budget is free again.
  auto undrain = fabgate("apply undrain-" + winner.spine);
  EXPECT_EQ(undrain.exit_code, 0) << undrain.output;
  EXPECT_NE(undrain.output.find(winner.spine + " back in service in "), std::string::npos)
      << undrain.output;
}

// How many SSH logins leaf2's (or any node's) sshd accepted with the lab's change key: a step
// reaches a production device only through one.
int change_key_logins(const std::string& node) {
  auto fingerprint = run_shell("ssh-keygen -lf " + shell_quoted(lab.dir() + "/keys/change.pub") +
                               " | cut -d' ' -f2");
  std::string key = fingerprint.output.substr(0, fingerprint.output.find('\n'));
  EXPECT_EQ(key.rfind("SHA256:", 0), 0u) << fingerprint.output;
  std::istringstream log(read_file(lab.dir() + "/nodes/" + node + "/log/sshd.log"));
  int logins = 0;
  for (std::string line; std::getline(log, line);)
    if (line.find("Accepted publickey") != std::string::npos && line.find(key) != std::string::npos)
      ++logins;
  return logins;
}

TEST_F(LabScenarios, BadPrefixFilterIsDisprovenOnTheTwinWithProductionUntouched) {
  // Given the prefix filter that withdraws leaf2's host subnet, when it is tried on a twin,
  // then the twin disproves it with the flows probe (exit 3) after its step ran there, and
  // production never saw it: leaf2's sshd accepted no login with the change key, its running
  // configuration has no FG-BAD, and nothing of the twin is left on the machine.
  const int logins_before = change_key_logins("leaf2");
  auto out = fabgate("twin bad-prefix-filter-leaf2");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("disproven on the twin: probe host1-to-host3"), std::string::npos)
      << out.output;
  auto bundle = evidence_of(out);
  auto report = read_json(bundle / "twin/report.json");
  EXPECT_EQ(report["verdict"], "fail") << report.dump(1);
  ASSERT_EQ(report["steps"].size(), 1u) << report.dump(1);
  EXPECT_EQ(report["steps"][0]["state"], "succeeded");
  EXPECT_EQ(report["baseline_probes"][0]["verdict"], "pass") << report["baseline_probes"];
  EXPECT_EQ(report["plan"]["nodes"].size(), 8u) << "the probes' paths are all in the twin";
  EXPECT_FALSE(std::filesystem::exists(bundle / "execution.json") &&
               read_json(bundle / "execution.json")["steps"].size() > 0);
  EXPECT_EQ(change_key_logins("leaf2"), logins_before);
  auto config = lab.run("exec leaf2 vtysh -c 'show running-config'");
  EXPECT_EQ(config.exit_code, 0) << config.output;
  EXPECT_EQ(config.output.find("FG-BAD"), std::string::npos) << config.output;
  ASSERT_TRUE(report.contains("folder")) << report.dump(1);
  EXPECT_FALSE(std::filesystem::exists(report["folder"].get<std::string>()))
      << "the twin's folder is left behind";
  std::cout << "[ figures ] twin of bad-prefix-filter: " << report["phases"].dump() << " "
            << report["usage"].dump() << "\n";
}

TEST_F(LabScenarios, DrainHoldsOnTheTwin) {
  // Given the drain of spine1, then the twin (both spines in it, so the flows have their other
  // path) lets it through: exit 0, every probe judged there.
  auto out = fabgate("twin drain-spine1");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  auto report = read_json(evidence_of(out) / "twin/report.json");
  EXPECT_EQ(report["verdict"], "pass") << report.dump(1);
  EXPECT_EQ(report["acceptance_probes"].size(), 2u) << report.dump(1);
}

TEST_F(LabScenarios, TheTwinGateRefusesAnApplyBeforeProductionWhenTheTrustedRefTurnsItOn) {
  // Given fabgate.yaml on main with the lab's twin block, when the bad prefix filter is
  // applied, then the twin gate refuses it (exit 3) before execute: no step was sent to any
  // device (the run's device locks, taken and given back with the change key, are all it
  // sent with it) and leaf2's configuration has no FG-BAD.
  std::string settings = read_file(repo().path() + "/fabgate.yaml");
  repo().write("fabgate.yaml", settings + "twin:\n  radius: 1\n");
  repo().commit_all("try every change on a twin first");
  auto out = fabgate("apply bad-prefix-filter-leaf2");
  repo().write("fabgate.yaml", settings);
  repo().commit_all("twin off again for the other scenarios");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  auto manifest = read_json(evidence_of(out) / "manifest.json");
  std::string twin_verdict, execute_verdict = "not run";
  for (const auto& gate : manifest["gates"]) {
    if (gate["name"] == "twin") twin_verdict = gate["verdict"];
    if (gate["name"] == "execute") execute_verdict = gate["verdict"];
  }
  EXPECT_EQ(twin_verdict, "fail") << manifest.dump(1);
  EXPECT_EQ(execute_verdict, "not run");
  std::istringstream commands(read_file(evidence_of(out) / "commands.jsonl"));
  int steps_sent = 0;
  for (std::string line; std::getline(commands, line);) {
    auto record = json::parse(line, nullptr, false);
    if (record.is_object() && record.value("purpose", "") == "step") ++steps_sent;
  }
  EXPECT_EQ(steps_sent, 0);
  auto config = lab.run("exec leaf2 vtysh -c 'show running-config'");
  EXPECT_EQ(config.output.find("FG-BAD"), std::string::npos) << config.output;
}

}  // namespace
}  // namespace fabgate
