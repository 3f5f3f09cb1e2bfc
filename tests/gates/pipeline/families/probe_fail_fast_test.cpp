// Acceptance fails fast (issue 44): once a probe fails, the probes declared after it are not
// run, so a broken fabric is rolled back now instead of after the slowest probe (a collective's
// 90 s timeout). They read "not run" (no evidence, the failed probe named), never pass. A waived
// failure does not stop the phase, and the baseline runs every probe. The remote is scripted:
// each probe is a command whose exit status is its verdict.

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "gates/pipeline/families/probes.h"
#include "tests/gates/pipeline/probe_hosts.h"
#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

// Runs probe commands: "false" fails, anything else passes. Remembers what it ran.
class CommandRemote final : public Remote {
 public:
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string& command, Duration,
                   std::string_view) override {
    std::lock_guard lock(mutex_);
    ran.push_back(command);
    ssh::CommandResult result;
    result.started_at = now_utc();
    result.exit_status = command == "false" ? 1 : 0;
    return result;
  }
  std::vector<std::string> ran;

 private:
  std::mutex mutex_;
};

intent::Probe command_probe(const std::string& name, const std::string& run) {
  intent::Probe probe;
  probe.name = name;
  probe.host = "host1";
  probe.run = run;
  return probe;
}

struct FailFast : ::testing::Test {
  intent::Inventory inventory{{probe_host("host1", "10.0.0.1")}};
  intent::ProbeSettings settings;
  CommandRemote remote;
  std::vector<intent::Probe> probes{command_probe("first", "echo first"),
                                    command_probe("broken", "false"),
                                    command_probe("slow-collective", "echo slow")};
};

TEST_F(FailFast, TheProbesAfterTheFirstFailureAreNotRunAndReadNotRun) {
  // Given three probes whose second fails, and a phase that stops at its first failure
  ProbeContext context{inventory, settings};
  context.stop_after = [](const ProbeOutcome& outcome) { return outcome.verdict == Verdict::fail; };
  auto outcomes = run_probes(remote, context, probes, "acceptance");
  // Then the third never reached the host, and reads no evidence naming the failed probe
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[0].verdict, Verdict::pass);
  EXPECT_EQ(outcomes[1].verdict, Verdict::fail);
  EXPECT_EQ(outcomes[2].name, "slow-collective");
  EXPECT_EQ(outcomes[2].verdict, Verdict::no_evidence);
  EXPECT_EQ(outcomes[2].reason,
            "not run: acceptance stopped at its first failed probe, 'broken' on host1");
  EXPECT_EQ(remote.ran, (std::vector<std::string>{"echo first", "false"}));
}

TEST_F(FailFast, WithoutAStopRuleEveryProbeRuns) {
  // Given the same probes in a phase that runs them all (the baseline, restore rounds)
  ProbeContext context{inventory, settings};
  auto outcomes = run_probes(remote, context, probes, "baseline");
  // Then all three ran and the third passed
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[2].verdict, Verdict::pass);
  EXPECT_EQ(remote.ran.size(), 3u);
}

// Probes pass until a step was sent and after the rollback; in between, the probe "breaks"
// fails. Counts the probes run while the change was on the devices.
class ChangeBreaksOneProbe final : public Remote {
 public:
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string& command, Duration,
                   std::string_view purpose) override {
    ssh::CommandResult result;
    result.started_at = now_utc();
    result.exit_status = 0;
    if (purpose == "step") changed_ = true;
    if (purpose == "rollback") changed_ = false;
    if (purpose == "probe" && changed_) {
      ++run_while_changed;
      if (command == "breaks") result.exit_status = 1;
    }
    return result;
  }
  std::atomic<int> run_while_changed{0};

 private:
  std::atomic<bool> changed_{false};
};

RunOutcome run_pipeline(ScriptedRun& run, Remote& remote) {
  for (const auto& device : run.repository.inventory.devices) {
    run.snapshotter.identities[device.name] = {{"hostname", device.name}};
    run.snapshotter.categories[device.name] = {
        {"interfaces", {{"eth0", {{"oper", "up"}, {"addresses", {"192.0.2.1/24"}}}}}}};
  }
  auto bundle = EvidenceBundle::create(run.evidence_root.path(), run.change.id, now_utc(), "run1",
                                       Redactor{});
  EXPECT_TRUE(bundle.ok());
  if (!bundle.ok()) return RunOutcome{};
  GateObserver observer;
  PipelineOptions options;
  options.operator_name = "fail-fast-test";
  Pipeline pipeline(run.repository, run.change,
                    {remote, run.snapshotter, *bundle.value(), observer}, options);
  return pipeline.run();
}

TEST(FailFastPipeline, AcceptanceStopsAtTheFirstFailedProbeAndTheChangeIsRolledBack) {
  // Given a change on leaf1 whose acceptance declares a probe the change breaks, then two more
  ScriptedRun run({"leaf1"});
  run.change.acceptance.probes.clear();
  for (const auto& [name, command] :
       {std::pair{"breaks", "breaks"}, {"second", "true"}, {"third", "true"}}) {
    intent::Probe probe;
    probe.name = name;
    probe.host = "host1";
    probe.run = command;
    run.change.acceptance.probes.push_back(probe);
  }
  ChangeBreaksOneProbe remote;
  auto outcome = run_pipeline(run, remote);
  // Then acceptance failed on the first probe alone, the other two read "not run", and the
  // change was rolled back (exit 4: rolled back, baseline verified)
  const auto* acceptance = gate_named(outcome, "acceptance");
  ASSERT_NE(acceptance, nullptr);
  EXPECT_EQ(acceptance->verdict, Verdict::fail) << all_details(*acceptance);
  EXPECT_EQ(remote.run_while_changed.load(), 1);
  const std::string details = all_details(*acceptance);
  EXPECT_NE(details.find("second on host1: no-evidence: not run: acceptance stopped at its first "
                         "failed probe, 'breaks' on host1"),
            std::string::npos)
      << details;
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back) << details;
}

}  // namespace
}  // namespace fabgate::pipeline
