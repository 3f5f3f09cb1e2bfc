// The evidence bundle's redaction: every JSON file it writes parses and holds no secret,
// whatever characters follow a secret and whatever bytes the devices answered.

#include "gates/pipeline/reporting/evidence.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "adapters/core/sha256.h"
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

TEST(EvidenceBundle, AnOutputWrittenInPiecesIsTheLineAppendCommandWouldWrite) {
  // Given two bundles with the same configured secret and the same command record, whose output
  // is hostile (secrets, quotes, control characters, bytes that are not UTF-8) and over 3 MiB,
  // with multi-byte characters where the 1 MiB pieces end, then the line written with the
  // output in pieces is byte for byte the line append_command writes with it in the record.
  testing::TempDir root;
  auto whole = EvidenceBundle::create(root.path(), "c", now_utc(), "run1", Redactor({kConfigured}));
  auto pieces =
      EvidenceBundle::create(root.path(), "c", now_utc(), "run2", Redactor({kConfigured}));
  ASSERT_TRUE(whole.ok() && pieces.ok());
  std::string output;
  while (output.size() < (std::size_t{3} << 20)) {
    output += hostile_output();
    output += std::string(1000, 'x') + "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n";  // é € 😀
  }
  for (std::size_t at : {std::size_t{1} << 20, std::size_t{2} << 20})
    output.replace(at - 2, 4, "\xf0\x9f\x98\x80");  // a 4-byte character across each cut
  // stderr (before stdout in the line) holds exactly the mark the writer puts where the output
  // goes: a device that prints it must not move its output into another field.
  const nlohmann::json record = {{"device", "d1"},
                                 {"command", "ip -j route show table main"},
                                 {"exit_status", 0},
                                 {"stderr", "fabgate:output-goes-here:5b0f7c2e91d4a36e"},
                                 {"stdout_truncated", false}};
  auto with_stdout = record;
  with_stdout["stdout"] = output;
  whole.value()->append_command(with_stdout);
  pieces.value()->append_command_with_output(record, output);

  const std::string expected = read(whole.value()->dir() / "commands.jsonl");
  const std::string written = read(pieces.value()->dir() / "commands.jsonl");
  EXPECT_GT(written.size(), std::size_t{3} << 20);
  EXPECT_TRUE(written == expected) << "the lines differ from byte "
                                   << std::mismatch(written.begin(), written.end(),
                                                    expected.begin(), expected.end())
                                              .first -
                                          written.begin();
  for (const auto& canary : canaries()) EXPECT_EQ(written.find(canary), std::string::npos);
  auto line = nlohmann::json::parse(written, nullptr, false);
  ASSERT_FALSE(line.is_discarded());
  EXPECT_EQ(line["command"], "ip -j route show table main");
  EXPECT_EQ(line["stderr"], "fabgate:output-goes-here:5b0f7c2e91d4a36e");
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

// ---- the bundle digest and what verify refuses ---------------------------------------------

// A sealed bundle with one report and the headline fields of a run that rolled back.
std::filesystem::path sealed_bundle(const testing::TempDir& root, Redactor redactor = {}) {
  auto bundle = EvidenceBundle::create(root.path(), "c", now_utc(), "run1", std::move(redactor));
  EXPECT_TRUE(bundle.ok()) << bundle.error().message;
  EXPECT_TRUE(bundle.value()->write("report.md", "# rolled back\n").ok());
  EXPECT_TRUE(bundle.value()
                  ->finish({{"mode", "apply"},
                            {"exit_code", 4},
                            {"outcome", "change failed and was rolled back"},
                            {"device_state", "rolled back, baseline verified"},
                            {"first_disproven", "acceptance: probe failed"},
                            {"gates", {{{"name", "acceptance"}, {"verdict", "fail"}}}}})
                  .ok());
  return bundle.value()->dir();
}

// Rewrites manifest.json after `edit`; with `redigest`, also recomputes bundle_sha256 the way
// docs/pipeline.md tells an independent checker to, so only the other checks can catch it.
void rewrite_manifest(const std::filesystem::path& dir,
                      const std::function<void(nlohmann::json&)>& edit, bool redigest) {
  auto manifest = nlohmann::json::parse(read(dir / "manifest.json"));
  edit(manifest);
  if (redigest) manifest["bundle_sha256"] = manifest_digest(manifest);
  std::ofstream(dir / "manifest.json", std::ios::trunc) << manifest.dump(2) << "\n";
}

TEST(BundleDigest, AnEditedHeadlineFieldIsTampered) {
  // Given a sealed bundle of a run that exited 4, then it verifies; with "exit_code": 4
  // edited to 0, or device_state, first_disproven or a gate's verdict edited (every file still
  // matching its hash), the bundle no longer verifies: the digest covers the whole manifest.
  testing::TempDir root;
  auto dir = sealed_bundle(root);
  auto intact = verify_bundle(dir);
  ASSERT_TRUE(intact.ok()) << intact.error().message;
  EXPECT_TRUE(intact->intact());
  const std::string original = read(dir / "manifest.json");
  const std::vector<std::function<void(nlohmann::json&)>> edits = {
      [](nlohmann::json& m) { m["exit_code"] = 0; },
      [](nlohmann::json& m) { m["device_state"] = "changed, verified"; },
      [](nlohmann::json& m) { m["first_disproven"] = ""; },
      [](nlohmann::json& m) { m["gates"][0]["verdict"] = "pass"; },
      [](nlohmann::json& m) { m["reviewed_by"] = "someone"; },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    SCOPED_TRACE("edit " + std::to_string(i));
    rewrite_manifest(dir, edits[i], false);
    auto check = verify_bundle(dir);
    ASSERT_TRUE(check.ok()) << check.error().message;
    EXPECT_FALSE(check->manifest_consistent);
    EXPECT_TRUE(check->modified.empty() && check->missing.empty() && check->extra.empty());
    EXPECT_FALSE(check->intact());
    std::ofstream(dir / "manifest.json", std::ios::trunc) << original;
  }
  // Layout alone is not content: the same manifest re-indented still verifies.
  rewrite_manifest(
      dir, [](nlohmann::json&) {}, false);
  EXPECT_TRUE(verify_bundle(dir)->intact());
}

TEST(BundleDigest, IsTheSha256OfTheDocumentedCanonicalText) {
  // Given a manifest, then its digest is the sha256 of the text docs/pipeline.md describes:
  // members sorted, no whitespace, bundle_sha256 left out, strings escaped only where JSON
  // requires, UTF-8 as it is; so a checker in any language reproduces it.
  nlohmann::json manifest = {{"exit_code", 4},
                             {"bundle_sha256", "whatever"},
                             {"device_state", "caf\u00e9 \"q\"\ttab\x01"},
                             {"files", {{"b.md", "22"}, {"a.md", "11"}}}};
  const std::string canonical =
      "{\"device_state\":\"caf\u00e9 \\\"q\\\"\\ttab\\u0001\",\"exit_code\":4,"
      "\"files\":{\"a.md\":\"11\",\"b.md\":\"22\"}}";
  EXPECT_EQ(manifest_digest(manifest), sha256_hex(canonical)) << canonical;
}

TEST(BundleDigest, PathsOutsideTheBundleOrThroughALinkAreRefusedUnread) {
  // Given manifests that name an absolute path, a path with "..", and a file under a folder
  // that is a symbolic link, each with the right sha256 of the file it reaches and a
  // recomputed digest, then verify names each as unsafe and the bundle is not intact; a link
  // added to a sealed bundle (to a file or a folder) is named too, never followed.
  testing::TempDir root;
  auto dir = sealed_bundle(root);
  testing::TempDir outside;
  std::ofstream(outside.path() + "/secret.txt") << "outside\n";
  const std::string outside_sha = sha256_hex("outside\n");
  const std::string relative_out =
      std::filesystem::relative(outside.path() + "/secret.txt", dir).generic_string();
  ASSERT_NE(relative_out.find(".."), std::string::npos);
  const std::string original = read(dir / "manifest.json");
  for (const std::string& path :
       {outside.path() + "/secret.txt", relative_out, std::string("./report.md")}) {
    SCOPED_TRACE(path);
    rewrite_manifest(
        dir, [&](nlohmann::json& m) { m["files"][path] = outside_sha; }, true);
    auto check = verify_bundle(dir);
    ASSERT_TRUE(check.ok()) << check.error().message;
    EXPECT_TRUE(check->manifest_consistent);
    ASSERT_EQ(check->unsafe.size(), 1u) << ::testing::PrintToString(check->unsafe);
    EXPECT_EQ(check->unsafe[0].rfind(path + ": unsafe", 0), 0u) << check->unsafe[0];
    EXPECT_FALSE(check->intact());
    std::ofstream(dir / "manifest.json", std::ios::trunc) << original;
  }

  std::filesystem::create_directory_symlink(outside.path(), dir / "linked");
  rewrite_manifest(
      dir, [&](nlohmann::json& m) { m["files"]["linked/secret.txt"] = outside_sha; }, true);
  auto linked = verify_bundle(dir);
  ASSERT_TRUE(linked.ok());
  EXPECT_EQ(linked->unsafe,
            (std::vector<std::string>{"linked/secret.txt: unsafe: linked is a symbolic link",
                                      "linked: a symbolic link in the bundle"}));
  EXPECT_FALSE(linked->intact());
  std::ofstream(dir / "manifest.json", std::ios::trunc) << original;
  auto unlisted = verify_bundle(dir);
  EXPECT_EQ(unlisted->unsafe, std::vector<std::string>{"linked: a symbolic link in the bundle"});
  EXPECT_FALSE(unlisted->intact());
  std::filesystem::remove(dir / "linked");
  std::filesystem::create_symlink(outside.path() + "/secret.txt", dir / "notes.md");
  EXPECT_EQ(verify_bundle(dir)->unsafe,
            std::vector<std::string>{"notes.md: a symbolic link in the bundle"});
}

TEST(BundleDigest, AFieldOfTheWrongTypeIsTamperedNeverAnError) {
  // Given manifests with exit_code as a string, gates as an object, a gate duration as text,
  // a files entry as a number, no files map, and text that is not JSON (digests recomputed
  // where there is one), then verify answers a check that is not intact naming the field,
  // never an error or an exception.
  testing::TempDir root;
  auto dir = sealed_bundle(root);
  const std::string original = read(dir / "manifest.json");
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& m) { m["exit_code"] = "0"; }, "exit_code: not an integer"},
      {[](nlohmann::json& m) {
         m["gates"] = {{"acceptance", "pass"}};
       },
       "gates: not an array"},
      {[](nlohmann::json& m) { m["gates"][0]["duration_ms"] = "fast"; },
       "gates[0].duration_ms: not an integer"},
      {[](nlohmann::json& m) { m["files"]["report.md"] = 7; },
       "files[\"report.md\"]: not a string"},
      {[](nlohmann::json& m) { m.erase("files"); }, "files: not an object"},
      {[](nlohmann::json& m) { m["mode"] = nlohmann::json::array(); }, "mode: not a string"},
  };
  for (const auto& [edit, named] : cases) {
    SCOPED_TRACE(named);
    rewrite_manifest(dir, edit, true);
    auto check = verify_bundle(dir);
    ASSERT_TRUE(check.ok()) << check.error().message;
    ASSERT_FALSE(check->malformed.empty());
    EXPECT_EQ(check->malformed[0].rfind(named, 0), 0u) << check->malformed[0];
    EXPECT_FALSE(check->intact());
    std::ofstream(dir / "manifest.json", std::ios::trunc) << original;
  }
  std::ofstream(dir / "manifest.json", std::ios::trunc) << "[1, 2";
  auto garbled = verify_bundle(dir);
  ASSERT_TRUE(garbled.ok()) << garbled.error().message;
  EXPECT_EQ(garbled->malformed, std::vector<std::string>{"manifest.json: not a JSON object"});
  EXPECT_FALSE(garbled->intact());
  std::filesystem::remove(dir / "manifest.json");
  EXPECT_FALSE(verify_bundle(dir).ok()) << "no manifest: not a sealed bundle (invalid input)";
}

TEST(BundleDigest, TheCheckKeepsTheManifestBytesItRead) {
  // Given a sealed bundle, then the check carries manifest.json exactly as read, and the
  // document parsed from those bytes: callers never read the file a second time.
  testing::TempDir root;
  auto dir = sealed_bundle(root);
  auto check = verify_bundle(dir);
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->manifest_text, read(dir / "manifest.json"));
  EXPECT_EQ(check->manifest["exit_code"], 4);
}

TEST(EvidenceBundle, ASignedCopyIsWrittenByteForByte) {
  // Given a configured secret that is a substring of an approval's base64 signature, then the
  // approval copied into the bundle is byte for byte the file signed, while text written with
  // write() is still redacted.
  testing::TempDir root;
  const std::string approval =
      "{\"approver\": \"r@example.net\", \"signature\": \"-----BEGIN SSH "
      "SIGNATURE-----\\nU1NIU0lHAAAAAQAAADMAAAALc3No\\n-----END SSH SIGNATURE-----\\n\"}\n";
  auto bundle =
      EvidenceBundle::create(root.path(), "c", now_utc(), "run1", Redactor({"AAAAAQAAAD"}));
  ASSERT_TRUE(bundle.ok());
  ASSERT_TRUE(bundle.value()->write_signed_copy("approvals/1-r.json", approval).ok());
  ASSERT_TRUE(bundle.value()->write("report.md", "AAAAAQAAAD\n").ok());
  EXPECT_EQ(read(bundle.value()->dir() / "approvals/1-r.json"), approval);
  EXPECT_EQ(read(bundle.value()->dir() / "report.md"), "<redacted>\n");
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
