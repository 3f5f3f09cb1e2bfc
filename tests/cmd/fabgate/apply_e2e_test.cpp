// End-to-end runs of `fabgate plan/apply` against real SSH targets on loopback, without the
// lab. Each "device" is a name for the same real sshd; its configuration is a file in the
// server's home, a change edits the file, and a probe command checks it. What the tests assert
// is what an operator would see: the exit code, what the devices were left with, and what the
// evidence bundle says.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include "adapters/core/redact.h"
#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::change;
using testing::shell_quoted;

// The harness (devices d1 and d2 on one real sshd, a real git intent repository, the evidence
// folder) is shared with the approval tests: tests/cmd/fabgate/e2e_fixture.h.
class ApplyEndToEnd : public testing::FabgateEndToEnd {};

TEST_F(ApplyEndToEnd, AcceptedChangeExitsZeroAndLeavesTheChangeInPlace) {
  // Given a change that appends a harmless line, then apply exits 0, d1 holds the new line,
  // and the evidence bundle verifies.
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"));
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9100\n");
  EXPECT_NE(out.output.find("exit 0: accepted"), std::string::npos) << out.output;
  auto m = manifest();
  EXPECT_EQ(m["exit_code"], 0);
  EXPECT_EQ(m["intent_commit"], repo_.head());
  auto verify = fabgate("evidence verify " + shell_quoted(bundle().string()));
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  // What writes to the device (the step, the device lock) used the change key; the probes and
  // snapshots the read key.
  std::ifstream in(bundle() / "commands.jsonl");
  std::string line;
  bool locked = false;
  std::set<std::string> measured_sessions;
  while (std::getline(in, line)) {
    auto record = nlohmann::json::parse(line);
    std::string purpose = record.value("purpose", "");
    if (purpose == "shell-startup") {
      // One per session (device, role and session: probes have their own): how long the
      // login shell took to run `true`.
      EXPECT_TRUE(record["duration_ms"].is_number()) << line;
      EXPECT_TRUE(measured_sessions
                      .insert(record.value("device", "") + "/" + record.value("role", "") + "/" +
                              record.value("session", ""))
                      .second)
          << "measured twice: " << line;
      continue;
    }
    bool writes = purpose == "step" || purpose == "rollback" || purpose == "device-lock" ||
                  purpose == "confirm-timer";
    locked = locked || purpose == "device-lock";
    EXPECT_EQ(record["role"], writes ? "change" : "read") << line;
  }
  EXPECT_TRUE(locked) << "the target was changed without taking its lock";
  EXPECT_EQ(measured_sessions, (std::set<std::string>{"d1/change/commands", "d1/read/commands",
                                                      "d2/read/commands", "d2/read/probes"}))
      << "every session's shell start-up is in the evidence; the probe on d2 had its own";
}

TEST_F(ApplyEndToEnd, FailingAcceptanceIsRolledBackAndVerified) {
  // Given a change that breaks the service, then apply rolls it back, proves the baseline
  // came back and exits 4; d1's configuration is what it was.
  commit_intent(change("echo broken >> {home}/d1.conf"));
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  auto m = manifest();
  EXPECT_EQ(m["exit_code"], 4);
  EXPECT_NE(m["first_disproven"].get<std::string>().find("acceptance: [workload] config-healthy"),
            std::string::npos)
      << m["first_disproven"];
  EXPECT_NE(m["device_state"].get<std::string>().find("baseline verified"), std::string::npos);
  auto report = testing::read_file((bundle() / "report.md").string());
  EXPECT_NE(report.find("exit 4"), std::string::npos);
  EXPECT_NE(report.find("## Rollback executed"), std::string::npos);
  EXPECT_NE(report.find("First disproven hypothesis: acceptance"), std::string::npos);
}

TEST_F(ApplyEndToEnd, RollbackThatCannotRestoreExitsFiveAndSaysWhatIsStillWrong) {
  commit_intent(change("echo broken >> {home}/d1.conf", "true"));
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 5) << out.output;
  EXPECT_NE(out.output.find("NOT RESTORED"), std::string::npos);
  auto m = manifest();
  EXPECT_NE(m["device_state"].get<std::string>().find("restored-probes"), std::string::npos)
      << m["device_state"];
}

TEST_F(ApplyEndToEnd, StepPastItsTimeoutIsStoppedAndRolledBack) {
  // Given a step that hangs, then it is stopped at its 1 s timeout (not after the 30 s sleep),
  // rolled back and verified.
  commit_intent(change("echo broken >> {home}/d1.conf && sleep 30",
                       "cp {home}/d1.bak {home}/d1.conf", "! grep -q broken {home}/d1.conf",
                       "max_targets: 1, step_timeout: 1s, deadline: 1m"));
  auto started = std::chrono::steady_clock::now();
  auto out = fabgate("apply c");
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_LT(took, std::chrono::seconds(25));
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_NE(out.output.find("timed out after 1s (step timeout)"), std::string::npos) << out.output;
}

TEST_F(ApplyEndToEnd, ARollbackSlowerThanTheStepTimeoutIsWaitedFor) {
  // Given a 1 s step timeout, a change that breaks the service and a rollback step that takes
  // 3 s (a device converging after the failed change), then the rollback step is not stopped
  // at the change's step timeout: it gets the rollback timeout (default max(3 x 1s, 1m)), the
  // baseline returns and the run exits 4; review.md names the rollback timeout.
  commit_intent(
      change("echo broken >> {home}/d1.conf", "sleep 3 && cp {home}/d1.bak {home}/d1.conf",
             "! grep -q broken {home}/d1.conf", "max_targets: 1, step_timeout: 1s, deadline: 1m"));
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  auto execution = read_json(bundle() / "execution.json");
  ASSERT_EQ(execution["rollback"].size(), 1u) << execution.dump(2);
  EXPECT_EQ(execution["rollback"][0]["state"], "succeeded") << execution.dump(2);
  EXPECT_GE(execution["rollback"][0]["duration_ms"].get<int>(), 3000) << execution.dump(2);
  // The reviewer sees the bound in the plan's review.md.
  std::filesystem::remove_all(bundle());
  auto plan = fabgate("plan c");
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  auto review = testing::read_file((bundle() / "review.md").string());
  EXPECT_NE(review.find("- rollback timeout 1m per rollback step (default"), std::string::npos)
      << review;
}

TEST_F(ApplyEndToEnd, ARollbackStepPastTheRollbackTimeoutIsStoppedAndNamed) {
  // Given rollback_timeout: 2s and a rollback step that hangs, then the rollback step is
  // stopped after 2 s with its cause named, the device is not restored and the run exits 5.
  commit_intent(change("echo broken >> {home}/d1.conf",
                       "sleep 30 && cp {home}/d1.bak {home}/d1.conf",
                       "! grep -q broken {home}/d1.conf",
                       "max_targets: 1, step_timeout: 1s, rollback_timeout: 2s, deadline: 1m"));
  auto started = std::chrono::steady_clock::now();
  auto out = fabgate("apply c");
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(out.exit_code, 5) << out.output;
  EXPECT_LT(took, std::chrono::seconds(28)) << "the hanging rollback step was not stopped";
  EXPECT_NE(out.output.find("timed out after 2s (rollback timeout)"), std::string::npos)
      << out.output;
}

TEST_F(ApplyEndToEnd, DeadlineStopsTheChangeBeforeTheNextStep) {
  // Given three 1 s steps and a 1500 ms deadline, then the run stops at the deadline, never
  // sends the third step, and rolls back.
  std::string yaml = change("echo 'mtu 9100' >> {home}/d1.conf && sleep 1",
                            "cp {home}/d1.bak {home}/d1.conf", "! grep -q broken {home}/d1.conf",
                            "max_targets: 1, step_timeout: 1500ms, deadline: 1500ms");
  yaml = std::regex_replace(yaml, std::regex("\nrollback:"),
                            "\n  - {device: d1, run: sleep 1}\n  - {device: d1, run: echo third >> "
                            "{home}/d1.conf}\nrollback:");
  commit_intent(yaml);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  for (const auto& sent : commands("step", "d1")) EXPECT_EQ(sent.find("third"), std::string::npos);
  EXPECT_NE(out.output.find("deadline"), std::string::npos) << out.output;
}

TEST_F(ApplyEndToEnd, OutsideTheWindowNothingIsTouched) {
  std::string yaml = change("echo 'mtu 9100' >> {home}/d1.conf") +
                     "window: {start: 2020-01-01T00:00:00Z, end: 2020-01-01T02:00:00Z}\n";
  commit_intent(yaml);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_TRUE(commands("step", "d1").empty());
  EXPECT_NE(out.output.find("outside the window"), std::string::npos) << out.output;
}

TEST_F(ApplyEndToEnd, MissingRollbackIsRefusedBeforeAnyStep) {
  std::string yaml = change("echo 'mtu 9100' >> {home}/d1.conf");
  yaml = yaml.substr(0, yaml.find("rollback:")) + yaml.substr(yaml.find("acceptance:"));
  commit_intent(yaml);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_NE(out.output.find("d1 has steps but no rollback steps"), std::string::npos) << out.output;
  auto validate = fabgate("validate");
  EXPECT_EQ(validate.exit_code, 2) << validate.output;
}

TEST_F(ApplyEndToEnd, UnhealthyBaselineIsRefused) {
  // Given a service already broken before the change, then apply refuses (exit 3) and sends
  // no step: fabgate never changes a fabric it cannot prove healthy.
  write_config("d1", "mtu 9000\nbroken\n");
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"));
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nbroken\n");
  EXPECT_TRUE(commands("step", "d1").empty());
  EXPECT_EQ(manifest()["first_disproven"].get<std::string>().rfind("baseline-probes", 0), 0u);
}

TEST_F(ApplyEndToEnd, ProbeWithoutEvidenceNeverPasses) {
  // Given a probe whose command does not exist on the host, then it is no-evidence and the run
  // is refused; absent evidence is not health.
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf", "cp {home}/d1.bak {home}/d1.conf",
                       "/nonexistent/health-check"));
  auto out = fabgate("apply c --json");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("no-evidence"), std::string::npos);
  EXPECT_EQ(config("d1"), "mtu 9000\n");
}

TEST_F(ApplyEndToEnd, ExceptionWaivesANoEvidenceProbeAndIsListedEverywhere) {
  // Given a probe that cannot run on d2 (think: no RDMA device while its NIC is in RMA), an
  // unexpired exception for it and a second probe that passes by itself, then apply is
  // accepted on that real check, and the waiver shows in the manifest, the report and the
  // terminal. An expired exception waives nothing. (With the waived probe alone nothing real
  // passed: real_checks_test.)
  auto register_with = [&](const std::string& expiry) {
    repo_.write(
        "policies/exceptions.yaml",
        "exceptions:\n  - id: EXC-7\n    scope: {device: d2, rule: \"probe:config-healthy\"}\n"
        "    reason: NIC in RMA\n    owner: oncall@example.net\n    expiry: " +
            expiry + "\n");
    repo_.commit_all("exception until " + expiry);
    // The register is read from the trusted ref: a commit that edits it is judged by the one
    // before it, so the exception is in force from the next commit on (docs/approvals.md).
    repo_.run("git commit -q --allow-empty -m 'after the register'");
  };
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf", "cp {home}/d1.bak {home}/d1.conf",
                       "/nonexistent/rdma-check") +
                "    - {name: d1-config-readable, layer: workload, host: d2, run: \"test -r "
                "{home}/d1.conf\", timeout: 10s}\n");
  register_with("2099-01-01T00:00:00Z");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("1 waived"), std::string::npos) << out.output;
  auto m = manifest();
  EXPECT_EQ(m["exceptions_used"], nlohmann::json::array({"EXC-7"}));
  auto report = testing::read_file((bundle() / "report.md").string());
  EXPECT_NE(report.find("WAIVED by EXC-7 (oncall@example.net"), std::string::npos) << report;

  std::filesystem::remove_all(evidence_);
  write_config("d1", "mtu 9000\n");
  register_with("2020-01-01T00:00:00Z");
  auto expired = fabgate("apply c");
  EXPECT_EQ(expired.exit_code, 3) << expired.output;
}

TEST_F(ApplyEndToEnd, InvalidPolicyFilesAreInvalidInput) {
  // Given an exceptions register with a misspelt key, then validate and apply both exit 2
  // naming the file and line, and nothing is touched.
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"));
  repo_.write("policies/exceptions.yaml",
              "exceptions:\n  - id: EXC-1\n    scope: {device: d1, rule: x}\n    reason: r\n"
              "    owner: o\n    expires: 2099-01-01T00:00:00Z\n");
  repo_.commit_all("bad register");
  for (const char* command : {"validate", "apply c"}) {
    auto out = fabgate(command);
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_NE(out.output.find("policies/exceptions.yaml:6:5"), std::string::npos) << out.output;
  }
  EXPECT_EQ(config("d1"), "mtu 9000\n");
}

TEST_F(ApplyEndToEnd, SecretsInStepsOutputAndErrorsNeverReachEvidenceOrTerminal) {
  // Given a step that carries a BGP neighbor password, a probe whose output and error carry a
  // secret and a bearer token, then no canary appears anywhere in the evidence bundle or on the
  // terminal.
  commit_intent(change("echo 'neighbor 10.0.0.1 password CanaryPw1' >> {home}/d1.conf",
                       "cp {home}/d1.bak {home}/d1.conf",
                       "echo 'secret 5 CanaryS2'; echo 'Authorization: Bearer CanaryTok3' >&2; "
                       "! grep -q password {home}/d1.conf"));
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  for (const char* canary : {"CanaryPw1", "CanaryS2", "CanaryTok3"}) {
    EXPECT_EQ(out.output.find(canary), std::string::npos) << canary << " on the terminal";
    auto hits = testing::run_shell("grep -rl " + std::string(canary) + " " +
                                   shell_quoted(bundle().string()));
    EXPECT_EQ(hits.output, "") << canary << " in " << hits.output;
  }
  // The commands were recorded, with the secrets replaced rather than dropped.
  auto commands = testing::read_file((bundle() / "commands.jsonl").string());
  EXPECT_NE(commands.find("password <redacted>"), std::string::npos);
}

TEST_F(ApplyEndToEnd, ConfiguredSecretValuesNeverReachEvidenceOrTerminal) {
  // Given an API token that looks like ordinary text, named in fabgate.yaml `secrets.env` and
  // set only in the controller's environment, and a step, its output and a failing probe that
  // all carry it, then it appears nowhere in the evidence bundle or on the terminal.
  const std::string token = "Zq8kTokenValue";
  commit_intent(
      change("echo 'api-token " + token + "' >> {home}/d1.conf", "cp {home}/d1.bak {home}/d1.conf",
             "grep api-token {home}/d1.conf; ! grep -q api-token {home}/d1.conf"),
      "secrets:\n  env: [FG_TEST_API_TOKEN]\n");
  auto out = repo_.run("FG_TEST_API_TOKEN=" + token + " " + shell_quoted(testing::kFabgate) +
                       " apply c 2>&1");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_EQ(out.output.find(token), std::string::npos) << out.output;
  auto hits = testing::run_shell("grep -rl " + token + " " + shell_quoted(bundle().string()));
  EXPECT_EQ(hits.output, "") << token << " in " << hits.output;
  // Recorded, with the value replaced.
  auto commands = testing::read_file((bundle() / "commands.jsonl").string());
  EXPECT_NE(commands.find("api-token <redacted>"), std::string::npos);
  // The text has no secret shape: the shape patterns alone leave it (so the setting is what
  // removed it above).
  EXPECT_EQ(Redactor{}.redact("api-token " + token), "api-token " + token);
}

TEST_F(ApplyEndToEnd, UnreachableDeviceIsNoEvidenceNotHealth) {
  // Given a device whose host key in known_hosts is wrong, then the baseline snapshot has no
  // evidence for it and the change is refused; no command reaches the device.
  commit_intent(change("touch {home}/marker"));
  repo_.write("fabgate.yaml", "version: 1\nevidence: evidence-out\nssh:\n  known_hosts: " +
                                  sshd_->changed_known_hosts() + "\n");
  repo_.commit_all("wrong host key");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_FALSE(std::filesystem::exists(sshd_->home() + "/marker"));
  EXPECT_NE(out.output.find("host-key"), std::string::npos) << out.output;
}

TEST_F(ApplyEndToEnd, FirstFailingWaveStopsTheRun) {
  // Given waves [d1] then [d2] and a failing step on d1, then d2 is never touched and d1 is
  // rolled back.
  commit_intent(R"(id: c
title: two waves
targets: [d1, d2]
bounds: {max_targets: 2, step_timeout: 10s, deadline: 1m, waves: [[d1], [d2]]}
steps:
  - {device: d1, run: "cp {home}/d1.conf {home}/d1.bak && echo half >> {home}/d1.conf && false"}
  - {device: d2, run: "echo 'mtu 9100' >> {home}/d2.conf"}
rollback:
  - {device: d1, run: "cp {home}/d1.bak {home}/d1.conf"}
  - {device: d2, run: "sed -i '/9100/d' {home}/d2.conf"}
acceptance:
  probes:
    - {name: config-healthy, host: d2, run: "! grep -q broken {home}/d1.conf"}
)");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_EQ(config("d2"), "mtu 9000\n");
  EXPECT_TRUE(commands("step", "d2").empty());
  EXPECT_TRUE(commands("rollback", "d2").empty());
  EXPECT_EQ(commands("rollback", "d1").size(), 1u);
}

TEST_F(ApplyEndToEnd, PlanWritesTheReviewAndTouchesNothing) {
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"));
  auto out = fabgate("plan c");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  auto review = testing::read_file((bundle() / "review.md").string());
  EXPECT_NE(review.find("## Rollback"), std::string::npos);
  EXPECT_NE(review.find("cp " + sshd_->home() + "/d1.bak"), std::string::npos);
  auto plan = nlohmann::json::parse(testing::read_file((bundle() / "plan.json").string()));
  EXPECT_TRUE(plan["ready"].get<bool>());
  EXPECT_EQ(plan["intent_commit"], repo_.head());
}

TEST_F(ApplyEndToEnd, UncommittedIntentIsRefusedAsInvalidInput) {
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"));
  repo_.write("changes/c.yaml", change("echo broken >> {home}/d1.conf"));
  for (const char* command : {"plan c", "apply c"}) {
    auto out = fabgate(command);
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_NE(out.output.find("changes/c.yaml (modified)"), std::string::npos) << out.output;
  }
  EXPECT_EQ(config("d1"), "mtu 9000\n");
}

TEST_F(ApplyEndToEnd, TamperedEvidenceIsDetected) {
  // Given a finished bundle, then editing, deleting or adding a file is reported (exit 3).
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"));
  ASSERT_EQ(fabgate("apply c").exit_code, 0);
  auto dir = bundle();
  std::string verify = "evidence verify " + shell_quoted(dir.string());
  ASSERT_EQ(fabgate(verify).exit_code, 0);

  std::ofstream(dir / "report.md", std::ios::app) << "all green\n";
  auto modified = fabgate(verify);
  EXPECT_EQ(modified.exit_code, 3);
  EXPECT_NE(modified.output.find("modified: report.md"), std::string::npos) << modified.output;

  std::filesystem::remove(dir / "snapshots/post.json");
  std::ofstream(dir / "extra.txt") << "x";
  auto changed = fabgate(verify);
  EXPECT_EQ(changed.exit_code, 3);
  EXPECT_NE(changed.output.find("missing:  snapshots/post.json"), std::string::npos);
  EXPECT_NE(changed.output.find("extra:    extra.txt"), std::string::npos);
}

// Minimal XML well-formedness: balanced tags, proper nesting, attributes quoted.
bool well_formed_xml(const std::string& xml, std::string& why) {
  std::vector<std::string> stack;
  std::regex tag(
      "<(/?)([A-Za-z_][\\w.-]*)((?:\\s+[\\w:.-]+=\"[^\"<]*\")*)\\s*(/?)>|<\\?xml[^>]*\\?>");
  auto begin = std::sregex_iterator(xml.begin(), xml.end(), tag);
  std::size_t consumed = 0, tags = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    std::string between = xml.substr(consumed, static_cast<std::size_t>(m.position()) - consumed);
    if (between.find('<') != std::string::npos) {
      why = "stray '<' near: " + between.substr(0, 60);
      return false;
    }
    consumed = static_cast<std::size_t>(m.position() + m.length());
    if (m[2].length() == 0) continue;  // declaration
    ++tags;
    if (m[1] == "/") {
      if (stack.empty() || stack.back() != m[2]) {
        why = "unbalanced </" + m[2].str() + ">";
        return false;
      }
      stack.pop_back();
    } else if (m[4] != "/") {
      stack.push_back(m[2]);
    }
  }
  if (!stack.empty()) why = "unclosed <" + stack.back() + ">";
  return stack.empty() && tags > 0;
}

TEST_F(ApplyEndToEnd, JunitIsWellFormedWithATestcasePerGateAndProbe) {
  commit_intent(change("echo broken >> {home}/d1.conf"));
  std::string junit = repo_.file("junit.xml");
  auto out = fabgate("apply c --junit " + shell_quoted(junit));
  EXPECT_EQ(out.exit_code, 4) << out.output;
  std::string xml = testing::read_file(junit);
  std::string why;
  EXPECT_TRUE(well_formed_xml(xml, why)) << why << "\n" << xml;
  EXPECT_EQ(xml, testing::read_file((bundle() / "junit.xml").string()));
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = xml.find(needle); at != std::string::npos; at = xml.find(needle, at + 1)) ++n;
    return n;
  };
  auto m = manifest();
  // One testcase per gate plus one per probe run (baseline, acceptance, restored).
  EXPECT_EQ(count("<testcase "), m["gates"].size() + 3);
  EXPECT_GE(count("<failure "), 2u);  // the acceptance gate and its probe
  EXPECT_NE(xml.find("name=\"acceptance\""), std::string::npos);
}

}  // namespace
}  // namespace fabgate
