// The gNMI adapter against a real fabgate-gnmid: on loopback in plaintext and TLS, and inside
// a network namespace the test creates, where Set changes a real (veth) interface.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "adapters/gnmi/client.h"
#include "adapters/gnmi/snapshot_facts.h"
#include "adapters/gnmi/target/process.h"
#include "adapters/gnmi/telemetry.h"
#include "gates/snapshot/normalizers.h"
#include "tests/adapters/gnmi/gnmid_harness.h"
#include "tests/support/test_port.h"

namespace fabgate::gnmi {
namespace {

using nlohmann::json;
using testing::NetnsGuard;
using testing::TargetProcess;
using testing::TempDir;

const Duration kDeadline{5'000};

// FRR stand-in for the BGP paths: a script answering vtysh's two commands with canned output
// in FRR's JSON shape (running bgpd with real peers is the lab's job, not a unit test's).
const char* kFakeVtysh = R"(#!/bin/sh
case "$2" in
  "show version") echo "FRRouting 9.1.0 (fake) on Linux(6.1.0)." ;;
  "show bgp neighbors json") cat <<'JSON'
{"10.0.1.0": {"remoteAs": 65000, "localAs": 65101, "bgpState": "Established",
              "bgpTimerUpMsec": 5000,
              "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": 4}}},
 "10.0.1.2": {"remoteAs": 65001, "localAs": 65101, "bgpState": "Active",
              "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": 0}}}}
JSON
  ;;
  *) exit 1 ;;
esac
)";

// FRR stand-in whose answer the test changes while a stream runs: `show bgp neighbors json`
// prints neighbors.json next to the script, or fails while a file frr-down lies there.
const char* kChangingVtysh = R"(#!/bin/sh
here=$(dirname "$0")
case "$2" in
  "show version") echo "FRRouting 9.1.0 (fake) on Linux(6.1.0)." ;;
  "show bgp neighbors json") [ -e "$here/frr-down" ] && exit 1; cat "$here/neighbors.json" ;;
  *) exit 1 ;;
esac
)";

const char* kBgpNeighbors =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=*]/state";

// One running target and a client for it.
struct Target {
  TempDir dir;
  TargetProcess process;
  std::string address;
  std::unique_ptr<GnmiClient> client;
};

struct TargetSetup {
  std::vector<std::string> extra_args;
  std::vector<std::string> env;
  bool fake_vtysh = true;
  const char* vtysh_script = kFakeVtysh;
  std::string netns;         // run inside this namespace, listening on a unix socket
  GnmiClientOptions client;  // address filled in
};

std::unique_ptr<Target> start_target(TargetSetup setup, std::string& failure) {
  auto target = std::make_unique<Target>();
  target->dir.write("vtysh", setup.vtysh_script, true);
  std::vector<std::string> argv;
  if (!setup.netns.empty()) argv = {"ip", "netns", "exec", setup.netns};
  argv.insert(argv.end(), {testing::gnmid_path(), "--hostname", "gnmi-test-node", "--vtysh",
                           setup.fake_vtysh ? target->dir.file("vtysh") : "/nonexistent/vtysh"});
  std::string socket = "unix:" + target->dir.file("gnmi.sock");
  argv.insert(argv.end(), {"--listen", setup.netns.empty() ? "127.0.0.1:0" : socket});
  argv.insert(argv.end(), setup.extra_args.begin(), setup.extra_args.end());
  // Never the machine's own FRR: without pid files of the test's, FRR's version is not
  // remembered and every Get asks the stand-in vtysh.
  if (std::find(argv.begin(), argv.end(), "--frr-run-dir") == argv.end())
    argv.insert(argv.end(), {"--frr-run-dir", target->dir.file("no-frr-run")});
  auto line = target->process.start(argv, target->dir.file("gnmid.stderr"), setup.env);
  if (!line) {
    failure = target->process.failure;
    return nullptr;
  }
  target->address = setup.netns.empty() ? "127.0.0.1:" + *line : socket;
  setup.client.address = target->address;
  auto client = connect(setup.client);
  if (!client) {
    failure = client.error().message;
    return nullptr;
  }
  target->client = std::move(client.value());
  return target;
}

std::unique_ptr<Target> start_plaintext(std::vector<std::string> extra = {}, bool fake_vtysh = true,
                                        std::vector<std::string> env = {},
                                        std::optional<GnmiLogin> login = {},
                                        const char* vtysh_script = kFakeVtysh) {
  TargetSetup setup;
  setup.vtysh_script = vtysh_script;
  setup.extra_args = {"--insecure-plaintext", "--no-auth"};
  setup.extra_args.insert(setup.extra_args.end(), extra.begin(), extra.end());
  setup.fake_vtysh = fake_vtysh;
  setup.env = std::move(env);
  setup.client.tls = false;
  setup.client.login = std::move(login);
  std::string failure;
  auto target = start_target(setup, failure);
  EXPECT_TRUE(target) << failure;
  return target;
}

json only_value(const GnmiResult<std::vector<GnmiNotification>>& result) {
  if (!result || result->size() != 1 || (*result)[0].updates.size() != 1) return json();
  return json::parse((*result)[0].updates[0].json);
}

std::string message_of(const GnmiResult<std::vector<GnmiNotification>>& result) {
  return result ? std::string("ok") : result.error().message;
}

TEST(Gnmid, CapabilitiesListServedModelsAndEncodings) {
  // Given fabgate-gnmid in plaintext with FRR answering, then Capabilities names the system,
  // interface and network-instance models and both JSON encodings.
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  auto capabilities = target->client->capabilities(kDeadline);
  ASSERT_TRUE(capabilities) << capabilities.error().message;
  std::vector<std::string> models;
  for (const auto& model : capabilities->models) models.push_back(model.name);
  EXPECT_EQ(models, (std::vector<std::string>{"openconfig-system", "openconfig-interfaces",
                                              "openconfig-if-ip", "openconfig-platform",
                                              "openconfig-network-instance"}));
  EXPECT_EQ(capabilities->encodings, (std::vector<std::string>{"JSON", "JSON_IETF"}));
  EXPECT_EQ(capabilities->gnmi_version, "0.10.0");
}

TEST(Gnmid, GetServesSystemInterfacesConfigAndBgp) {
  // Given fabgate-gnmid on loopback, then a Get of each served path returns the node's real
  // values: hostname and versions, loopback's state and config, a single leaf, and the BGP
  // neighbors FRR reports mapped to OpenConfig session states.
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  GnmiClient& client = *target->client;

  json system = only_value(client.get({"/system/state"}, Encoding::json, kDeadline));
  EXPECT_EQ(system["hostname"], "gnmi-test-node");
  EXPECT_NE(system["software-version"].get<std::string>().find("; FRRouting 9.1.0"),
            std::string::npos);

  json lo_state =
      only_value(client.get({"/interfaces/interface[name=lo]/state"}, Encoding::json, kDeadline));
  EXPECT_EQ(lo_state["mtu"], 65536);
  EXPECT_EQ(lo_state["admin-status"], "UP");
  EXPECT_TRUE(lo_state["counters"]["in-pkts"].is_number_unsigned());

  json lo_config =
      only_value(client.get({"/interfaces/interface[name=lo]/config"}, Encoding::json, kDeadline));
  EXPECT_EQ(lo_config, (json{{"name", "lo"}, {"mtu", 65536}, {"enabled", true}}));

  auto leaf = client.get({"openconfig:/interfaces/interface[name=lo]/state/mtu"}, Encoding::json,
                         kDeadline);
  ASSERT_TRUE(leaf) << leaf.error().message;
  EXPECT_EQ((*leaf)[0].updates[0].path.to_string(),
            "openconfig:/interfaces/interface[name=lo]/state/mtu");
  EXPECT_EQ((*leaf)[0].updates[0].json, "65536");

  auto bgp = client.get({kBgpNeighbors}, Encoding::json, kDeadline);
  ASSERT_TRUE(bgp) << bgp.error().message;
  ASSERT_EQ((*bgp)[0].updates.size(), 2u);
  EXPECT_EQ(json::parse((*bgp)[0].updates[0].json)["session-state"], "ESTABLISHED");
  EXPECT_EQ(json::parse((*bgp)[0].updates[1].json)["session-state"], "ACTIVE");
}

TEST(Gnmid, GetTypeFiltersConfigStateAndOperationalData) {
  // Given a Get of loopback's whole entry with each GetRequest type, then CONFIG returns only
  // read/write data (config container and key, no state), STATE only read-only data (state,
  // applied mtu included, no config), OPERATIONAL only state that is not also config
  // (counters and oper-status, no mtu); and a CONFIG Get of a state container returns nothing.
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  auto& client = *target->client;
  const std::vector<std::string> lo = {"/interfaces/interface[name=lo]"};

  json config = only_value(client.get(lo, Encoding::json, DataType::config, kDeadline));
  EXPECT_EQ(config["name"], "lo");
  EXPECT_TRUE(config.contains("config")) << config.dump();
  EXPECT_FALSE(config.contains("state")) << config.dump();

  json state = only_value(client.get(lo, Encoding::json, DataType::state, kDeadline));
  EXPECT_FALSE(state.contains("config")) << state.dump();
  EXPECT_TRUE(state["state"].contains("mtu")) << state.dump();
  EXPECT_TRUE(state["state"].contains("counters")) << state.dump();

  json operational = only_value(client.get(lo, Encoding::json, DataType::operational, kDeadline));
  EXPECT_FALSE(operational.contains("config")) << operational.dump();
  EXPECT_FALSE(operational["state"].contains("mtu")) << operational.dump();
  EXPECT_FALSE(operational["state"].contains("enabled")) << operational.dump();
  EXPECT_TRUE(operational["state"].contains("oper-status")) << operational.dump();
  EXPECT_TRUE(operational["state"].contains("counters")) << operational.dump();

  auto state_as_config = client.get({"/interfaces/interface[name=lo]/state"}, Encoding::json,
                                    DataType::config, kDeadline);
  ASSERT_TRUE(state_as_config) << state_as_config.error().message;
  ASSERT_EQ(state_as_config->size(), 1u);
  EXPECT_TRUE((*state_as_config)[0].updates.empty());

  json all = only_value(client.get(lo, Encoding::json, kDeadline));
  EXPECT_TRUE(all.contains("config") && all.contains("state")) << all.dump();
}

TEST(Gnmid, ServesAddressesAndNicComponentsThatFactsRead) {
  // Given fabgate-gnmid on this host, then a Get of loopback's subinterfaces and of the
  // components gives facts with lo's real addresses (127.0.0.1/8, ::1/128) and NIC entries
  // only for interfaces with a driver (never lo), each naming its driver.
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  auto reply = target->client->get(
      {"/interfaces/interface[name=lo]/subinterfaces", "/components/component[name=*]"},
      Encoding::json_ietf, kDeadline);
  ASSERT_TRUE(reply) << reply.error().message;
  auto facts = snapshot_facts(*reply, TimePoint{});
  ASSERT_TRUE(facts) << facts.error();
  ASSERT_TRUE(facts->interfaces);
  json addresses = (*facts->interfaces)["lo"]["addresses"];
  EXPECT_NE(std::find(addresses.begin(), addresses.end(), "127.0.0.1/8"), addresses.end())
      << addresses.dump();
  ASSERT_TRUE(facts->identity);
  EXPECT_FALSE((*facts->identity)["nics"].contains("lo")) << facts->identity->dump();
  for (const auto& [name, nic] : (*facts->identity)["nics"].items()) {
    EXPECT_FALSE(nic.value("driver", "").empty()) << name << ": " << nic.dump();
  }
}

TEST(Gnmid, SnapshotFactsFromAGnmiCollector) {
  // Given the three collector paths fetched in one JSON_IETF Get, then the snapshot facts hold
  // identity, loopback with integer counters, and both BGP peers with FRR's state names.
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  auto notifications = target->client->get({kSystemStatePath, kInterfacesPath, kBgpNeighborsPath},
                                           Encoding::json_ietf, kDeadline);
  ASSERT_TRUE(notifications) << notifications.error().message;
  auto facts = snapshot_facts(*notifications, now_utc());
  ASSERT_TRUE(facts) << facts.error();
  ASSERT_TRUE(facts->identity && facts->interfaces && facts->bgp);
  EXPECT_EQ((*facts->identity)["hostname"], "gnmi-test-node");
  EXPECT_EQ((*facts->identity)["frr_version"], "9.1.0");
  EXPECT_EQ((*facts->interfaces)["lo"]["mtu"], 65536);
  EXPECT_TRUE((*facts->interfaces)["lo"]["counters"]["rx_packets"].is_number_unsigned());
  EXPECT_EQ((*facts->bgp)["peers"]["10.0.1.0"]["state"], "Established");
  EXPECT_EQ((*facts->bgp)["peers"]["10.0.1.0"]["remote_as"], 65000);
  EXPECT_EQ((*facts->bgp)["peers"]["10.0.1.0"]["prefixes_received"], 4);
  EXPECT_EQ((*facts->bgp)["peers"]["10.0.1.2"]["state"], "Active");
}

TEST(Gnmid, JsonIetfSendsCountersAsStrings) {
  // Given a JSON_IETF Get of a counter, then the uint64 arrives as a string (RFC 7951), while
  // plain JSON sends a number.
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  const std::string path = "/interfaces/interface[name=lo]/state/counters/in-pkts";
  EXPECT_TRUE(only_value(target->client->get({path}, Encoding::json_ietf, kDeadline)).is_string());
  EXPECT_TRUE(only_value(target->client->get({path}, Encoding::json, kDeadline)).is_number());
}

TEST(Gnmid, UnknownPathsAreRejectedWithClearErrors) {
  // Given a path the target does not serve, an interface that does not exist and a malformed
  // path, then each is `rejected` and the message says what was missing or malformed.
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  auto leaf = target->client->get({"/interfaces/interface[name=lo]/state/no-such-leaf"},
                                  Encoding::json, kDeadline);
  ASSERT_FALSE(leaf);
  EXPECT_EQ(leaf.error().kind, GnmiFailure::Kind::rejected);
  EXPECT_NE(
      leaf.error().message.find("no 'no-such-leaf' under /interfaces/interface[name=lo]/state"),
      std::string::npos)
      << leaf.error().message;

  auto entry =
      target->client->get({"/interfaces/interface[name=nope0]/state"}, Encoding::json, kDeadline);
  ASSERT_FALSE(entry);
  EXPECT_EQ(entry.error().kind, GnmiFailure::Kind::rejected);
  EXPECT_NE(entry.error().message.find("no entry interface[name=nope0] under /interfaces"),
            std::string::npos)
      << entry.error().message;

  auto malformed =
      target->client->get({"/interfaces/interface[name=lo"}, Encoding::json, kDeadline);
  ASSERT_FALSE(malformed);
  EXPECT_EQ(malformed.error().kind, GnmiFailure::Kind::rejected);
  EXPECT_NE(malformed.error().message.find("at character 22: '[' opens a key that is never closed"),
            std::string::npos)
      << malformed.error().message;
}

TEST(Gnmid, BgpSubtreeIsNotServedWithoutFrr) {
  // Given no vtysh, then Capabilities leaves out network-instance and a Get of BGP state is
  // rejected saying FRR is not available (never an empty neighbor list).
  auto target = start_plaintext({}, false);
  ASSERT_TRUE(target);
  auto capabilities = target->client->capabilities(kDeadline);
  ASSERT_TRUE(capabilities);
  EXPECT_EQ(capabilities->models.size(), 4u);
  for (const auto& model : capabilities->models)
    EXPECT_NE(model.name, "openconfig-network-instance");
  auto bgp = target->client->get({kBgpNeighbors}, Encoding::json, kDeadline);
  ASSERT_FALSE(bgp);
  EXPECT_EQ(bgp.error().kind, GnmiFailure::Kind::rejected);
  EXPECT_NE(bgp.error().message.find("/network-instances is not served: FRR is not available"),
            std::string::npos)
      << bgp.error().message;
}

TEST(Gnmid, AnFrrThatDoesNotAnswerItsVersionIsNoVersion) {
  // Given a vtysh that is installed but fails `show version` (daemons down, or too slow), then a
  // Get of the system state is refused naming the command, never served as a version from which
  // FRR silently vanished (which compare would read as "FRR removed by the change").
  const char* vtysh_script = R"(#!/bin/sh
case "$2" in
  "show version") echo "Exiting: failed to connect to any daemons." >&2; exit 1 ;;
  *) exit 1 ;;
esac
)";
  auto target = start_plaintext({}, true, {}, {}, vtysh_script);
  ASSERT_TRUE(target);
  auto system = target->client->get({"/system/state"}, Encoding::json, kDeadline);
  ASSERT_FALSE(system) << "served a version without FRR";
  EXPECT_NE(system.error().message.find("FRR's version is not available: "), std::string::npos)
      << system.error().message;
  EXPECT_NE(system.error().message.find("-c show version: exit 1"), std::string::npos)
      << system.error().message;
}

// A stand-in FRR daemon: a sleeping child whose pid a pid file names; killed when it goes.
class DaemonStandIn {
 public:
  DaemonStandIn() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~DaemonStandIn() { stop(); }
  DaemonStandIn(const DaemonStandIn&) = delete;
  DaemonStandIn& operator=(const DaemonStandIn&) = delete;
  pid_t pid() const { return pid_; }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

// FRR stand-in that counts its `show version` answers in a file `asked` beside it.
std::string counting_vtysh(const std::string& version) {
  return "#!/bin/sh\ncase \"$2\" in\n  \"show version\") echo x >> \"$(dirname \"$0\")/asked\"\n"
         "    echo \"FRRouting " +
         version + " (fake) on Linux(6.1.0).\" ;;\n  *) exit 1 ;;\nesac\n";
}

std::size_t times_asked(const Target& target) {
  std::ifstream in(target.dir.file("asked"));
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

std::string frr_version_served(Target& target) {
  auto system = target.client->get({"/system/state"}, Encoding::json, kDeadline);
  if (!system) return "Get failed: " + system.error().message;
  std::string version = only_value(std::move(system)).value("software-version", "");
  auto frr = version.find("FRRouting ");
  return frr == std::string::npos ? version : version.substr(frr);
}

TEST(Gnmid, FrrsVersionIsAskedAgainOnlyWhenVtyshOrADaemonChanged) {
  // Given FRR's pid files naming two running daemons, then three Gets of /system/state ask
  // vtysh once (its answer is remembered under the vtysh file and the daemons' start times);
  // when bgpd restarts (another pid), or the vtysh program is replaced by one of another
  // version, the next Get asks again and serves what it answered; and while a pid file names
  // a daemon that is gone, every Get asks.
  const std::string script = counting_vtysh("9.1.0");
  TargetSetup setup;
  setup.vtysh_script = script.c_str();
  setup.client.tls = false;
  TempDir frr;
  setup.extra_args = {"--insecure-plaintext", "--no-auth", "--frr-run-dir", frr.path()};
  DaemonStandIn zebra, bgpd;
  frr.write("zebra.pid", std::to_string(zebra.pid()) + "\n");
  frr.write("bgpd.pid", std::to_string(bgpd.pid()) + "\n");
  std::string failure;
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;

  for (int get = 0; get < 3; ++get) EXPECT_EQ(frr_version_served(*target), "FRRouting 9.1.0");
  EXPECT_EQ(times_asked(*target), 1u) << "vtysh asked again though nothing changed";

  bgpd.stop();
  DaemonStandIn restarted;
  frr.write("bgpd.pid", std::to_string(restarted.pid()) + "\n");
  EXPECT_EQ(frr_version_served(*target), "FRRouting 9.1.0");
  EXPECT_EQ(times_asked(*target), 2u) << "a restarted daemon did not make vtysh be asked";
  EXPECT_EQ(frr_version_served(*target), "FRRouting 9.1.0");
  EXPECT_EQ(times_asked(*target), 2u);

  const std::string upgraded = counting_vtysh("10.0.1");
  target->dir.write("vtysh", upgraded, true);
  EXPECT_EQ(frr_version_served(*target), "FRRouting 10.0.1");
  EXPECT_EQ(times_asked(*target), 3u) << "a replaced vtysh did not make vtysh be asked";

  restarted.stop();  // bgpd.pid now names no process
  EXPECT_EQ(frr_version_served(*target), "FRRouting 10.0.1");
  EXPECT_EQ(frr_version_served(*target), "FRRouting 10.0.1");
  EXPECT_EQ(times_asked(*target), 5u) << "a version was remembered while a daemon was gone";
}

TEST(Gnmid, WithoutFrrPidFilesEveryGetAsksVtysh) {
  // Given no pid file in FRR's run folder (nothing proves a remembered answer still true), then
  // every Get of /system/state asks vtysh.
  const std::string script = counting_vtysh("9.1.0");
  auto target = start_plaintext({}, true, {}, {}, script.c_str());
  ASSERT_TRUE(target);
  for (int get = 0; get < 2; ++get) EXPECT_EQ(frr_version_served(*target), "FRRouting 9.1.0");
  EXPECT_EQ(times_asked(*target), 2u);
}

TEST(Gnmid, AGetWaitsForASlowFrrAsLongAsItsClientGivesIt) {
  // Given a vtysh that takes 6 s to answer (past the node's own 5 s command limit, as a busy
  // switch's vtysh can while it connects to every daemon), then a Get whose client gives it 20 s
  // is answered with FRR's version, and for one whose client gives it 1 s the vtysh is killed
  // once that second is up, not left running for the client that gave up.
  const char* vtysh_script = R"(#!/bin/sh
case "$2" in
  "show version") echo $$ > "$(dirname "$0")/vtysh.pid"; sleep 6
                  echo "FRRouting 9.1.0 (slow) on Linux(6.1.0)." ;;
  *) exit 1 ;;
esac
)";
  auto target = start_plaintext({}, true, {}, {}, vtysh_script);
  ASSERT_TRUE(target);

  auto patient = target->client->get({"/system/state"}, Encoding::json, Duration{20'000});
  ASSERT_TRUE(patient) << patient.error().message;
  json system = only_value(std::move(patient));
  EXPECT_NE(system["software-version"].get<std::string>().find("; FRRouting 9.1.0"),
            std::string::npos)
      << system.dump();

  auto hurried = target->client->get({"/system/state"}, Encoding::json, Duration{1'000});
  EXPECT_FALSE(hurried);
  std::ifstream pid_file(target->dir.file("vtysh.pid"));
  pid_t vtysh = 0;
  ASSERT_TRUE(pid_file >> vtysh);
  bool gone = false;
  // Up to 3 s more: before both its 6 s sleep and the node's own 5 s limit would end it.
  for (int poll = 0; poll < 30 && !gone; ++poll) {
    gone = ::kill(vtysh, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "vtysh " << vtysh << " still runs after its client's deadline";
}

TEST(Gnmid, SubscribeOnceAndPollDeliverSnapshots) {
  // Given a ONCE subscription, then it returns the values and ends; given a POLL subscription,
  // then the first next() is the initial snapshot and each later one a fresh poll.
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  auto once = target->client->subscribe_once(
      {"/interfaces/interface[name=lo]/state/mtu", "/system/state/hostname"}, Encoding::json,
      kDeadline);
  ASSERT_TRUE(once) << once.error().message;
  ASSERT_EQ(once->size(), 2u);
  EXPECT_EQ((*once)[0].updates[0].json, "65536");
  EXPECT_EQ((*once)[1].updates[0].json, "\"gnmi-test-node\"");

  auto session =
      target->client->subscribe_poll({"/system/state/hostname"}, Encoding::json, kDeadline);
  ASSERT_TRUE(session) << session.error().message;
  for (int round = 0; round < 3; ++round) {
    auto snapshot = (*session)->next();
    ASSERT_TRUE(snapshot) << "round " << round << ": " << snapshot.error().message;
    ASSERT_EQ(snapshot->size(), 1u);
    EXPECT_EQ((*snapshot)[0].updates[0].json, "\"gnmi-test-node\"");
  }
}

TEST(Gnmid, SlowTargetIsATimeoutWithinTheDeadline) {
  // Given a target that answers after 3 s and a 300 ms deadline, then the client reports
  // `timeout` well before the target would have answered.
  auto target = start_plaintext({"--debug-delay-ms", "3000"});
  ASSERT_TRUE(target);
  auto started = std::chrono::steady_clock::now();
  auto result = target->client->get({"/system/state"}, Encoding::json, Duration(300));
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, GnmiFailure::Kind::timeout) << result.error().message;
  EXPECT_NE(result.error().message.find("timed out after 300ms"), std::string::npos)
      << result.error().message;
  // Before the target's 3 s answer (the deadline, not the answer, ended the call); how far
  // past 300 ms depends on the machine's load, not on the client.
  EXPECT_LT(elapsed.count(), 2'500) << "deadline 300 ms, answer after 3000 ms";
  ::testing::Test::RecordProperty("timeout_elapsed_ms", static_cast<int>(elapsed.count()));
}

TEST(Gnmid, APollRoundPastItsDeadlineIsATimeoutLongBeforeTheSessionDeadline) {
  // Given a target that answers each call after 3 s and a POLL subscription with a 20 s
  // session deadline, then a round given 300 ms is a timeout well before the target answers,
  // and the session is over (the next round says so instead of waiting).
  auto target = start_plaintext({"--debug-delay-ms", "3000"});
  ASSERT_TRUE(target);
  auto session =
      target->client->subscribe_poll({"/system/state/hostname"}, Encoding::json, Duration(20'000));
  ASSERT_TRUE(session) << session.error().message;
  auto started = std::chrono::steady_clock::now();
  auto round = (*session)->next(Duration(300));
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  ASSERT_FALSE(round);
  EXPECT_EQ(round.error().kind, GnmiFailure::Kind::timeout) << round.error().message;
  EXPECT_NE(round.error().message.find("Subscribe POLL: the round was not answered within 300ms"),
            std::string::npos)
      << round.error().message;
  EXPECT_LT(elapsed.count(), 2'500) << "round deadline 300 ms, answer after 3000 ms";
  auto after = (*session)->next(Duration(300));
  ASSERT_FALSE(after);
  EXPECT_NE(after.error().message.find("already ended"), std::string::npos)
      << after.error().message;
}

TEST(Gnmid, SubscribeStreamsBeyondMaxStreamsAreRefusedUntilOneEnds) {
  // Given a target serving at most one Subscribe stream and one STREAM subscription delivering,
  // then a second subscription is refused with RESOURCE_EXHAUSTED naming the limit and the flag,
  // and once the first stream has ended a subscription is served again.
  auto target = start_plaintext({"--max-streams", "1"});
  ASSERT_TRUE(target);
  auto stream = target->client->subscribe_stream({"/system/state/hostname"}, Encoding::json,
                                                 Duration(200), Duration(120'000));
  ASSERT_TRUE(stream) << stream.error().message;
  std::atomic<int> delivered{0};
  std::thread runner([&] { (void)(*stream)->run([&](const GnmiNotification&) { ++delivered; }); });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (delivered == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GT(delivered.load(), 0) << "the first stream delivered nothing in 30 s";

  auto refused =
      target->client->subscribe_once({"/system/state/hostname"}, Encoding::json, kDeadline);
  EXPECT_FALSE(refused);
  EXPECT_NE(message_of(refused).find("serves at most 1 Subscribe streams at once (--max-streams)"),
            std::string::npos)
      << message_of(refused);
  EXPECT_NE(message_of(refused).find("gRPC status 8"), std::string::npos) << message_of(refused);

  (*stream)->stop();
  runner.join();
  // The target frees the slot when it notices the cancelled stream (at its next sample).
  GnmiResult<std::vector<GnmiNotification>> served = refused;
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!served && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    served = target->client->subscribe_once({"/system/state/hostname"}, Encoding::json, kDeadline);
  }
  EXPECT_TRUE(served) << message_of(served);
}

TEST(Gnmid, AnIdlePollSubscriptionIsEndedAndTheTargetSaysWhy) {
  // Given a target that ends POLL subscriptions idle for 1 s, then a session that polls at
  // once is answered, and after 4 s without a poll its next round fails (the subscription was
  // ended) and the target's log names the reason; a fresh session is served again.
  auto target = start_plaintext({"--poll-idle-timeout", "1"});
  ASSERT_TRUE(target);
  auto session =
      target->client->subscribe_poll({"/system/state/hostname"}, Encoding::json, Duration(60'000));
  ASSERT_TRUE(session) << session.error().message;
  auto first = (*session)->next(kDeadline);
  ASSERT_TRUE(first) << message_of(first);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  auto late = (*session)->next(kDeadline);
  EXPECT_FALSE(late);
  std::ifstream log(target->dir.file("gnmid.stderr"));
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("no poll request for 1s: POLL subscription ended (--poll-idle-timeout)"),
            std::string::npos)
      << text;

  auto fresh =
      target->client->subscribe_poll({"/system/state/hostname"}, Encoding::json, Duration(60'000));
  ASSERT_TRUE(fresh) << fresh.error().message;
  auto answered = (*fresh)->next(kDeadline);
  EXPECT_TRUE(answered) << message_of(answered);
}

TEST(Gnmid, ProgramsItRunsGetACleanSignalStateAndNoCredentials) {
  // Given a TLS target with credentials from FGT_CHILD_* whose vtysh records what it
  // inherited, then vtysh neither blocks nor ignores SIGINT, SIGTERM, SIGPIPE or SIGHUP
  // (fabgate-gnmid blocks the first two and ignores SIGPIPE for itself) and its environment
  // holds neither credential variable nor the password.
  if (!testing::program_available("openssl")) GTEST_SKIP() << "openssl CLI not installed";
  TempDir certs_dir;
  std::string failure;
  auto certs = testing::make_certificates(certs_dir, failure);
  ASSERT_TRUE(certs) << failure;
  TargetSetup setup;
  setup.vtysh_script = R"(#!/bin/sh
here=$(dirname "$0")
grep -E '^Sig(Blk|Ign):' /proc/self/status > "$here/inherited"
env >> "$here/inherited"
echo "FRRouting 9.1.0 (fake) on Linux(6.1.0)."
)";
  setup.extra_args = {"--tls-cert", certs->cert,         "--tls-key",
                      certs->key,   "--credentials-env", "FGT_CHILD"};
  setup.env = {"FGT_CHILD_USERNAME=fabgate", "FGT_CHILD_PASSWORD=Canary-s3cret-77"};
  setup.client.ca_file = certs->ca;
  setup.client.login = GnmiLogin{"fabgate", "Canary-s3cret-77"};
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;
  auto served = target->client->get({"/system/state"}, Encoding::json, kDeadline);
  ASSERT_TRUE(served) << message_of(served);
  std::ifstream in(target->dir.file("inherited"));
  std::string inherited((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(inherited.find("SigBlk:"), std::string::npos) << "vtysh was not run: " << inherited;
  // /proc/PID/status masks: bit N-1 is signal N. (glibc keeps its own real-time signals 32
  // and 33 out of a spawn's reach; the signals that matter are these.)
  auto mask = [&](const std::string& field) {
    auto at = inherited.find(field + ":\t");
    return at == std::string::npos
               ? ~0ull
               : std::stoull(inherited.substr(at + field.size() + 2), nullptr, 16);
  };
  const unsigned long long stop_and_pipe = (1ull << (SIGINT - 1)) | (1ull << (SIGTERM - 1)) |
                                           (1ull << (SIGPIPE - 1)) | (1ull << (SIGHUP - 1));
  EXPECT_EQ(mask("SigBlk") & stop_and_pipe, 0u) << inherited;
  EXPECT_EQ(mask("SigIgn") & stop_and_pipe, 0u) << inherited;
  EXPECT_EQ(inherited.find("FGT_CHILD_"), std::string::npos) << inherited;
  EXPECT_EQ(inherited.find("Canary-s3cret-77"), std::string::npos) << inherited;
}

TEST(Gnmid, ATimedOutCommandIsKilledWithEverythingItStarted) {
  // Given a command that starts a background sleep and then waits, run with a 300 ms limit,
  // then it times out and the sleep it started is gone too (its process group was killed),
  // rather than left running for its 60 s.
  TempDir dir;
  auto outcome = target::run_command(
      {"sh", "-c", "sleep 60 & echo $! > " + dir.file("pid") + "; wait"}, Duration(300));
  EXPECT_TRUE(outcome.timed_out);
  std::ifstream in(dir.file("pid"));
  pid_t sleeper = 0;
  ASSERT_TRUE(in >> sleeper) << "the command did not record its child";
  auto gone = [&] {
    std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
    std::string pid, name, state;
    return !(stat >> pid >> name >> state) || state == "Z";  // gone, or dead awaiting its reaper
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!gone() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(gone()) << "sleep " << sleeper << " outlived its timed-out command";
  if (!gone()) ::kill(sleeper, SIGKILL);
}

TEST(Gnmid, ASubscribeModeTheTargetDoesNotImplementIsUnimplementedNotBroken) {
  // Given a target told to leave STREAM unimplemented, then a STREAM subscription fails with
  // `unimplemented` set (a mode the client may replace), while ONCE still answers and a path
  // the target does not serve is refused without it.
  auto target = start_plaintext({"--debug-unimplemented-mode", "STREAM"});
  ASSERT_TRUE(target);
  auto stream = target->client->subscribe_stream({"/system/state/hostname"}, Encoding::json,
                                                 Duration(200), kDeadline);
  GnmiResult<Ok> ran =
      stream ? (*stream)->run([](const GnmiNotification&) {}) : GnmiResult<Ok>(stream.error());
  ASSERT_FALSE(ran);
  EXPECT_TRUE(ran.error().unimplemented) << ran.error().message;
  EXPECT_NE(ran.error().message.find("Subscribe STREAM is not implemented here (gRPC status 12)"),
            std::string::npos)
      << ran.error().message;
  auto once = target->client->subscribe_once({"/system/state/hostname"}, Encoding::json, kDeadline);
  ASSERT_TRUE(once) << once.error().message;
  auto missing = target->client->subscribe_once({"/no/such/path"}, Encoding::json, kDeadline);
  ASSERT_FALSE(missing);
  EXPECT_FALSE(missing.error().unimplemented) << missing.error().message;
}

TEST(Gnmid, NothingListeningIsUnreachable) {
  // Given a loopback port nobody listens on (reserved for this test, never bound), then the
  // client reports `unreachable` promptly.
  const int port = fabgate::testing::reserve_test_port();
  ASSERT_NE(port, 0);
  GnmiClientOptions options;
  options.tls = false;
  options.device = "ghost";
  options.address = "127.0.0.1:" + std::to_string(port);
  auto client = connect(options);
  ASSERT_TRUE(client);
  auto result = (*client)->capabilities(kDeadline);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, GnmiFailure::Kind::unreachable) << result.error().message;
  EXPECT_EQ(
      result.error().message.rfind("gnmi: ghost (" + options.address + "): Capabilities: ", 0), 0u)
      << result.error().message;
}

TEST(Gnmid, WrongCredentialsAreAuthFailures) {
  // Given a TLS target that requires a username and password, then a wrong password, a prefix
  // or an extension of the right one, an empty one and a wrong username are `auth`, and the
  // right pair is served.
  if (!testing::program_available("openssl")) GTEST_SKIP() << "openssl CLI not installed";
  TempDir certs_dir;
  std::string failure;
  auto certs = testing::make_certificates(certs_dir, failure);
  ASSERT_TRUE(certs) << failure;
  TargetSetup setup;
  setup.extra_args = {"--tls-cert", certs->cert,         "--tls-key",
                      certs->key,   "--credentials-env", "FGT_GNMI_TEST"};
  setup.env = {"FGT_GNMI_TEST_USERNAME=fabgate", "FGT_GNMI_TEST_PASSWORD=s3cret"};
  setup.client.ca_file = certs->ca;
  setup.client.login = GnmiLogin{"fabgate", "guess"};
  auto wrong = start_target(setup, failure);
  ASSERT_TRUE(wrong) << failure;
  auto denied = wrong->client->get({"/system/state"}, Encoding::json, kDeadline);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().kind, GnmiFailure::Kind::auth) << denied.error().message;
  for (const auto& guess :
       {GnmiLogin{"fabgate", "s3cre"}, GnmiLogin{"fabgate", "s3cret!"}, GnmiLogin{"fabgate", ""},
        GnmiLogin{"fabgatE", "s3cret"}, GnmiLogin{"", "s3cret"}}) {
    GnmiClientOptions guessing = setup.client;
    guessing.address = wrong->address;
    guessing.login = guess;
    auto client = connect(guessing);
    ASSERT_TRUE(client);
    auto refused = (*client)->get({"/system/state"}, Encoding::json, kDeadline);
    ASSERT_FALSE(refused) << "served '" << guess.username << "' / '" << guess.password << "'";
    EXPECT_EQ(refused.error().kind, GnmiFailure::Kind::auth) << refused.error().message;
  }

  GnmiClientOptions right = setup.client;
  right.address = wrong->address;
  right.login = GnmiLogin{"fabgate", "s3cret"};
  auto client = connect(right);
  ASSERT_TRUE(client);
  auto served = (*client)->get({"/system/state"}, Encoding::json, kDeadline);
  EXPECT_TRUE(served) << message_of(served);
}

// Starts fabgate-gnmid with `args` on 127.0.0.1; returns its first stdout line or nullopt, and
// what it wrote on stderr.
std::optional<std::string> start_with(TargetProcess& process, const TempDir& dir,
                                      std::vector<std::string> args, std::string& stderr_text,
                                      const std::vector<std::string>& env = {}) {
  args.insert(args.begin(),
              {testing::gnmid_path(), "--listen", "127.0.0.1:0", "--vtysh", "/nonexistent/vtysh"});
  auto line = process.start(args, dir.file("err"), env);
  std::ifstream in(dir.file("err"));
  stderr_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (!line) stderr_text += process.failure;
  return line;
}

TEST(Gnmid, RefusesToServeWithoutAuthenticationUnlessNoAuthIsGivenAndLogged) {
  // Given neither credentials nor client certificates, then fabgate-gnmid refuses to start and
  // names the ways out; given --no-auth, then it serves and its startup log says so loudly;
  // given --no-auth beside --credentials-env, then it refuses the contradiction.
  TempDir dir;
  std::string err;
  {
    TargetProcess process;
    EXPECT_FALSE(start_with(process, dir, {"--insecure-plaintext"}, err));
    EXPECT_NE(err.find("every client that reaches 127.0.0.1:0 could read and Set this node: give "
                       "--credentials-env PREFIX (with TLS) or --tls-client-ca FILE, or --no-auth"),
              std::string::npos)
        << err;
  }
  {
    TargetProcess process;
    auto port = start_with(process, dir, {"--insecure-plaintext", "--no-auth"}, err);
    ASSERT_TRUE(port) << err;
    EXPECT_NE(err.find("fabgate-gnmid: WARNING: --no-auth: every client that reaches "
                       "127.0.0.1:0 can read and Set this node without authentication"),
              std::string::npos)
        << err;
  }
  {
    TargetProcess process;
    EXPECT_FALSE(start_with(process, dir,
                            {"--insecure-plaintext", "--no-auth", "--credentials-env", "FGT_NA",
                             "--lab-insecure-plaintext-credentials"},
                            err, {"FGT_NA_USERNAME=u", "FGT_NA_PASSWORD=p"}));
    EXPECT_NE(err.find("--no-auth contradicts --credentials-env"), std::string::npos) << err;
  }
}

// The exit status of a target whose start() failed (it exited by itself), or nullopt when it
// was still running and had to be stopped.
std::optional<int> exit_status_of(TargetProcess& process) {
  auto status = process.terminate(std::chrono::milliseconds(5000));
  if (!status || !WIFEXITED(*status)) return std::nullopt;
  return WEXITSTATUS(*status);
}

TEST(Gnmid, RefusesAClientCaWithoutTls) {
  // Given --tls-client-ca with --insecure-plaintext, then fabgate-gnmid refuses to start (exit
  // status 1, saying why) instead of serving every client: without TLS no client presents a
  // certificate, so the CA would authenticate nobody while satisfying "authentication required".
  TempDir dir;
  dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
  std::string err;
  TargetProcess process;
  auto served = start_with(process, dir,
                           {"--insecure-plaintext", "--tls-client-ca", dir.file("ca.pem")}, err);
  EXPECT_FALSE(served) << "served on port " << *served;
  EXPECT_EQ(exit_status_of(process), 1) << err;
  EXPECT_NE(err.find("fabgate-gnmid: error: --tls-client-ca needs TLS (--tls-cert, --tls-key): "
                     "over --insecure-plaintext no client presents a certificate, so it would "
                     "authenticate nobody"),
            std::string::npos)
      << err;
}

TEST(Gnmid, RefusesCredentialsThatAreUnsetOrEmpty) {
  // Given --credentials-env whose password (or username) variable is empty or unset, then
  // fabgate-gnmid refuses to start (exit status 2) naming the variable: an empty password would
  // admit every call that sends no password metadata. Given both non-empty, then it serves.
  TempDir dir;
  std::vector<std::string> args = {"--insecure-plaintext", "--credentials-env", "FGT_EC",
                                   "--lab-insecure-plaintext-credentials"};
  struct Case {
    std::vector<std::string> env;
    std::string says;
  };
  for (const auto& [env, says] :
       {Case{{"FGT_EC_USERNAME=fabgate", "FGT_EC_PASSWORD="}, "FGT_EC_PASSWORD is empty"},
        Case{{"FGT_EC_USERNAME=", "FGT_EC_PASSWORD=s3cret"}, "FGT_EC_USERNAME is empty"},
        Case{{"FGT_EC_USERNAME=fabgate"}, "FGT_EC_PASSWORD is not set"}}) {
    std::string err;
    TargetProcess process;
    auto served = start_with(process, dir, args, err, env);
    EXPECT_FALSE(served) << says << ": served on port " << *served;
    EXPECT_EQ(exit_status_of(process), 2) << err;
    EXPECT_NE(err.find("fabgate-gnmid: error: --credentials-env FGT_EC: " + says +
                       ": both $PREFIX_USERNAME and $PREFIX_PASSWORD must be set and non-empty"),
              std::string::npos)
        << err;
  }
  std::string err;
  TargetProcess process;
  auto served =
      start_with(process, dir, args, err, {"FGT_EC_USERNAME=fabgate", "FGT_EC_PASSWORD=s3cret"});
  EXPECT_TRUE(served) << err;
}

TEST(Gnmid, RefusesCredentialsOverPlaintextUnlessTheLabFlagIsGiven) {
  // Given --credentials-env with --insecure-plaintext, then fabgate-gnmid refuses to start (the
  // password would cross the network in clear text); given also the lab flag, then it serves,
  // warns at startup, and still checks the credentials.
  TempDir dir;
  std::string err;
  std::vector<std::string> env = {"FGT_PT_USERNAME=fabgate", "FGT_PT_PASSWORD=s3cret"};
  {
    TargetProcess process;
    EXPECT_FALSE(start_with(process, dir, {"--insecure-plaintext", "--credentials-env", "FGT_PT"},
                            err, env));
    EXPECT_NE(err.find("--credentials-env with --insecure-plaintext takes the username and "
                       "password in clear text"),
              std::string::npos)
        << err;
  }
  TargetProcess process;
  auto port = start_with(process, dir,
                         {"--insecure-plaintext", "--credentials-env", "FGT_PT",
                          "--lab-insecure-plaintext-credentials"},
                         err, env);
  ASSERT_TRUE(port) << err;
  EXPECT_NE(err.find("WARNING: --lab-insecure-plaintext-credentials: clients send their username "
                     "and password to 127.0.0.1:0 in clear text"),
            std::string::npos)
      << err;
  GnmiClientOptions options;
  options.tls = false;
  options.address = "127.0.0.1:" + *port;
  options.login = GnmiLogin{"fabgate", "wrong"};
  auto wrong = connect(options);
  ASSERT_TRUE(wrong);
  auto denied = (*wrong)->capabilities(kDeadline);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().kind, GnmiFailure::Kind::auth) << denied.error().message;
  options.login = GnmiLogin{"fabgate", "s3cret"};
  auto right = connect(options);
  ASSERT_TRUE(right);
  auto served = (*right)->capabilities(kDeadline);
  EXPECT_TRUE(served) << served.error().message;
}

TEST(Gnmid, TlsServerNameChecksACertificateIssuedForAnotherNameThanTheAddress) {
  // Given a target whose certificate names only leaf1.fabric.example, reached at 127.0.0.1,
  // then a client with tls_server_name leaf1.fabric.example is served; without it (the
  // address is checked), with another name, or trusting the system store instead of the test
  // CA (an empty ca_file), the handshake fails with `tls`.
  if (!testing::program_available("openssl")) GTEST_SKIP() << "openssl CLI not installed";
  TempDir certs_dir;
  std::string failure;
  auto certs = testing::make_certificates(certs_dir, failure, "DNS:leaf1.fabric.example");
  ASSERT_TRUE(certs) << failure;
  TargetSetup setup;
  setup.extra_args = {"--tls-cert", certs->cert, "--tls-key", certs->key, "--no-auth"};
  setup.client.ca_file = certs->ca;
  setup.client.tls_server_name = "leaf1.fabric.example";
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;
  auto served = target->client->get({"/system/state/hostname"}, Encoding::json, kDeadline);
  ASSERT_TRUE(served) << served.error().message;
  EXPECT_EQ((*served)[0].updates[0].json, "\"gnmi-test-node\"");

  GnmiClientOptions by_address = setup.client;
  by_address.address = target->address;
  by_address.tls_server_name.clear();
  GnmiClientOptions other_name = by_address;
  other_name.tls_server_name = "leaf2.fabric.example";
  GnmiClientOptions system_store = setup.client;
  system_store.address = target->address;
  system_store.ca_file.clear();
  for (const auto& options : {by_address, other_name, system_store}) {
    auto client = connect(options);
    ASSERT_TRUE(client);
    auto refused = (*client)->capabilities(kDeadline);
    ASSERT_FALSE(refused) << "served with name '" << options.tls_server_name << "', ca_file '"
                          << options.ca_file << "'";
    EXPECT_EQ(refused.error().kind, GnmiFailure::Kind::tls) << refused.error().message;
  }
}

TEST(Gnmid, TlsWithGeneratedCertificates) {
  // Given a TLS target with a certificate from a test CA, then a client trusting that CA is
  // served, one trusting another CA fails with `tls`, and an unreadable CA file is `tls` too.
  if (!testing::program_available("openssl")) GTEST_SKIP() << "openssl CLI not installed";
  TempDir certs_dir;
  std::string failure;
  auto certs = testing::make_certificates(certs_dir, failure);
  ASSERT_TRUE(certs) << failure;
  TargetSetup setup;
  setup.extra_args = {"--tls-cert", certs->cert, "--tls-key", certs->key, "--no-auth"};
  setup.client.ca_file = certs->ca;
  setup.client.tls_server_name = "localhost";
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;
  auto served = target->client->get({"/system/state/hostname"}, Encoding::json, kDeadline);
  ASSERT_TRUE(served) << served.error().message;
  EXPECT_EQ((*served)[0].updates[0].json, "\"gnmi-test-node\"");

  GnmiClientOptions by_ip;  // the certificate also names IP:127.0.0.1
  by_ip.address = target->address;
  by_ip.ca_file = certs->ca;
  auto ip_client = connect(by_ip);
  ASSERT_TRUE(ip_client);
  auto by_ip_result = (*ip_client)->capabilities(kDeadline);
  EXPECT_TRUE(by_ip_result) << by_ip_result.error().message;

  GnmiClientOptions untrusted = by_ip;
  untrusted.ca_file = certs->other_ca;
  auto untrusted_client = connect(untrusted);
  ASSERT_TRUE(untrusted_client);
  auto refused = (*untrusted_client)->capabilities(kDeadline);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, GnmiFailure::Kind::tls) << refused.error().message;

  GnmiClientOptions missing = by_ip;
  missing.ca_file = certs_dir.file("absent.pem");
  auto no_ca = connect(missing);
  ASSERT_FALSE(no_ca);
  EXPECT_EQ(no_ca.error().kind, GnmiFailure::Kind::tls);
}

TEST(Gnmid, ClientCertificatesWhenTheTargetRequiresThem) {
  // Given a target that requires client certificates from the test CA, then a client that
  // presents one is served and a client without one is refused. With TLS 1.3 the server
  // rejects the missing certificate after the client's handshake is done, so the client only
  // sees the connection close: `unreachable` or `tls`, never served.
  if (!testing::program_available("openssl")) GTEST_SKIP() << "openssl CLI not installed";
  TempDir certs_dir;
  std::string failure;
  auto certs = testing::make_certificates(certs_dir, failure);
  ASSERT_TRUE(certs) << failure;
  TargetSetup setup;
  setup.extra_args = {"--tls-cert", certs->cert,       "--tls-key",
                      certs->key,   "--tls-client-ca", certs->ca};
  setup.client.ca_file = certs->ca;
  setup.client.cert_file = certs->client_cert;
  setup.client.key_file = certs->client_key;
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;
  auto served = target->client->capabilities(kDeadline);
  EXPECT_TRUE(served) << served.error().message;

  GnmiClientOptions anonymous;
  anonymous.address = target->address;
  anonymous.ca_file = certs->ca;
  auto client = connect(anonymous);
  ASSERT_TRUE(client);
  auto refused = (*client)->capabilities(kDeadline);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().kind == GnmiFailure::Kind::tls ||
              refused.error().kind == GnmiFailure::Kind::unreachable)
      << refused.error().message;
}

TEST(Gnmid, RefusesToStartWithoutTlsOrAnExplicitPlaintextFlag) {
  // Given neither certificates nor --insecure-plaintext, then fabgate-gnmid exits with an
  // error instead of silently serving plaintext.
  TempDir dir;
  TargetProcess process;
  auto line = process.start({testing::gnmid_path(), "--listen", "127.0.0.1:0"}, dir.file("err"));
  EXPECT_FALSE(line);
  EXPECT_NE(process.failure.find("--insecure-plaintext (exactly one)"), std::string::npos)
      << process.failure;
}

TEST(Gnmid, SigtermStopsGracefullyWithExitStatusZero) {
  // Given a serving fabgate-gnmid that has answered a call (so gRPC's threads are running),
  // then SIGTERM stops it gracefully: it exits by itself with status 0 instead of being killed
  // by the signal (status 143 from a shell).
  auto target = start_plaintext();
  ASSERT_TRUE(target);
  ASSERT_TRUE(target->client->capabilities(kDeadline));
  auto status = target->process.terminate();
  ASSERT_TRUE(status) << "fabgate-gnmid did not stop within 5 s of SIGTERM";
  EXPECT_FALSE(WIFSIGNALED(*status)) << "killed by signal " << WTERMSIG(*status);
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0);
}

// ---- Set on a real interface inside a test network namespace ----------------------------

class GnmidInNamespace : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::running_as_root()) GTEST_SKIP() << "needs root to create network namespaces";
    if (!testing::program_available("ip")) GTEST_SKIP() << "iproute2 (ip) not installed";
    netns_ = std::make_unique<NetnsGuard>();
    ASSERT_TRUE(netns_->created()) << "ip netns add failed";
    // A veth pair: the kernel in this environment may lack the dummy module.
    ASSERT_TRUE(netns_->ip({"link", "add", "fgt0", "type", "veth", "peer", "name", "fgt1"}));
    ASSERT_TRUE(netns_->ip({"link", "set", "fgt0", "up"}));
    ASSERT_TRUE(netns_->ip({"link", "set", "fgt1", "up"}));
    TargetSetup setup;
    setup.extra_args = {"--insecure-plaintext", "--no-auth"};
    setup.netns = netns_->name();
    setup.client.tls = false;
    std::string failure;
    target_ = start_target(setup, failure);
    ASSERT_TRUE(target_) << failure;
  }

  GnmiResult<SetResult> set(std::vector<SetOperation> operations) {
    return target_->client->set(operations, kDeadline);
  }

  std::unique_ptr<NetnsGuard> netns_;  // destroyed last: the target runs inside it
  std::unique_ptr<Target> target_;

  void TearDown() override { target_.reset(); }
};

TEST_F(GnmidInNamespace, SetChangesMtuAndAdminStateOfARealInterface) {
  // Given a veth interface in the test's namespace, then a Set of config/mtu and
  // config/enabled changes the kernel's values, a Get shows them, and a second Set (the
  // rollback a change would run) restores them.
  auto applied = set(
      {{SetOperation::Kind::update, "/interfaces/interface[name=fgt0]/config/mtu", "1400"},
       {SetOperation::Kind::update, "/interfaces/interface[name=fgt0]/config/enabled", "false"}});
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_EQ(applied->applied.size(), 2u);
  EXPECT_EQ(netns_->sysfs("fgt0", "mtu"), "1400");
  EXPECT_EQ(netns_->sysfs("fgt0", "operstate"), "down");
  json state = only_value(
      target_->client->get({"/interfaces/interface[name=fgt0]/state"}, Encoding::json, kDeadline));
  EXPECT_EQ(state["mtu"], 1400);
  EXPECT_EQ(state["admin-status"], "DOWN");
  EXPECT_EQ(state["enabled"], false);

  auto restored = set({{SetOperation::Kind::replace, "/interfaces/interface[name=fgt0]/config",
                        R"({"mtu": 1500, "enabled": true})"}});
  ASSERT_TRUE(restored) << restored.error().message;
  EXPECT_EQ(netns_->sysfs("fgt0", "mtu"), "1500");
  EXPECT_EQ(netns_->sysfs("fgt0", "flags").back() & 1, 1) << "IFF_UP set again";
}

TEST_F(GnmidInNamespace, FailedSetUndoesTheChangesItAlreadyMade) {
  // Given a Set whose first update succeeds and whose second one the kernel refuses (MTU below
  // the device minimum), then the RPC is rejected naming the failing update and the first
  // interface is back at its old MTU: all or nothing.
  auto result =
      set({{SetOperation::Kind::update, "/interfaces/interface[name=fgt0]/config/mtu", "1400"},
           {SetOperation::Kind::update, "/interfaces/interface[name=fgt1]/config/mtu", "60"}});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, GnmiFailure::Kind::rejected) << result.error().message;
  EXPECT_NE(result.error().message.find("interface[name=fgt1]/config/mtu mtu=60"),
            std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("1 earlier change(s) undone"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(netns_->sysfs("fgt0", "mtu"), "1500");
  EXPECT_EQ(netns_->sysfs("fgt1", "mtu"), "1500");
}

TEST_F(GnmidInNamespace, SetOfMissingInterfaceOrUnsettablePathChangesNothing) {
  // Given a Set naming an interface that does not exist after a valid update, then it fails
  // as rejected (NOT_FOUND) and the valid update is undone; a read-only path or a delete is
  // refused before anything is touched.
  auto missing = set(
      {{SetOperation::Kind::update, "/interfaces/interface[name=fgt0]/config/mtu", "1400"},
       {SetOperation::Kind::update, "/interfaces/interface[name=nope9]/config/enabled", "false"}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, GnmiFailure::Kind::rejected);
  EXPECT_NE(missing.error().message.find("no interface 'nope9'"), std::string::npos)
      << missing.error().message;
  EXPECT_EQ(netns_->sysfs("fgt0", "mtu"), "1500");

  auto read_only =
      set({{SetOperation::Kind::update, "/interfaces/interface[name=fgt0]/config/mtu", "1400"},
           {SetOperation::Kind::update, "/interfaces/interface[name=fgt0]/state/mtu", "1400"}});
  ASSERT_FALSE(read_only);
  EXPECT_EQ(read_only.error().kind, GnmiFailure::Kind::rejected);
  EXPECT_NE(read_only.error().message.find("not settable"), std::string::npos);
  EXPECT_EQ(netns_->sysfs("fgt0", "mtu"), "1500");

  auto removal =
      set({{SetOperation::Kind::remove, "/interfaces/interface[name=fgt0]/config/mtu", ""}});
  ASSERT_FALSE(removal);
  EXPECT_EQ(removal.error().kind, GnmiFailure::Kind::rejected);
  EXPECT_NE(removal.error().message.find("delete is not supported"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::gnmi

namespace fabgate::gnmi {
namespace {

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Runs a STREAM subscription on its own thread, keeping every notification.
struct StreamRecorder {
  std::unique_ptr<GnmiStream> stream;
  std::mutex mutex;
  std::vector<GnmiNotification> notifications;
  GnmiResult<Ok> result = Ok{};
  std::thread thread;

  void start() {
    thread = std::thread([this] {
      auto ended = stream->run([this](const GnmiNotification& notification) {
        std::lock_guard lock(mutex);
        notifications.push_back(notification);
      });
      std::lock_guard lock(mutex);
      result = ended;
    });
  }
  void finish() {
    stream->stop();
    if (thread.joinable()) thread.join();
  }
  ~StreamRecorder() { finish(); }
};

TEST_F(GnmidInNamespace, AftServesTheKernelRoutesInTheSnapshotShape) {
  // Given an address on fgt0 and two routes added in the test's namespace (one static via a
  // gateway, one over two next hops), then a Get of the default instance's AFT, read by
  // snapshot_facts(), holds each route with its protocol and next hops as the SSH route
  // collector writes them, and /lldp (no LLDP agent configured: no --lldp-socket) is refused
  // by name, never answered as "no neighbours".
  ASSERT_TRUE(netns_->ip({"addr", "add", "10.99.0.1/24", "dev", "fgt0"}));
  ASSERT_TRUE(netns_->ip({"route", "add", "10.98.0.0/24", "via", "10.99.0.2", "proto", "static"}));
  ASSERT_TRUE(netns_->ip({"route", "add", "10.97.0.0/24", "proto", "bgp", "nexthop", "via",
                          "10.99.0.3", "nexthop", "via", "10.99.0.2"}));
  auto reply = target_->client->get({kIpv4AftPath}, Encoding::json_ietf, kDeadline);
  ASSERT_TRUE(reply) << reply.error().message;
  auto facts = snapshot_facts(*reply, now_utc());
  ASSERT_TRUE(facts.ok()) << facts.error();
  ASSERT_TRUE(facts->routes.has_value());
  std::map<std::string, json> by_prefix;
  for (const auto& route : (*facts->routes)["ipv4"]) by_prefix[route["prefix"]] = route;
  EXPECT_EQ(by_prefix["10.99.0.0/24"],
            json({{"prefix", "10.99.0.0/24"}, {"protocol", "kernel"}, {"nexthops", {"dev:fgt0"}}}));
  EXPECT_EQ(
      by_prefix["10.98.0.0/24"],
      json({{"prefix", "10.98.0.0/24"}, {"protocol", "static"}, {"nexthops", {"10.99.0.2"}}}));
  EXPECT_EQ(by_prefix["10.97.0.0/24"], json({{"prefix", "10.97.0.0/24"},
                                             {"protocol", "bgp"},
                                             {"nexthops", {"10.99.0.2", "10.99.0.3"}}}));

  auto lldp =
      target_->client->get({"/lldp/interfaces/interface[name=*]"}, Encoding::json_ietf, kDeadline);
  ASSERT_FALSE(lldp);
  EXPECT_EQ(lldp.error().kind, GnmiFailure::Kind::rejected);
  EXPECT_NE(lldp.error().message.find("/lldp is not served"), std::string::npos)
      << lldp.error().message;
  EXPECT_NE(lldp.error().message.find("--lldp-socket"), std::string::npos) << lldp.error().message;
}

const char* const kLldpd = "/usr/sbin/lldpd";
const char* const kLldpcli = "/usr/sbin/lldpcli";

// Debian's lldpd in the test's namespace on one interface, under a system name of its own
// (port id = interface name, one frame a second), until the object goes; it dies with the test
// process too (setpriv --pdeathsig). lldpd uses its compiled-in chroot /run/lldpd, which it
// creates when missing.
struct Lldpd {
  TempDir dir;
  TargetProcess process;
  std::string socket = dir.file("lldpd.socket");

  std::string start(const std::string& netns, const std::string& interface,
                    const std::string& system_name) {
    // lldpd runs lldpcli on its configuration as its unprivileged user, which must reach both.
    ::chmod(dir.path().c_str(), 0755);
    dir.write("lldpd.conf", "configure system hostname " + system_name +
                                "\nconfigure lldp portidsubtype ifname\n"
                                "configure lldp tx-interval 1\n");
    std::string command = "echo started; exec setpriv --pdeathsig KILL ip netns exec " + netns +
                          " " + kLldpd + " -dd -u " + socket + " -O " + dir.file("lldpd.conf") +
                          " -I " + interface + " -C '!*'";
    if (!process.start({"sh", "-c", command}, dir.file("lldpd.stderr"))) return process.failure;
    // Its control socket answers once lldpd runs with its configuration.
    for (int attempt = 0; attempt < 100; ++attempt) {
      if (target::run_command({kLldpcli, "-u", socket, "show", "configuration"}, Duration(2'000))
              .succeeded())
        return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "lldpd on " + interface + " did not answer on " + socket;
  }
};

// The lldp facts of a Get of every LLDP interface, or the failure's message.
json lldp_facts(Target& target) {
  auto reply =
      target.client->get({"/lldp/interfaces/interface[name=*]"}, Encoding::json_ietf, kDeadline);
  if (!reply) return reply.error().message;
  auto facts = snapshot_facts(*reply, now_utc());
  if (!facts.ok()) return facts.error();
  return facts->lldp.value_or(json("no lldp facts"));
}

TEST_F(GnmidInNamespace, LldpServesWhatARealLldpdHearsAndSilenceAsAnEmptyList) {
  // Given lldpd on fgt0 (the node's agent) and fabgate-gnmid given its socket, then before
  // anyone speaks on the other end /lldp lists fgt0 with no neighbour (evidence of silence, not
  // a refusal); once a second lldpd named lldp-peer runs on fgt1, fgt0's neighbour is lldp-peer
  // on port fgt1, served with OpenConfig's id types and read by snapshot_facts() in the
  // snapshot shape; Capabilities names openconfig-lldp.
  if (access(kLldpd, X_OK) != 0 || access(kLldpcli, X_OK) != 0)
    GTEST_SKIP() << "Debian's lldpd is not installed (scripts/bootstrap --tests installs it)";
  Lldpd agent;
  ASSERT_EQ(agent.start(netns_->name(), "fgt0", "lldp-node"), "");
  TargetSetup setup;
  setup.extra_args = {"--insecure-plaintext", "--no-auth", "--lldp-socket",
                      agent.socket,           "--lldpcli", kLldpcli};
  setup.netns = netns_->name();
  setup.client.tls = false;
  std::string failure;
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;

  // The facts once they equal `wanted`, or the last ones seen after 15 s. Chassis ids are
  // compared for presence only: with `-C '!*'` lldpd's chassis id is the UTS host name at its
  // start (the machine's here, the node's in the lab), which this test does not choose.
  auto without_chassis_ids = [](json facts) {
    if (facts.contains("neighbors") && facts["neighbors"].is_object())
      for (auto& [port, list] : facts["neighbors"].items())
        for (auto& neighbor : list)
          if (neighbor.contains("chassis_id") && neighbor["chassis_id"] != "")
            neighbor["chassis_id"] = "present";
    return facts;
  };
  auto eventually = [&](const json& wanted) {
    json seen;
    for (int attempt = 0; attempt < 75; ++attempt) {  // lldpd sends every second
      seen = without_chassis_ids(lldp_facts(*target));
      if (seen == wanted) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return seen;
  };
  json silent = {{"neighbors", {{"fgt0", json::array()}}}};
  EXPECT_EQ(eventually(silent), silent);

  Lldpd peer;
  ASSERT_EQ(peer.start(netns_->name(), "fgt1", "lldp-peer"), "");
  json heard = {{"neighbors",
                 {{"fgt0",
                   {{{"system_name", "lldp-peer"},
                     {"port_id", "fgt1"},
                     {"chassis_id", "present"},
                     {"port_description", "fgt1"}}}}}}};
  EXPECT_EQ(eventually(heard), heard);

  json state = only_value(
      target->client->get({"/lldp/interfaces/interface[name=fgt0]/neighbors/neighbor[id=*]/state"},
                          Encoding::json, kDeadline));
  EXPECT_EQ(state["port-id-type"], "INTERFACE_NAME") << state.dump();
  EXPECT_EQ(state["chassis-id-type"], "LOCAL") << state.dump();
  auto capabilities = target->client->capabilities(kDeadline);
  ASSERT_TRUE(capabilities) << capabilities.error().message;
  EXPECT_TRUE(std::any_of(capabilities->models.begin(), capabilities->models.end(),
                          [](const auto& model) { return model.name == "openconfig-lldp"; }));
}

TEST(Gnmid, LldpAgentThatDoesNotAnswerIsAnErrorNeverAnEmptyList) {
  // Given fabgate-gnmid told to read LLDP from a socket no lldpd listens on, then a Get of
  // /lldp fails with the reason (the agent does not answer, naming the socket), and a Get of
  // the whole tree still answers without an lldp subtree.
  if (access(kLldpcli, X_OK) != 0)
    GTEST_SKIP()
        << "Debian's lldpd (lldpcli) is not installed (scripts/bootstrap --tests installs it)";
  TempDir dir;
  auto target =
      start_plaintext({"--lldp-socket", dir.file("no-lldpd.socket"), "--lldpcli", kLldpcli});
  ASSERT_TRUE(target);
  auto lldp =
      target->client->get({"/lldp/interfaces/interface[name=*]"}, Encoding::json_ietf, kDeadline);
  ASSERT_FALSE(lldp) << "an unreachable LLDP agent must not read as an answer";
  EXPECT_EQ(lldp.error().kind, GnmiFailure::Kind::internal) << lldp.error().message;
  EXPECT_NE(lldp.error().message.find("the LLDP agent does not answer"), std::string::npos)
      << lldp.error().message;
  EXPECT_NE(lldp.error().message.find(dir.file("no-lldpd.socket")), std::string::npos)
      << lldp.error().message;
  auto whole = target->client->get({"/"}, Encoding::json_ietf, kDeadline);
  ASSERT_TRUE(whole) << whole.error().message;
  for (const auto& notification : *whole)
    for (const auto& update : notification.updates)
      EXPECT_EQ(update.json.find("\"lldp\""), std::string::npos);
}

// The facts of a route both transports carry, by prefix: the AFT has no metric, and a route
// whose kernel protocol has no OpenConfig identity ("boot": added by hand) has no protocol.
json comparable_routes(const json& table) {
  json out = json::object();
  for (const auto& route : table) {
    json facts = {{"nexthops", route["nexthops"]}};
    if (route.contains("protocol") && route["protocol"] != "boot")
      facts["protocol"] = route["protocol"];
    out[route["prefix"].get<std::string>()] = std::move(facts);
  }
  return out;
}

bool is_link_local_or_multicast(const std::string& prefix) {
  return prefix.rfind("fe80:", 0) == 0 || prefix.rfind("ff", 0) == 0;
}

TEST_F(GnmidInNamespace, Ipv6AftAgreesWithTheSshRouteCollector) {
  // Given IPv6 addresses on fgt0 and fgt1 and four IPv6 routes in the test's namespace (static
  // via a gateway, BGP over two next hops, a default route, a host route added by hand), then
  // the AFT's ipv6-unicast, read by snapshot_facts(), holds every unicast route that the SSH
  // collectors' `ip -j -6 route show table main` | ip-route-v6 holds, with the same prefix,
  // protocol and next hops, except the per-interface link-local fe80::/64 routes that the
  // kernel adds (and the SSH side does list), which the AFT leaves out.
  if (!std::filesystem::exists("/proc/sys/net/ipv6"))
    GTEST_SKIP() << "this kernel has no IPv6 (/proc/sys/net/ipv6 is missing)";
  for (const char* scope : {"all", "default", "fgt0", "fgt1"}) {
    auto enabled = target::run_command({"ip", "netns", "exec", netns_->name(), "sysctl", "-qw",
                                        std::string("net.ipv6.conf.") + scope + ".disable_ipv6=0"},
                                       Duration(10'000));
    ASSERT_TRUE(enabled.succeeded()) << scope << ": " << enabled.err;
  }
  // nodad: the addresses are usable at once, not tentative for a second.
  ASSERT_TRUE(netns_->ip({"addr", "add", "2001:db8:99::1/64", "dev", "fgt0", "nodad"}));
  ASSERT_TRUE(netns_->ip({"addr", "add", "2001:db8:9a::1/64", "dev", "fgt1", "nodad"}));
  ASSERT_TRUE(netns_->ip(
      {"-6", "route", "add", "2001:db8:98::/64", "via", "2001:db8:99::2", "proto", "static"}));
  ASSERT_TRUE(netns_->ip({"-6", "route", "add", "2001:db8:97::/64", "proto", "bgp", "nexthop",
                          "via", "2001:db8:99::3", "dev", "fgt0", "nexthop", "via",
                          "2001:db8:99::2", "dev", "fgt0"}));
  ASSERT_TRUE(
      netns_->ip({"-6", "route", "add", "default", "via", "2001:db8:9a::2", "proto", "bgp"}));
  ASSERT_TRUE(netns_->ip({"-6", "route", "add", "2001:db8:96::5", "via", "2001:db8:99::2"}));

  auto reply = target_->client->get({kAftPath}, Encoding::json_ietf, kDeadline);
  ASSERT_TRUE(reply) << reply.error().message;
  auto facts = snapshot_facts(*reply, now_utc());
  ASSERT_TRUE(facts.ok()) << facts.error();
  ASSERT_TRUE(facts->routes.has_value());
  ASSERT_TRUE(facts->routes->contains("ipv4")) << "the IPv4 table is still served next to IPv6";
  ASSERT_TRUE(facts->routes->contains("ipv6")) << facts->routes->dump();
  json over_gnmi = comparable_routes((*facts->routes)["ipv6"]);

  // The same table as the linux and frr collector profiles read it over SSH.
  auto listed = target::run_command(
      {"ip", "-n", netns_->name(), "-j", "-6", "route", "show", "table", "main"}, Duration(10'000));
  ASSERT_TRUE(listed.succeeded()) << listed.err;
  const snapshot::Normalizer* ip_route_v6 = snapshot::find_normalizer("ip-route-v6");
  ASSERT_NE(ip_route_v6, nullptr);
  json ssh_routes = json::object();
  auto normalized = snapshot::normalize(*ip_route_v6, listed.out, ssh_routes);
  ASSERT_TRUE(normalized) << normalized.error();
  json over_ssh = json::object();
  bool ssh_lists_link_local = false;
  const json ssh_table = comparable_routes(ssh_routes["ipv6"]);
  for (const auto& [prefix, route] : ssh_table.items()) {
    if (is_link_local_or_multicast(prefix)) {
      ssh_lists_link_local = ssh_lists_link_local || prefix == "fe80::/64";
      continue;
    }
    over_ssh[prefix] = route;
  }
  EXPECT_TRUE(ssh_lists_link_local) << "the kernel added no fe80::/64 route: the test proves "
                                       "nothing about leaving them out\n"
                                    << listed.out;
  EXPECT_EQ(over_gnmi, over_ssh) << "gNMI: " << over_gnmi.dump(2) << "\nSSH: " << over_ssh.dump(2);

  // Field by field, as the compare rules read them.
  EXPECT_EQ(over_gnmi["2001:db8:99::/64"],
            json({{"protocol", "kernel"}, {"nexthops", {"dev:fgt0"}}}));
  EXPECT_EQ(over_gnmi["2001:db8:9a::/64"],
            json({{"protocol", "kernel"}, {"nexthops", {"dev:fgt1"}}}));
  EXPECT_EQ(over_gnmi["2001:db8:98::/64"],
            json({{"protocol", "static"}, {"nexthops", {"2001:db8:99::2"}}}));
  EXPECT_EQ(over_gnmi["2001:db8:97::/64"],
            json({{"protocol", "bgp"}, {"nexthops", {"2001:db8:99::2", "2001:db8:99::3"}}}));
  EXPECT_EQ(over_gnmi["::/0"], json({{"protocol", "bgp"}, {"nexthops", {"2001:db8:9a::2"}}}));
  EXPECT_EQ(over_gnmi["2001:db8:96::5/128"], json({{"nexthops", {"2001:db8:99::2"}}}));
  for (const auto& route : (*facts->routes)["ipv6"]) {
    EXPECT_FALSE(is_link_local_or_multicast(route["prefix"])) << route.dump();
    EXPECT_FALSE(route.contains("metric")) << "the AFT has no metric: " << route.dump();
  }

  // The family asked for alone, as a client naming ipv6-unicast would.
  json family = only_value(
      target_->client->get({std::string(kAftPath) + "/ipv6-unicast"}, Encoding::json, kDeadline));
  ASSERT_TRUE(family.contains("ipv6-entry")) << family.dump();
  EXPECT_EQ(family["ipv6-entry"].size(), over_gnmi.size()) << family.dump(2);
}

TEST_F(GnmidInNamespace, StreamSamplesShowALinkFlapWithDeviceTimestamps) {
  // Given a STREAM subscription sampling fgt0's state every 200 ms, and fgt0's peer taken down
  // and up again while it runs, then the timeline covers the whole window without a silence
  // and shows fgt0's oper-status leaving UP and coming back, at device timestamps inside the
  // window, in that order, and the return is one flap.
  auto stream =
      target_->client->subscribe_stream({"/interfaces/interface[name=fgt0]/state"},
                                        Encoding::json_ietf, Duration(200), Duration(20'000));
  ASSERT_TRUE(stream) << stream.error().message;
  StreamRecorder recorder;
  recorder.stream = std::move(stream.value());
  const std::int64_t window_start = wall_ns();
  recorder.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_TRUE(netns_->ip({"link", "set", "fgt1", "down"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_TRUE(netns_->ip({"link", "set", "fgt1", "up"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const std::int64_t window_end = wall_ns();
  recorder.finish();
  ASSERT_TRUE(recorder.result) << recorder.result.error().message;

  auto timeline =
      interface_timeline(recorder.notifications, window_start, window_end, Duration(600));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.size() << " gaps, first: "
                                  << (timeline.gaps.empty() ? "" : timeline.gaps[0]);
  EXPECT_GE(timeline.samples, 8u);
  std::vector<std::string> flaps;
  std::size_t judged_flaps = 0;
  std::int64_t previous = window_start;
  for (const auto& event : timeline.events) {
    EXPECT_EQ(event.subject, "fgt0");
    EXPECT_GE(event.timestamp_ns, previous);
    EXPECT_LE(event.timestamp_ns, window_end);
    previous = event.timestamp_ns;
    if (event.flap)
      ++judged_flaps;
    else if (event.what.rfind("oper-status", 0) == 0)
      flaps.push_back(event.what);
  }
  ASSERT_GE(flaps.size(), 2u) << "no link flap in the stream";
  EXPECT_EQ(judged_flaps, 1u) << "leaving UP and coming back is one flap";
  EXPECT_EQ(flaps.front().rfind("oper-status UP -> ", 0), 0u) << flaps.front();
  EXPECT_EQ(flaps.back().substr(flaps.back().size() - 5), "-> UP") << flaps.back();
}

TEST(Gnmid, StreamSamplesBgpSessionsAndSaysWhenFrrStopsAnswering) {
  // Given a target whose FRR reports 10.0.1.0 Established with 4 prefixes, then Idle with
  // none, then does not answer at all, then answers Established again, and a STREAM of the
  // telemetry layer's BGP paths every 200 ms, then the stream carries on through FRR's
  // silence (a delete of the neighbours, not an error), and the timeline shows the session
  // drop, the prefixes leaving, the neighbours going and coming back, and the return, in that
  // order at device timestamps inside the window; FRR's 1.5 s of silence is the window's one
  // gap (a delete carries no value, so it covers nothing).
  TargetSetup setup;
  setup.extra_args = {"--insecure-plaintext", "--no-auth"};
  setup.vtysh_script = kChangingVtysh;
  setup.client.tls = false;
  auto neighbors = [](const char* state, int accepted) {
    return json{{"10.0.1.0",
                 {{"remoteAs", 65000},
                  {"localAs", 65101},
                  {"bgpState", state},
                  {"addressFamilyInfo", {{"ipv4Unicast", {{"acceptedPrefixCounter", accepted}}}}}}}}
        .dump();
  };
  std::string failure;
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;
  // Replaced whole (rename), so the script never reads a half-written file.
  auto answer = [&](const std::string& text) {
    target->dir.write("neighbors.next", text);
    std::filesystem::rename(target->dir.file("neighbors.next"), target->dir.file("neighbors.json"));
  };
  answer(neighbors("Established", 4));
  auto stream =
      target->client->subscribe_stream({kBgpSessionStatePath, kBgpPrefixesReceivedPath},
                                       Encoding::json_ietf, Duration(200), Duration(20'000));
  ASSERT_TRUE(stream) << stream.error().message;
  StreamRecorder recorder;
  recorder.stream = std::move(stream.value());
  const std::int64_t window_start = wall_ns();
  recorder.start();
  auto step = [] { std::this_thread::sleep_for(std::chrono::milliseconds(700)); };
  step();
  answer(neighbors("Idle", 0));
  step();
  target->dir.write("frr-down", "");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  answer(neighbors("Established", 4));
  std::filesystem::remove(target->dir.file("frr-down"));
  step();
  const std::int64_t window_end = wall_ns();
  recorder.finish();
  ASSERT_TRUE(recorder.result) << recorder.result.error().message;

  auto timeline =
      device_timeline({}, recorder.notifications,
                      {window_start, window_end, Duration(600), {TelemetrySource::bgp_neighbors}});
  EXPECT_FALSE(timeline.covered());
  ASSERT_EQ(timeline.gaps.size(), 1u) << ::testing::PrintToString(timeline.gaps);
  EXPECT_EQ(timeline.gaps[0].rfind("no bgp sample from ", 0), 0u) << timeline.gaps[0];
  EXPECT_NE(timeline.gaps[0].find(", not covered: "), std::string::npos) << timeline.gaps[0];
  std::vector<std::string> seen;
  std::size_t flaps = 0;  // the session left ESTABLISHED and came back: one flap
  for (const auto& event : timeline.events) {
    EXPECT_EQ(event.source, TelemetrySource::bgp_neighbors);
    EXPECT_GE(event.timestamp_ns, window_start);
    EXPECT_LE(event.timestamp_ns, window_end);
    if (event.flap)
      ++flaps;
    else
      seen.push_back(event.subject + " " + event.what);
  }
  EXPECT_EQ(flaps, 1u);
  // Each once; the session and its prefixes are two subscriptions of one reading, sent one
  // after the other: only the phases' order is fixed.
  auto at = [&](const std::string& line) {
    EXPECT_EQ(std::count(seen.begin(), seen.end(), line), 1) << line;
    return std::find(seen.begin(), seen.end(), line) - seen.begin();
  };
  auto dropped = std::max(at("10.0.1.0 session-state ESTABLISHED -> IDLE"),
                          at("10.0.1.0 received-prefixes IPV4_UNICAST 4 -> 0"));
  auto gone = at("neighbours no longer served (the target deleted them)");
  auto back = at("neighbours served again");
  auto returned = std::min(at("10.0.1.0 session-state IDLE -> ESTABLISHED"),
                           at("10.0.1.0 received-prefixes IPV4_UNICAST 0 -> 4"));
  EXPECT_LT(dropped, gone);
  EXPECT_LT(gone, back);
  EXPECT_LT(back, returned);
  EXPECT_EQ(seen.size(), 6u) << ::testing::PrintToString(seen);
}

TEST_F(GnmidInNamespace, StreamThatStopsDeliveringIsNoEvidenceNotSilence) {
  // Given a STREAM subscription whose target goes away a second into a three-second window,
  // then run() ends with a failure and the timeline reports the silence up to the window's
  // end: the window is not covered (no-evidence), though no event was seen.
  auto stream = target_->client->subscribe_stream({"/interfaces/interface[name=fgt0]/state"},
                                                  Encoding::json, Duration(200), Duration(20'000));
  ASSERT_TRUE(stream) << stream.error().message;
  StreamRecorder recorder;
  recorder.stream = std::move(stream.value());
  const std::int64_t window_start = wall_ns();
  recorder.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  (void)target_->process.terminate();
  if (recorder.thread.joinable()) recorder.thread.join();
  const std::int64_t window_end = window_start + 3'000'000'000;
  std::this_thread::sleep_for(
      std::chrono::nanoseconds(std::max<std::int64_t>(0, window_end - wall_ns())));
  EXPECT_FALSE(recorder.result) << "the stream ended without a failure";

  auto timeline =
      interface_timeline(recorder.notifications, window_start, window_end, Duration(600));
  EXPECT_GT(timeline.samples, 0u);
  EXPECT_TRUE(timeline.events.empty());
  EXPECT_FALSE(timeline.covered());
  ASSERT_FALSE(timeline.gaps.empty());
  EXPECT_NE(timeline.gaps.back().find("the end of the window"), std::string::npos)
      << timeline.gaps.back();
}

// FRR stand-in that answers slowly while a file frr-slow lies next to it (bgpd busy
// converging), with the neighbours from neighbors.json.
const char* kSlowVtysh = R"(#!/bin/sh
here=$(dirname "$0")
case "$2" in
  "show version") echo "FRRouting 9.1.0 (fake) on Linux(6.1.0)." ;;
  "show bgp neighbors json") [ -e "$here/frr-slow" ] && sleep 3; cat "$here/neighbors.json" ;;
  *) exit 1 ;;
esac
)";

std::string established_neighbors(int established) {
  return json{{"10.0.1.0",
               {{"remoteAs", 65000},
                {"localAs", 65101},
                {"bgpState", "Established"},
                {"connectionsEstablished", established},
                {"connectionsDropped", established - 1},
                {"addressFamilyInfo", {{"ipv4Unicast", {{"acceptedPrefixCounter", 4}}}}}}}}
      .dump();
}

TEST(Gnmid, ServesEstablishedTransitionsFromFrr) {
  // Given FRR saying 10.0.1.0 reached Established 3 times, then a Get of the neighbour's
  // established-transitions answers 3 (a uint64, so a string in JSON_IETF).
  TargetSetup setup;
  setup.extra_args = {"--insecure-plaintext", "--no-auth"};
  setup.vtysh_script = kSlowVtysh;
  setup.client.tls = false;
  std::string failure;
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;
  target->dir.write("neighbors.json", established_neighbors(3));
  auto got = target->client->get({kBgpEstablishedTransitionsPath}, Encoding::json_ietf, kDeadline);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->size(), 1u);
  ASSERT_EQ((*got)[0].updates.size(), 1u);
  EXPECT_EQ(json::parse((*got)[0].updates[0].json), json("3"));
}

TEST(Gnmid, AVtyshPastItsTimeLimitIsSilenceNeverADeletionOfTheNeighbours) {
  // Given a STREAM of the BGP paths every 200 ms and FRR so busy for a while that its reads run
  // past the node's 5 s command limit, then the stream falls silent for that time (a gap the
  // client sees and can cover with established-transitions) and sends no delete: a read that
  // timed out says nothing about the sessions, and "neighbours deleted" would fail the
  // telemetry gate of a change that did nothing wrong. Sampling resumes once FRR answers.
  const char* hanging_vtysh = R"(#!/bin/sh
here=$(dirname "$0")
case "$2" in
  "show version") echo "FRRouting 9.1.0 (fake) on Linux(6.1.0)." ;;
  "show bgp neighbors json") [ -e "$here/frr-hang" ] && sleep 7; cat "$here/neighbors.json" ;;
  *) exit 1 ;;
esac
)";
  TargetSetup setup;
  setup.extra_args = {"--insecure-plaintext", "--no-auth"};
  setup.vtysh_script = hanging_vtysh;
  setup.client.tls = false;
  std::string failure;
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;
  target->dir.write("neighbors.json", established_neighbors(1));
  auto stream = target->client->subscribe_stream(
      {kBgpSessionStatePath, kBgpEstablishedTransitionsPath}, Encoding::json_ietf, Duration(200),
      Duration(30'000));
  ASSERT_TRUE(stream) << stream.error().message;
  StreamRecorder recorder;
  recorder.stream = std::move(stream.value());
  recorder.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  target->dir.write("frr-hang", "");
  std::this_thread::sleep_for(std::chrono::milliseconds(6000));
  std::filesystem::remove(target->dir.file("frr-hang"));
  const std::int64_t answering_again = wall_ns();
  // The read in flight still sleeps until its own limit; the next one answers.
  std::this_thread::sleep_for(std::chrono::milliseconds(7000));
  recorder.finish();
  ASSERT_TRUE(recorder.result) << recorder.result.error().message;

  std::vector<std::int64_t> bgp_times;
  for (const auto& notification : recorder.notifications) {
    EXPECT_TRUE(notification.deletes.empty())
        << "a timed-out read was sent as a delete of " << notification.deletes[0].to_string();
    if (!notification.updates.empty()) bgp_times.push_back(notification.timestamp_ns);
  }
  std::sort(bgp_times.begin(), bgp_times.end());
  std::int64_t longest = 0;
  for (std::size_t i = 1; i < bgp_times.size(); ++i)
    longest = std::max(longest, bgp_times[i] - bgp_times[i - 1]);
  EXPECT_GT(longest, 4'000'000'000) << "FRR's hang left no silence in the stream";
  ASSERT_FALSE(bgp_times.empty());
  EXPECT_GT(bgp_times.back(), answering_again) << "sampling did not resume after the hang";
}

TEST(Gnmid, AStalledVtyshSilencesBgpButNotTheInterfaceSamples) {
  // Given a STREAM of interface state and the BGP paths every 200 ms, and FRR answering only
  // after 3 s for a while (under the node's 5 s limit), then interface samples keep coming
  // every interval (no silence over 600 ms), BGP falls silent for about 3 s (the silence really happened), no BGP reading is
  // sent twice, and the timeline covers the BGP silence by established-transitions.
  TargetSetup setup;
  setup.extra_args = {"--insecure-plaintext", "--no-auth"};
  setup.vtysh_script = kSlowVtysh;
  setup.client.tls = false;
  std::string failure;
  auto target = start_target(setup, failure);
  ASSERT_TRUE(target) << failure;
  target->dir.write("neighbors.json", established_neighbors(1));
  auto stream =
      target->client->subscribe_stream({"/interfaces/interface[name=lo]/state",
                                        kBgpSessionStatePath, kBgpEstablishedTransitionsPath},
                                       Encoding::json_ietf, Duration(200), Duration(30'000));
  ASSERT_TRUE(stream) << stream.error().message;
  StreamRecorder recorder;
  recorder.stream = std::move(stream.value());
  const std::int64_t window_start = wall_ns();
  recorder.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  target->dir.write("frr-slow", "");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  std::filesystem::remove(target->dir.file("frr-slow"));
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  const std::int64_t window_end = wall_ns();
  recorder.finish();
  ASSERT_TRUE(recorder.result) << recorder.result.error().message;

  std::vector<std::int64_t> interface_times, bgp_times;
  std::map<std::int64_t, int> bgp_counter_notifications;
  for (const auto& notification : recorder.notifications) {
    for (const auto& update : notification.updates) {
      const std::string path = update.path.to_string();
      if (path.find("interface[name=lo]") != std::string::npos) {
        interface_times.push_back(notification.timestamp_ns);
      } else if (path.find("established-transitions") != std::string::npos) {
        ++bgp_counter_notifications[notification.timestamp_ns];
        bgp_times.push_back(notification.timestamp_ns);
      }
    }
  }
  auto longest_silence = [](std::vector<std::int64_t> times) {
    std::sort(times.begin(), times.end());
    std::int64_t longest = 0;
    for (std::size_t i = 1; i < times.size(); ++i)
      longest = std::max(longest, times[i] - times[i - 1]);
    return longest;
  };
  ASSERT_GE(interface_times.size(), 20u);
  ASSERT_GE(bgp_times.size(), 5u);
  EXPECT_LT(longest_silence(interface_times), 600'000'000)
      << "the interface samples waited for vtysh";
  EXPECT_GT(longest_silence(bgp_times), 2'500'000'000) << "vtysh never stalled the BGP reading";
  for (const auto& [at, count] : bgp_counter_notifications)
    EXPECT_EQ(count, 1) << "the reading of " << at << " was sent " << count << " times";
  std::printf("longest silence: interfaces %.2f s, bgp %.2f s\n",
              longest_silence(interface_times) / 1e9, longest_silence(bgp_times) / 1e9);

  // The window opens once both sources delivered (as telemetry-start waits for them) and
  // closes at the last sample; its largest allowed silence, 1.5 s, lies between a loaded
  // machine's 200 ms reads (a shell script and cat each) and the 3 s stall this test makes.
  std::sort(interface_times.begin(), interface_times.end());
  std::sort(bgp_times.begin(), bgp_times.end());
  const std::int64_t opened = std::max({window_start, interface_times.front(), bgp_times.front()});
  const std::int64_t closed = std::min({window_end, interface_times.back(), bgp_times.back()});
  auto timeline = device_timeline({}, recorder.notifications,
                                  {opened,
                                   closed,
                                   Duration(1500),
                                   {TelemetrySource::interfaces, TelemetrySource::bgp_neighbors}});
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.size() << " gaps, first: "
                                  << (timeline.gaps.empty() ? "" : timeline.gaps[0]);
  ASSERT_EQ(timeline.covered_gaps.size(), 1u);
  EXPECT_NE(timeline.covered_gaps[0].find("no bgp sample from "), std::string::npos)
      << timeline.covered_gaps[0];
  EXPECT_NE(timeline.covered_gaps[0].find("covered by established-transitions on 1 session"),
            std::string::npos)
      << timeline.covered_gaps[0];
}

TEST_F(GnmidInNamespace, CarrierTransitionsCountALinkFlap) {
  // Given fgt0 UP, then its peer taken down and up again, then fgt0's carrier-transitions
  // served over gNMI rose by 2 while its oper-status is UP on both reads: the counter shows a
  // flap that two samples alone could miss.
  auto read = [&] {
    auto got = target_->client->get({"/interfaces/interface[name=fgt0]/state"}, Encoding::json_ietf,
                                    kDeadline);
    EXPECT_TRUE(got) << got.error().message;
    json state = got && !got->empty() && !(*got)[0].updates.empty()
                     ? json::parse((*got)[0].updates[0].json)
                     : json();
    return state;
  };
  json before = read();
  ASSERT_TRUE(before.contains("counters") && before["counters"].contains("carrier-transitions"))
      << before.dump();
  ASSERT_TRUE(netns_->ip({"link", "set", "fgt1", "down"}));
  ASSERT_TRUE(netns_->ip({"link", "set", "fgt1", "up"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  json after = read();
  EXPECT_EQ(before["oper-status"], "UP");
  EXPECT_EQ(after["oper-status"], "UP");
  EXPECT_EQ(std::stoull(after["counters"]["carrier-transitions"].get<std::string>()),
            std::stoull(before["counters"]["carrier-transitions"].get<std::string>()) + 2)
      << before.dump() << " then " << after.dump();
}

}  // namespace
}  // namespace fabgate::gnmi
