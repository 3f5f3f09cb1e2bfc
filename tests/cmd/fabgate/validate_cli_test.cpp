// Runs the built fabgate binary as a user would and asserts exit codes and messages.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/git_repo.h"

namespace fabgate {
namespace {

using testing::GitRepo;
using testing::run_shell;
using testing::shell_quoted;

const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";
const std::string kExampleIntent = FABGATE_SOURCE_DIR "/examples/intent";

// A monorepo holding a copy of examples/intent in net/intent, committed.
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

TEST(FabgateCli, VersionNamesTheBuildCommit) {
  auto out = run_shell(shell_quoted(kFabgate) + " --version");
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_NE(out.output.find("fabgate 0."), std::string::npos);
  EXPECT_NE(out.output.find("(commit "), std::string::npos);
}

TEST(FabgateCli, UnknownFlagIsInvalidInput) {
  auto out = run_shell(shell_quoted(kFabgate) + " validate --no-such-flag");
  EXPECT_EQ(out.exit_code, 2);
}

TEST(FabgateCli, ValidateTheExampleIntentIsClean) {
  // Given the shipped example intent committed in a monorepo folder, then validate exits 0
  // and summarises commit, devices and changes.
  ExampleRepo example;
  auto out = example.fabgate("validate --repo net/intent");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("valid"), std::string::npos);
  EXPECT_NE(out.output.find("devices   8"), std::string::npos);
  EXPECT_NE(out.output.find("drain-spine1"), std::string::npos);
  EXPECT_NE(out.output.find("Test Author"), std::string::npos);
  EXPECT_EQ(out.output.find("warning"), std::string::npos) << out.output;
}

TEST(FabgateCli, ValidateOneChangeByIdAndRejectUnknownOnes) {
  ExampleRepo example;
  auto ok = example.fabgate("validate drain-spine1 --repo net/intent");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("targets   spine1"), std::string::npos);
  auto unknown = example.fabgate("validate drain-spine2 --repo net/intent");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("did you mean 'drain-spine1'?"), std::string::npos)
      << unknown.output;
}

TEST(FabgateCli, BrokenFileGetsAnErrorPointingAtTheLine) {
  // Given a committed change with a typo on line 10, then validate exits 2 and names 10:3.
  ExampleRepo example;
  example.repo.run(
      "sed -i 's/step_timeout: 30s/step_timout: 30s/' net/intent/changes/drain-spine1.yaml");
  example.repo.commit_all("typo");
  auto out = example.fabgate("validate --repo net/intent");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("net/intent/changes/drain-spine1.yaml:10:3: error: unknown key "
                            "'step_timout' in bounds (did you mean 'step_timeout'?)"),
            std::string::npos)
      << out.output;
}

TEST(FabgateCli, ACollectiveTailBoundThatCannotPassIsRefusedAtItsColumn) {
  // Given a committed collective probe with max_tail_ratio 1 on line 37, then validate exits 2
  // naming the file, line and column of the bound.
  ExampleRepo example;
  example.repo.run(
      "sed -i '36a\\    - {name: allreduce, kind: collective, hosts: [gpu1, gpu2], "
      "max_tail_ratio: 1}' net/intent/changes/drain-spine1.yaml");
  example.repo.commit_all("collective");
  auto out = example.fabgate("validate --repo net/intent");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("net/intent/changes/drain-spine1.yaml:37:80: error: probe "
                            "'allreduce': max_tail_ratio must be greater than 1"),
            std::string::npos)
      << out.output;
}

TEST(FabgateCli, UncommittedEditIsAWarningNamingTheFile) {
  // Given a valid commit and a broken edit not yet committed, then validate checks the commit
  // (exit 0) and warns that the work tree differs, naming the file.
  ExampleRepo example;
  example.repo.write("net/intent/inventory.yaml", "garbage: [\n");
  auto out = example.fabgate("validate --repo net/intent");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("warning: work tree differs from commit"), std::string::npos);
  EXPECT_NE(out.output.find("net/intent/inventory.yaml (modified)"), std::string::npos);
}

TEST(FabgateCli, BadRefIsInvalidInputWithTheRefNamed) {
  ExampleRepo example;
  auto out = example.fabgate("validate --repo net/intent --ref release-42");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("fabgate: error: git: resolve ref 'release-42'"), std::string::npos)
      << out.output;
}

TEST(FabgateCli, NotAGitRepositoryIsInvalidInput) {
  testing::TempDir plain;
  auto out =
      run_shell("cd " + shell_quoted(plain.path()) + " && " + shell_quoted(kFabgate) + " validate");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("not inside a git repository"), std::string::npos) << out.output;
}

TEST(FabgateCli, JsonOutputIsOneDocumentWithEveryProblem) {
  ExampleRepo example;
  example.repo.run(
      "sed -i 's/deadline: 5m/deadline: 5min/; s/platform: rdma-host/platform: rdma-hst/' "
      "net/intent/changes/drain-spine1.yaml net/intent/inventory.yaml");
  example.repo.commit_all("two problems");
  auto out = example.fabgate("validate --repo net/intent --json 2>/dev/null");
  EXPECT_EQ(out.exit_code, 2);
  auto document = nlohmann::json::parse(out.output, nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << out.output;
  EXPECT_FALSE(document["valid"].get<bool>());
  EXPECT_GE(document["problems"].size(), 5u);  // one per GPU host platform, plus the deadline
  EXPECT_EQ(document["commit"]["summary"], "two problems");
}

}  // namespace
}  // namespace fabgate
