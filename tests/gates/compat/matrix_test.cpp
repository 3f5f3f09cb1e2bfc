// Loading policies/compat.yaml: the schema, and errors that point at file:line:column.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "gates/compat/matrix.h"

namespace fabgate::compat {
namespace {

const std::string kFile = "policies/compat.yaml";

std::string problems_of(std::string_view text) {
  auto matrix = load_matrix(text, kFile);
  if (matrix.ok()) return "(valid)";
  std::string all = matrix.error().message + "\n";
  for (const auto& line : matrix.error().details) all += line + "\n";
  return all;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MatrixLoad, PlatformsComponentsAndPerDriverNicsAreRead) {
  // Given a matrix with scalar, list and per-driver constraints, then each becomes one
  // requirement that remembers where it was written.
  auto matrix = load_matrix(R"(version: 1
platforms:
  frr:
    frr: ">=8.4 <9"
    kernel: ">=5.10"
  rdma-host:
    kernel: ">=5.15"
    nic_firmware: {mlx5_core: ">=16.35", bnxt_en: ["224.0.*", "225.0.*"]}
    nic_driver:
      mlx5_core: ">=5.8"
    gpu_driver: [535.129.03, "550.*"]
    os: ">=12"
  linux:
)",
                            kFile);
  ASSERT_TRUE(matrix.ok()) << matrix.error().message;
  ASSERT_EQ(matrix->platforms.size(), 3u);
  const auto* frr = matrix->find("frr");
  ASSERT_NE(frr, nullptr);
  ASSERT_EQ(frr->requirements.size(), 2u);
  EXPECT_EQ(frr->requirements[0].component, Component::frr);
  EXPECT_EQ(frr->requirements[0].allowed.describe(), ">=8.4 <9");
  EXPECT_EQ(frr->requirements[0].where.to_string(), "policies/compat.yaml:4:10");
  const auto* host = matrix->find("rdma-host");
  ASSERT_NE(host, nullptr);
  ASSERT_EQ(host->requirements.size(), 6u);
  EXPECT_EQ(host->requirements[1].component, Component::nic_firmware);
  EXPECT_EQ(host->requirements[1].driver, "mlx5_core");
  EXPECT_EQ(host->requirements[2].driver, "bnxt_en");
  EXPECT_EQ(host->requirements[2].allowed.describe(), "[224.0.*, 225.0.*]");
  EXPECT_EQ(host->requirements[3].component, Component::nic_driver);
  EXPECT_EQ(host->requirements[4].allowed.describe(), "[535.129.03, 550.*]");
  const auto* linux_hosts = matrix->find("linux");
  ASSERT_NE(linux_hosts, nullptr);
  EXPECT_TRUE(linux_hosts->requirements.empty());
  EXPECT_EQ(matrix->find("sonic"), nullptr);
}

TEST(MatrixLoad, EveryProblemIsReportedWithLineAndColumn) {
  // Given a matrix with several mistakes, then all of them are listed, each at its place.
  auto problems = problems_of(R"(version: 1
platforms:
  frr:
    frr: ">=8.4 <"
    kernal: ">=5.10"
    nic_firmware: ">=16.35"
  rdma-host:
    gpu_driver: []
    nic_driver: {mlx5_core: {min: 5.8}}
    os: ">=9 <8"
)");
  EXPECT_NE(problems.find("compatibility matrix policies/compat.yaml is invalid"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("policies/compat.yaml:4:10: error: platform 'frr' frr: '<': an "
                          "operator needs a version after it"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("policies/compat.yaml:5:5: error: unknown key 'kernal' in platform "
                          "'frr' (did you mean 'kernel'?)"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("policies/compat.yaml:6:19: error: platform 'frr' nic_firmware must "
                          "map NIC driver names to constraints"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("policies/compat.yaml:8:17: error: platform 'rdma-host' gpu_driver: an "
                          "empty list allows nothing"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("policies/compat.yaml:9:29: error: platform 'rdma-host' nic_driver "
                          "mlx5_core must be a version constraint"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("policies/compat.yaml:10:9: error: platform 'rdma-host' os: '>=9 <8' "
                          "admits no version"),
            std::string::npos)
      << problems;
}

TEST(MatrixLoad, DuplicateKeysAreErrorsNotSilentlyMerged) {
  // Given the same platform twice (YAML would keep one), then both lines are named.
  auto problems = problems_of(R"(version: 1
platforms:
  frr:
    frr: ">=8.4"
  frr:
    frr: ">=7"
)");
  EXPECT_NE(problems.find("policies/compat.yaml:5:3: error: duplicate key 'frr' (first defined at "
                          "line 3)"),
            std::string::npos)
      << problems;
}

TEST(MatrixLoad, VersionAndPlatformsAreRequired) {
  EXPECT_NE(problems_of("platforms: {}\n").find("missing required key 'version'"),
            std::string::npos);
  EXPECT_NE(problems_of("version: 2\nplatforms: {}\n")
                .find("policies/compat.yaml:1:10: error: "
                      "compatibility matrix version 2 is "
                      "not supported"),
            std::string::npos);
  EXPECT_NE(problems_of("version: 1\n").find("missing required key 'platforms'"),
            std::string::npos);
  EXPECT_NE(problems_of("").find("compatibility matrix is empty"), std::string::npos);
  EXPECT_NE(problems_of("version: 1\nplatform: {}\n").find("did you mean 'platforms'?"),
            std::string::npos);
  EXPECT_EQ(problems_of("version: 1\nplatforms: {}\n"), "(valid)");
}

TEST(MatrixLoad, YamlSyntaxErrorsNameTheirPlace) {
  auto problems = problems_of("version: 1\nplatforms:\n  frr: {frr: \">=8.4\"\n");
  EXPECT_NE(problems.find("policies/compat.yaml:"), std::string::npos) << problems;
  EXPECT_NE(problems.find("YAML syntax"), std::string::npos) << problems;
}

TEST(MatrixLoad, TheShippedMatricesAreValid) {
  // Given the matrices fabgate ships (the documented default and the examples), then each
  // loads without a problem.
  for (const char* path : {"/policies/compat.yaml", "/examples/intent/policies/compat.yaml",
                           "/examples/clos-lab/intent/policies/compat.yaml"}) {
    std::string text = read_file(std::string(FABGATE_SOURCE_DIR) + path);
    ASSERT_FALSE(text.empty()) << path;
    auto matrix = load_matrix(text, path);
    EXPECT_TRUE(matrix.ok()) << path << ": " << (matrix.ok() ? "" : problems_of(text));
  }
}

}  // namespace
}  // namespace fabgate::compat
