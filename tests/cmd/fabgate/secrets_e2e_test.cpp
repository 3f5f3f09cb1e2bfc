// secrets.env values delivered to devices, end to end through the real binary, a real git
// repository and a real sshd on loopback: a step that says $FG_STEP_KEY runs on the device with
// the value from fabgate's own environment (the SSH session does not carry that environment,
// so only fabgate can have put it there), while the evidence bundle and the terminal hold only
// the placeholder.

#include <signal.h>

#include <chrono>
#include <thread>

#include "tests/cmd/fabgate/e2e_fixture.h"
#include "tests/support/process.h"

namespace fabgate::testing {
namespace {

using namespace std::chrono_literals;

// No secret shape (the redactor's patterns leave it alone), so only delivery can put it on the
// device and only the configured-value redaction can keep it out of the evidence.
const std::string kValue = "Zq8kStepValue";

class SecretsEndToEnd : public FabgateEndToEnd {
 protected:
  std::string device_file(const std::string& name) const { return sshd_->home() + "/" + name; }
  // Every file of the bundle that holds `text` (grep -rl), empty when none does.
  std::string files_holding(const std::filesystem::path& dir, const std::string& text) {
    return run_shell("grep -rlF " + shell_quoted(text) + " " + shell_quoted(dir.string())).output;
  }
};

TEST_F(SecretsEndToEnd, StepReceivesTheValueAndEvidenceAndTerminalHoldOnlyThePlaceholder) {
  // Given a step that writes "$FG_STEP_KEY" to a file on the device and a probe that checks it
  // (once written) with ${FG_STEP_KEY}, then the device file holds the value, the change is
  // accepted, and no
  // byte of the bundle or the terminal holds the value, while commands.jsonl, the journal and
  // execution.json keep the placeholder.
  commit_intent(
      change("echo \"$FG_STEP_KEY\" > {home}/delivered.txt", "cp {home}/d1.bak {home}/d1.conf",
             "! test -e {home}/delivered.txt || grep -qx '${FG_STEP_KEY}' "
             "{home}/delivered.txt"),
      "secrets:\n  env: [FG_STEP_KEY]\n");
  auto out = fabgate_with("FG_STEP_KEY=" + kValue, "apply c");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(read_file(device_file("delivered.txt")), kValue + "\n");
  EXPECT_EQ(out.output.find(kValue), std::string::npos) << out.output;
  auto dir = bundle();
  EXPECT_EQ(files_holding(dir, kValue), "") << "the value is in these evidence files";
  auto steps = commands("step", "d1");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_NE(steps[0].find("echo \"$FG_STEP_KEY\" >"), std::string::npos) << steps[0];
  auto probes = commands("probe", "d2");
  ASSERT_FALSE(probes.empty());
  EXPECT_NE(probes.back().find("'${FG_STEP_KEY}'"), std::string::npos) << probes.back();
  EXPECT_NE(read_file((dir / "journal.jsonl").string()).find("$FG_STEP_KEY"), std::string::npos);
  EXPECT_NE(read_file((dir / "execution.json").string()).find("$FG_STEP_KEY"), std::string::npos);
}

TEST_F(SecretsEndToEnd, ConfirmTimerRollbackOnTheDeviceGetsTheValueToo) {
  // Given a change whose rollback writes ${FG_STEP_KEY} to the device and a 6 s confirm timer,
  // and a controller killed after its first step, then the device's own timer runs the
  // rollback with the value (it carries the rollback commands, substituted like any command),
  // while commands.jsonl recorded the arm command with the placeholder.
  commit_intent(R"(id: c
title: slow change with a secret in its rollback
targets: [d1]
bounds: {max_targets: 1, step_timeout: 5s, deadline: 6s}
confirm_timeout: 6s
steps:
  - {device: d1, run: "echo 'mtu 9100' >> {home}/d1.conf"}
  - {device: d1, run: "sleep 4"}
rollback:
  - {device: d1, run: "echo \"${FG_STEP_KEY}\" > {home}/reverted.txt"}
acceptance:
  probes:
    - {name: config-healthy, layer: workload, host: d2, run: "true", timeout: 10s}
)",
                "secrets:\n  env: [FG_STEP_KEY]\n");
  ChildProcess run({"/bin/sh", "-c",
                    "cd " + shell_quoted(repo_.path()) + " && FG_STEP_KEY=" + kValue + " exec " +
                        shell_quoted(kFabgate) + " apply c > " +
                        shell_quoted(repo_.file("apply.log")) + " 2>&1"});
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nmtu 9100\n"; }, 30s))
      << read_file(repo_.file("apply.log"));
  ::kill(run.pid(), SIGKILL);
  run.stop();
  EXPECT_TRUE(eventually([&] { return file_exists(device_file("reverted.txt")); }, 20s))
      << "the device's timer did not run the rollback";
  EXPECT_EQ(read_file(device_file("reverted.txt")), kValue + "\n");
  auto dir = bundle();
  EXPECT_EQ(files_holding(dir, kValue), "") << "the value is in these evidence files";
  EXPECT_NE(read_file((dir / "commands.jsonl").string()).find("${FG_STEP_KEY}"), std::string::npos);
}

TEST_F(SecretsEndToEnd, UsedSecretThatIsUnsetOrUnsafeRefusesBeforeAnythingIsSent) {
  // Given a step using $FG_STEP_KEY, then without the variable (or with an empty one) apply
  // exits 3 naming it and where it is used, and with a value holding a single quote likewise;
  // in each case no evidence bundle is started and the device is untouched.
  commit_intent(change("echo \"$FG_STEP_KEY\" > {home}/delivered.txt"),
                "secrets:\n  env: [FG_STEP_KEY, FG_UNUSED_KEY]\n");
  for (const std::string& environment :
       {std::string("env -u FG_STEP_KEY"), std::string("FG_STEP_KEY="),
        std::string("FG_STEP_KEY=\"it's\"")}) {
    auto out = fabgate_with(environment, "apply c");
    EXPECT_EQ(out.exit_code, 3) << environment << ": " << out.output;
    EXPECT_NE(out.output.find(environment.back() == '"' ? "FG_STEP_KEY holds a single quote"
                                                        : "FG_STEP_KEY is not set"),
              std::string::npos)
        << out.output;
    EXPECT_EQ(out.output.find("<redacted>"), std::string::npos) << out.output;
    EXPECT_NE(out.output.find("changes/c.yaml:"), std::string::npos) << out.output;
    EXPECT_NE(out.output.find("nothing was sent"), std::string::npos) << out.output;
    EXPECT_EQ(out.output.find("FG_UNUSED_KEY is not"), std::string::npos)
        << "an unused secret refused the change: " << out.output;
    EXPECT_TRUE(bundles().empty());
    EXPECT_FALSE(file_exists(device_file("delivered.txt")));
    EXPECT_EQ(config("d1"), "mtu 9000\n");
  }
}

}  // namespace
}  // namespace fabgate::testing

namespace fabgate::testing {
namespace {

TEST_F(SecretsEndToEnd, AnUnsetSecretThatNoStepUsesIsAWarningThatNamesIt) {
  // Given secrets.env naming FG_UNUSED_KEY, which no step uses and the environment lacks, then a
  // plan still runs, and its warning names the variable (a name is not a secret, so it must not
  // be redacted away).
  commit_intent(change("echo ok >> {home}/d1.conf"), "secrets:\n  env: [FG_UNUSED_KEY]\n");
  auto out = fabgate_with("env -u FG_UNUSED_KEY", "plan c");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("warning: FG_UNUSED_KEY"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("is not set in the environment"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("<redacted> (fabgate.yaml"), std::string::npos) << out.output;
}

}  // namespace
}  // namespace fabgate::testing
