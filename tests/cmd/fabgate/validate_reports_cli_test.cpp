// Runs the built fabgate binary's `validate --junit` and `--json` as a CI job would: every
// failure, including the ones before any intent is read, leaves a document to read.

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

struct ExampleRepo {
  GitRepo repo;
  ExampleRepo() {
    repo.run("mkdir -p net && cp -r " + shell_quoted(kExampleIntent) + " net/intent");
    repo.commit_all("add intent");
  }
  testing::CommandOutput fabgate(const std::string& arguments) {
    return repo.run(shell_quoted(kFabgate) + " " + arguments);
  }
  std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
};

TEST(ValidateJunit, OneTestcasePerFileAndFailuresCarryTheLocation) {
  // Given a change with a misspelt key on line 10, then the JUnit file has a passing testcase
  // for every other intent file and a failure for that change naming 10:3.
  ExampleRepo example;
  example.repo.run(
      "sed -i 's/step_timeout: 30s/step_timout: 30s/' net/intent/changes/drain-spine1.yaml");
  example.repo.commit_all("typo");
  auto out = example.fabgate("validate --repo net/intent --junit report.xml");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  auto xml = testing::read_file(example.repo.file("report.xml"));
  auto files = example.repo.run("git ls-files net/intent | wc -l");
  EXPECT_EQ(example.count(xml, "classname=\"intent.files\""), std::stoul(files.output)) << xml;
  EXPECT_NE(xml.find("name=\"net/intent/inventory.yaml\""), std::string::npos) << xml;
  EXPECT_EQ(example.count(xml, "<failure"), 1u) << xml;
  auto failure = xml.find("<failure");
  auto testcase = xml.rfind("<testcase", failure);
  EXPECT_NE(xml.substr(testcase, failure - testcase).find("net/intent/changes/drain-spine1.yaml"),
            std::string::npos);
  EXPECT_NE(xml.find("net/intent/changes/drain-spine1.yaml:10:3: error: unknown key", failure),
            std::string::npos)
      << xml;
}

TEST(ValidateJunit, ValidIntentHasNoFailures) {
  ExampleRepo example;
  auto out = example.fabgate("validate --repo net/intent --junit report.xml");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  auto xml = testing::read_file(example.repo.file("report.xml"));
  EXPECT_NE(xml.find("failures=\"0\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
}

TEST(ValidateJunit, MalformedYamlFailsThatFilesTestcase) {
  ExampleRepo example;
  example.repo.write("net/intent/inventory.yaml", "devices: [\n");
  example.repo.commit_all("broken yaml");
  auto out = example.fabgate("validate --repo net/intent --junit report.xml");
  EXPECT_EQ(out.exit_code, 2);
  auto xml = testing::read_file(example.repo.file("report.xml"));
  auto testcase = xml.find("name=\"net/intent/inventory.yaml\"");
  ASSERT_NE(testcase, std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure", testcase), xml.find("net/intent/inventory.yaml:2:1", testcase) -
                                                std::string("<failure type=\"invalid\" "
                                                            "message=\"")
                                                    .size())
      << xml;
}

TEST(ValidateJson, EveryFailureBeforeTheIntentIsReadStillPrintsADocument) {
  // Given an unknown ref, a missing repository and a folder outside git, then --json prints one
  // document with valid=false and the error on stdout, and the JUnit file fails.
  ExampleRepo example;
  testing::TempDir plain;
  const std::vector<std::pair<std::string, std::string>> failures = {
      {"validate --repo net/intent --ref release-42", "resolve ref 'release-42'"},
      {"validate --repo no/such/folder", "no such directory"},
      {"validate --repo " + shell_quoted(plain.path()), "not inside a git repository"},
  };
  for (const auto& [arguments, message] : failures) {
    auto out = example.fabgate(arguments + " --json --junit report.xml 2>/dev/null");
    EXPECT_EQ(out.exit_code, 2) << arguments;
    auto document = nlohmann::json::parse(out.output, nullptr, false);
    ASSERT_FALSE(document.is_discarded()) << arguments << ": " << out.output;
    EXPECT_FALSE(document["valid"].get<bool>());
    EXPECT_EQ(document["exit_code"], 2);
    EXPECT_NE(document["error"]["message"].get<std::string>().find(message), std::string::npos)
        << out.output;
    auto xml = testing::read_file(example.repo.file("report.xml"));
    EXPECT_NE(xml.find("failures=\"1\""), std::string::npos) << xml;
    EXPECT_NE(xml.find(message.substr(0, message.find('\''))), std::string::npos) << xml;
    example.repo.run("rm -f report.xml");
  }
}

TEST(ValidateJson, MalformedYamlIsADocumentListingTheProblem) {
  // Given fabgate.yaml with a YAML syntax error, then --json lists the problem with its file,
  // line and column as fields (not only inside the message), so an editor can jump to it.
  ExampleRepo example;
  example.repo.write("net/intent/fabgate.yaml", "version: [\n");
  example.repo.commit_all("broken yaml");
  auto out = example.fabgate("validate --repo net/intent --json 2>/dev/null");
  EXPECT_EQ(out.exit_code, 2);
  auto document = nlohmann::json::parse(out.output, nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << out.output;
  EXPECT_FALSE(document["valid"].get<bool>());
  ASSERT_EQ(document["problems"].size(), 1u) << out.output;
  const auto& problem = document["problems"][0];
  EXPECT_EQ(problem["file"], "net/intent/fabgate.yaml") << out.output;
  EXPECT_EQ(problem["line"], 2) << out.output;
  EXPECT_EQ(problem["column"], 1) << out.output;
  EXPECT_NE(problem["message"].get<std::string>().find("YAML syntax"), std::string::npos)
      << out.output;
  // The human form still names file:line:column.
  auto human = example.fabgate("validate --repo net/intent 2>&1");
  EXPECT_NE(human.output.find("net/intent/fabgate.yaml:2:1: error: YAML syntax"), std::string::npos)
      << human.output;
}

}  // namespace
}  // namespace fabgate
