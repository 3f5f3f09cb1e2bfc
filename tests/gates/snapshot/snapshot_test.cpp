#include "gates/snapshot/snapshot.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>

#include <map>

#include "gates/compare/snapshot.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::snapshot {
namespace {

using nlohmann::json;
using ssh::CommandResult;
using ssh::SshFailure;

std::string sample(const std::string& name) {
  return testing::read_file(std::string(FABGATE_SOURCE_DIR) + "/tests/gates/snapshot/testdata/" +
                            name);
}

// Answers commands from a table of captured outputs; unknown commands exit 127 like a shell.
class CannedShell final : public ssh::RemoteShell {
 public:
  explicit CannedShell(std::map<std::string, Expected<CommandResult, SshFailure>> answers)
      : answers_(std::move(answers)) {}
  Expected<CommandResult, SshFailure> run(const std::string& command, Duration) override {
    auto found = answers_.find(command);
    if (found != answers_.end()) return found->second;
    CommandResult missing;
    missing.exit_status = 127;
    missing.stderr_text = "sh: 1: " + command.substr(0, command.find(' ')) + ": not found\n";
    return missing;
  }

 private:
  std::map<std::string, Expected<CommandResult, SshFailure>> answers_;
};

// The shipped frr profile's (first) command for `category`: long shell lines are not repeated.
std::string frr_profile_command(const std::string& category) {
  const auto profiles = load_profiles();
  for (const auto& source : profiles.value().at("frr").sources)
    if (source.category == category) return source.commands.at(0).run;
  return {};
}

class CannedConnector final : public ssh::ShellConnector {
 public:
  Expected<std::unique_ptr<ssh::RemoteShell>, SshFailure> connect(const ssh::SshDevice& device,
                                                                  ssh::CredentialRole) override {
    if (device.host == "down")
      return SshFailure{SshFailure::Kind::unreachable, "connection refused"};
    auto ok = [](std::string out) {
      CommandResult result;
      result.exit_status = 0;
      result.stdout_text = std::move(out);
      return Expected<CommandResult, SshFailure>(result);
    };
    std::map<std::string, Expected<CommandResult, SshFailure>> answers = {
        {"hostname", ok("leaf2\n")},
        {"cat /etc/os-release", ok(sample("os-release.txt"))},
        {"uname -r", ok(sample("kernel-release.txt"))},
        {"vtysh -c 'show version'", ok(sample("vtysh-show-version.txt"))},
        {"ip -j -s link show", ok(sample("ip-link.json"))},
        {"ip -j addr show", ok(sample("ip-addr.json"))},
        {"ip -j route show table main", ok(sample("ip-route-v4.json"))},
        {"ip -j -6 route show table main", ok(sample("ip-route-v6.json"))},
        {"vtysh -c 'show bgp summary json'",
         SshFailure{SshFailure::Kind::timeout, "timed out after 10 s"}},
        {"vtysh -c 'show evpn vni json'", ok("% Unknown command: show evpn vni json\n")},
        {"lldpcli -f json show interfaces", ok(sample("clos-lab/leaf1-lldp-interfaces.json"))},
        {"lldpcli -f json show neighbors details",
         ok(sample("clos-lab/leaf1-lldp-neighbors.json"))},
        {frr_profile_command("multipath"), ok(sample("multipath-hash-policy.txt"))},
        {"cat /proc/net/snmp", ok(sample("proc-net-snmp.txt"))},
    };
    // ethtool's loop, `show bfd peers json` and nft are left out: they answer exit 127.
    return std::unique_ptr<ssh::RemoteShell>(new CannedShell(std::move(answers)));
  }
};

const CollectorProfile& profile(const std::string& platform) {
  static const ProfileSet profiles = load_profiles().value();
  return profiles.at(platform);
}

TEST(Snapshot, FailedTimedOutAndUnparsableSourcesAreNoEvidenceAndTheirCategoriesAbsent) {
  // Given an FRR device whose bgp command times out, whose vtysh lacks bfd (exit 127), which
  // has no nft (exit 127) and whose evpn answer is not JSON, then those sources are
  // no-evidence with a reason naming the command, their categories are absent (not empty),
  // and the rest is collected (the multipath hash and the IP stack's errors among them).
  CannedConnector connector;
  ssh::ConnectionCache cache(connector);
  ssh::SshDevice leaf{"leaf2", "10.0.0.2", 22, {}, {}};
  auto snapshot = take_snapshot({{leaf, &profile("frr")}}, cache, 4, "abc123");
  EXPECT_FALSE(snapshot.complete());
  const json& device = snapshot.document.at("devices").at("leaf2");
  EXPECT_EQ(snapshot.document.at("format"), "fabgate.snapshot/1");
  EXPECT_EQ(snapshot.document.at("intent_commit"), "abc123");
  const json& sources = device.at("sources");
  EXPECT_EQ(sources.at("interfaces").at("status"), "ok");
  EXPECT_EQ(sources.at("routes").at("status"), "ok");
  EXPECT_EQ(sources.at("lldp").at("status"), "ok");
  EXPECT_EQ(device.at("lldp").at("neighbors").at("to-spine1").at(0).at("system_name"), "spine1");
  EXPECT_EQ(sources.at("bgp").at("status"), "no-evidence");
  EXPECT_EQ(sources.at("bgp").at("reason"),
            "vtysh -c 'show bgp summary json': timed out after 10 s");
  EXPECT_NE(sources.at("bfd").at("reason").get<std::string>().find("exit 127"), std::string::npos);
  EXPECT_NE(sources.at("evpn").at("reason").get<std::string>().find("unparsable"),
            std::string::npos);
  EXPECT_FALSE(device.contains("bgp"));
  EXPECT_FALSE(device.contains("bfd"));
  EXPECT_FALSE(device.contains("evpn"));
  EXPECT_TRUE(device.contains("interfaces"));
  EXPECT_EQ(sources.at("packet_filter").at("reason"),
            "nft -j list ruleset: command not found (exit 127): sh: 1: nft: not found");
  EXPECT_FALSE(device.contains("packet_filter"));
  EXPECT_EQ(sources.at("multipath").at("status"), "ok");
  EXPECT_EQ(device.at("multipath").at("hash_policy").at("ipv4"), 0);
  EXPECT_EQ(sources.at("ip_stack").at("status"), "ok");
  EXPECT_EQ(device.at("ip_stack").at("udp").at("rcvbuf_errors"), 8863);
  // Identity keeps what was collected and its source says what is missing (ethtool).
  EXPECT_EQ(device.at("identity").at("hostname"), "leaf2");
  EXPECT_EQ(device.at("identity").at("frr_version"), "8.4.4");
  EXPECT_FALSE(device.at("identity").contains("nics"));
  EXPECT_EQ(sources.at("identity").at("status"), "no-evidence");
  // Every command's metadata is recorded.
  const json& bgp_command = sources.at("bgp").at("commands").at(0);
  EXPECT_EQ(bgp_command.at("command"), "vtysh -c 'show bgp summary json'");
  EXPECT_TRUE(bgp_command.at("exit_status").is_null());
  EXPECT_EQ(bgp_command.at("parse"), "skipped");
  const json& link_command = sources.at("interfaces").at("commands").at(0);
  EXPECT_EQ(link_command.at("exit_status"), 0);
  EXPECT_EQ(link_command.at("parse"), "ok");
  EXPECT_TRUE(link_command.contains("started_at"));
  EXPECT_TRUE(link_command.contains("duration_ms"));
  // Every command of the frr profile (17, system-identity, the running configuration, the
  // two LLDP commands, the multipath hash, nft and /proc/net/snmp), and before them the one
  // vtysh invocation for all its vtysh commands (`vtysh_commands: together`), which this
  // device does not know (exit 127), so each vtysh command then ran on its own.
  ASSERT_EQ(snapshot.devices[0].records.size(), 25u);
  EXPECT_EQ(snapshot.devices[0].records[0].command.rfind("vtysh -E -c 'show version'", 0), 0u);
  EXPECT_NE(snapshot.devices[0].records[0].failure.find("exit 127"), std::string::npos);
}

// The snapshot's text as `fabgate snapshot` writes it.
std::string written(const Snapshot& snapshot, const Redactor& redactor = Redactor()) {
  std::string text;
  EXPECT_TRUE(write_snapshot(snapshot, redactor, [&text](std::string_view piece) {
    text += piece;
    return true;
  }));
  return text;
}

TEST(SnapshotRouteTables, TablesKeptApartAreWrittenAsTheSameDocumentAsLists) {
  // Given the same device snapshotted with its route lists in the document and with its route
  // tables kept apart, then the text written from the tables parses to the very same document
  // (every route, its protocol, metric, type and next hops), and the compare engine reads it.
  CannedConnector connector;
  ssh::ConnectionCache cache(connector);
  ssh::SshDevice leaf{"leaf2", "10.0.0.2", 22, {}, {}};
  auto lists = take_snapshot({{leaf, &profile("frr")}}, cache, 1, "abc123");
  auto apart = take_snapshot({{leaf, &profile("frr")}}, cache, 1, "abc123", nullptr,
                             SessionsAfter::keep, nullptr, RouteLists::apart);
  ASSERT_FALSE(apart.devices[0].route_tables.empty());
  EXPECT_FALSE(apart.document.at("devices").at("leaf2").contains("routes"));
  json expected = lists.document;
  json got = json::parse(written(apart));
  // The times of the two runs differ; everything else is the same.
  for (json* document : {&expected, &got}) {
    document->erase("taken_at");
    for (auto& [category, source] : (*document)["devices"]["leaf2"]["sources"].items())
      for (auto& command : source["commands"]) {
        command.erase("started_at");
        command.erase("duration_ms");
      }
  }
  EXPECT_EQ(got, expected);
  ASSERT_FALSE(got.at("devices").at("leaf2").at("routes").at("ipv4").empty());
  auto compared = compare::parse_snapshot(written(apart), "leaf2.json");
  ASSERT_TRUE(compared.ok()) << compared.error().message;
  EXPECT_EQ(compared->devices.at("leaf2").routes.at("ipv4").size(),
            apart.devices[0].route_tables.at("ipv4").size());
}

TEST(SnapshotRouteTables, RoutesWrittenFromTablesAreRedacted) {
  // Given a route whose next hop names an interface that is also a configured secret, then the
  // snapshot written from the tables does not hold the secret.
  Snapshot snapshot;
  snapshot.document = {{"format", "fabgate.snapshot/1"},
                       {"devices", {{"leaf1", {{"identity", json::object()}}}}}};
  DeviceSnapshot device;
  device.device = "leaf1";
  compare::RouteTable table(compare::Family::ipv4);
  std::string error;
  ASSERT_TRUE(table.add("default", "10.0.0.0/24", "kernel", 0, {"dev:hunter2-uplink"}, &error));
  ASSERT_TRUE(table.finalize(&error));
  device.route_tables.emplace("ipv4", std::move(table));
  snapshot.devices.push_back(std::move(device));
  const std::string text = written(snapshot, Redactor({"hunter2-uplink"}));
  EXPECT_EQ(text.find("hunter2-uplink"), std::string::npos) << text;
  const json parsed = json::parse(text);
  EXPECT_EQ(parsed.at("devices").at("leaf1").at("routes").at("ipv4").at(0).at("prefix"),
            "10.0.0.0/24");
}

TEST(Snapshot, AnUnreachableDeviceHasNoEvidenceAnywhereAndNothingWasSent) {
  // Given a device that refuses connections, then every source is no-evidence naming the
  // cause, no fact category exists, and every command record says it was not sent.
  CannedConnector connector;
  ssh::ConnectionCache cache(connector);
  ssh::SshDevice gone{"leaf9", "down", 22, {}, {}};
  auto snapshot = take_snapshot({{gone, &profile("linux")}}, cache, 4, "");
  const auto& device = snapshot.devices.at(0);
  EXPECT_FALSE(device.reachable);
  EXPECT_TRUE(device.collected.empty());
  ASSERT_EQ(device.missing.size(), 5u);  // the linux profile's five sources
  EXPECT_EQ(device.missing[0].reason, "unreachable: connection refused");
  EXPECT_FALSE(device.document.contains("interfaces"));
  for (const auto& record : device.records) EXPECT_FALSE(record.sent);
}

TEST(Snapshot, ReportsDevicesDoneToAProgressSink) {
  // Given three devices collected two at a time, then whoever watches hears the total first
  // and every device as it ends, last "3/3 devices".
  struct Recording final : ProgressSink {
    std::mutex mutex;
    std::vector<std::string> heard;
    void progress(std::size_t done, std::size_t total, std::string_view unit) override {
      std::lock_guard lock(mutex);
      heard.push_back(std::to_string(done) + "/" + std::to_string(total) + " " + std::string(unit));
    }
  } sink;
  CannedConnector connector;
  ssh::ConnectionCache cache(connector);
  std::vector<SnapshotTarget> targets;
  for (const char* name : {"leaf7", "leaf8", "leaf9"})
    targets.push_back({ssh::SshDevice{name, "down", 22, {}, {}}, &profile("linux")});
  take_snapshot(targets, cache, 2, "", nullptr, SessionsAfter::keep, &sink);
  ASSERT_EQ(sink.heard.size(), 4u);
  EXPECT_EQ(sink.heard.front(), "0/3 devices");
  EXPECT_EQ(sink.heard.back(), "3/3 devices");
}

TEST(SnapshotOverSsh, CollectsRealLinuxFactsFromSeveralTargets) {
  // Given three targets served by a real sshd on this machine and the shipped linux profile,
  // then every source is ok and the facts are the machine's own (its hostname, interface lo,
  // multipath hash policy and IP stack counters).
  if (auto why = testing::SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = testing::SshdFixture::start();
  ASSERT_TRUE(sshd) << testing::SshdFixture::last_error();
  ssh::LibsshConnector connector(sshd->options());
  ssh::ConnectionCache cache(connector);
  std::vector<SnapshotTarget> targets;
  for (const char* name : {"host1", "host2", "host3"})
    targets.push_back({sshd->device(name), &profile("linux")});
  auto snapshot = take_snapshot(targets, cache, 2, "");
  for (const auto& device : snapshot.devices) {
    for (const auto& missing : device.missing)
      ADD_FAILURE() << device.device << ": " << missing.reason;
    EXPECT_EQ(device.collected,
              (std::vector<std::string>{"identity", "interfaces", "routes", "multipath",
                                        "ip_stack"}));
    const json& facts = snapshot.document.at("devices").at(device.device);
    EXPECT_EQ(facts.at("interfaces").at("lo").at("oper"), "unknown");
    EXPECT_TRUE(facts.at("multipath").at("hash_policy").at("ipv4").is_number_integer());
    EXPECT_TRUE(facts.at("ip_stack").at("udp").at("in_csum_errors").is_number_integer());
    EXPECT_FALSE(facts.at("routes").at("ipv4").empty());
    EXPECT_FALSE(facts.at("identity").at("hostname").get<std::string>().empty());
  }
  EXPECT_TRUE(snapshot.complete());
}

// `ip -j route` of `count` routes: ECMP BGP routes with two next hops each, and a kernel route.
std::string ip_route_output(std::size_t count) {
  std::string text = "[";
  for (std::size_t i = 0; i < count; ++i) {
    text += "{\"dst\":\"10." + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) +
            "." + std::to_string(i & 255) + "/32\",\"protocol\":\"bgp\",\"metric\":20," +
            "\"flags\":[],\"nexthops\":[{\"gateway\":\"169.254.0.1\",\"dev\":\"swp1\"," +
            "\"weight\":1,\"flags\":[\"onlink\"]},{\"gateway\":\"169.254.0.3\",\"dev\":" +
            "\"swp2\",\"weight\":1,\"flags\":[\"onlink\"]}]},";
  }
  return text + R"({"dst":"192.168.0.0/24","dev":"eth0","protocol":"kernel","scope":"link"}])";
}

TEST(SnapshotOverSsh, ARouteTableLargerThanTheSessionsCapIsReadWhereTheSourceAllowsIt) {
  // Given a device whose route table is 60,000 routes (about 11 MB of `ip -j route`, over the
  // SSH session's 4 MiB cap) served by a real sshd, then a routes source with `max_output:
  // 64MiB` collects every route into its table, and the same source without it is no-evidence
  // because its output was cut short, never a partial table.
  if (auto why = testing::SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = testing::SshdFixture::start();
  ASSERT_TRUE(sshd) << testing::SshdFixture::last_error();
  testing::TempDir dir;
  const std::string file = dir.file("routes.json");
  testing::write_file(file, ip_route_output(60'000));
  ASSERT_GT(testing::read_file(file).size(), std::size_t{4} << 20);
  auto routes_profile = [&file](const std::string& cap) {
    return parse_collector_profile("platform: linux\nsources:\n  - category: routes\n" + cap +
                                       "    commands:\n      - run: cat " + file +
                                       "\n        parse: ip-route-v4\n",
                                   "policies/collectors/linux.yaml");
  };
  auto allowed = routes_profile("    max_output: 64MiB\n");
  auto capped = routes_profile("");
  ASSERT_TRUE(allowed.ok()) << allowed.error().message;
  ASSERT_TRUE(capped.ok()) << capped.error().message;
  ssh::LibsshConnector connector(sshd->options());
  ssh::ConnectionCache cache(connector);
  auto snapshot = take_snapshot({{sshd->device("host1"), &allowed.value()},
                                 {sshd->device("host2"), &capped.value()}},
                                cache, 2, "", nullptr, SessionsAfter::keep, nullptr,
                                RouteLists::apart);
  const auto& whole = snapshot.devices[0];
  ASSERT_TRUE(whole.missing.empty()) << whole.missing[0].reason;
  EXPECT_EQ(whole.route_tables.at("ipv4").size(), 60'001u);
  const auto& cut = snapshot.devices[1];
  ASSERT_EQ(cut.missing.size(), 1u);
  EXPECT_NE(cut.missing[0].reason.find("output truncated at 4194304 bytes"), std::string::npos)
      << cut.missing[0].reason;
  EXPECT_TRUE(cut.route_tables.empty());
  EXPECT_FALSE(snapshot.document.at("devices").at("host2").contains("routes"));
  // The written snapshot holds the whole table, as the compare engine reads it.
  auto compared = compare::parse_snapshot(written(snapshot), "snapshot.json");
  ASSERT_TRUE(compared.ok()) << compared.error().message;
  const auto& table = compared->devices.at("host1").routes.at("ipv4");
  EXPECT_EQ(table.size(), 60'001u);
  const auto& first = table.vrfs().at("default").front();
  EXPECT_EQ(table.prefix_of(first), "10.0.0.0/32");
  EXPECT_EQ(table.nexthops_of(first), (std::vector<std::string>{"169.254.0.1", "169.254.0.3"}));
}

TEST(SnapshotOverSsh, FrrSourcesAreNoEvidenceWhenFrrIsNotRunning) {
  // Given a real host where vtysh cannot reach any FRR daemon and lldpcli no lldpd, then lldp,
  // bgp, bfd, evpn and the running configuration are no-evidence with the tools' own reasons
  // and the Linux categories (packet filters, the multipath hash, IP stack errors) are still
  // collected.
  if (auto why = testing::SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = testing::SshdFixture::start();
  ASSERT_TRUE(sshd) << testing::SshdFixture::last_error();
  ssh::LibsshConnector connector(sshd->options());
  ssh::ConnectionCache cache(connector);
  auto snapshot = take_snapshot({{sshd->device("leaf1"), &profile("frr")}}, cache, 1, "");
  const auto& device = snapshot.devices.at(0);
  EXPECT_TRUE(device.reachable);
  EXPECT_FALSE(snapshot.complete());
  std::vector<std::string> missing;
  for (const auto& item : device.missing) missing.push_back(item.category);
  EXPECT_EQ(missing,
            (std::vector<std::string>{"identity", "lldp", "bgp", "bfd", "evpn", "config"}));
  const json& facts = snapshot.document.at("devices").at("leaf1");
  EXPECT_TRUE(facts.contains("interfaces"));
  EXPECT_FALSE(facts.contains("bgp"));
  // The switch's packet filter is this machine's real nftables ruleset, read over SSH.
  EXPECT_TRUE(facts.at("packet_filter").at("tables").is_object());
  EXPECT_TRUE(facts.at("packet_filter").at("chains").is_object());
}

// A linux profile whose routes source hangs past its 1 s deadline, between two that work.
Result<CollectorProfile> profile_with_a_hung_source(const std::string& ssh_commands) {
  return parse_collector_profile("platform: linux\n" + ssh_commands + R"(
sources:
  - category: interfaces
    timeout: 10s
    commands:
      - {run: ip -j -s link show, parse: ip-link}
  - category: routes
    timeout: 1s
    commands:
      - {run: sleep 30, parse: ip-route-v4}
  - category: identity
    timeout: 10s
    commands:
      - {run: hostname, parse: hostname}
)",
                                 "policies/collectors/linux.yaml");
}

// leaf1 on a real sshd, snapshotted with profile_with_a_hung_source().
class SnapshotOverSshHungSource : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = testing::SshdFixture::start();
    ASSERT_TRUE(sshd_) << testing::SshdFixture::last_error();
  }

  // Takes the snapshot with `ssh_commands` at the top of the profile ("" for the default).
  Snapshot take(const std::string& ssh_commands, SshCommands expected) {
    auto hung = profile_with_a_hung_source(ssh_commands);
    if (!hung.ok()) {
      ADD_FAILURE() << hung.error().message;
      return {};
    }
    EXPECT_EQ(hung.value().ssh_commands, expected);
    ssh::LibsshConnector connector(sshd_->options());
    ssh::ConnectionCache cache(connector);
    return take_snapshot({{sshd_->device("leaf1"), &hung.value()}}, cache, 1, "");
  }

  std::unique_ptr<testing::SshdFixture> sshd_;
};

TEST_F(SnapshotOverSshHungSource, OneExecPerDeviceKeepsEvidenceBeforeAHungCommandAndNoneAfter) {
  // Given the default one exec per device and a source that hangs past its deadline between
  // two that work, then the snapshot returns within seconds: the source before it is ok with
  // its exit status and timing, the hung one is no-evidence naming the command and the
  // timeout, and the one after it (never reached) is no-evidence too, never ok.
  const auto started = std::chrono::steady_clock::now();
  auto snapshot = take("", SshCommands::one_exec);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15));
  const json& sources = snapshot.document.at("devices").at("leaf1").at("sources");
  EXPECT_EQ(sources.at("interfaces").at("status"), "ok");
  const json& command = sources.at("interfaces").at("commands").at(0);
  EXPECT_EQ(command.at("exit_status"), 0);
  EXPECT_TRUE(command.contains("duration_ms")) << command.dump();
  EXPECT_EQ(sources.at("routes").at("status"), "no-evidence");
  EXPECT_NE(sources.at("routes").at("reason").get<std::string>().find(
                "sleep 30: timed out after 1 s"),
            std::string::npos)
      << sources.at("routes").dump();
  EXPECT_EQ(sources.at("identity").at("status"), "no-evidence");
  EXPECT_FALSE(snapshot.complete());
}

TEST_F(SnapshotOverSshHungSource, AProfileMayAskForAChannelPerCommand) {
  // Given the same profile with `ssh_commands: channel-each`, then the commands run at once on
  // their own channels: the hung one is a timeout and the one after it is still collected.
  auto snapshot = take("ssh_commands: channel-each", SshCommands::channel_each);
  const json& sources = snapshot.document.at("devices").at("leaf1").at("sources");
  EXPECT_EQ(sources.at("interfaces").at("status"), "ok");
  EXPECT_EQ(sources.at("routes").at("status"), "no-evidence");
  EXPECT_EQ(sources.at("identity").at("status"), "ok");
}

TEST(SnapshotProfile, RefusesAnUnknownSshCommandsMode) {
  // Given `ssh_commands: parallel`, then the profile is invalid and the message names the two
  // accepted values.
  auto bad = profile_with_a_hung_source("ssh_commands: parallel");
  ASSERT_FALSE(bad.ok());
  std::string said = bad.error().message;
  for (const auto& detail : bad.error().details) said += "\n" + detail;
  EXPECT_NE(said.find("one-exec or channel-each"), std::string::npos) << said;
}

TEST(SnapshotOverSsh, AProfileWithoutAnIdentitySourceCollectsNoIdentity) {
  // Given a real reachable host and a profile that collects interfaces only, then the device's
  // identity is empty and has no source: the profile's platform alone is not written there, so
  // no reader can take it for an identity the device returned. With an identity source, the
  // platform is there next to what the host said.
  if (auto why = testing::SshdFixture::unavailable()) GTEST_SKIP() << *why;
  auto sshd = testing::SshdFixture::start();
  ASSERT_TRUE(sshd) << testing::SshdFixture::last_error();
  auto interfaces_only = parse_collector_profile(R"(platform: linux
sources:
  - category: interfaces
    timeout: 10s
    commands:
      - run: ip -j -s link show
        parse: ip-link
)",
                                                 "policies/collectors/linux.yaml");
  ASSERT_TRUE(interfaces_only.ok()) << interfaces_only.error().message;
  ssh::LibsshConnector connector(sshd->options());
  ssh::ConnectionCache cache(connector);
  auto snapshot = take_snapshot({{sshd->device("host1"), &interfaces_only.value()},
                                 {sshd->device("host2"), &profile("linux")}},
                                cache, 2, "");
  ASSERT_TRUE(snapshot.complete());
  const json& bare = snapshot.document.at("devices").at("host1");
  EXPECT_TRUE(bare.contains("interfaces"));
  EXPECT_EQ(bare.at("identity"), json::object());
  EXPECT_FALSE(bare.at("sources").contains("identity"));
  const json& identified = snapshot.document.at("devices").at("host2");
  EXPECT_EQ(identified.at("identity").at("platform"), "linux");
  EXPECT_FALSE(identified.at("identity").at("kernel").get<std::string>().empty());
}

namespace {

// A profile whose identity and bgp sources have one vtysh command each, sent together.
const CollectorProfile& vtysh_together_profile() {
  static const CollectorProfile parsed = parse_collector_profile(R"(platform: frr
vtysh_commands: together
sources:
  - category: identity
    commands:
      - run: hostname
        parse: hostname
      - run: vtysh -c 'show version'
        parse: frr-version
  - category: bgp
    commands:
      - run: vtysh -c 'show bgp summary json'
        parse: bgp-summary
)",
                                                                 "together.yaml")
                                             .value();
  return parsed;
}

// CannedShell that also lists every command it was asked to run.
class RecordingShell final : public ssh::RemoteShell {
 public:
  RecordingShell(std::map<std::string, Expected<CommandResult, SshFailure>> answers,
                 std::vector<std::string>& asked)
      : inner_(std::move(answers)), asked_(asked) {}
  Expected<CommandResult, SshFailure> run(const std::string& command, Duration timeout) override {
    asked_.push_back(command);
    return inner_.run(command, timeout);
  }

 private:
  CannedShell inner_;
  std::vector<std::string>& asked_;
};

class RecordingConnector final : public ssh::ShellConnector {
 public:
  explicit RecordingConnector(std::map<std::string, Expected<CommandResult, SshFailure>> answers)
      : answers_(std::move(answers)) {}
  Expected<std::unique_ptr<ssh::RemoteShell>, SshFailure> connect(const ssh::SshDevice&,
                                                                  ssh::CredentialRole) override {
    return std::unique_ptr<ssh::RemoteShell>(new RecordingShell(answers_, asked));
  }
  std::vector<std::string> asked;

 private:
  std::map<std::string, Expected<CommandResult, SshFailure>> answers_;
};

Expected<CommandResult, SshFailure> answered(int exit_status, std::string out) {
  CommandResult result;
  result.exit_status = exit_status;
  result.stdout_text = std::move(out);
  return result;
}

const std::string kTogether = "vtysh -E -c 'show version' -c 'show bgp summary json'";

}  // namespace

TEST(SnapshotVtyshTogether, ADevicesVtyshCommandsAreOneInvocationEachStillItsOwnSource) {
  // Given a profile with `vtysh_commands: together` and a device whose vtysh echoes each
  // command, then vtysh is started once for both commands, each source is collected from its
  // part of the output, and each command's evidence names the invocation it was sent in.
  RecordingConnector connector(
      {{"hostname", answered(0, "leaf2\n")},
       {kTogether, answered(0, "leaf2# show version\n" + sample("vtysh-show-version.txt") +
                                   "leaf2# show bgp summary json\n" +
                                   sample("vtysh-bgp-summary.json"))}});
  ssh::ConnectionCache cache(connector);
  ssh::SshDevice leaf{"leaf2", "10.0.0.2", 22, {}, {}};
  auto snapshot = take_snapshot({{leaf, &vtysh_together_profile()}}, cache, 1, "");
  EXPECT_EQ(connector.asked, (std::vector<std::string>{"hostname", kTogether}));
  const json& device = snapshot.document.at("devices").at("leaf2");
  EXPECT_EQ(device.at("sources").at("identity").at("status"), "ok");
  EXPECT_EQ(device.at("sources").at("bgp").at("status"), "ok") << device.at("sources").dump();
  EXPECT_TRUE(device.at("identity").contains("frr_version")) << device.at("identity").dump();
  EXPECT_FALSE(device.at("bgp").empty());
  ASSERT_EQ(snapshot.devices.size(), 1u);
  std::size_t sent_together = 0;
  for (const auto& record : snapshot.devices[0].records)
    if (record.sent_as == kTogether) {
      ++sent_together;
      EXPECT_EQ(evidence_entry(record).at("sent_as"), kTogether);
    }
  EXPECT_EQ(sent_together, 2u);
}

TEST(SnapshotVtyshTogether, AnInvocationThatStopsAtAFailingCommandIsRunCommandByCommand) {
  // Given vtysh that stops at the first command it rejects (exit 1, the later echoes missing),
  // then each vtysh command is run on its own as written: the one that works is collected, the
  // one that fails is no-evidence naming its own error, and the failed invocation is kept in
  // the evidence with why.
  RecordingConnector connector(
      {{"hostname", answered(0, "leaf2\n")},
       {kTogether, answered(1, "leaf2# show version\n" + sample("vtysh-show-version.txt") +
                                   "leaf2# show bgp summary json\n% Unknown command\n")},
       {"vtysh -c 'show version'", answered(0, sample("vtysh-show-version.txt"))},
       {"vtysh -c 'show bgp summary json'", answered(1, "% Unknown command\n")}});
  ssh::ConnectionCache cache(connector);
  ssh::SshDevice leaf{"leaf2", "10.0.0.2", 22, {}, {}};
  auto snapshot = take_snapshot({{leaf, &vtysh_together_profile()}}, cache, 1, "");
  EXPECT_EQ(connector.asked,
            (std::vector<std::string>{"hostname", kTogether, "vtysh -c 'show version'",
                                      "vtysh -c 'show bgp summary json'"}));
  const json& sources = snapshot.document.at("devices").at("leaf2").at("sources");
  EXPECT_EQ(sources.at("identity").at("status"), "ok");
  EXPECT_EQ(sources.at("bgp").at("status"), "no-evidence");
  EXPECT_NE(sources.at("bgp").at("reason").get<std::string>().find("exit 1"), std::string::npos);
  ASSERT_EQ(snapshot.devices.size(), 1u);
  bool attempt_kept = false;
  for (const auto& record : snapshot.devices[0].records) {
    EXPECT_TRUE(record.sent_as.empty()) << record.command;
    if (record.command == kTogether) {
      attempt_kept = true;
      EXPECT_NE(record.failure.find("exit 1"), std::string::npos) << record.failure;
      EXPECT_NE(record.failure.find("each was then run on its own"), std::string::npos);
    }
  }
  EXPECT_TRUE(attempt_kept);
}

TEST(SnapshotVtyshTogether, AnInvocationThatTimesOutIsNotRunAgainCommandByCommand) {
  // Given a vtysh that hangs (the invocation times out), then its commands are not sent again
  // one by one (each would wait on the same daemon): each source is no-evidence naming the
  // timeout and the one invocation, and the command outside vtysh keeps its evidence.
  RecordingConnector connector(
      {{"hostname", answered(0, "leaf2\n")},
       {kTogether, SshFailure{SshFailure::Kind::timeout, "timed out after 10 s"}}});
  ssh::ConnectionCache cache(connector);
  ssh::SshDevice leaf{"leaf2", "10.0.0.2", 22, {}, {}};
  auto snapshot = take_snapshot({{leaf, &vtysh_together_profile()}}, cache, 1, "");
  EXPECT_EQ(connector.asked, (std::vector<std::string>{"hostname", kTogether}));
  const json& device = snapshot.document.at("devices").at("leaf2");
  const std::string reason = device.at("sources").at("bgp").at("reason");
  EXPECT_NE(reason.find("timed out after 10 s (in one vtysh invocation with 1 other commands)"),
            std::string::npos)
      << reason;
  EXPECT_EQ(device.at("identity").at("hostname"), "leaf2");
  EXPECT_FALSE(device.contains("bgp"));
}

TEST(SnapshotProfile, RefusesAnUnknownVtyshCommandsMode) {
  auto bad = parse_collector_profile("platform: frr\nvtysh_commands: batched\nsources: []\n",
                                     "bad.yaml");
  ASSERT_FALSE(bad.ok());
  std::string said = bad.error().message;
  for (const auto& detail : bad.error().details) said += "\n" + detail;
  EXPECT_NE(said.find("separate or together"), std::string::npos) << said;
  EXPECT_NE(said.find("bad.yaml:2:"), std::string::npos) << said;
}

}  // namespace
}  // namespace fabgate::snapshot
