// The Clos lab end to end: `lab up`, SSH with strict host keys into every node, ECMP spread of
// a many-flow probe over both spines, and the three change mechanisms the example changes use
// (drain, bad prefix filter, silent drop), each applied over SSH with the change key exactly
// as fabgate will send it. `lab down` always runs, and must leave nothing behind.
//
// Needs root, FRR, sshd and jq; skips with the reason otherwise. Label: lab (slow, ~1 min).

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The test's lab has its own namespace prefix and state directory, so a lab someone is using
// on the same machine is never touched.
const std::string kPrefix = "fgt-";
const std::string kLabDir = "/run/fabgate-lab-test";
const std::string kLab = std::string(FABGATE_SOURCE_DIR) + "/examples/clos-lab/lab";
const std::string kProbe = std::string(FABGATE_BINARY_DIR) + "/cmd/fabgate-probe/fabgate-probe";
const std::string kEnv = "FABGATE_LAB_DIR=" + kLabDir + " FABGATE_LAB_PREFIX=" + kPrefix + " ";

struct Outcome {
  int exit_code = -1;
  std::string out;
};

// Runs a shell command; stdout is captured, stderr goes to the test log.
Outcome shell(const std::string& command) {
  Outcome outcome;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.out.append(buffer, n);
  int status = ::pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

std::string quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

Outcome lab(const std::string& arguments) {
  return shell(kEnv + kLab + " " + arguments);
}

json parse(const Outcome& outcome) {
  auto parsed = json::parse(outcome.out, nullptr, false);
  return parsed.is_discarded() ? json() : parsed;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  for (char c : text) {
    if (c != '\n') {
      line += c;
    } else if (!line.empty()) {
      lines.push_back(line);
      line.clear();
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string in_ns(const std::string& node) {
  return "ip netns exec " + kPrefix + node + " ";
}

// SSH from the management namespace, strict host-key checking against the lab's known_hosts.
Outcome ssh(const std::string& address, const std::string& key, const std::string& command,
            const std::string& known_hosts = kLabDir + "/known_hosts") {
  return shell(in_ns("mgmt") +
               "ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=5 " +
               "-o UserKnownHostsFile=" + known_hosts + " -i " + kLabDir + "/keys/" + key +
               " root@" + address + " " + quote(command));
}

json probe(const std::string& from, int count, const std::string& protocol,
           const std::string& timeout = "4s") {
  return parse(shell(in_ns(from) + kProbe + " flows --to 10.1.2.11 --port 7000 --count " +
                     std::to_string(count) + " --proto " + protocol + " --timeout " + timeout +
                     " --packets 10 --spacing 5ms --reply-timeout 1s"));
}

// Runs a 16-flow UDP probe from host1 inside `lab paths` and returns the path report with the
// probe's verdict added.
json probe_with_paths() {
  const std::string out = kLabDir + "/probe.json";
  auto report = parse(lab("paths --min-packets 20 -- sh -c " +
                          quote(in_ns("host1") + kProbe +
                                " flows --to 10.1.2.11 --port 7000 --count 16 --proto udp"
                                " --packets 20 --spacing 2ms --timeout 4s > " +
                                out)));
  std::ifstream file(out);
  auto probe_report = json::parse(file, nullptr, false);
  report["probe_verdict"] =
      probe_report.is_discarded() ? json("unparsable") : probe_report["verdict"];
  return report;
}

bool spine_carried(const json& paths, const std::string& spine) {
  for (const auto& entry : paths["spines"]) {
    if (entry["spine"] == spine) return entry["carried"].get<bool>();
  }
  return false;
}

int established_sessions(const json& status) {
  int count = 0;
  for (const auto& node : status["nodes"]) {
    if (!node["bgp_peers"].is_array()) continue;
    for (const auto& peer : node["bgp_peers"]) count += peer["state"] == "Established" ? 1 : 0;
  }
  return count;
}

// Polls `condition` every 200 ms until it holds or `limit` passes.
template <class Condition>
bool eventually(std::chrono::seconds limit, Condition condition) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return condition();
}

int leaf1_next_hops_to_leaf2_hosts() {
  auto routes = parse(shell("ip -n " + kPrefix + "leaf1 -j route show 10.1.2.0/24"));
  if (!routes.is_array() || routes.empty()) return 0;
  return routes[0].contains("nexthops") ? static_cast<int>(routes[0]["nexthops"].size()) : 1;
}

// `lab down` on scope exit: the lab never outlives the test, whatever failed.
struct LabGuard {
  ~LabGuard() { lab("down >/dev/null 2>&1"); }
};

std::string skip_reason() {
  if (::geteuid() != 0) return "needs root to create network namespaces";
  for (const char* tool :
       {"/usr/lib/frr/zebra", "/usr/lib/frr/bgpd", "/usr/bin/vtysh", "/usr/sbin/sshd",
        "/usr/bin/jq", "/usr/bin/ssh", "/usr/sbin/lldpd", "/usr/bin/etcd", "/usr/bin/etcdctl"}) {
    if (!fs::exists(tool))
      return std::string("needs ") + tool + " (scripts/bootstrap --tests installs it)";
  }
  if (!fs::exists(kProbe)) return "fabgate-probe is not built at " + kProbe;
  return {};
}

TEST(ClosLab, UpSshEcmpDrainSilentDropPrefixFilterDown) {
  // Given a fresh lab, then every node answers SSH with its own name under strict host keys,
  // 16 flows spread over both spines, a drained spine carries nothing while traffic flows,
  // a silent drop fails a many-flow probe while BGP stays up, a bad prefix filter blackholes
  // a subnet, every node's lldpd hears its neighbours (also through the default socket over
  // SSH), and `lab down` leaves no namespace, process (lldpd included) or directory behind.
  if (auto reason = skip_reason(); !reason.empty()) GTEST_SKIP() << reason;
  LabGuard guard;
  lab("down >/dev/null 2>&1");

  auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(lab("up").exit_code, 0) << "lab up failed; see stderr above";
  auto up_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  RecordProperty("lab_up_seconds", std::to_string(up_seconds));
  std::printf("lab up (BGP converged, ECMP installed): %.1f s\n", up_seconds);

  auto status = parse(lab("status --json"));
  ASSERT_TRUE(status.is_object()) << "status --json is not JSON";
  EXPECT_TRUE(status["converged"].get<bool>());
  EXPECT_EQ(status["nodes"].size(), 8u);
  EXPECT_EQ(established_sessions(status), 8);
  EXPECT_EQ(lab("up").exit_code, 0) << "a second up must be a no-op";

  {
    SCOPED_TRACE("ssh into every node with strict host-key checking");
    for (const auto& node : status["nodes"]) {
      auto outcome = ssh(node["mgmt_address"], "read", "hostname");
      EXPECT_EQ(outcome.exit_code, 0) << node["name"];
      EXPECT_EQ(outcome.out, node["name"].get<std::string>() + "\n");
    }
    // vtysh in an SSH session reaches that node's own daemons.
    auto summary = parse(ssh("10.255.0.22", "read", "vtysh -c 'show bgp summary json'"));
    EXPECT_EQ(summary["ipv4Unicast"]["routerId"], "10.0.255.12");
    // An unknown host key is refused: strict checking is really on.
    std::ofstream(kLabDir + "/empty_known_hosts").close();
    EXPECT_NE(ssh("10.255.0.11", "read", "true", kLabDir + "/empty_known_hosts").exit_code, 0);
    // The management namespace has nothing but its connected subnet.
    EXPECT_EQ(shell(in_ns("mgmt") + "ip -j route show | jq length").out, "1\n");
  }

  std::vector<std::string> etcd_pids;
  {
    SCOPED_TRACE("etcd: three members in the management namespace, one cluster, healthy");
    const json& etcd = status["etcd"];
    ASSERT_TRUE(etcd.is_object()) << status.dump();
    EXPECT_TRUE(etcd["healthy"].get<bool>()) << etcd.dump();
    EXPECT_EQ(etcd["endpoints"], json({"http://10.255.0.1:2379", "http://10.255.0.1:22379",
                                       "http://10.255.0.1:32379"}));
    // The members know each other: one cluster of three, and a write through one member is read
    // through another.
    auto list = shell(in_ns("mgmt") + "etcdctl --endpoints=http://10.255.0.1:2379 member list");
    EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 3) << list.out;
    EXPECT_EQ(shell(in_ns("mgmt") + "etcdctl --endpoints=http://10.255.0.1:22379 put /lab-test x")
                  .exit_code,
              0);
    EXPECT_EQ(shell(in_ns("mgmt") +
                    "etcdctl --endpoints=http://10.255.0.1:32379 get --print-value-only /lab-test")
                  .out,
              "x\n");
    // Found by namespace and name, as `lab down` must stop them.
    std::istringstream pids(shell("for pid in $(ip netns pids " + kPrefix +
                                  "mgmt); do [ \"$(cat /proc/$pid/comm)\" = etcd ] && echo $pid; "
                                  "done; true")
                                .out);
    for (std::string pid; pids >> pid;) etcd_pids.push_back(pid);
    EXPECT_EQ(etcd_pids.size(), 3u);
  }

  std::vector<std::string> lldpd_pids;
  {
    SCOPED_TRACE("LLDP: every node's lldpd hears one neighbour per link, named by node and port");
    for (const auto& node : status["nodes"]) {
      const std::string name = node["name"];
      const json& lldp = node["lldp"];
      ASSERT_TRUE(lldp.is_object()) << name << ": " << node.dump();
      EXPECT_EQ(lldp["running"], true) << name;
      EXPECT_EQ(lldp["neighbors"].size(), lldp["expected_neighbors"].get<std::size_t>())
          << name << ": " << lldp.dump();
      std::string pid = shell("cat " + kLabDir + "/nodes/" + name + "/lldpd.pid").out;
      if (!pid.empty() && pid.back() == '\n') pid.pop_back();
      ASSERT_FALSE(pid.empty()) << name;
      lldpd_pids.push_back(pid);
      for (const auto& child : split_lines(shell("pgrep -P " + pid).out))
        lldpd_pids.push_back(child);  // lldpd's privilege-separated half
    }
    EXPECT_EQ(lldpd_pids.size(), 16u) << "two lldpd processes per node";
    auto spine1 = status["nodes"][0];
    ASSERT_EQ(spine1["name"], "spine1");
    json spine1_neighbors = {
        {{"interface", "to-leaf1"}, {"system_name", "leaf1"}, {"port_id", "to-spine1"}},
        {{"interface", "to-leaf2"}, {"system_name", "leaf2"}, {"port_id", "to-spine1"}}};
    EXPECT_EQ(spine1["lldp"]["neighbors"], spine1_neighbors);
    // Over SSH, a plain lldpcli (default socket /run/lldpd.socket) reaches that node's own
    // lldpd: leaf2 hears host3 on to-host3, host3 hears leaf2's to-host3.
    auto leaf2 = parse(ssh("10.255.0.22", "read", "lldpcli -f json show neighbors ports to-host3"));
    EXPECT_TRUE(leaf2["lldp"]["interface"]["to-host3"]["chassis"].contains("host3"))
        << leaf2.dump();
    auto host3 = parse(ssh("10.255.0.33", "read", "lldpcli -f json show neighbors"));
    EXPECT_EQ(host3["lldp"]["interface"]["eth0"]["port"]["id"]["value"], "to-host3")
        << host3.dump();
  }

  ASSERT_EQ(shell(in_ns("host3") + kProbe + " flows --respond --listen 10.1.2.11 --port 7000" +
                  " --duration 150s --pid-file " + kLabDir + "/responder.pid 2>" + kLabDir +
                  "/responder.log >/dev/null &")
                .exit_code,
            0);
  ASSERT_TRUE(eventually(5s, [] {
    std::ifstream log(kLabDir + "/responder.log");
    std::string line;
    return std::getline(log, line) && line.find("listening") != std::string::npos;
  })) << "the responder on host3 did not start";

  {
    SCOPED_TRACE("ECMP: distinct flows spread over both spines");
    EXPECT_EQ(probe("host1", 16, "tcp")["verdict"], "pass");
    auto paths = probe_with_paths();
    EXPECT_EQ(paths["probe_verdict"], "pass") << paths.dump();
    EXPECT_TRUE(spine_carried(paths, "spine1")) << paths.dump();
    EXPECT_TRUE(spine_carried(paths, "spine2")) << paths.dump();
    EXPECT_EQ(paths["idle_paths"].size(), 0u) << paths.dump();
  }

  const auto& mechanisms = status["mechanisms"];
  {
    SCOPED_TRACE("silent drop on spine1 towards leaf2's hosts");
    const auto& drop = mechanisms["silent_drop_spine1_to_leaf2"];
    ASSERT_EQ(ssh("10.255.0.11", "change", drop["apply"][0]).exit_code, 0);
    auto many = probe("host1", 16, "udp", "3s");
    EXPECT_EQ(many["verdict"], "fail") << many.dump();
    int completed = many["summary"]["completed"].get<int>();
    // Some flows hash onto spine2 and pass: a single-flow probe is a coin toss here.
    EXPECT_GT(completed, 0) << many.dump();
    EXPECT_LT(completed, 16) << many.dump();
    for (const auto& flow : many["flows"]) {
      if (!flow["completed"].get<bool>()) {
        EXPECT_EQ(flow["error"], "timed-out") << flow.dump();
      }
    }
    int single_passed = 0;
    for (int attempt = 0; attempt < 4; ++attempt) {
      single_passed += probe("host1", 1, "udp", "2s")["verdict"] == "pass" ? 1 : 0;
    }
    std::printf(
        "silent drop: 16-flow probe completed %d/16 flows (fail); "
        "single-flow probes passed %d of 4 times\n",
        completed, single_passed);
    RecordProperty("silent_drop_flows_completed_of_16", completed);
    RecordProperty("silent_drop_single_flow_passes_of_4", single_passed);
    EXPECT_EQ(established_sessions(parse(lab("status --json"))), 8) << "BGP must stay up";
    ASSERT_EQ(ssh("10.255.0.11", "change", drop["rollback"][0]).exit_code, 0);
    EXPECT_EQ(probe("host1", 16, "udp")["verdict"], "pass");
  }

  {
    SCOPED_TRACE("drain spine1: traffic keeps flowing via spine2");
    const auto& drain = mechanisms["drain_spine1"];
    // A continuous watch across the drain measures what the flows saw (started before the
    // change, stopped after acceptance, as fabgate runs it).
    const std::string watch_out = kLabDir + "/watch.json";
    auto watch_pid =
        shell(in_ns("host1") + kProbe + " watch --to 10.1.2.11 --port 7000 --count 16" +
              " --interval 50ms --max-duration 60s --max-interruption 1s > " + watch_out +
              " 2>/dev/null & echo $!")
            .out;
    std::this_thread::sleep_for(300ms);
    ASSERT_EQ(ssh("10.255.0.11", "change", drain["apply"][0]).exit_code, 0);
    EXPECT_TRUE(eventually(10s, [] { return leaf1_next_hops_to_leaf2_hosts() == 1; }));
    std::this_thread::sleep_for(300ms);
    shell("kill -TERM " + watch_pid);
    json watch;
    eventually(5s, [&] {  // the watch prints its document once, on the way out
      std::ifstream watch_file(watch_out);
      watch = json::parse(watch_file, nullptr, false);
      return !watch.is_discarded();
    });
    ASSERT_FALSE(watch.is_discarded()) << "watch printed no JSON";
    EXPECT_EQ(watch["stopped_by"], "signal");
    EXPECT_EQ(watch["verdict"], "pass") << watch.dump();
    std::printf("drain spine1: longest interruption seen by 16 watched flows: %lld ms\n",
                watch["longest_interruption_ms"].get<long long>());
    RecordProperty("drain_longest_interruption_ms",
                   std::to_string(watch["longest_interruption_ms"].get<long long>()));
    auto paths = probe_with_paths();
    EXPECT_EQ(paths["probe_verdict"], "pass") << paths.dump();
    EXPECT_FALSE(spine_carried(paths, "spine1")) << paths.dump();
    EXPECT_TRUE(spine_carried(paths, "spine2")) << paths.dump();
    EXPECT_EQ(paths["idle_paths"], json::array({"spine1"}));
    ASSERT_EQ(ssh("10.255.0.11", "change", drain["rollback"][0]).exit_code, 0);
    EXPECT_EQ(lab("wait").exit_code, 0);
  }

  {
    SCOPED_TRACE("bad prefix filter on leaf2 blackholes 10.1.2.0/24");
    const auto& filter = mechanisms["bad_prefix_filter_leaf2"];
    ASSERT_EQ(ssh("10.255.0.22", "change", filter["apply"][0]).exit_code, 0);
    EXPECT_TRUE(eventually(10s, [] { return leaf1_next_hops_to_leaf2_hosts() == 0; }));
    auto blackholed = probe("host1", 4, "udp", "2s");
    EXPECT_EQ(blackholed["verdict"], "fail") << blackholed.dump();
    EXPECT_EQ(blackholed["summary"]["completed"], 0);
    ASSERT_EQ(ssh("10.255.0.22", "change", filter["rollback"][0]).exit_code, 0);
    EXPECT_EQ(lab("wait").exit_code, 0);
    EXPECT_EQ(probe("host1", 16, "udp")["verdict"], "pass");
  }

  {
    SCOPED_TRACE("down removes everything");
    EXPECT_EQ(lab("down").exit_code, 0);
    // Only this lab's own namespaces are counted: other tests running beside this one create
    // namespaces of their own, under prefixes of their own.
    EXPECT_EQ(shell("ip netns list | awk '{print $1}' | grep -cE '^" + kPrefix +
                    "(mgmt|spine[0-9]|leaf[0-9]|host[0-9])$' || true")
                  .out,
              "0\n");
    EXPECT_FALSE(fs::exists(kLabDir));
    // No process still references the lab (sshd/FRR/responder command lines name its paths).
    // "[/]run" matches the path but not this pgrep's own command line.
    EXPECT_EQ(shell("pgrep -f '[/]run/fabgate-lab-test' | wc -l").out, "0\n");
    // lldpd rewrites its command lines ("lldpd: 2 neighbors."): none of its pids is alive.
    for (const auto& pid : etcd_pids)
      EXPECT_NE(shell("ps -o stat= -p " + pid + " | grep -v Z").exit_code, 0)
          << "etcd " << pid << " survived lab down";
    for (const auto& pid : lldpd_pids)
      EXPECT_NE(shell("ps -o stat= -p " + pid + " | grep -v Z").exit_code, 0)
          << "lldpd " << pid << " survived lab down";
  }
}

}  // namespace
