// A device's collected identity against the matrix: pass, fail and no-evidence, each naming
// device, component, what was found and what is allowed.

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <fstream>
#include <sstream>

#include "gates/compat/check.h"

namespace fabgate::compat {
namespace {

using nlohmann::json;

Matrix matrix() {
  auto loaded = load_matrix(R"(version: 1
platforms:
  frr:
    frr: ">=8.4 <9"
    kernel: ">=5.10"
  rdma-host:
    kernel: ">=5.15"
    nic_firmware: {mlx5_core: ">=16.35"}
    nic_driver: {mlx5_core: ">=5.8"}
    gpu_driver: ">=535"
)",
                            "policies/compat.yaml");
  EXPECT_TRUE(loaded.ok());
  return loaded.ok() ? loaded.value() : Matrix{};
}

json leaf_identity(const std::string& frr_version) {
  return {{"hostname", "leaf1"},
          {"os", "Debian GNU/Linux 12 (bookworm)"},
          {"kernel", "6.1.0-28-amd64"},
          {"frr_version", frr_version}};
}

json gpu_identity() {
  return {{"hostname", "gpu1"},
          {"kernel", "5.15.0-91-generic"},
          {"gpu_driver", "535.129.03"},
          {"nics",
           {{"eth0", {{"driver", "virtio_net"}, {"driver_version", "1.0.0"}, {"firmware", ""}}},
            {"ens1f0",
             {{"driver", "mlx5_core"},
              {"driver_version", "5.8-3.0.7"},
              {"firmware", "16.35.2000 (MT_8)"}}},
            {"ens1f1",
             {{"driver", "mlx5_core"},
              {"driver_version", "5.8-3.0.7"},
              {"firmware", "16.31.1014 (MT_8)"}}}}}};
}

std::vector<std::string> lines_of(const std::vector<Finding>& findings, FindingVerdict verdict) {
  std::vector<std::string> lines;
  for (const auto& finding : findings)
    if (finding.verdict == verdict) lines.push_back(finding.to_line());
  return lines;
}

TEST(CompatCheck, InRangeIdentityPassesEveryRequirement) {
  auto findings = check_identity(matrix(), "leaf1", "frr", leaf_identity("8.4.4"));
  ASSERT_EQ(findings.size(), 2u);
  for (const auto& finding : findings)
    EXPECT_EQ(finding.verdict, FindingVerdict::pass) << finding.to_line();
  EXPECT_EQ(findings[0].to_line(), "leaf1: frr 8.4.4 in >=8.4 <9 (policies/compat.yaml:4:10)");
}

TEST(CompatCheck, OutOfRangeVersionFailsNamingDeviceComponentFoundAndAllowed) {
  // Given leaf1 running FRR 7.5.1 where the matrix allows >=8.4 <9, then the finding fails with
  // the line an operator reads in the gate's details.
  auto findings = check_identity(matrix(), "leaf1", "frr", leaf_identity("7.5.1"));
  auto failed = lines_of(findings, FindingVerdict::fail);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0], "leaf1: frr 7.5.1 not in >=8.4 <9 (policies/compat.yaml:4:10)");
  EXPECT_EQ(findings[0].device, "leaf1");
  EXPECT_EQ(findings[0].component, "frr");
  EXPECT_EQ(findings[0].found, "7.5.1");
  EXPECT_EQ(findings[0].allowed, ">=8.4 <9");
}

TEST(CompatCheck, UpperBoundIsExclusiveAndPreReleasesAreRefusedWithAReason) {
  EXPECT_EQ(lines_of(check_identity(matrix(), "leaf1", "frr", leaf_identity("9.0")),
                     FindingVerdict::fail),
            std::vector<std::string>{"leaf1: frr 9.0 not in >=8.4 <9 (policies/compat.yaml:4:10)"});
  EXPECT_EQ(lines_of(check_identity(matrix(), "leaf1", "frr", leaf_identity("8.5-rc1")),
                     FindingVerdict::fail),
            std::vector<std::string>{"leaf1: frr 8.5-rc1 not in >=8.4 <9: a pre-release is "
                                     "admitted only by an exact entry naming it "
                                     "(policies/compat.yaml:4:10)"});
}

TEST(CompatCheck, ARequiredComponentMissingFromIdentityIsNoEvidence) {
  // Given identity without frr_version (FRR not reporting), then frr is no-evidence, not pass.
  json identity = leaf_identity("8.4.4");
  identity.erase("frr_version");
  auto findings = check_identity(matrix(), "leaf1", "frr", identity);
  auto missing = lines_of(findings, FindingVerdict::no_evidence);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0],
            "leaf1: frr: no evidence: identity has no frr_version (required by "
            "policies/compat.yaml:4:10)");
  EXPECT_TRUE(lines_of(findings, FindingVerdict::fail).empty());
}

TEST(CompatCheck, AnEmptyOrUnparsableValueIsNoEvidence) {
  auto empty = check_identity(matrix(), "leaf1", "frr", leaf_identity(""));
  EXPECT_EQ(empty[0].verdict, FindingVerdict::no_evidence);
  auto garbage = check_identity(matrix(), "leaf1", "frr", leaf_identity("unknown"));
  EXPECT_EQ(garbage[0].verdict, FindingVerdict::no_evidence);
  EXPECT_EQ(garbage[0].reason, "'unknown' is not a version string");
  auto no_identity = check_identity(matrix(), "leaf1", "frr", json());
  EXPECT_EQ(lines_of(no_identity, FindingVerdict::no_evidence).size(), 2u);
}

TEST(CompatCheck, NicRequirementsCheckEachNicOfTheNamedDriverOnly) {
  // Given two mlx5 ports, one on old firmware, and a virtio NIC the matrix does not name, then
  // only the old port fails and the virtio NIC is not judged.
  auto findings = check_identity(matrix(), "gpu1", "rdma-host", gpu_identity());
  EXPECT_EQ(lines_of(findings, FindingVerdict::fail),
            std::vector<std::string>{"gpu1: nic_firmware of ens1f1 (mlx5_core) 16.31.1014 (MT_8) "
                                     "not in >=16.35 (policies/compat.yaml:8:31)"});
  EXPECT_TRUE(lines_of(findings, FindingVerdict::no_evidence).empty());
  // kernel, gpu_driver, two firmware and two driver findings
  EXPECT_EQ(findings.size(), 6u);
  for (const auto& finding : findings) EXPECT_EQ(finding.subject.find("eth0"), std::string::npos);
}

TEST(CompatCheck, NoNicOfARequiredDriverIsNoEvidence) {
  json identity = gpu_identity();
  identity["nics"].erase("ens1f0");
  identity["nics"].erase("ens1f1");
  auto missing = lines_of(check_identity(matrix(), "gpu1", "rdma-host", identity),
                          FindingVerdict::no_evidence);
  ASSERT_EQ(missing.size(), 2u);  // firmware and driver
  EXPECT_NE(missing[0].find("no NIC uses a driver the matrix names (mlx5_core); NICs seen: eth0 "
                            "(virtio_net)"),
            std::string::npos)
      << missing[0];
  identity.erase("nics");
  auto no_nics = lines_of(check_identity(matrix(), "gpu1", "rdma-host", identity),
                          FindingVerdict::no_evidence);
  ASSERT_EQ(no_nics.size(), 2u);
  EXPECT_NE(no_nics[0].find("identity has no nics"), std::string::npos) << no_nics[0];
}

TEST(CompatCheck, AMatchingNicWithoutFirmwareIsNoEvidence) {
  json identity = gpu_identity();
  identity["nics"]["ens1f1"].erase("firmware");
  auto missing = lines_of(check_identity(matrix(), "gpu1", "rdma-host", identity),
                          FindingVerdict::no_evidence);
  EXPECT_EQ(missing, std::vector<std::string>{"gpu1: nic_firmware of ens1f1 (mlx5_core): no "
                                              "evidence: no firmware version collected (required "
                                              "by policies/compat.yaml:8:31)"});
}

TEST(CompatCheck, APlatformTheMatrixDoesNotListHasNothingRequired) {
  EXPECT_TRUE(check_identity(matrix(), "host1", "linux", json{{"kernel", "2.6.32"}}).empty());
}

TEST(CompatCheck, FindingsBecomeJsonForTheEvidence) {
  auto findings = check_identity(matrix(), "leaf1", "frr", leaf_identity("7.5.1"));
  auto document = to_json(findings[0]);
  EXPECT_EQ(document["verdict"], "fail");
  EXPECT_EQ(document["found"], "7.5.1");
  EXPECT_EQ(document["allowed"], ">=8.4 <9");
  EXPECT_EQ(document["matrix"], "policies/compat.yaml:4:10");
}

TEST(CompatCheck, TheLabMatrixAdmitsTheLabNodesOnThisMachine) {
  // Given the clos-lab matrix and the identity its nodes report here (FRR 8.4.4 from Debian 12,
  // this machine's kernel, since the nodes are namespaces), then every finding passes.
  std::ifstream in(std::string(FABGATE_SOURCE_DIR) +
                   "/examples/clos-lab/intent/policies/compat.yaml");
  std::stringstream text;
  text << in.rdbuf();
  auto lab = load_matrix(text.str(), "policies/compat.yaml");
  ASSERT_TRUE(lab.ok());
  struct utsname host {};
  ASSERT_EQ(uname(&host), 0);
  json switch_identity = {
      {"hostname", "leaf1"}, {"kernel", host.release}, {"frr_version", "8.4.4"}};
  json host_identity = {{"hostname", "host1"}, {"kernel", host.release}};
  auto findings = check_identity(*lab, "leaf1", "frr", switch_identity);
  auto hosts = check_identity(*lab, "host1", "linux", host_identity);
  findings.insert(findings.end(), hosts.begin(), hosts.end());
  EXPECT_EQ(findings.size(), 3u);
  for (const auto& finding : findings)
    EXPECT_EQ(finding.verdict, FindingVerdict::pass) << finding.to_line();
}

TEST(CompatCheck, IdentityCountsOnlyWhenItsSourceCollectedIt) {
  // Given snapshot device entries, then identity is collected only when sources.identity says
  // ok and identity has fields: the profile's platform alone (what a profile without an
  // identity source used to leave), an identity whose source had no evidence, or an ok source
  // with nothing in it are not an identity.
  json ok_source = {{"identity", {{"status", "ok"}, {"commands", json::array()}}}};
  EXPECT_TRUE(identity_collected(
      {{"identity", {{"hostname", "leaf1"}, {"platform", "frr"}}}, {"sources", ok_source}}));
  EXPECT_FALSE(
      identity_collected({{"identity", {{"platform", "linux"}}}, {"sources", json::object()}}));
  EXPECT_FALSE(identity_collected(
      {{"identity", {{"hostname", "leaf1"}}},
       {"sources", {{"identity", {{"status", "no-evidence"}, {"reason", "timed out"}}}}}}));
  EXPECT_FALSE(identity_collected({{"identity", json::object()}, {"sources", ok_source}}));
  EXPECT_FALSE(identity_collected({{"sources", ok_source}}));
  EXPECT_FALSE(identity_collected(json::object()));
}

}  // namespace
}  // namespace fabgate::compat
