// A whole route table over gNMI (issue 30, item 8): the collector's routes source, through the
// pipeline's CollectorSnapshotter and EndpointGnmiFetcher, against a real fabgate-gnmid on
// loopback serving a synthetic main table (--debug-synthetic-ipv4-routes) far larger than
// gRPC's default 4 MiB receive limit. 100,000 routes here (about 12 MB of JSON_IETF in one
// GetResponse) keep the test quick; scripts/bench-gnmi-aft reads 500,000 and
// docs/benchmarks.md has its time and memory.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "adapters/gnmi/target/synthetic_routes.h"
#include "gates/pipeline/families/collector_snapshotter.h"
#include "gates/pipeline/reporting/evidence.h"
#include "tests/adapters/gnmi/gnmid_harness.h"

namespace fabgate::snapshot {
namespace {

using gnmi::testing::TargetProcess;
using gnmi::testing::TempDir;
using nlohmann::json;

constexpr std::size_t kRoutes = 100'000;
constexpr const char* kAfts = "/network-instances/network-instance[name=default]/afts";

const char* kProfile = R"(platform: gnmi-node
sources:
  - category: routes
    timeout: 60s
    gnmi: {paths: ["/network-instances/network-instance[name=default]/afts"]}
)";

class NoSsh final : public ssh::ShellConnector {
 public:
  Expected<std::unique_ptr<ssh::RemoteShell>, ssh::SshFailure> connect(
      const ssh::SshDevice& device, ssh::CredentialRole) override {
    ADD_FAILURE() << "SSH connect to " << device.name;
    return ssh::SshFailure{ssh::SshFailure::Kind::unreachable, "no SSH in this test"};
  }
};

class GnmiRouteTable : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(gnmi::testing::gnmid_path()))
      GTEST_SKIP() << "fabgate-gnmid is not built at " << gnmi::testing::gnmid_path();
    auto line = target_.start(
        {gnmi::testing::gnmid_path(), "--listen", "127.0.0.1:0", "--insecure-plaintext",
         "--no-auth", "--hostname", "aft-node", "--vtysh", "/nonexistent/vtysh",
         "--debug-synthetic-ipv4-routes", std::to_string(kRoutes)},
        dir_.file("gnmid.stderr"));
    ASSERT_TRUE(line) << target_.failure;
    port_ = std::stoi(*line);
    auto profile = parse_collector_profile(kProfile, "policies/collectors/gnmi-node.yaml");
    ASSERT_TRUE(profile) << profile.error().message;
    profiles_.emplace("gnmi-node", std::move(profile.value()));
    auto bundle = pipeline::EvidenceBundle::create(dir_.file("evidence"), "gnmi-routes", now_utc(),
                                                   "test0001", Redactor());
    ASSERT_TRUE(bundle) << bundle.error().message;
    bundle_ = std::move(bundle.value());
  }

  intent::Device device(const std::string& name) const {
    intent::Device device;
    device.name = name;
    device.platform = "gnmi-node";
    device.ssh.host = "192.0.2.1";  // never used: the profile has no SSH source
    intent::GnmiEndpoint endpoint;
    endpoint.host = "127.0.0.1";
    endpoint.port = port_;
    endpoint.tls = false;
    device.gnmi = endpoint;
    return device;
  }

  TempDir dir_;
  TargetProcess target_;
  int port_ = 0;
  ProfileSet profiles_;
  std::unique_ptr<pipeline::EvidenceBundle> bundle_;
  NoSsh no_ssh_;
};

TEST_F(GnmiRouteTable, AWholeTableLargerThanGrpcsDefaultLimitIsCollected) {
  // Given a device whose target serves 100,000 IPv4 routes in its AFT (one GetResponse of
  // about 12 MB, three times gRPC's default receive limit) and an inventory that sets no
  // limit, then the snapshot's ipv4 table (kept apart from the document, as a gated run holds
  // it) has every route with its prefix, protocol and both next hops, the source is ok, and
  // commands.jsonl has the Get with its reply.
  auto node = device("leaf1");
  ssh::ConnectionCache cache(no_ssh_);
  pipeline::CollectorSnapshotter snapshotter(profiles_, cache, bundle_.get(), 1);

  auto taken = snapshotter.take({&node}, "c0ffee");

  ASSERT_TRUE(taken.missing.empty()) << taken.missing.front();
  const json& facts = taken.document["devices"]["leaf1"];
  EXPECT_FALSE(facts.contains("routes")) << "the lists are not held as JSON";
  ASSERT_TRUE(taken.routes.contains("leaf1"));
  ASSERT_TRUE(taken.routes.at("leaf1")->contains("ipv4"));
  const compare::RouteTable& table = taken.routes.at("leaf1")->at("ipv4");
  ASSERT_EQ(table.size(), kRoutes);
  std::set<std::string> prefixes;
  const compare::Route* first = nullptr;
  for (const auto& [vrf, routes] : table.vrfs())
    for (const auto& route : routes) {
      prefixes.insert(table.prefix_of(route));
      if (table.prefix_of(route) == gnmi::target::synthetic_ipv4_prefix(0)) first = &route;
    }
  EXPECT_EQ(prefixes.size(), kRoutes) << "every prefix once";
  EXPECT_TRUE(prefixes.contains(gnmi::target::synthetic_ipv4_prefix(kRoutes - 1)));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(table.strings().text(first->protocol), "bgp");
  EXPECT_EQ(table.nexthops_of(*first), (std::vector<std::string>{"10.255.0.1", "10.255.0.2"}));
  EXPECT_EQ(facts["sources"]["routes"]["status"], "ok");
  EXPECT_EQ(facts["sources"]["routes"]["commands"][0]["path"], kAfts);

  std::ifstream lines(bundle_->dir() / "commands.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_GT(line.size(), std::size_t{4} << 20) << "the reply is in the evidence";
  json get = json::parse(line, nullptr, false);
  ASSERT_TRUE(get.is_object());
  EXPECT_EQ(get["status"], "ok");
  EXPECT_EQ(get["parse"], "ok");
}

TEST_F(GnmiRouteTable, AReplyOverTheDevicesLimitIsNoEvidenceNamingLimitAndOption) {
  // Given the same target and an inventory that limits this device's replies to 1 MiB, then
  // the routes source is no-evidence, routes absent from the facts, with a reason naming the
  // device, the Get and its path, the limit and the inventory option that raises it.
  auto node = device("leaf2");
  node.gnmi->max_receive_message_size = std::int64_t{1} << 20;
  ssh::ConnectionCache cache(no_ssh_);
  pipeline::CollectorSnapshotter snapshotter(profiles_, cache, bundle_.get(), 1);

  auto taken = snapshotter.take({&node}, "c0ffee");

  ASSERT_EQ(taken.missing.size(), 1u);
  const std::string& reason = taken.missing[0];
  EXPECT_NE(reason.find("leaf2: routes: gnmi: leaf2 (127.0.0.1:"), std::string::npos) << reason;
  EXPECT_NE(reason.find(std::string("Get ") + kAfts), std::string::npos) << reason;
  EXPECT_NE(reason.find("larger than the receive limit of 1 MiB"), std::string::npos) << reason;
  EXPECT_NE(reason.find("raise gnmi.max_receive_message_size for leaf2 in the inventory"),
            std::string::npos)
      << reason;
  const json& facts = taken.document["devices"]["leaf2"];
  EXPECT_FALSE(facts.contains("routes")) << facts.dump().substr(0, 400);
  EXPECT_FALSE(taken.routes.contains("leaf2")) << "no table either";
  EXPECT_EQ(facts["sources"]["routes"]["status"], "no-evidence");
}

}  // namespace
}  // namespace fabgate::snapshot
