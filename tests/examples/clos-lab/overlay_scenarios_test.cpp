// The lab's overlay (EVPN/VXLAN, VNI 10100 stretched across both leaves) and BFD, gated by the
// real fabgate binary from the lab's management namespace, against FRR, bfdd and kernel VXLAN
// devices in network namespaces:
//   5. MTU black hole on leaf1      -> rolled back and verified (exit 4); the control plane and
//                                      small packets held while full-size overlay frames were lost
//   6. VNI withdrawn on leaf2       -> rolled back (exit 4); compare names the VNI and the missing
//                                      remote VTEP; after rollback the VNI equals the baseline
//   7. BFD timers tightened, spine1 -> accepted (exit 0), no BFD session down during the change
// plus what the lab itself must show: `status --json` reports VNIs, VTEPs and BFD; a send too
// big for the overlay interface is a failure with EMSGSIZE; many overlay flows spread over
// both spines in each direction (the outer UDP source port follows the inner flow).
//
// Needs root, FRR, sshd, jq and nft; skips with the reason otherwise. Own namespace prefix (fgv-)
// and state directory, so no other lab on the machine is touched.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/examples/clos-lab/lab_harness.h"

namespace fabgate {
namespace {

using nlohmann::json;
using testing::CommandOutput;
using testing::run_shell;
using testing::shell_quoted;
using testing::clos_lab::evidence_of;
using testing::clos_lab::FlowsResponder;
using testing::clos_lab::kLabScript;
using testing::clos_lab::kProbe;
using testing::clos_lab::Lab;
using testing::clos_lab::read_json;

const Lab lab("fgv-", "/run/fabgate-lab-overlay-scenarios");

// What a VNI is on each leaf in a snapshot: state, local VTEP and remote VTEP set.
json overlay_of(const json& snapshot) {
  json out = json::object();
  for (const char* leaf : {"leaf1", "leaf2"}) {
    for (auto& [vni, facts] : snapshot["devices"][leaf]["evpn"]["vnis"].items())
      out[leaf][vni] = {{"state", facts.value("state", "")},
                        {"local_vtep", facts.value("local_vtep", "")},
                        {"remote_vteps", facts.value("remote_vteps", json::array())}};
  }
  return out;
}

// Every BFD and EVPN session state of every switch in a snapshot.
json sessions_of(const json& snapshot) {
  json out = json::object();
  for (const char* device : {"spine1", "spine2", "leaf1", "leaf2"}) {
    const auto& facts = snapshot["devices"][device];
    for (auto& [peer, value] : facts["bfd"]["peers"].items())
      out[device]["bfd"][peer] = value["status"];
    for (auto& [peer, value] : facts["evpn"]["peers"].items())
      out[device]["evpn"][peer] = value["state"];
  }
  return out;
}

json probe_named(const json& probes, const std::string& name) {
  for (const auto& probe : probes)
    if (probe.value("name", "") == name) return probe;
  return json();
}

class OverlayScenarios : public testing::clos_lab::SharedLabSuite {
 protected:
  static void SetUpTestSuite() { bring_up(lab, "lab intent for the overlay scenario test"); }
};

TEST_F(OverlayScenarios, StatusReportsVnisVtepsAndBfd) {
  // Given the lab up, then `status --json` shows each leaf as a VTEP on its loopback with VNI
  // 10100 up and the other leaf as its only remote VTEP, every switch with two BFD sessions up
  // at the profile's 300 ms, two EVPN sessions Established, and each host's overlay address.
  auto status = lab.json("status --json");
  ASSERT_TRUE(status.is_object());
  EXPECT_EQ(status["overlay"]["vnis"][0]["vni"], 10100);
  EXPECT_EQ(status["overlay"]["underlay_mtu"], 9000);
  EXPECT_EQ(status["overlay"]["overlay_mtu"], 1500);
  std::map<std::string, std::string> vtep = {{"leaf1", "10.0.255.11"}, {"leaf2", "10.0.255.12"}};
  for (const auto& node : status["nodes"]) {
    std::string name = node["name"];
    if (node["role"] == "host") {
      EXPECT_EQ(node["overlay"]["interface"], "ov0") << name;
      EXPECT_EQ(node["overlay"]["mtu"], 1500) << name;
      continue;
    }
    ASSERT_TRUE(node["bfd_peers"].is_array()) << name;
    EXPECT_EQ(node["bfd_peers"].size(), 2u) << name;
    for (const auto& peer : node["bfd_peers"]) {
      EXPECT_EQ(peer["status"], "up") << name;
      EXPECT_EQ(peer["receive_interval_ms"], 300) << name;
    }
    ASSERT_TRUE(node["evpn_peers"].is_array()) << name;
    for (const auto& peer : node["evpn_peers"]) EXPECT_EQ(peer["state"], "Established") << name;
    if (node["role"] != "leaf") continue;
    std::string other = name == "leaf1" ? "leaf2" : "leaf1";
    EXPECT_EQ(node["vtep"]["address"], vtep[name]);
    EXPECT_EQ(node["vtep"]["outer_route_cache"], "bypassed") << name;
    ASSERT_EQ(node["vtep"]["vnis"].size(), 1u) << node.dump();
    EXPECT_EQ(node["vtep"]["vnis"][0]["state"], "up");
    EXPECT_EQ(node["vtep"]["vnis"][0]["remote_vteps"], json::array({vtep[other]}));
  }
  // Underlay links really run at 9000, the hosts' overlay interfaces at 1500.
  EXPECT_EQ(run_shell(lab.in_ns("leaf1") + "cat /sys/class/net/to-spine1/mtu").output, "9000\n");
  EXPECT_EQ(run_shell(lab.in_ns("host1") + "cat /sys/class/net/ov0/mtu").output, "1500\n");
}

TEST_F(OverlayScenarios, OversizeOverlaySendIsAFailureWithEmsgsize) {
  // Given host1's overlay interface at MTU 1500, then a 1472-byte payload with DF set crosses
  // the overlay to host3, and a 1600-byte one is refused by host1's own stack (EMSGSIZE): the
  // probe fails (exit 3) and every flow says message-too-long. It never passes.
  FlowsResponder responder(lab, "host3", "10.100.0.13", 7101, std::chrono::seconds(30));
  ASSERT_TRUE(responder.ready()) << "the responder on host3 did not start";
  std::string probe = lab.in_ns("host1") + kProbe +
                      " flows --from 10.100.0.11 --to 10.100.0.13 --port 7101 --count 4 "
                      "--timeout 4s --size ";
  auto fits = run_shell(probe + "1472 2>/dev/null");
  auto oversize = run_shell(probe + "1600 2>/dev/null");
  EXPECT_EQ(fits.exit_code, 0) << fits.output;
  EXPECT_EQ(oversize.exit_code, 3) << oversize.output;
  auto report = json::parse(oversize.output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << oversize.output;
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_EQ(report["dont_fragment"], true);
  EXPECT_NE(report["reason"].get<std::string>().find("EMSGSIZE"), std::string::npos);
  for (const auto& flow : report["flows"]) EXPECT_EQ(flow["error"], "message-too-long");
}

TEST_F(OverlayScenarios, ManyOverlayFlowsSpreadOverBothSpines) {
  // Given 24 UDP flows from host1 to host3 across the overlay, then `lab paths` sees both
  // spines forward them in each direction: each leaf derives the VXLAN packet's outer UDP
  // source port from the inner flow and routes every encapsulated packet by its outer
  // five-tuple, so the underlay's ECMP hash spreads the encapsulated flows. Per direction, not
  // per spine: a leaf that pins all its flows to one uplink while the other leaf pins its
  // replies to the other spine would still keep both spines busy.
  FlowsResponder responder(lab, "host3", "10.100.0.13", 7102, std::chrono::seconds(30));
  ASSERT_TRUE(responder.ready()) << "the responder on host3 did not start";
  // 24 flows x 20 packets each way (1.3 s here). A path that carries at least two flows
  // forwards 40 or more; an idle one only BFD and keepalives, about 4 packets/s per interface.
  // With a working per-flow hash, fewer than two of 24 flows on one path is a 3-in-a-million
  // event per direction.
  constexpr int kFlows = 24, kPacketsPerFlow = 20, kBusyPath = 2 * kPacketsPerFlow;
  auto paths = run_shell("timeout 30 env " + lab.env() + kLabScript + " paths --min-packets " +
                         std::to_string(kBusyPath) + " -- " + lab.in_ns("host1") + kProbe +
                         " flows --from 10.100.0.11 --to 10.100.0.13 " + "--port 7102 --count " +
                         std::to_string(kFlows) + " --packets " + std::to_string(kPacketsPerFlow) +
                         " --spacing 5ms --timeout 8s 2>/dev/null");
  EXPECT_EQ(paths.exit_code, 0) << paths.output;
  // stdout carries only the paths report (the probe's own output goes to stderr, dropped).
  auto report = json::parse(paths.output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << paths.output;
  EXPECT_EQ(report["command_status"], 0);
  EXPECT_TRUE(report["idle_paths"].empty()) << report.dump(2);
  // A spine's interface to leaf2 transmits what leaf1 sent it (host1 to host3), its
  // interface to leaf1 what leaf2 sent it (host3's echoes).
  std::map<std::string, int> forwarded;
  for (const auto& interface : report["interfaces"])
    forwarded[interface.value("spine", "") + " " + interface.value("interface", "")] =
        interface.value("tx_delta", 0);
  for (const char* direction : {"to-leaf2", "to-leaf1"}) {
    for (const char* spine : {"spine1", "spine2"}) {
      std::string path = std::string(spine) + " " + direction;
      EXPECT_GE(forwarded[path], kBusyPath) << path << " carried no overlay flow\n"
                                            << report.dump(2);
      std::cout << "[ figures ] overlay spread: " << path << " forwarded " << forwarded[path]
                << " packets\n";
    }
  }
}

TEST_F(OverlayScenarios, MtuBlackHoleIsCaughtByFullSizeOverlayFramesAndRolledBack) {
  // Given leaf1's uplinks at MTU 1500 (declared), then BGP, BFD and EVPN stay up and small
  // overlay packets cross, but full-size overlay frames do not: fabgate rolls back (exit 4),
  // says the control plane and small packets held while full-size frames were lost, and the
  // uplinks are back at 9000 with the overlay as before.
  auto out = fabgate("apply mtu-blackhole-leaf1");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto bundle = evidence_of(out);
  auto manifest = read_json(bundle / "manifest.json");
  EXPECT_NE(manifest["diagnosis"].dump().find(
                "control plane and small packets held while full-size overlay frames were lost"),
            std::string::npos)
      << manifest["diagnosis"].dump(2) << out.output;
  auto probes = read_json(bundle / "probes/acceptance.json");
  EXPECT_EQ(probe_named(probes, "host1-to-host3")["verdict"], "pass") << probes.dump(2);
  EXPECT_EQ(probe_named(probes, "overlay-small-host1-to-host3")["verdict"], "pass");
  EXPECT_EQ(probe_named(probes, "overlay-full-size-host1-to-host3")["verdict"], "fail");
  // The control plane held: every BFD and EVPN session as before, in the post snapshot.
  auto pre = read_json(bundle / "snapshots/pre.json");
  EXPECT_EQ(sessions_of(read_json(bundle / "snapshots/post.json")), sessions_of(pre));
  auto report = testing::read_file((bundle / "report.md").string());
  EXPECT_NE(report.find("overlay (forwarding)"), std::string::npos);
  EXPECT_EQ(run_shell(lab.in_ns("leaf1") + "cat /sys/class/net/to-spine1/mtu").output, "9000\n");
  EXPECT_EQ(run_shell(lab.in_ns("leaf1") + "cat /sys/class/net/to-spine2/mtu").output, "9000\n");
  EXPECT_EQ(overlay_of(read_json(bundle / "snapshots/restored.json")), overlay_of(pre));
}

TEST_F(OverlayScenarios, WithdrawnVniIsNamedWithItsMissingVtepAndRestored) {
  // Given leaf2's VXLAN device for VNI 10100 taken down, then the overlay probe fails, the
  // compare names VNI 10100 and the missing remote VTEP 10.0.255.12 on leaf1, fabgate rolls
  // back (exit 4), and after the rollback the VNI and its VTEPs equal the baseline.
  auto out = fabgate("apply vni-withdrawn-leaf2");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto bundle = evidence_of(out);
  auto probes = read_json(bundle / "probes/acceptance.json");
  EXPECT_EQ(probe_named(probes, "overlay-host1-to-host3")["verdict"], "fail") << probes.dump(2);
  EXPECT_EQ(probe_named(probes, "host1-to-host3")["verdict"], "pass");
  auto diff = read_json(bundle / "diffs/post-vs-pre.json");
  bool named = false;
  for (const auto& result : diff["results"]) {
    if (result.value("verdict", "") != "fail") continue;
    std::string path = result.value("path", "");
    if (path.find("devices.leaf1.evpn.vnis") != std::string::npos &&
        path.find("10100") != std::string::npos && path.find("remote_vteps") != std::string::npos &&
        result.dump().find("10.0.255.12") != std::string::npos)
      named = true;
  }
  EXPECT_TRUE(named) << diff.dump(2).substr(0, 4000);
  auto pre = read_json(bundle / "snapshots/pre.json");
  EXPECT_EQ(overlay_of(read_json(bundle / "snapshots/restored.json")), overlay_of(pre));
  EXPECT_EQ(overlay_of(pre)["leaf1"]["10100"]["remote_vteps"], json::array({"10.0.255.12"}));
}

TEST_F(OverlayScenarios, TightenedBfdTimersAreAcceptedWithoutAFlap) {
  // Given spine1's BFD profile tightened to 100 ms with the new timers declared, then fabgate
  // accepts it (exit 0); BFD on leaf1, read every 100 ms while the change runs, never shows a
  // session down; no session's down counter moved between the snapshots; the leaves see
  // spine1's new timers.
  std::atomic<bool> stop{false};
  std::atomic<int> samples{0}, not_up{0};
  std::thread watcher([&] {
    while (!stop) {
      auto bfd = lab.json("exec leaf1 vtysh -c 'show bfd peers json'");
      if (bfd.is_array() && bfd.size() == 2) {
        ++samples;
        for (const auto& peer : bfd)
          if (peer.value("status", "") != "up") ++not_up;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  auto out = fabgate("apply bfd-timers-spine1");
  stop = true;
  watcher.join();
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_GT(samples.load(), 5) << "BFD state was hardly read during the change";
  EXPECT_EQ(not_up.load(), 0) << "a BFD session went down during the change";
  auto bundle = evidence_of(out);
  auto pre = read_json(bundle / "snapshots/pre.json"),
       post = read_json(bundle / "snapshots/post.json");
  for (const char* device : {"spine1", "spine2", "leaf1", "leaf2"})
    for (auto& [peer, facts] : post["devices"][device]["bfd"]["peers"].items())
      EXPECT_EQ(facts["session_down_events"],
                pre["devices"][device]["bfd"]["peers"][peer]["session_down_events"])
          << device << " " << peer;
  EXPECT_EQ(post["devices"]["leaf1"]["bfd"]["peers"]["10.0.1.0"]["remote_receive_interval_ms"],
            100);
  EXPECT_EQ(post["devices"]["spine1"]["bfd"]["peers"]["10.0.1.1"]["receive_interval_ms"], 100);
  std::cout << "[ figures ] bfd-timers-spine1: " << samples.load()
            << " BFD reads on leaf1 during the change, none down\n";
  // The change is meant to stay; put the lab's timers back for later scenarios.
  auto rollback = lab.json("status --json")["mechanisms"]["bfd_timers_spine1"]["rollback"][0];
  ASSERT_TRUE(rollback.is_string());
  ASSERT_EQ(lab.run("exec spine1 sh -c " + shell_quoted(rollback.get<std::string>())).exit_code, 0);
}

}  // namespace
}  // namespace fabgate
