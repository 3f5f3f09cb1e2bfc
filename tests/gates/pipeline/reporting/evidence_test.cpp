// The evidence bundle's redaction: every JSON file it writes parses and holds no secret,
// whatever characters follow a secret and whatever bytes the devices answered.

#include "gates/pipeline/reporting/evidence.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

const std::string kConfigured = "Cn&ry\"Va\\l<ue";  // a configured secret JSON and XML escape

// Device output in which secrets are followed by each character that closes their context,
// plus control characters and bytes that are not UTF-8.
std::string hostile_output() {
  return "neighbor 10.0.0.1 password CanaryE1'\n"
         "neighbor 10.0.0.2 password CanaryE2\"\n"
         "secret CanaryE3,\n"
         "{\"token\": \"CanaryE4\"}\n"
         "secret 5 CanaryE5\n" +
         kConfigured + "'\n" + kConfigured + "\"\n" + kConfigured + ",\n" + kConfigured + "}\n" +
         kConfigured + "\n" + "bell\a esc\033[0m \xff\xfe\xc3(\n";
}

std::vector<std::string> canaries() {
  return {"CanaryE1", "CanaryE2", "CanaryE3", "CanaryE4", "CanaryE5", "Cn&ry", "l<ue"};
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(EvidenceBundle, EveryJsonFileParsesAndHoldsNoSecret) {
  // Given a bundle with a configured secret that JSON escapes, and documents, command records
  // and a manifest whose strings hold hostile device output, then snapshots/pre.json, every
  // line of commands.jsonl and journal.jsonl and manifest.json parse, no canary is in any file,
  // the output is kept with the secrets replaced, and the bundle verifies.
  testing::TempDir root;
  auto bundle =
      EvidenceBundle::create(root.path(), "c", now_utc(), "run1", Redactor({kConfigured}));
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  auto& evidence = *bundle.value();
  const std::string output = hostile_output();
  nlohmann::json snapshot = {{"devices", {{"d1", {{"raw", output}, {"lines", {output}}}}}}};
  ASSERT_TRUE(evidence.write_json("snapshots/pre.json", snapshot).ok());
  evidence.append_command({{"device", "d1"},
                           {"command", "vtysh -c 'neighbor 10.0.0.1 password CanaryE1'"},
                           {"stdout", output}});
  evidence.append_journal({{"event", "step-end"}, {"reason", output}});
  ASSERT_TRUE(evidence.finish({{"device_state", output}, {"first_disproven", output}}).ok());

  std::size_t json_files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(evidence.dir())) {
    if (!entry.is_regular_file()) continue;
    const auto path = entry.path();
    const std::string text = read(path);
    for (const auto& canary : canaries())
      EXPECT_EQ(text.find(canary), std::string::npos) << canary << " in " << path;
    if (path.extension() == ".json") {
      ++json_files;
      EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded()) << path << text;
    } else if (path.extension() == ".jsonl") {
      std::istringstream lines(text);
      std::string line;
      while (std::getline(lines, line))
        EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << path << line;
    }
  }
  EXPECT_EQ(json_files, 2u);  // snapshots/pre.json and manifest.json

  auto pre = nlohmann::json::parse(read(evidence.dir() / "snapshots/pre.json"));
  const std::string kept = pre["devices"]["d1"]["raw"].get<std::string>();
  EXPECT_EQ(kept.substr(0, 39), "neighbor 10.0.0.1 password <redacted>'\n");
  EXPECT_NE(kept.find("<redacted>'\n<redacted>\"\n<redacted>,\n<redacted>}\n"), std::string::npos)
      << kept;
  std::istringstream commands(read(evidence.dir() / "commands.jsonl"));
  std::string line;
  std::getline(commands, line);
  EXPECT_EQ(nlohmann::json::parse(line)["command"],
            "vtysh -c 'neighbor 10.0.0.1 password <redacted>'");

  auto check = verify_bundle(evidence.dir());
  ASSERT_TRUE(check.ok()) << check.error().message;
  EXPECT_TRUE(check->intact());
}

TEST(EvidenceBundle, MarkupIsWrittenAsTheWriterRedactedIt) {
  // Given XML whose values were redacted before escaping, then write_redacted leaves it as it
  // is (a second pass over escaped text would turn "&lt;redacted&gt;" after "password" into a
  // raw '<redacted>' inside the markup), while write() still redacts plain text.
  testing::TempDir root;
  auto bundle = EvidenceBundle::create(root.path(), "c", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  auto& evidence = *bundle.value();
  const std::string xml = "<failure message=\"password &quot;&lt;redacted&gt;&quot;\"/>\n";
  ASSERT_TRUE(evidence.write_redacted("junit.xml", xml).ok());
  EXPECT_EQ(read(evidence.dir() / "junit.xml"), xml);
  ASSERT_TRUE(evidence.write("report.md", "password CanaryE6\n").ok());
  EXPECT_EQ(read(evidence.dir() / "report.md"), "password <redacted>\n");
}

}  // namespace
TEST(EvidenceBundle, AWriteThatFailsIsReportedOnceAndLeavesNoHalfFile) {
  // Given a bundle in which "snapshots" is a file, so nothing can be written under it, then
  // the write fails, the failure is handed to the run controller once (naming the file and
  // why), and no temporary file is left in the bundle; a later good write reports nothing.
  testing::TempDir root;
  auto bundle = EvidenceBundle::create(root.path(), "c", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  auto& evidence = *bundle.value();
  ASSERT_TRUE(evidence.write("snapshots", "a file where a folder should be").ok());
  EXPECT_TRUE(evidence.take_failed_writes().empty());

  EXPECT_FALSE(evidence.write_json("snapshots/pre.json", {{"devices", {}}}).ok());
  auto failed = evidence.take_failed_writes();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed.front().rfind("snapshots/pre.json: ", 0), 0u) << failed.front();
  EXPECT_TRUE(evidence.take_failed_writes().empty()) << "each failure is handed over once";

  ASSERT_TRUE(evidence.write("report.md", "# ok\n").ok());
  EXPECT_TRUE(evidence.take_failed_writes().empty());
  for (const auto& entry : std::filesystem::recursive_directory_iterator(evidence.dir()))
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
}

TEST(EvidenceBundle, ASealedNotRestoredBundleReopensKeepingItsFirstSeal) {
  // Given a bundle sealed with a manifest and a signature (a run that ended NOT RESTORED),
  // then reopen_not_restored keeps both under new names, the journal goes on, and the second
  // seal covers the first: the bundle verifies.
  testing::TempDir root;
  std::filesystem::path dir;
  {
    auto bundle = EvidenceBundle::create(root.path(), "c", now_utc(), "run1", Redactor{});
    ASSERT_TRUE(bundle.ok()) << bundle.error().message;
    dir = bundle.value()->dir();
    bundle.value()->append_journal({{"event", "run-end"}, {"exit_code", 5}});
    ASSERT_TRUE(bundle.value()->finish({{"exit_code", 5}}).ok());
    std::ofstream(dir / kManifestSignatureFile) << "signature\n";
  }
  EXPECT_FALSE(EvidenceBundle::reopen(dir, "run1", Redactor{}).ok()) << "sealed";
  auto reopened = EvidenceBundle::reopen_not_restored(dir, "run1", Redactor{});
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  EXPECT_TRUE(std::filesystem::exists(dir / "manifest.not-restored.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "manifest.not-restored.json.sig"));
  EXPECT_FALSE(std::filesystem::exists(dir / "manifest.json"));
  reopened.value()->append_journal({{"event", "recover-start"}});
  ASSERT_TRUE(reopened.value()->finish({{"exit_code", 4}}).ok());
  auto check = verify_bundle(dir);
  ASSERT_TRUE(check.ok()) << check.error().message;
  EXPECT_TRUE(check->intact());
}

}  // namespace fabgate::pipeline
