// The executor's worker threads: a device whose worker throws mid-step is a typed failure of
// that device (its step's fate unknown, so it is rolled back), never std::terminate, and the
// other devices' runs arrive as they ended. A scripted Remote stands in for SSH.

#include "gates/pipeline/families/execute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "gates/pipeline/reporting/evidence.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

// Succeeds for every command, except that a step sent to `thrower` throws (a bug in a
// collaborator, not an SSH failure), after the command was handed on.
class ThrowingRemote final : public Remote {
 public:
  explicit ThrowingRemote(std::string thrower) : thrower_(std::move(thrower)) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole, const std::string& command,
                   Duration, std::string_view purpose) override {
    {
      std::lock_guard lock(mutex_);
      sent.push_back(device.name + ": " + command);
    }
    if (device.name == thrower_ && purpose == "step") throw std::runtime_error("parser bug");
    ssh::CommandResult result;
    result.exit_status = 0;
    return result;
  }
  std::vector<std::string> sent;

 private:
  std::string thrower_;
  std::mutex mutex_;
};

intent::Change three_device_change() {
  intent::Change change;
  change.id = "c";
  change.targets = {"d1", "d2", "d3"};
  change.bounds.step_timeout = Duration{5'000};
  for (const char* device : {"d1", "d2", "d3"}) {
    intent::Step step;
    step.device = device;
    step.run = "echo change";
    change.steps.push_back(step);
    intent::Step undo;
    undo.device = device;
    undo.run = "echo undo";
    change.rollback.push_back(undo);
  }
  return change;
}

TEST(ExecutorWorkers, ADeviceWhoseWorkerThrowsIsOutcomeUnknownAndTheOthersRunsArrive) {
  // Given three devices in one wave and d2's worker throwing during its step, then apply
  // returns (no exception, no terminate): d1's and d3's steps succeeded and are recorded, d2's
  // step is outcome-unknown naming the cause, d2 counts as touched (rolled back), the wave
  // failed, and the rollback then undoes all three.
  testing::TempDir dir;
  auto bundle = EvidenceBundle::create(dir.path(), "c", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok());
  ThrowingRemote remote("d2");
  intent::Inventory inventory;
  for (const char* name : {"d1", "d2", "d3"}) {
    intent::Device device;
    device.name = name;
    inventory.devices.push_back(device);
  }
  auto change = three_device_change();
  Executor executor(remote, inventory, change, bundle.value().get(), 3, nullptr);

  Execution execution;
  ASSERT_NO_THROW(execution = executor.apply(std::chrono::steady_clock::now() +
                                             std::chrono::minutes(1)));
  ASSERT_TRUE(execution.failure.has_value());
  EXPECT_NE(execution.failure->find("d2"), std::string::npos) << *execution.failure;
  EXPECT_NE(execution.failure->find("parser bug"), std::string::npos) << *execution.failure;
  std::vector<std::string> succeeded;
  const StepRun* d2 = nullptr;
  for (const auto& run : execution.runs) {
    if (run.state == StepState::succeeded) succeeded.push_back(run.device);
    if (run.device == "d2") d2 = &run;
  }
  std::sort(succeeded.begin(), succeeded.end());
  EXPECT_EQ(succeeded, (std::vector<std::string>{"d1", "d3"}));
  ASSERT_NE(d2, nullptr);
  EXPECT_EQ(d2->state, StepState::outcome_unknown);
  EXPECT_NE(d2->reason.find("internal error"), std::string::npos) << d2->reason;
  EXPECT_EQ(d2->command, "echo change");
  auto touched = execution.touched;
  std::sort(touched.begin(), touched.end());
  EXPECT_EQ(touched, (std::vector<std::string>{"d1", "d2", "d3"}));
  EXPECT_EQ(execution.waves_completed, 0);

  auto undone = executor.rollback(execution.touched);
  EXPECT_TRUE(undone.complete());
  EXPECT_EQ(undone.runs.size(), 3u);
}

}  // namespace
}  // namespace fabgate::pipeline
