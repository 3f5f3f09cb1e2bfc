// The collector's gNMI sources against a real fabgate-gnmid on loopback in plaintext, through
// the pipeline's CollectorSnapshotter and EndpointGnmiFetcher (the inventory endpoint, a real
// gRPC Get) and a real evidence bundle. No root needed: the target serves this host's own
// interfaces (lo is always there).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gates/pipeline/families/collector_snapshotter.h"
#include "gates/pipeline/reporting/evidence.h"
#include "tests/adapters/gnmi/gnmid_harness.h"

namespace fabgate::snapshot {
namespace {

using gnmi::testing::TargetProcess;
using gnmi::testing::TempDir;
using nlohmann::json;

// FRR stand-in, so identity and BGP have an FRR version and a peer to report.
const char* kFakeVtysh = R"(#!/bin/sh
case "$2" in
  "show version") echo "FRRouting 9.1.0 (fake) on Linux(6.1.0)." ;;
  "show bgp neighbors json") cat <<'JSON'
{"10.0.1.0": {"remoteAs": 65000, "localAs": 65101, "bgpState": "Established",
              "bgpTimerUpMsec": 5000,
              "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": 4}}}}
JSON
  ;;
  *) exit 1 ;;
esac
)";

const char* kProfile = R"(platform: gnmi-node
sources:
  - category: identity
    timeout: 5s
    gnmi: {paths: [/system/state]}
  - category: interfaces
    timeout: 5s
    gnmi:
      paths: ["/interfaces/interface[name=*]/state"]
      encoding: json_ietf
  - category: bgp
    timeout: 5s
    gnmi:
      paths:
        - "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=*]"
)";

// Any SSH attempt is a failure of the test: these profiles have gNMI sources only.
class NoSsh final : public ssh::ShellConnector {
 public:
  Expected<std::unique_ptr<ssh::RemoteShell>, ssh::SshFailure> connect(
      const ssh::SshDevice& device, ssh::CredentialRole) override {
    ADD_FAILURE() << "SSH connect to " << device.name;
    return ssh::SshFailure{ssh::SshFailure::Kind::unreachable, "no SSH in this test"};
  }
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<json> command_lines(const std::filesystem::path& bundle) {
  std::vector<json> out;
  std::ifstream in(bundle / "commands.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

class GnmiCollection : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(gnmi::testing::gnmid_path()))
      GTEST_SKIP() << "fabgate-gnmid is not built at " << gnmi::testing::gnmid_path();
    dir_.write("vtysh", kFakeVtysh, true);
    auto line = target_.start(
        {gnmi::testing::gnmid_path(), "--listen", "127.0.0.1:0", "--insecure-plaintext",
         "--no-auth", "--hostname", "gnmi-collect-node", "--vtysh", dir_.file("vtysh")},
        dir_.file("gnmid.stderr"));
    ASSERT_TRUE(line) << target_.failure;
    port_ = std::stoi(*line);
    auto profile = parse_collector_profile(kProfile, "policies/collectors/gnmi-node.yaml");
    ASSERT_TRUE(profile) << profile.error().message;
    profiles_.emplace("gnmi-node", std::move(profile.value()));
    auto bundle = pipeline::EvidenceBundle::create(dir_.file("evidence"), "gnmi-collect", now_utc(),
                                                   "test0001", Redactor());
    ASSERT_TRUE(bundle) << bundle.error().message;
    bundle_ = std::move(bundle.value());
  }

  intent::Device device(const std::string& name, std::optional<int> gnmi_port) const {
    intent::Device device;
    device.name = name;
    device.platform = "gnmi-node";
    device.ssh.host = "192.0.2.1";  // never used: the profile has no SSH source
    if (gnmi_port) {
      intent::GnmiEndpoint endpoint;
      endpoint.host = "127.0.0.1";
      endpoint.port = *gnmi_port;
      endpoint.tls = false;
      device.gnmi = endpoint;
    }
    return device;
  }

  TempDir dir_;
  TargetProcess target_;
  int port_ = 0;
  ProfileSet profiles_;
  std::unique_ptr<pipeline::EvidenceBundle> bundle_;
  NoSsh no_ssh_;
};

TEST_F(GnmiCollection, CollectsIdentityInterfacesAndBgpFromARealTarget) {
  // Given a device whose inventory gnmi endpoint is a running fabgate-gnmid, then the snapshot
  // has the target's hostname, this host's lo with its real MTU, the BGP peer FRR reports, each
  // source ok with its path, and commands.jsonl has each Get with its reply.
  auto node = device("node1", port_);
  ssh::ConnectionCache cache(no_ssh_);
  pipeline::CollectorSnapshotter snapshotter(profiles_, cache, bundle_.get(), 2);

  auto taken = snapshotter.take({&node}, "c0ffee");

  EXPECT_TRUE(taken.missing.empty()) << taken.missing.front();
  const json& facts = taken.document["devices"]["node1"];
  EXPECT_EQ(facts["identity"]["platform"], "gnmi-node");
  EXPECT_EQ(facts["identity"]["hostname"], "gnmi-collect-node");
  EXPECT_EQ(facts["identity"]["frr_version"], "9.1.0");
  const int lo_mtu = std::stoi(read_text("/sys/class/net/lo/mtu"));
  ASSERT_TRUE(facts["interfaces"].contains("lo")) << facts["interfaces"].dump();
  EXPECT_EQ(facts["interfaces"]["lo"]["mtu"], lo_mtu);
  EXPECT_EQ(facts["interfaces"]["lo"]["admin"], "up");
  EXPECT_TRUE(facts["interfaces"]["lo"]["counters"]["rx_packets"].is_number_integer());
  EXPECT_EQ(facts["bgp"]["peers"]["10.0.1.0"]["state"], "Established");
  EXPECT_EQ(facts["bgp"]["peers"]["10.0.1.0"]["remote_as"], 65000);
  const json& source = facts["sources"]["interfaces"];
  EXPECT_EQ(source["status"], "ok");
  EXPECT_EQ(source["commands"][0]["path"], "/interfaces/interface[name=*]/state");
  EXPECT_EQ(source["commands"][0]["status"], "ok");
  EXPECT_EQ(source["commands"][0]["parse"], "ok");

  auto lines = command_lines(bundle_->dir());
  ASSERT_EQ(lines.size(), 3u);
  const json& get = lines[1];
  EXPECT_EQ(get["device"], "node1");
  EXPECT_EQ(get["purpose"], "snapshot");
  EXPECT_EQ(get["transport"], "gnmi");
  EXPECT_EQ(get["rpc"], "get");
  EXPECT_EQ(get["status"], "ok");
  EXPECT_EQ(get["paths"], json::array({"/interfaces/interface[name=*]/state"}));
  EXPECT_NE(get["reply"].dump().find("interface[name=lo]"), std::string::npos) << get.dump();
}

TEST_F(GnmiCollection, ConfigSourceIsAGetOfTypeConfigWrittenAsIndentedJson) {
  // Given a config source like the shipped openconfig profile's (a Get of "/", of type CONFIG
  // by default for this category), then the snapshot's config is the target's read/write data
  // as indented JSON text (lo's configured MTU, no state leaf such as counters or
  // oper-status), and commands.jsonl says the Get was of type CONFIG.
  auto profile = parse_collector_profile(R"(platform: gnmi-node
sources:
  - category: config
    timeout: 5s
    gnmi: {paths: ["/"]}
)",
                                         "policies/collectors/gnmi-node.yaml");
  ASSERT_TRUE(profile) << profile.error().message;
  ProfileSet config_only;
  config_only.emplace("gnmi-node", std::move(profile.value()));
  auto node = device("node1", port_);
  ssh::ConnectionCache cache(no_ssh_);
  pipeline::CollectorSnapshotter snapshotter(config_only, cache, bundle_.get(), 2);

  auto taken = snapshotter.take({&node}, "c0ffee");

  EXPECT_TRUE(taken.missing.empty()) << taken.missing.front();
  const json& config = taken.document["devices"]["node1"]["config"];
  EXPECT_EQ(config["format"], "openconfig-json");
  const std::string text = config.value("text", "");
  json parsed = json::parse(text, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << text;
  EXPECT_NE(text.find("\n  \""), std::string::npos) << "not indented: " << text.substr(0, 200);
  EXPECT_NE(text.find("\"mtu\""), std::string::npos);
  EXPECT_EQ(text.find("counters"), std::string::npos);
  EXPECT_EQ(text.find("oper-status"), std::string::npos);
  auto lines = command_lines(bundle_->dir());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["type"], "CONFIG");
}

TEST_F(GnmiCollection, FailuresAreNoEvidenceNamingDeviceGetAndPath) {
  // Given a device without a gnmi endpoint, one whose endpoint has nothing listening, and a
  // profile path the target does not serve, then each source is no-evidence, absent from the
  // facts, with a reason naming the device, the Get and its path; nothing counts as collected.
  auto no_endpoint = device("node2", std::nullopt);
  auto closed = device("node3", 1);  // port 1 on loopback: nothing listens there
  auto served = device("node4", port_);
  auto bad_path = parse_collector_profile(
      "platform: gnmi-node\nsources:\n  - category: identity\n"
      "    gnmi: {paths: [/system/no-such-container]}\n",
      "policies/collectors/gnmi-node.yaml");
  ASSERT_TRUE(bad_path) << bad_path.error().message;
  ssh::ConnectionCache cache(no_ssh_);

  pipeline::CollectorSnapshotter all_paths(profiles_, cache, bundle_.get(), 2);
  auto taken = all_paths.take({&no_endpoint, &closed}, "c0ffee");
  pipeline::CollectorSnapshotter unserved({{"gnmi-node", bad_path.value()}}, cache, nullptr, 1);
  auto rejected = unserved.take({&served}, "c0ffee");

  ASSERT_EQ(taken.missing.size(), 6u);
  EXPECT_EQ(taken.missing[0],
            "node2: identity: gnmi: node2: Get /system/state: node2 has no gnmi endpoint in the "
            "inventory");
  EXPECT_NE(taken.missing[4].find("node3: interfaces: gnmi: node3 (127.0.0.1:1): Get "
                                  "/interfaces/interface[name=*]/state: "),
            std::string::npos)
      << taken.missing[4];
  for (const char* name : {"node2", "node3"}) {
    const json& facts = taken.document["devices"][name];
    EXPECT_FALSE(facts.contains("interfaces")) << facts.dump();
    EXPECT_FALSE(facts.contains("bgp")) << facts.dump();
    EXPECT_FALSE(facts["identity"].contains("hostname")) << facts.dump();
    EXPECT_EQ(facts["sources"]["interfaces"]["status"], "no-evidence");
  }
  ASSERT_EQ(rejected.missing.size(), 1u);
  EXPECT_NE(rejected.missing[0].find("node4: identity: gnmi: node4 (127.0.0.1:"), std::string::npos)
      << rejected.missing[0];
  EXPECT_NE(rejected.missing[0].find("Get /system/no-such-container"), std::string::npos)
      << rejected.missing[0];
  EXPECT_EQ(rejected.document["devices"]["node4"]["sources"]["identity"]["commands"][0]["status"],
            "rejected");
}

}  // namespace
}  // namespace fabgate::snapshot
