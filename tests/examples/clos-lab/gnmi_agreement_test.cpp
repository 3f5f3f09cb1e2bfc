// The shipped openconfig collector profile against the lab's real switches: each switch is
// collected once over SSH (iproute2, ethtool, vtysh) and once wholly over gNMI (the
// fabgate-gnmid every lab switch runs), both by the real fabgate binary, and the two snapshots
// must agree: the same facts for the categories both collect, and `fabgate diff` of one
// against the other holds with the default rule set.
//
// Needs root, FRR, sshd, jq and nft; skips with the reason otherwise. The lab runs under its own
// namespace prefix (fgn-) and state directory, swept by sweep-test-labs.

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "tests/examples/clos-lab/lab_harness.h"

namespace fabgate {
namespace {

using nlohmann::json;
using testing::CommandOutput;
using testing::shell_quoted;
using testing::clos_lab::evidence_of;
using testing::clos_lab::Lab;
using testing::clos_lab::lab_unavailable;
using testing::clos_lab::read_json;

const Lab lab("fgn-", "/run/fabgate-lab-gnmi-test");
const char* const kSwitches[] = {"spine1", "spine2", "leaf1", "leaf2"};

// The SSH side: the shipped FRR profile's commands for the categories the openconfig profile
// also fills from fabgate-gnmid.
const char* kSshProfile = R"(platform: frr
sources:
  - category: identity
    timeout: 10s
    commands:
      - run: hostname
        parse: hostname
      - run: cat /etc/os-release
        parse: os-release
      - run: uname -r
        parse: kernel-release
      - run: "command -v ethtool >/dev/null || exit 127; for dev in /sys/class/net/*; do n=${dev##*/}; echo \"== $n\"; ethtool -i \"$n\" 2>/dev/null; done; exit 0"
        parse: ethtool-drivers
      - run: vtysh -c 'show version'
        parse: frr-version
  - category: interfaces
    timeout: 10s
    commands:
      - run: ip -j -s link show
        parse: ip-link
      - run: ip -j addr show
        parse: ip-addr
  - category: bgp
    timeout: 10s
    commands:
      - run: vtysh -c 'show bgp summary json'
        parse: bgp-summary
  - category: lldp
    timeout: 10s
    commands:
      - run: lldpcli -f json show interfaces
        parse: lldp-interfaces
      - run: lldpcli -f json show neighbors details
        parse: lldp-neighbors
  - category: routes
    timeout: 20s
    commands:
      - run: ip -j route show table main
        parse: ip-route-v4
)";

// The fields the compare rules read, per interface.
json link_facts(const json& interfaces) {
  json out = json::object();
  for (const auto& [name, facts] : interfaces.items()) {
    out[name] = {{"oper", facts["oper"]},
                 {"admin", facts["admin"]},
                 {"mtu", facts["mtu"]},
                 {"addresses", facts["addresses"]}};
  }
  return out;
}

// The facts of a route both transports carry, by prefix: OpenConfig's AFT has no metric, and
// it holds unicast forwarding entries only.
json route_facts(const json& routes) {
  json out = json::object();
  for (const auto& route : routes["ipv4"]) {
    if (route.contains("type") && route["type"] != "unicast") continue;
    out[route["prefix"].get<std::string>()] = {{"protocol", route["protocol"]},
                                               {"nexthops", route["nexthops"]}};
  }
  return out;
}

json peer_facts(const json& bgp) {
  json out = json::object();
  for (const auto& [peer, facts] : bgp["peers"].items()) {
    out[peer] = {{"state", facts["state"]},
                 {"remote_as", facts["remote_as"]},
                 {"prefixes_received", facts["prefixes_received"]}};
  }
  return out;
}

class GnmiAgreement : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = lab_unavailable()) GTEST_SKIP() << *why;
    auto up = lab.run("up");
    lab_up_ = true;
    ASSERT_EQ(up.exit_code, 0) << "lab up failed:\n" << up.output;
    ASSERT_EQ(lab.run("wait").exit_code, 0) << "the lab did not converge";
    lab.copy_intent_into(repo_);
    repo_.write(".gitignore", "evidence/\n*.json\n");
  }
  void TearDown() override {
    if (!lab_up_) return;
    // Runs release their budget claims whatever their verdict (exit 0, 3, 4); none may be left.
    testing::clos_lab::expect_no_budget_claims(lab);
    lab.run("down");
  }

  CommandOutput fabgate(const std::string& arguments) { return lab.fabgate(repo_, arguments); }

  bool lab_up_ = false;
  testing::GitRepo repo_;
};

TEST_F(GnmiAgreement, OpenconfigProfileOverGnmiAloneAgreesWithTheSshSnapshot) {
  // Given the lab's switches collected over SSH with FRR's commands, then again with the
  // shipped openconfig profile (gNMI Gets only, with an SSH key that does not exist), then
  // every category is ok on both sides, the facts the compare rules read are equal on both
  // sides (routes: prefix, protocol and next hops of every unicast route; LLDP: every port's
  // neighbours, field by field, one per link, named by node and port), and `fabgate diff ssh
  // gnmi` holds (exit 0) for everything but routes.
  repo_.write("policies/collectors/frr.yaml", kSshProfile);
  repo_.commit_all("lab intent, switches collected over SSH");
  auto ssh = fabgate("snapshot role:spine role:leaf -o ssh.json");
  ASSERT_EQ(ssh.exit_code, 0) << ssh.output;

  // The shipped openconfig profile as the switches' profile (the platform stays frr: the
  // compare engine treats a changed platform as a different device), and the SSH read key
  // made useless: a gNMI-only profile must not need it.
  std::ifstream shipped(FABGATE_SOURCE_DIR "/policies/collectors/openconfig.yaml");
  std::string profile((std::istreambuf_iterator<char>(shipped)), std::istreambuf_iterator<char>());
  ASSERT_NE(profile.find("platform: openconfig\n"), std::string::npos);
  profile.replace(profile.find("platform: openconfig\n"), 21, "platform: frr\n");
  repo_.write("policies/collectors/frr.yaml", profile);
  repo_.run("sed -i 's#keys/read#keys/no-such-key#' inventory.yaml");
  repo_.commit_all("switches collected with the openconfig profile over gNMI only");
  auto gnmi = fabgate("snapshot role:spine role:leaf -o gnmi.json");
  // Every source is ok, lldp included (each switch's fabgate-gnmid reads its lldpd).
  EXPECT_EQ(gnmi.exit_code, 0) << gnmi.output;

  json by_ssh = read_json(repo_.file("ssh.json"));
  json by_gnmi = read_json(repo_.file("gnmi.json"));
  ASSERT_TRUE(by_ssh.is_object() && by_gnmi.is_object()) << ssh.output << gnmi.output;
  for (const char* name : kSwitches) {
    SCOPED_TRACE(name);
    const json& s = by_ssh["devices"][name];
    const json& g = by_gnmi["devices"][name];
    for (const char* category : {"identity", "interfaces", "bgp", "lldp", "routes"}) {
      const json& source = g["sources"][category];
      EXPECT_EQ(source["status"], "ok") << source.dump(2);
      for (const auto& entry : source["commands"]) {
        EXPECT_EQ(entry["transport"], "gnmi") << entry.dump();
      }
      EXPECT_EQ(s["sources"][category]["status"], "ok") << s["sources"][category].dump(2);
    }
    EXPECT_EQ(g["sources"]["config"]["status"], "ok") << g["sources"]["config"].dump(2);
    EXPECT_EQ(g["config"]["format"], "openconfig-json");
    for (const char* field : {"hostname", "os", "kernel", "frr_version", "nics"}) {
      EXPECT_EQ(g["identity"][field], s["identity"][field]) << field;
    }
    EXPECT_EQ(link_facts(g["interfaces"]), link_facts(s["interfaces"]));
    EXPECT_EQ(peer_facts(g["bgp"]), peer_facts(s["bgp"]));
    EXPECT_FALSE(peer_facts(g["bgp"]).empty());
    EXPECT_EQ(route_facts(g["routes"]), route_facts(s["routes"]));
    EXPECT_GE(route_facts(g["routes"]).size(), 5u) << g["routes"].dump(2);
    // The lab disables IPv6: fabgate-gnmid still answers ipv6-unicast, with no entry, so the
    // IPv6 table is an empty answer rather than missing evidence.
    EXPECT_EQ(g["routes"]["ipv6"], json::array()) << g["routes"].dump(2);

    // LLDP: the same ports with the same neighbours, every field; one neighbour per link (a
    // spine's two leaves, a leaf's two spines and two hosts), each the node at the other end.
    const json& lldp = g["lldp"]["neighbors"];
    EXPECT_EQ(lldp, s["lldp"]["neighbors"]);
    ASSERT_TRUE(lldp.is_object()) << g["lldp"].dump(2);
    EXPECT_EQ(lldp.size(), std::string(name).rfind("spine", 0) == 0 ? 2u : 4u) << lldp.dump(2);
    for (const auto& [port, neighbors] : lldp.items()) {
      SCOPED_TRACE(port);
      ASSERT_EQ(neighbors.size(), 1u) << neighbors.dump();
      const json& neighbor = neighbors[0];
      for (const char* field : {"system_name", "port_id", "chassis_id", "port_description"}) {
        EXPECT_EQ(neighbor[field], s["lldp"]["neighbors"][port][0][field]) << field;
        EXPECT_TRUE(neighbor[field].is_string() && !neighbor[field].get<std::string>().empty())
            << field << ": " << neighbor.dump();
      }
      // to-leaf1 on spine1 hears leaf1's to-spine1; to-host2 on leaf1 hears host2's eth0.
      EXPECT_EQ("to-" + neighbor["system_name"].get<std::string>(), port);
      EXPECT_EQ(neighbor["port_id"],
                port.rfind("to-host", 0) == 0 ? "eth0" : "to-" + std::string(name));
    }
  }
  // The whole-snapshot diff leaves routes out: the AFT carries no metric, which the route
  // table compares (the agreement above covers prefix, protocol and next hops).
  for (const char* file : {"ssh.json", "gnmi.json"})
    repo_.run(std::string("jq 'del(.devices[].routes, .devices[].sources.routes)' ") + file +
              " > cut-" + file);
  auto diff = fabgate("diff cut-ssh.json cut-gnmi.json");
  EXPECT_EQ(diff.exit_code, 0) << diff.output;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The events one device's telemetry window shows, as "<subject> <event>" in device time
// order, each with its timestamp.
std::vector<std::pair<std::int64_t, std::string>> events_of(const json& window,
                                                            const std::string& device) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  for (const auto& entry : window["devices"]) {
    if (entry["device"] != device) continue;
    for (const auto& event : entry["events"]) {
      std::string subject = event["source"] == "bgp"
                                ? "bgp " + event["bgp_neighbor"].get<std::string>()
                                : event["interface"].get<std::string>();
      out.emplace_back(event["timestamp_ns"].get<std::int64_t>(),
                       subject + " " + event["event"].get<std::string>());
    }
  }
  return out;
}

// The first event of `events` that starts with `prefix` and ends with `suffix`; 0 if none.
std::int64_t first_event(const std::vector<std::pair<std::int64_t, std::string>>& events,
                         const std::string& prefix, const std::string& suffix) {
  for (const auto& [at, line] : events)
    if (line.starts_with(prefix) && line.ends_with(suffix)) return at;
  return 0;
}

TEST_F(GnmiAgreement, ReportsShowTheRunningConfigurationDiff) {
  // Given the lab intent (its FRR profile captures `show running-config`), then a plan's
  // review.md lists the configurations the baseline holds, and a rehearsal of draining spine1
  // shows in report.md the added "neighbor LEAVES shutdown" as spine1's post vs pre diff, and
  // every switch's restored configuration as unchanged; a plan given that rehearsal shows the
  // same diff in review.md.
  lab.install_probe();
  repo_.commit_all("lab intent");
  auto plan = fabgate("plan drain-spine1");
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  std::string review = read_text(evidence_of(plan.output) / "review.md");
  EXPECT_NE(review.find("## Running configuration\n\nCaptured in `snapshots/pre.json` for "),
            std::string::npos)
      << review;
  EXPECT_NE(review.find("spine1 ("), std::string::npos) << review;

  auto rehearsal = fabgate("rehearse drain-spine1");
  ASSERT_EQ(rehearsal.exit_code, 0) << rehearsal.output;
  std::string report = read_text(evidence_of(rehearsal.output) / "report.md");
  auto section = report.find("## Configuration changes");
  ASSERT_NE(section, std::string::npos) << report;
  auto spine1 = report.find("### spine1: post vs pre\n\n```diff\n--- spine1 (pre)\n", section);
  ASSERT_NE(spine1, std::string::npos) << report.substr(section);
  EXPECT_NE(report.find("\n+ neighbor LEAVES shutdown\n", spine1), std::string::npos)
      << report.substr(spine1);
  for (const char* name : kSwitches) {
    EXPECT_NE(report.find(std::string("### ") + name + ": restored vs pre\n\nUnchanged."),
              std::string::npos)
        << name << "\n"
        << report.substr(section);
  }

  // A plan given that rehearsal (same digest) shows its diffs in review.md.
  auto rehearsed = evidence_of(rehearsal.output);
  auto replan = fabgate("plan drain-spine1 --rehearsal " + shell_quoted(rehearsed.string()));
  ASSERT_EQ(replan.exit_code, 0) << replan.output;
  std::string reviewed = read_text(evidence_of(replan.output) / "review.md");
  auto diff = reviewed.find("### spine1: post vs pre\n\n```diff\n");
  ASSERT_NE(diff, std::string::npos) << reviewed;
  EXPECT_NE(reviewed.find("\n+ neighbor LEAVES shutdown\n", diff), std::string::npos) << reviewed;
  EXPECT_NE(reviewed.find("The diffs above are those of the rehearsal " + rehearsed.string() +
                          ", which rehearsed this plan's digest."),
            std::string::npos)
      << reviewed;
}

TEST_F(GnmiAgreement, TelemetryLayerShowsALinkFlapTheChangeCaused) {
  // Given a change whose step takes leaf1's port to host2 down for two seconds and up again,
  // rehearsed with the real fabgate against the lab's fabgate-gnmid, then the telemetry layer
  // streamed leaf1 (target) and both spines (its BGP neighbours) across the change, covered the
  // window, and report.md, report.html and telemetry/during.json show to-host2 going
  // DOWN and back UP at device timestamps inside the run, about two seconds apart.
  lab.install_probe();
  repo_.write("changes/9-flap-leaf1-host2.yaml", R"(id: flap-leaf1-host2
title: Flap leaf1's port to host2
targets: [leaf1]
bounds: {max_targets: 1, step_timeout: 20s, deadline: 2m}
steps:
  - device: leaf1
    description: the port to host2 down for two seconds, then up
    run: ip link set to-host2 down; sleep 2; ip link set to-host2 up
rollback:
  - device: leaf1
    description: the port to host2 up
    run: ip link set to-host2 up
acceptance:
  settle: 2s
  # The lab's alert on fabric ports fires for the flap; this change means it.
  expected_alerts: [FabricInterfaceDown]
  # So does the telemetry layer, which fails a flap the change does not declare.
  expected_flaps: ["leaf1:to-host2"]
  probes:
    - {name: host1-to-host3, layer: forwarding, host: host1, kind: flows, target: host3, flows: 4, timeout: 15s}
)");
  repo_.commit_all("a change that flaps a link");
  auto before = std::chrono::system_clock::now();
  auto rehearsal = fabgate("rehearse flap-leaf1-host2");
  auto after = std::chrono::system_clock::now();
  ASSERT_EQ(rehearsal.exit_code, 0) << rehearsal.output;
  auto bundle = evidence_of(rehearsal.output);
  json during = read_json(bundle / "telemetry/during.json");
  ASSERT_TRUE(during.is_object()) << rehearsal.output;
  EXPECT_EQ(during["verdict"], "pass") << during.dump(2);
  std::map<std::string, std::string> why;
  for (const auto& device : during["devices"]) {
    why[device["device"]] = device["why"];
    EXPECT_EQ(device["verdict"], "pass") << device.dump(2);
  }
  EXPECT_EQ(why["leaf1"], "target");
  EXPECT_EQ(why["spine1"], "neighbour of leaf1 (BGP)");
  EXPECT_EQ(why["spine2"], "neighbour of leaf1 (BGP)");

  const auto from_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(before.time_since_epoch()).count();
  const auto to_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(after.time_since_epoch()).count();
  std::int64_t down_at = 0, up_at = 0;
  std::string down_time;
  for (const auto& device : during["devices"]) {
    if (device["device"] != "leaf1") continue;
    for (const auto& event : device["events"]) {
      if (event["interface"] != "to-host2") continue;
      std::string what = event["event"];
      if (what.starts_with("oper-status UP -> ") && !down_at) {
        down_at = event["timestamp_ns"];
        down_time = event["time"];
      }
      if (what.ends_with(" -> UP") && down_at && !up_at) up_at = event["timestamp_ns"];
    }
  }
  ASSERT_NE(down_at, 0) << during.dump(2);
  ASSERT_NE(up_at, 0) << during.dump(2);
  // The return is judged a flap, one the change declared.
  bool flap_expected = false;
  for (const auto& device : during["devices"])
    for (const auto& event : device["events"])
      if (device["device"] == "leaf1" && event.value("interface", "") == "to-host2" &&
          event.value("flap", false))
        flap_expected = event.value("expected", false);
  EXPECT_TRUE(flap_expected) << during.dump(2);
  EXPECT_GT(down_at, from_ns);
  EXPECT_LT(up_at, to_ns);
  // Down for two seconds, sampled every second: the samples that saw it lie 1 to 4 s apart.
  EXPECT_GE(up_at - down_at, 1'000'000'000) << during.dump(2);
  EXPECT_LE(up_at - down_at, 4'000'000'000) << during.dump(2);

  std::string report = read_text(bundle / "report.md");
  auto section = report.find("## During-change telemetry (gNMI)");
  ASSERT_NE(section, std::string::npos) << report;
  std::string down_row = "| " + down_time + " | leaf1 | to-host2 | oper-status UP -> ";
  EXPECT_NE(report.find("| leaf1 | to-host2 | oper-status UP -> ", section), std::string::npos)
      << report.substr(section);
  EXPECT_NE(report.find(down_row, section), std::string::npos) << report.substr(section);
  std::string html = read_text(bundle / "report.html");
  EXPECT_NE(html.find("During-change telemetry (gNMI)"), std::string::npos);
  EXPECT_NE(html.find("to-host2"), std::string::npos);

  // The rehearsal's forced rollback came after the streams had closed (the change was
  // accepted): fresh streams covered it, and it changed nothing they watch.
  json rolled_back = read_json(bundle / "telemetry/rollback.json");
  ASSERT_TRUE(rolled_back.is_object()) << rehearsal.output;
  EXPECT_EQ(rolled_back["verdict"], "pass") << rolled_back.dump(2);
  EXPECT_EQ(events_of(rolled_back, "leaf1").size(), 0u) << rolled_back.dump(2);
}

TEST_F(GnmiAgreement, TelemetryFollowsAFailedChangeThroughItsRollback) {
  // Given a change that shuts leaf1's BGP sessions to both spines and its port to host2, so
  // that leaf1's hosts are cut off and the acceptance probe fails, applied with the real
  // fabgate against the lab's fabgate-gnmid, then the run is rolled back and the baseline
  // verified (exit 4), and the telemetry shows at the devices' timestamps: during the change
  // (telemetry/during.json) to-host2 going down and the session leaf1-spine1 leaving
  // ESTABLISHED on leaf1 (neighbour 10.0.1.0) and on spine1 (neighbour 10.0.1.1); through the
  // rollback (telemetry/rollback.json, the same streams continued, marking when the rollback
  // began) to-host2 coming back UP and the session ESTABLISHED again on both ends after the
  // rollback began, and not the drop a second time; report.md shows both sections.
  // (Shutting the uplinks themselves would flap BFD, whose down counters a rollback cannot
  // undo: the restore would rightly not verify, exit 5.)
  lab.install_probe();
  repo_.write("changes/10-leaf1-isolated.yaml", R"(id: leaf1-isolated
title: Shut leaf1's BGP sessions to the spines and its port to host2 (its hosts are cut off)
targets: [leaf1]
bounds: {max_targets: 1, step_timeout: 20s, deadline: 2m}
steps:
  - device: leaf1
    description: the sessions to the spines and the port to host2 down
    run: >-
      vtysh -c 'conf t' -c 'router bgp 65101' -c 'neighbor SPINES shutdown'
      && ip link set to-host2 down
rollback:
  - device: leaf1
    description: the port to host2 and the sessions back up
    run: >-
      ip link set to-host2 up
      && vtysh -c 'conf t' -c 'router bgp 65101' -c 'no neighbor SPINES shutdown'
acceptance:
  settle: 3s
  # The lab's alert on fabric ports fires for to-host2; this change means it.
  expected_alerts: [FabricInterfaceDown]
  probes:
    - {name: host1-to-host3, layer: forwarding, host: host1, kind: flows, target: host3, flows: 4, timeout: 5s}
)");
  repo_.commit_all("a change that cuts leaf1 off");
  auto run = fabgate("apply leaf1-isolated");
  ASSERT_EQ(run.exit_code, 4) << run.output;
  auto bundle = evidence_of(run.output);
  json during = read_json(bundle / "telemetry/during.json");
  json rollback = read_json(bundle / "telemetry/rollback.json");
  ASSERT_TRUE(during.is_object() && rollback.is_object()) << run.output;
  EXPECT_EQ(during["phase"], "during");
  EXPECT_EQ(rollback["phase"], "rollback");
  EXPECT_EQ(during["verdict"], "pass") << during.dump(2);
  EXPECT_EQ(rollback["verdict"], "pass") << rollback.dump(2);
  // One stream through both windows: the rollback window starts where the during one ended.
  EXPECT_EQ(rollback["window_start"], during["window_end"]);
  ASSERT_TRUE(rollback.contains("rollback_started")) << rollback.dump(2);

  auto leaf1_during = events_of(during, "leaf1");
  auto spine1_during = events_of(during, "spine1");
  auto leaf1_rollback = events_of(rollback, "leaf1");
  auto spine1_rollback = events_of(rollback, "spine1");
  const std::int64_t port_down = first_event(leaf1_during, "to-host2 oper-status UP -> ", "");
  const std::int64_t session_dropped =
      first_event(leaf1_during, "bgp 10.0.1.0 session-state ESTABLISHED -> ", "");
  EXPECT_NE(port_down, 0) << during.dump(2);
  EXPECT_NE(session_dropped, 0) << during.dump(2);
  EXPECT_NE(first_event(spine1_during, "bgp 10.0.1.1 session-state ESTABLISHED -> ", ""), 0)
      << during.dump(2);

  const std::int64_t port_up = first_event(leaf1_rollback, "to-host2 oper-status ", " -> UP");
  const std::int64_t session_back =
      first_event(leaf1_rollback, "bgp 10.0.1.0 session-state ", " -> ESTABLISHED");
  EXPECT_NE(port_up, 0) << rollback.dump(2);
  EXPECT_NE(session_back, 0) << rollback.dump(2);
  EXPECT_NE(first_event(spine1_rollback, "bgp 10.0.1.1 session-state ", " -> ESTABLISHED"), 0)
      << rollback.dump(2);
  EXPECT_GT(port_up, port_down);
  EXPECT_GT(session_back, session_dropped);
  // The return happened after the rollback began, by the devices' clocks (this machine's).
  std::int64_t rollback_began_ns = 0;
  {
    std::string at = rollback["rollback_started"];
    std::tm utc{};
    ASSERT_NE(strptime(at.c_str(), "%Y-%m-%dT%H:%M:%S", &utc), nullptr) << at;
    rollback_began_ns = static_cast<std::int64_t>(timegm(&utc)) * 1'000'000'000;
  }
  EXPECT_GE(port_up, rollback_began_ns) << rollback.dump(2);
  EXPECT_GE(session_back, rollback_began_ns) << rollback.dump(2);
  // The drop is not reported a second time in the rollback window.
  EXPECT_EQ(first_event(leaf1_rollback, "bgp 10.0.1.0 session-state ESTABLISHED -> ", ""), 0)
      << rollback.dump(2);

  std::string report = read_text(bundle / "report.md");
  auto during_section = report.find("## During-change telemetry (gNMI)");
  auto rollback_section = report.find("## Telemetry through the rollback (gNMI)");
  ASSERT_NE(during_section, std::string::npos) << report;
  ASSERT_NE(rollback_section, std::string::npos) << report;
  EXPECT_NE(report.find("| leaf1 | bgp 10.0.1.0 | session-state ESTABLISHED -> ", during_section),
            std::string::npos)
      << report.substr(during_section);
  EXPECT_NE(report.find(" -> ESTABLISHED |", rollback_section), std::string::npos)
      << report.substr(rollback_section);
}

// A step's shell words that send `signal` to the fabgate-gnmid serving the node the step runs
// on: the lab starts one per switch in the switch's network namespace (the PIDs are shared
// with the machine, so the namespace tells which one is this node's).
std::string signal_own_gnmid(const std::string& signal) {
  return "for p in $(pgrep -x fabgate-gnmid); do [ \"$(readlink /proc/$p/ns/net)\" = "
         "\"$(readlink /proc/self/ns/net)\" ] && kill -" +
         signal + " $p; done; true";
}

// The silences telemetry/during.json names for `device`, covered and not.
std::pair<std::vector<std::string>, std::vector<std::string>> silences_of(const json& window,
                                                                          const char* device) {
  std::pair<std::vector<std::string>, std::vector<std::string>> out;
  for (const auto& entry : window["devices"]) {
    if (entry["device"] != device) continue;
    for (const auto& gap : entry.value("covered_gaps", json::array()))
      out.first.push_back(gap.get<std::string>());
    for (const auto& gap : entry.value("gaps", json::array()))
      out.second.push_back(gap.get<std::string>());
  }
  return out;
}

TEST_F(GnmiAgreement, ATargetWhoseStreamPausesIsCoveredByItsCounters) {
  // Given a healthy change on leaf1 whose step stops leaf1's fabgate-gnmid for 5 s (SIGSTOP,
  // as a switch whose control plane is busy stops sampling) and lets it go on, applied with the
  // real fabgate, then the change is accepted (exit 0): leaf1's interface and BGP silences of
  // about 5 s are named in telemetry/during.json and report.md as covered by
  // carrier-transitions and established-transitions, nothing is left uncovered, and no flap is
  // reported.
  lab.install_probe();
  repo_.write("changes/11-leaf1-gnmid-paused.yaml", R"(id: leaf1-gnmid-paused
title: A harmless change during which leaf1's gNMI target stops sampling for 5 s
targets: [leaf1]
bounds: {max_targets: 1, step_timeout: 20s, deadline: 2m}
steps:
  - device: leaf1
    description: leaf1's gNMI target paused for 5 s
    run: )" + signal_own_gnmid("STOP") + "; sleep 5; " + signal_own_gnmid("CONT") +
                                                        R"(
rollback:
  - device: leaf1
    description: leaf1's gNMI target running
    run: )" + signal_own_gnmid("CONT") + R"(
acceptance:
  settle: 2s
  probes:
    - {name: host1-to-host3, layer: forwarding, host: host1, kind: flows, target: host3, flows: 4, timeout: 15s}
)");
  repo_.commit_all("a change that pauses leaf1's gNMI target");
  auto run = fabgate("apply leaf1-gnmid-paused");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto bundle = evidence_of(run.output);
  json during = read_json(bundle / "telemetry/during.json");
  ASSERT_TRUE(during.is_object()) << run.output;
  EXPECT_EQ(during["verdict"], "pass") << during.dump(2);
  auto [covered, uncovered] = silences_of(during, "leaf1");
  EXPECT_TRUE(uncovered.empty()) << ::testing::PrintToString(uncovered);
  // Not vacuous: the pause really silenced both sources, for about the 5 s it lasted.
  std::string interface_gap, bgp_gap;
  for (const auto& gap : covered) {
    if (gap.starts_with("no interface sample from ")) interface_gap = gap;
    if (gap.starts_with("no bgp sample from ")) bgp_gap = gap;
  }
  ASSERT_FALSE(interface_gap.empty()) << ::testing::PrintToString(covered) << during.dump(2);
  ASSERT_FALSE(bgp_gap.empty()) << ::testing::PrintToString(covered);
  EXPECT_NE(interface_gap.find(", covered by carrier-transitions on "), std::string::npos)
      << interface_gap;
  EXPECT_NE(bgp_gap.find(", covered by established-transitions on 2 sessions"), std::string::npos)
      << bgp_gap;
  for (const auto& device : during["devices"])
    for (const auto& event : device["events"])
      EXPECT_FALSE(event.value("flap", false)) << device["device"] << " " << event.dump();
  std::string report = read_text(bundle / "report.md");
  auto section = report.find("## During-change telemetry (gNMI)");
  ASSERT_NE(section, std::string::npos) << report;
  EXPECT_NE(report.find("- leaf1: " + interface_gap, section), std::string::npos)
      << report.substr(section);
  std::printf("leaf1 paused: %s | %s\n", interface_gap.c_str(), bgp_gap.c_str());
}

TEST_F(GnmiAgreement, ALinkFlapHiddenInsideAPauseIsCaughtByTheCounter) {
  // Given a change whose step stops leaf1's fabgate-gnmid, flaps leaf1's port to host2 (down
  // for a second, then up) and lets the target go on 3 s later, so that no sample ever shows
  // the port down, then the telemetry layer still sees the flap in carrier-transitions across
  // the silence: the during window fails, the change is rolled back and the baseline verified
  // (exit 4), and telemetry/during.json and report.md name the flap and the silence.
  lab.install_probe();
  repo_.write(
      "changes/12-leaf1-hidden-flap.yaml", R"(id: leaf1-hidden-flap
title: Flap leaf1's port to host2 while its gNMI target is paused
targets: [leaf1]
bounds: {max_targets: 1, step_timeout: 20s, deadline: 2m}
steps:
  - device: leaf1
    description: leaf1's gNMI target paused while to-host2 flaps
    run: )" + signal_own_gnmid("STOP") +
                                               "; ip link set to-host2 down; sleep 1; ip link "
                                               "set to-host2 up; sleep 3; " +
                                               signal_own_gnmid("CONT") + R"(
rollback:
  - device: leaf1
    description: to-host2 up and leaf1's gNMI target running
    run: )" + signal_own_gnmid("CONT") + R"(; ip link set to-host2 up
acceptance:
  settle: 2s
  expected_alerts: [FabricInterfaceDown]
  probes:
    - {name: host1-to-host3, layer: forwarding, host: host1, kind: flows, target: host3, flows: 4, timeout: 15s}
)");
  repo_.commit_all("a change that hides a flap in a pause");
  auto run = fabgate("apply leaf1-hidden-flap");
  ASSERT_EQ(run.exit_code, 4) << run.output;
  auto bundle = evidence_of(run.output);
  json during = read_json(bundle / "telemetry/during.json");
  ASSERT_TRUE(during.is_object()) << run.output;
  EXPECT_EQ(during["verdict"], "fail") << during.dump(2);
  // The telemetry gate alone turned the change down: acceptance and the comparisons held.
  json manifest = read_json(bundle / "manifest.json");
  std::vector<std::string> blocking;
  for (const auto& gate : manifest["gates"]) {
    if (gate["name"] == "rollback") break;
    if (gate["verdict"] == "fail" || gate["verdict"] == "no-evidence")
      blocking.push_back(gate["name"]);
  }
  EXPECT_EQ(blocking, std::vector<std::string>{"telemetry"}) << manifest["gates"].dump(2);
  auto [covered, uncovered] = silences_of(during, "leaf1");
  EXPECT_TRUE(uncovered.empty()) << ::testing::PrintToString(uncovered);
  std::string flap, silence;
  bool seen_down = false;
  for (const auto& device : during["devices"]) {
    if (device["device"] != "leaf1") continue;
    for (const auto& event : device["events"]) {
      if (event.value("interface", "") != "to-host2") continue;
      std::string what = event["event"];
      if (what.starts_with("oper-status UP -> ")) seen_down = true;
      if (event.value("flap", false)) flap = what;
    }
  }
  // Hidden from the samples: the only trace is the counter across the silence.
  EXPECT_FALSE(seen_down) << during.dump(2);
  ASSERT_TRUE(flap.starts_with("carrier-transitions +2 within the silence from "))
      << flap << during.dump(2);
  for (const auto& gap : covered)
    if (gap.starts_with("no interface sample from ")) silence = gap;
  ASSERT_FALSE(silence.empty()) << ::testing::PrintToString(covered);
  std::string report = read_text(bundle / "report.md");
  auto section = report.find("## During-change telemetry (gNMI)");
  ASSERT_NE(section, std::string::npos) << report;
  EXPECT_NE(
      report.find("| leaf1 | to-host2 | " + flap + " (not expected: fails the window) |", section),
      std::string::npos)
      << report.substr(section);
  EXPECT_NE(report.find("- leaf1: " + silence, section), std::string::npos)
      << report.substr(section);
  std::printf("hidden flap: %s | %s\n", flap.c_str(), silence.c_str());
}

}  // namespace
}  // namespace fabgate
