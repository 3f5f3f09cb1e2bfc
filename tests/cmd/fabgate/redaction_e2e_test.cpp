// Redaction end to end, through the real binary, a real git repository and a real sshd on
// loopback: secrets in steps, in collector commands and in device output, each directly
// followed by a quote, a comma, a brace or the end of the line, and a configured secret
// holding '&', '"', '\' and '<'. Every JSON file fabgate writes must parse and no byte of the
// bundle, the --junit file or the terminal may hold a secret in any form.

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::kFabgate;
using testing::shell_quoted;

// Set only in fabgate's environment and named in fabgate.yaml `secrets.env`.
const std::string kConfigured = "Cn&ry\"Va\\l<ue";

// What the "device" prints: secrets with what used to be swallowed after them, terminal
// control characters and bytes that are not UTF-8.
std::string hostile_output() {
  return "neighbor 10.0.0.1 password CanaryP1' " + kConfigured +
         "'\n"
         "neighbor 10.0.0.2 password CanaryP2\"\n"
         "secret CanaryP3,\n"
         "{\"token\": \"CanaryP4\"}\n"
         "tacacs-server host 10.0.0.5 key 7 CanaryP5\n"
         "Authorization: Basic Q2FuYXJ5UDY=\n"
         "snmp-server user ops g v3 auth sha CanaryP7 priv aes 128 CanaryP8\n" +
         kConfigured + "'\n" + kConfigured + "\"\n" + kConfigured + ",\n" + kConfigured + "}\n" +
         kConfigured + "\n" + "bell \a esc \033[31m red \033[0m bad \xff\xfe\xc3( end\n" +
         // Last, with no newline: the JSON string that holds this output ends with the secret.
         "neighbor 10.0.0.3 password CanaryP10";
}

// Every form a leaked secret could take: the canaries, and the configured value's start and
// end as they are, JSON-escaped and XML-escaped.
const std::vector<std::string> kForbidden = {
    "CanaryP1", "CanaryP2", "CanaryP3",   "CanaryP4", "CanaryP5",  "Q2FuYXJ5UDY=", "CanaryP7",
    "CanaryP8", "CanaryP9", "CanaryS1",   "CanaryS2", "CanaryP10", "Cn&ry",        "Cn&amp;ry",
    "l<ue",     "l&lt;ue",  "l\\u003cue", "Va\\l",    "Va\\\\l"};

// A light collector profile (identity only) whose command text carries a secret.
std::string profile(const std::string& extra_source = "") {
  return "platform: linux\nsources:\n  - category: identity\n    timeout: 10s\n    commands:\n"
         "      - {run: \"echo 'password CanaryP9' >/dev/null; hostname\", parse: hostname}\n"
         "      - {run: uname -r, parse: kernel-release}\n" +
         extra_source;
}

struct Terminal {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

class RedactionEndToEnd : public testing::FabgateEndToEnd {
 protected:
  void SetUp() override {
    FabgateEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    testing::write_file(sshd_->home() + "/hostile.txt", hostile_output());
  }

  void commit(const std::string& collector_profile = profile()) {
    repo_.write("policies/collectors/linux.yaml", collector_profile);
    // The step ends with a secret and its closing quote, as `vtysh -c '... password KEY'` does:
    // the JSON string that holds it ends right after the secret.
    commit_intent(testing::change("echo 'neighbor 10.0.0.9 password CanaryS1' >> {home}/d1.conf && "
                                  "echo 'key " +
                                      kConfigured +
                                      "' >/dev/null && cat {home}/hostile.txt && "
                                      "echo 'neighbor 10.0.0.9 password CanaryS2'",
                                  "cp {home}/d1.bak {home}/d1.conf",
                                  "cat {home}/hostile.txt; ! grep -q 10.0.0.9 {home}/d1.conf"),
                  "secrets:\n  env: [FG_TEST_SECRET]\n");
  }

  // Runs fabgate with the configured secret in its environment, stdout and stderr apart.
  Terminal run(const std::string& arguments, const std::string& environment = "") {
    const std::string err = files_.file("stderr");
    auto result = repo_.run(environment + " FG_TEST_SECRET=" + shell_quoted(kConfigured) + " " +
                            shell_quoted(kFabgate) + " " + arguments + " 2>" + shell_quoted(err));
    Terminal terminal{result.exit_code, result.output, testing::read_file(err)};
    expect_no_secret(terminal.out, "stdout of " + arguments);
    expect_no_secret(terminal.err, "stderr of " + arguments);
    return terminal;
  }

  static void expect_no_secret(const std::string& bytes, const std::string& where) {
    for (const auto& form : kForbidden)
      EXPECT_EQ(bytes.find(form), std::string::npos) << form << " in " << where << ":\n" << bytes;
  }

  // Every byte of every file of a bundle: no secret; every *.json parses, every line of every
  // *.jsonl parses; and the bundle verifies against its manifest.
  void expect_clean_bundle(const std::filesystem::path& dir) {
    std::size_t json_files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      const auto path = entry.path();
      const std::string bytes = testing::read_file(path.string());
      expect_no_secret(bytes, path.string());
      if (path.extension() == ".json") {
        ++json_files;
        EXPECT_FALSE(nlohmann::json::parse(bytes, nullptr, false).is_discarded()) << path;
      } else if (path.extension() == ".jsonl") {
        std::istringstream lines(bytes);
        std::string line;
        for (int n = 1; std::getline(lines, line); ++n)
          EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded())
              << path << ":" << n << ": " << line;
      }
    }
    EXPECT_GE(json_files, 5u) << dir;
    auto verify = run("evidence verify " + shell_quoted(dir.string()));
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  }

  static void expect_document(const std::string& text, const std::string& what) {
    EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded())
        << what << " is not one JSON document:\n"
        << text;
  }

  testing::TempDir files_;
};

TEST_F(RedactionEndToEnd, PlanAndApplyWriteOnlyParsableJsonAndNoSecret) {
  // Given a step, a collector command and device output carrying secrets followed by quotes,
  // commas, braces and line ends, and a configured secret with '&', '"', '\' and '<', then
  // plan (exit 0) and apply (probe fails after the step: rolled back, exit 4) leave bundles whose
  // every JSON file parses, --json prints one parsable document, and neither the bundles, the
  // --junit files nor the terminal hold any secret; the records keep the text around them.
  commit();
  const std::string plan_junit = files_.file("plan-junit.xml");
  auto plan = run("plan c --json --junit " + shell_quoted(plan_junit));
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  expect_document(plan.out, "plan --json");
  auto plans = bundles();
  ASSERT_EQ(plans.size(), 1u);
  expect_clean_bundle(plans[0]);
  auto plan_json = read_json(plans[0] / "plan.json");
  ASSERT_FALSE(plan_json.is_discarded());
  std::string step = plan_json["change"]["steps"][0]["run"].get<std::string>();
  EXPECT_NE(step.find("password <redacted>' >>"), std::string::npos) << step;
  EXPECT_EQ(step.substr(step.size() - 20), "password <redacted>'") << step;
  expect_no_secret(testing::read_file(plan_junit), plan_junit);

  std::filesystem::remove_all(evidence_);
  const std::string apply_junit = files_.file("apply-junit.xml");
  auto apply = run("apply c --json --junit " + shell_quoted(apply_junit));
  ASSERT_EQ(apply.exit_code, 4) << apply.out << apply.err;
  expect_document(apply.out, "apply --json");
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  expect_clean_bundle(bundle());
  const std::string junit = testing::read_file(apply_junit);
  expect_no_secret(junit, apply_junit);
  EXPECT_EQ(junit.find("<redacted>"), std::string::npos) << "a raw '<' in the XML:\n" << junit;
  // The device output is recorded, with each secret replaced and what followed it kept.
  auto probe = read_json(bundle() / "probes/acceptance.json");
  ASSERT_FALSE(probe.is_discarded());
  std::string output = probe.dump();
  EXPECT_NE(output.find("<redacted>'\\n<redacted>\\\"\\n<redacted>,\\n<redacted>}\\n"),
            std::string::npos)
      << output;
  auto commands = testing::read_file((bundle() / "commands.jsonl").string());
  EXPECT_NE(commands.find("password <redacted>' >>"), std::string::npos) << commands;
  EXPECT_NE(commands.find("Authorization: Basic <redacted>"), std::string::npos);
}

TEST_F(RedactionEndToEnd, SnapshotOutputAndItsTableHoldNoSecret) {
  // Given a collector source that fails quoting device output with secrets, then `fabgate
  // snapshot` (exit 3: evidence missing) prints a JSON document that parses and a table on
  // stderr, both without any secret; with --output the file is clean too.
  commit(
      profile("  - category: interfaces\n    timeout: 10s\n    commands:\n"
              "      - {run: \"cat " +
              sshd_->home() + "/hostile.txt >&2; exit 3\", parse: ip-link}\n"));
  auto out = run("snapshot d1");
  EXPECT_EQ(out.exit_code, 3) << out.out << out.err;
  expect_document(out.out, "snapshot stdout");
  EXPECT_NE(out.out.find("password <redacted>'"), std::string::npos) << out.out;
  EXPECT_NE(out.err.find("password <redacted>'"), std::string::npos) << out.err;
  const std::string file = files_.file("snapshot.json");
  auto to_file = run("snapshot d1 --output " + shell_quoted(file));
  EXPECT_EQ(to_file.exit_code, 3) << to_file.out << to_file.err;
  const std::string written = testing::read_file(file);
  expect_document(written, file);
  expect_no_secret(written, file);
}

TEST_F(RedactionEndToEnd, ErrorsAreRedactedWithTheConfiguredValues) {
  // Given a configured secret that has no secret shape, quoted back in an error message (an
  // unknown snapshot target), then the error printer redacts it: it knows the configured
  // values, not only the shapes.
  commit();
  auto out = run("snapshot " + shell_quoted("d1" + kConfigured));
  EXPECT_EQ(out.exit_code, 2) << out.out << out.err;
  EXPECT_NE(out.err.find("fabgate: error:"), std::string::npos) << out.err;
  EXPECT_NE(out.err.find("d1<redacted>"), std::string::npos) << out.err;
}

TEST_F(RedactionEndToEnd, RecoverSealsAFinishedRunWithTheConfiguredValues) {
  // Given an apply killed right after its last journal record (run-end, before the manifest),
  // then recover by an operator whose name holds the configured secret seals the bundle (exit
  // 2) with that secret redacted from recover.md, the journal, the manifest and the terminal.
  commit();
  auto full = run("apply c");
  ASSERT_EQ(full.exit_code, 4) << full.out << full.err;
  std::size_t records = 0;
  {
    std::ifstream journal(bundle() / "journal.jsonl");
    for (std::string line; std::getline(journal, line);) ++records;
  }
  ASSERT_GT(records, 10u);
  std::filesystem::remove_all(evidence_);
  write_config("d1", "mtu 9000\n");
  auto killed = run("apply c", "FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(records));
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.out << killed.err;
  ASSERT_FALSE(std::filesystem::exists(bundle() / "manifest.json"));
  auto recovered = run("recover " + shell_quoted(bundle().string()) + " --operator " +
                       shell_quoted("ops " + kConfigured));
  EXPECT_EQ(recovered.exit_code, 2) << recovered.out << recovered.err;
  EXPECT_NE(testing::read_file((bundle() / "recover.md").string()).find("ops <redacted>"),
            std::string::npos);
  // The sealed bundle has its page too (every bundle does), hashed in the manifest, saying why
  // nothing ran, with the operator's name redacted before it was escaped.
  const std::string page = testing::read_file((bundle() / "report.html").string());
  EXPECT_NE(page.find("nothing to recover"), std::string::npos) << page;
  EXPECT_NE(page.find("ops &lt;redacted&gt;"), std::string::npos) << page;
  EXPECT_TRUE(read_json(bundle() / "manifest.json")["files"].contains("report.html"));
  expect_clean_bundle(bundle());
}

}  // namespace
}  // namespace fabgate
