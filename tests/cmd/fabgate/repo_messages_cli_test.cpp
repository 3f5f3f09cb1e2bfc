// Runs the built fabgate binary against real git repositories to check what --repo accepts and
// how a repository fabgate may not read is reported.

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/git_repo.h"

namespace fabgate {
namespace {

using testing::GitRepo;
using testing::shell_quoted;

const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";
const std::string kExampleIntent = FABGATE_SOURCE_DIR "/examples/intent";

struct ExampleRepo {
  GitRepo repo;
  testing::TempDir home;  // no user git config: safe.directory must not come from the account
  ExampleRepo() {
    repo.run("mkdir -p net && cp -r " + shell_quoted(kExampleIntent) + " net/intent");
    repo.commit_all("add intent");
  }
  testing::CommandOutput fabgate(const std::string& arguments) {
    return repo.run("HOME=" + shell_quoted(home.path()) + " GIT_CONFIG_NOSYSTEM=1 " +
                    shell_quoted(kFabgate) + " " + arguments);
  }
};

TEST(RepoOption, AFolderInsideTheIntentFindsTheIntentRootUpward) {
  // Given --repo naming net/intent/changes (or run from inside it), then validate reads the intent
  // rooted at net/intent, as the --repo help says.
  ExampleRepo example;
  auto named = example.fabgate("validate --repo net/intent/changes");
  EXPECT_EQ(named.exit_code, 0) << named.output;
  EXPECT_NE(named.output.find("root      net/intent\n"), std::string::npos) << named.output;
  auto inside =
      example.repo.run("cd net/intent/changes && HOME=" + shell_quoted(example.home.path()) + " " +
                       shell_quoted(kFabgate) + " validate");
  EXPECT_EQ(inside.exit_code, 0) << inside.output;
  EXPECT_NE(inside.output.find("root      net/intent\n"), std::string::npos) << inside.output;
}

TEST(RepoOption, AFolderWithNoIntentAboveItIsStillNamedInTheError) {
  ExampleRepo example;
  example.repo.run("mkdir -p other && echo x > other/readme && git add other && git commit -qm o");
  auto out = example.fabgate("validate --repo other");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("other/fabgate.yaml: error: not an intent repository"),
            std::string::npos)
      << out.output;
}

TEST(RepoOption, ARepositoryOwnedByAnotherUserIsReportedAsThat) {
  // Given a real repository chowned to uid 1000, then validate says who owns it and that git
  // calls it dubious ownership, not "not inside a git repository".
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown a repository to another uid";
  ExampleRepo example;
  example.repo.run("chown -R 1000 .");
  auto out = example.fabgate("validate --repo net/intent");
  example.repo.run("chown -R 0 .");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("is owned by uid 1000, not by you (uid 0); git calls this dubious "
                            "ownership"),
            std::string::npos)
      << out.output;
  EXPECT_EQ(out.output.find("not inside a git repository"), std::string::npos) << out.output;
}

}  // namespace
}  // namespace fabgate
