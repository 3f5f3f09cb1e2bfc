// Runs the built fabgate binary on a committed copy of examples/intent: a broken compatibility
// matrix stops validate with exit 2 at its file:line:column, and the shipped one is clean.

#include <gtest/gtest.h>

#include "tests/support/git_repo.h"
#include "tests/support/shell.h"

namespace fabgate {
namespace {

using testing::GitRepo;
using testing::shell_quoted;

const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";
const std::string kExampleIntent = FABGATE_SOURCE_DIR "/examples/intent";

struct ExampleRepo {
  GitRepo repo;
  ExampleRepo() {
    repo.run("mkdir -p net && cp -r " + shell_quoted(kExampleIntent) + " net/intent");
    repo.commit_all("add intent");
  }
  testing::CommandOutput fabgate(const std::string& arguments) {
    return repo.run(shell_quoted(kFabgate) + " " + arguments);
  }
};

TEST(CompatCli, TheExampleMatrixValidates) {
  ExampleRepo example;
  auto out = example.fabgate("validate --repo net/intent");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output.find("compat.yaml"), std::string::npos) << out.output;
}

TEST(CompatCli, ABrokenMatrixIsInvalidInputAtItsLineAndColumn) {
  // Given a committed matrix with a range that admits nothing on line 3 and a misspelt
  // component on line 5, then validate exits 2 and names both places.
  ExampleRepo example;
  example.repo.write("net/intent/policies/compat.yaml",
                     "version: 1\nplatforms:\n  frr: {frr: \">=9 <8\"}\n"
                     "  rdma-host:\n    gpu_drivr: \">=535\"\n");
  example.repo.commit_all("break the matrix");
  auto out = example.fabgate("validate --repo net/intent");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("net/intent/policies/compat.yaml:3:14: error: platform 'frr' frr: "
                            "'>=9 <8' admits no version"),
            std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("net/intent/policies/compat.yaml:5:5: error: unknown key 'gpu_drivr' "
                            "in platform 'rdma-host' (did you mean 'gpu_driver'?)"),
            std::string::npos)
      << out.output;
}

}  // namespace
}  // namespace fabgate
