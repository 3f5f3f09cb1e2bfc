// Hostile input, generated here as a small corpus: intent files that are not UTF-8 or whose
// YAML aliases explode, and snapshot files that are nested absurdly deep, not UTF-8, a folder,
// a FIFO or too big. The built fabgate must answer each with exit 2 (invalid input) naming the
// file, within seconds (bounded generously: the refusals take milliseconds, the bugs took
// 13-18 s or crashed) and within a bounded address space.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "adapters/core/utf8.h"
#include "tests/support/git_repo.h"

namespace fabgate {
namespace {

using testing::CommandOutput;
using testing::GitRepo;
using testing::shell_quoted;

const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";
const std::string kExampleIntent = FABGATE_SOURCE_DIR "/examples/intent";
constexpr auto kGenerousBound = std::chrono::seconds(10);

// Runs fabgate in `repo` with its address space capped at 4 GiB: an input that makes fabgate
// allocate without bound fails this way instead of swapping the machine.
CommandOutput fabgate_in(GitRepo& repo, const std::string& arguments,
                         std::chrono::milliseconds* took = nullptr) {
  auto start = std::chrono::steady_clock::now();
  auto out = repo.run("ulimit -v 4194304; NO_COLOR=1 timeout 60 " + shell_quoted(kFabgate) + " " +
                      arguments + " 2>&1");
  if (took)
    *took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start);
  return out;
}

// The example intent, committed, with one file replaced by `content`.
class HostileIntent : public ::testing::Test {
 protected:
  void commit_with(const std::string& relative, const std::string& content) {
    repo_.run("cp -r " + shell_quoted(kExampleIntent) + "/. .");
    repo_.write(relative, content);
    repo_.commit_all("hostile " + relative);
  }
  GitRepo repo_;
};

std::string laughing_inventory() {
  std::string text = "l0: &l0 lol\n";
  for (int level = 1; level < 10; ++level) {
    text += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", *l" : "*l") + std::to_string(level - 1);
    text += "]\n";
  }
  return text + "devices: {}\n";
}

TEST_F(HostileIntent, ChangeThatIsNotUtf8IsInvalidInputForValidateAndPlan) {
  // Given a committed change whose title holds a Latin-1 byte (validate used to accept it and
  // plan to fail with exit 1), then both exit 2 naming the file, line and column.
  std::string change = testing::read_file(kExampleIntent + "/changes/drain-spine1.yaml");
  auto title = change.find("before its optics swap");
  ASSERT_NE(title, std::string::npos);
  commit_with("changes/drain-spine1.yaml", change.replace(title, 6, "caf\xe9"));
  auto validate = fabgate_in(repo_, "validate");
  EXPECT_EQ(validate.exit_code, 2) << validate.output;
  EXPECT_NE(validate.output.find("changes/drain-spine1.yaml:2:"), std::string::npos)
      << validate.output;
  EXPECT_NE(validate.output.find("byte 0xe9"), std::string::npos) << validate.output;
  auto plan = fabgate_in(repo_, "plan drain-spine1");
  EXPECT_EQ(plan.exit_code, 2) << plan.output;
  EXPECT_NE(plan.output.find("changes/drain-spine1.yaml:2:"), std::string::npos) << plan.output;
}

TEST_F(HostileIntent, PolicyFileThatIsNotUtf8IsInvalidInput) {
  // Given allowed_signers (not YAML, still intent) with a byte that is not UTF-8, then
  // validate exits 2 naming it.
  commit_with("policies/allowed_signers", "alice@example.net ssh-ed25519 AAAA\xff\n");
  auto out = fabgate_in(repo_, "validate");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("policies/allowed_signers:1:"), std::string::npos) << out.output;
}

TEST_F(HostileIntent, BillionLaughsIsRefusedQuickly) {
  // Given an inventory of 430 bytes whose aliases expand to 9^9 nodes (it took 13-18 s before
  // being refused), then validate exits 2 naming inventory.yaml within the bound.
  commit_with("inventory.yaml", laughing_inventory());
  std::chrono::milliseconds took{};
  auto out = fabgate_in(repo_, "validate", &took);
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("inventory.yaml:8:"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("aliases expanded"), std::string::npos) << out.output;
  EXPECT_LT(took, kGenerousBound);
}

TEST_F(HostileIntent, SelfReferencingAliasIsRefusedNotFollowedForever) {
  // Given a change whose steps list contains an alias to itself, then validate exits 2 naming
  // the alias instead of recursing through the cycle until it crashes.
  commit_with("changes/loop.yaml", "id: loop\ntitle: t\nsteps: &s [*s]\n");
  auto out = fabgate_in(repo_, "validate");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("changes/loop.yaml:3:"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("cycle"), std::string::npos) << out.output;
}

// Snapshots for `fabgate diff`: a good one, and hostile ones next to it.
class HostileSnapshot : public ::testing::Test {
 protected:
  std::string good() {
    repo_.write("good.json",
                R"({"format": "fabgate.snapshot/1", "taken_at": "2026-12-01T00:00:00Z",
                    "devices": {"leaf1": {"identity": {"hostname": "leaf1"}}}})");
    return repo_.file("good.json");
  }
  // `fabgate diff` with the hostile file as PRE and as POST: both exit 2 naming it, quickly.
  void expect_refused(const std::string& hostile, const std::string& why) {
    for (bool as_pre : {true, false}) {
      std::string arguments = "diff --max-age 0s " + shell_quoted(as_pre ? hostile : good()) + " " +
                              shell_quoted(as_pre ? good() : hostile);
      std::chrono::milliseconds took{};
      auto out = fabgate_in(repo_, arguments, &took);
      EXPECT_EQ(out.exit_code, 2) << (as_pre ? "as PRE: " : "as POST: ") << out.output;
      EXPECT_NE(out.output.find("snapshot " + hostile + ": " + why), std::string::npos)
          << out.output;
      EXPECT_LT(took, kGenerousBound);
      // The message quotes the file, not its raw bytes: the terminal and --json get UTF-8.
      EXPECT_FALSE(find_invalid_utf8(out.output)) << out.output;
    }
  }
  GitRepo repo_;
};

TEST_F(HostileSnapshot, NestedTwoHundredThousandLevelsDeep) {
  // Given 200,000 nested arrays in a fact (diff used to crash with SIGSEGV, exit 139), then
  // diff exits 2 naming the file and the depth limit.
  repo_.write("deep.json", R"({"format": "fabgate.snapshot/1", "taken_at": "2026-12-01T00:00:00Z",
    "devices": {"leaf1": {"identity": {"hostname": "leaf1"}, "x": )" +
                               std::string(200'000, '[') + std::string(200'000, ']') + "}}}");
  expect_refused(repo_.file("deep.json"), "objects and arrays nested more than 64 levels deep");
}

TEST_F(HostileSnapshot, StringThatIsNotUtf8) {
  // Given a hostname with a byte that is not UTF-8, then diff exits 2 naming the file.
  repo_.write("latin.json",
              "{\"format\": \"fabgate.snapshot/1\", \"taken_at\": "
              "\"2026-12-01T00:00:00Z\", \"devices\": {\"leaf1\": {\"identity\": "
              "{\"hostname\": \"caf\xe9\"}}}}");
  expect_refused(repo_.file("latin.json"), "byte ");
}

TEST_F(HostileSnapshot, FolderFifoAndOversizedFile) {
  // Given a folder (it ended in "internal: std::bad_alloc", exit 1), a FIFO nobody writes to
  // and a sparse file over the size limit, then each is refused by what it is, exit 2.
  std::filesystem::create_directory(repo_.file("folder.json"));
  expect_refused(repo_.file("folder.json"), "not a regular file (a directory)");
  ASSERT_EQ(::mkfifo(repo_.file("fifo.json").c_str(), 0600), 0);
  expect_refused(repo_.file("fifo.json"), "not a regular file (a special file)");
  { std::ofstream create(repo_.file("huge.json")); }
  std::filesystem::resize_file(repo_.file("huge.json"), (1ull << 30) + 1);
  expect_refused(repo_.file("huge.json"), "1073741825 bytes, more than the 1024 MiB");
}

}  // namespace
}  // namespace fabgate
