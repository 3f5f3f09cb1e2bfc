#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gates/pipeline/families/execute.h"
#include "gates/pipeline/families/gnmi_steps.h"
#include "gates/pipeline/reporting/evidence.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using gnmi::GnmiFailure;

const std::string kMtuPath = "/interfaces/interface[name=to-host1]/config/mtu";

// SSH must not be used by gNMI steps: any call is a test failure.
class NoSshRemote final : public Remote {
 public:
  RemoteResult run(const intent::Device& device, ssh::CredentialRole, const std::string& command,
                   Duration, std::string_view) override {
    ADD_FAILURE() << "SSH used for " << device.name << ": " << command;
    return ssh::SshFailure{ssh::SshFailure::Kind::unreachable, "no SSH in this test"};
  }
};

// Records every Set and answers with the scripted failures, in order; success once they run out.
class ScriptedGnmiSteps final : public GnmiSteps {
 public:
  struct Call {
    std::string device;
    std::vector<intent::GnmiSetOperation> operations;
    Duration deadline{0};
    std::string purpose;
  };
  std::vector<Call> calls;
  std::vector<GnmiFailure> failures;

  gnmi::GnmiResult<gnmi::SetResult> apply(const intent::Device& device,
                                          const std::vector<intent::GnmiSetOperation>& operations,
                                          Duration deadline, std::string_view purpose) override {
    calls.push_back({device.name, operations, deadline, std::string(purpose)});
    if (!failures.empty()) {
      auto failure = failures.front();
      failures.erase(failures.begin());
      return failure;
    }
    gnmi::SetResult result;
    for (const auto& operation : operations)
      result.applied.push_back(operation.op + " " + operation.path);
    return result;
  }
};

intent::Inventory lab_inventory() {
  intent::Device leaf1;
  leaf1.name = "leaf1";
  leaf1.gnmi = intent::GnmiEndpoint{.host = "10.255.0.21", .port = 9339, .tls = false};
  return {{leaf1}};
}

// A leaf1 MTU change: one step with two operations, one rollback step.
intent::Change mtu_change() {
  intent::Change change;
  change.id = "leaf1-mtu-gnmi";
  change.targets = {"leaf1"};
  change.bounds.step_timeout = Duration{5'000};
  intent::Step step;
  step.device = "leaf1";
  step.gnmi_set = {{"update", kMtuPath, "9000"},
                   {"update", "/interfaces/interface[name=to-host1]/config/enabled", "true"}};
  change.steps.push_back(step);
  intent::Step undo;
  undo.device = "leaf1";
  undo.gnmi_set = {{"replace", kMtuPath, "1500"}};
  change.rollback.push_back(undo);
  return change;
}

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::chrono::steady_clock::time_point in_a_minute() {
  return std::chrono::steady_clock::now() + std::chrono::minutes(1);
}

TEST(ExecutorGnmi, AGnmiStepIsOneSetWithAllItsOperationsAndTheRollbackIsAnotherSet) {
  // Given a change whose step and rollback are gNMI Sets, then apply sends all operations of
  // the step in one Set within the step timeout, rollback sends the rollback Set, no SSH is
  // used, and the journal names both as "gnmi set ..." commands.
  testing::TempDir dir;
  auto bundle = EvidenceBundle::create(dir.path(), "leaf1-mtu-gnmi", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok());
  NoSshRemote ssh;
  ScriptedGnmiSteps gnmi;
  auto inventory = lab_inventory();
  auto change = mtu_change();
  Executor executor(ssh, inventory, change, bundle.value().get(), 4, &gnmi);

  auto execution = executor.apply(in_a_minute());
  ASSERT_EQ(execution.runs.size(), 1u);
  EXPECT_EQ(execution.runs[0].state, StepState::succeeded) << execution.runs[0].reason;
  EXPECT_FALSE(execution.failure.has_value());
  EXPECT_EQ(execution.touched, std::vector<std::string>{"leaf1"});
  ASSERT_EQ(gnmi.calls.size(), 1u);
  EXPECT_EQ(gnmi.calls[0].device, "leaf1");
  EXPECT_EQ(gnmi.calls[0].operations.size(), 2u);
  EXPECT_EQ(gnmi.calls[0].purpose, "step");
  EXPECT_EQ(gnmi.calls[0].deadline, Duration{5'000});
  EXPECT_EQ(execution.runs[0].command,
            "gnmi set update " + kMtuPath +
                " = 9000; update /interfaces/interface[name=to-host1]/config/enabled = true");

  auto rollback = executor.rollback(execution.touched);
  EXPECT_TRUE(rollback.complete());
  ASSERT_EQ(gnmi.calls.size(), 2u);
  EXPECT_EQ(gnmi.calls[1].purpose, "rollback");
  EXPECT_EQ(gnmi.calls[1].operations[0].op, "replace");
  EXPECT_EQ(gnmi.calls[1].operations[0].value, "1500");

  auto journal = read_lines((bundle.value()->dir() / "journal.jsonl").string());
  ASSERT_EQ(journal.size(), 4u);
  EXPECT_EQ(journal[0]["event"], "step-start");
  EXPECT_EQ(journal[0]["command"], execution.runs[0].command);
  EXPECT_EQ(journal[1]["state"], "succeeded");
  EXPECT_EQ(journal[2]["event"], "rollback-start");
  EXPECT_EQ(journal[2]["command"], "gnmi set replace " + kMtuPath + " = 1500");
}

TEST(ExecutorGnmi, ATimedOutSetMayHaveAppliedAndIsRolledBack) {
  // Given a Set whose reply never came within the step timeout, then the step is timed-out,
  // the device counts as touched (the target may have applied it) and the run stops.
  NoSshRemote ssh;
  ScriptedGnmiSteps gnmi;
  gnmi.failures = {{GnmiFailure::Kind::timeout, "gnmi: leaf1: Set: timed out after 5s"}};
  auto inventory = lab_inventory();
  auto change = mtu_change();
  Executor executor(ssh, inventory, change, nullptr, 4, &gnmi);
  auto execution = executor.apply(in_a_minute());
  ASSERT_EQ(execution.runs.size(), 1u);
  EXPECT_EQ(execution.runs[0].state, StepState::timed_out);
  EXPECT_TRUE(execution.runs[0].may_have_applied());
  EXPECT_EQ(execution.touched, std::vector<std::string>{"leaf1"});
  ASSERT_TRUE(execution.failure.has_value());
  EXPECT_NE(execution.failure->find("timed out after 5s (step timeout)"), std::string::npos)
      << *execution.failure;
}

TEST(ExecutorGnmi, AnUnreachableTargetLeavesTheDeviceUntouched) {
  // Given a target that does not answer before the Set is written, then the step is not-sent,
  // nothing needs rolling back and the failure names the cause.
  NoSshRemote ssh;
  ScriptedGnmiSteps gnmi;
  gnmi.failures = {{GnmiFailure::Kind::unreachable,
                    "gnmi: leaf1 (10.255.0.21:9339): Set: connection refused", false,
                    GnmiFailure::Delivery::not_sent}};
  auto inventory = lab_inventory();
  auto change = mtu_change();
  Executor executor(ssh, inventory, change, nullptr, 4, &gnmi);
  auto execution = executor.apply(in_a_minute());
  ASSERT_EQ(execution.runs.size(), 1u);
  EXPECT_EQ(execution.runs[0].state, StepState::not_sent);
  EXPECT_TRUE(execution.touched.empty());
  ASSERT_TRUE(execution.failure.has_value());
  EXPECT_NE(execution.failure->find("connection refused"), std::string::npos);
}

TEST(ExecutorGnmi, AConnectionLostAfterTheSetWasWrittenCountsAsAppliedAndIsRolledBack) {
  // Given a Set that was written and then answered UNAVAILABLE (the target restarted its
  // management plane), then the step's outcome is unknown, it counts as applied, the reason
  // says so, and the rollback Set is sent to the device.
  NoSshRemote ssh;
  ScriptedGnmiSteps gnmi;
  gnmi.failures = {{GnmiFailure::Kind::unreachable,
                    "gnmi: leaf1 (10.255.0.21:9339): Set: Socket closed (gRPC status 14)"}};
  auto inventory = lab_inventory();
  auto change = mtu_change();
  Executor executor(ssh, inventory, change, nullptr, 4, &gnmi);
  auto execution = executor.apply(in_a_minute());
  ASSERT_EQ(execution.runs.size(), 1u);
  EXPECT_EQ(execution.runs[0].state, StepState::outcome_unknown);
  EXPECT_EQ(to_string(execution.runs[0].state), "outcome-unknown");
  EXPECT_TRUE(execution.runs[0].may_have_applied());
  EXPECT_NE(execution.runs[0].reason.find("after the Set was sent; treated as applied"),
            std::string::npos)
      << execution.runs[0].reason;
  EXPECT_EQ(execution.touched, std::vector<std::string>{"leaf1"});
  auto rollback = executor.rollback(execution.touched);
  EXPECT_TRUE(rollback.complete());
  ASSERT_EQ(gnmi.calls.size(), 2u);
  EXPECT_EQ(gnmi.calls[1].purpose, "rollback");
}

TEST(ExecutorGnmi, ARejectedSetFailsTheStepAndARejectedRollbackFailsTheDevice) {
  // Given a target that refuses the step's Set and then the rollback's, then the step failed
  // (the device stays in the rollback set) and the rollback reports leaf1 as not restored.
  NoSshRemote ssh;
  ScriptedGnmiSteps gnmi;
  gnmi.failures = {{GnmiFailure::Kind::rejected, "mtu 100000 out of range"},
                   {GnmiFailure::Kind::rejected, "no such interface"}};
  auto inventory = lab_inventory();
  auto change = mtu_change();
  Executor executor(ssh, inventory, change, nullptr, 4, &gnmi);
  auto execution = executor.apply(in_a_minute());
  ASSERT_EQ(execution.runs.size(), 1u);
  EXPECT_EQ(execution.runs[0].state, StepState::failed);
  EXPECT_EQ(execution.runs[0].reason, "rejected: mtu 100000 out of range");
  auto rollback = executor.rollback(execution.touched);
  EXPECT_EQ(rollback.failed_devices, std::vector<std::string>{"leaf1"});
}

TEST(ExecutorGnmi, WithoutAGnmiClientNothingIsSent) {
  // Given an executor built without a gNMI client, then a gNMI step is not sent and says why.
  NoSshRemote ssh;
  auto inventory = lab_inventory();
  auto change = mtu_change();
  Executor executor(ssh, inventory, change, nullptr, 4);
  auto execution = executor.apply(in_a_minute());
  ASSERT_EQ(execution.runs.size(), 1u);
  EXPECT_EQ(execution.runs[0].state, StepState::not_sent);
  EXPECT_TRUE(execution.touched.empty());
}

TEST(RecordingGnmiSteps, EverySetLandsInCommandsJsonl) {
  // Given a recorded Set that succeeds and one that fails, then commands.jsonl holds both with
  // device, purpose, the operations and what the target applied or why it failed.
  testing::TempDir dir;
  auto bundle = EvidenceBundle::create(dir.path(), "c", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok());
  ScriptedGnmiSteps inner;
  inner.failures = {{GnmiFailure::Kind::rejected, "no such interface"}};
  RecordingGnmiSteps recording(inner, *bundle.value());
  auto leaf1 = lab_inventory().devices[0];
  std::vector<intent::GnmiSetOperation> operations = {{"replace", kMtuPath, "1500"}};
  EXPECT_FALSE(recording.apply(leaf1, operations, Duration{2'000}, "step").ok());
  EXPECT_TRUE(recording.apply(leaf1, operations, Duration{2'000}, "rollback").ok());

  auto commands = read_lines((bundle.value()->dir() / "commands.jsonl").string());
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0]["device"], "leaf1");
  EXPECT_EQ(commands[0]["purpose"], "step");
  EXPECT_EQ(commands[0]["transport"], "gnmi");
  EXPECT_EQ(commands[0]["command"], "gnmi set replace " + kMtuPath + " = 1500");
  EXPECT_EQ(commands[0]["failure"], "rejected");
  EXPECT_EQ(commands[0]["message"], "no such interface");
  EXPECT_EQ(commands[1]["purpose"], "rollback");
  EXPECT_EQ(commands[1]["applied"][0], "replace " + kMtuPath);
}

TEST(GnmiClientOptions, TheInventoryEndpointAndEnvironmentLoginBuildTheClient) {
  // Given a plaintext endpoint without credentials, then the client dials host:port without
  // TLS and without login; given a credentials prefix whose variables are unset, then it is an
  // auth failure rather than an anonymous login; given them set, they are the login.
  auto leaf1 = lab_inventory().devices[0];
  auto plain = client_options_for(leaf1);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->address, "10.255.0.21:9339");
  EXPECT_FALSE(plain->tls);
  EXPECT_FALSE(plain->login.has_value());

  leaf1.gnmi->credentials_env = "FABGATE_GNMI_STEPS_TEST";
  ::unsetenv("FABGATE_GNMI_STEPS_TEST_USERNAME");
  ::unsetenv("FABGATE_GNMI_STEPS_TEST_PASSWORD");
  auto missing = client_options_for(leaf1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, GnmiFailure::Kind::auth);
  EXPECT_NE(missing.error().message.find("leaf1"), std::string::npos);

  ::setenv("FABGATE_GNMI_STEPS_TEST_USERNAME", "ops", 1);
  ::setenv("FABGATE_GNMI_STEPS_TEST_PASSWORD", "secret", 1);
  auto with_login = client_options_for(leaf1);
  ::unsetenv("FABGATE_GNMI_STEPS_TEST_USERNAME");
  ::unsetenv("FABGATE_GNMI_STEPS_TEST_PASSWORD");
  ASSERT_TRUE(with_login.ok());
  ASSERT_TRUE(with_login->login.has_value());
  EXPECT_EQ(with_login->login->username, "ops");

  leaf1.gnmi.reset();
  EXPECT_FALSE(client_options_for(leaf1).ok());
}

TEST(GnmiClientOptions, TlsWithoutCaFileAndAServerNameReachTheClient) {
  // Given a TLS endpoint with no ca_file and a tls_server_name, then the client trusts the
  // system store (an empty CA file) and checks the certificate for that name.
  auto leaf1 = lab_inventory().devices[0];
  leaf1.gnmi->tls = true;
  leaf1.gnmi->ca_file.clear();
  leaf1.gnmi->tls_server_name = "leaf1.fabric.example";
  auto options = client_options_for(leaf1);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->tls);
  EXPECT_EQ(options->ca_file, "");
  EXPECT_EQ(options->tls_server_name, "leaf1.fabric.example");
}

}  // namespace
}  // namespace fabgate::pipeline
