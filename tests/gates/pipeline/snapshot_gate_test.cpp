// The snapshot-pre gate inside a real Pipeline with scripted collaborators: a snapshot that
// cannot be written to the evidence bundle is absent evidence and blocks the change.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <mutex>

#include "gates/pipeline/evidence.h"
#include "gates/pipeline/pipeline.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

// Answers every command with exit 0 and counts the steps.
class CountingRemote final : public Remote {
 public:
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string&, Duration,
                   std::string_view purpose) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (purpose == "step") ++steps;
    ssh::CommandResult result;
    result.exit_status = 0;
    result.started_at = now_utc();
    return result;
  }
  int steps = 0;

 private:
  std::mutex mutex_;
};

// Collects a complete snapshot, but first puts a folder where the bundle's snapshots/pre.json
// must go, the way a full disk or a broken evidence volume makes the write fail.
class SnapshotterThatBlocksTheWrite final : public Snapshotter {
 public:
  std::filesystem::path bundle_dir;

  TakenSnapshot take(const std::vector<const intent::Device*>& devices,
                     const std::string& intent_commit) override {
    std::filesystem::create_directories(bundle_dir / "snapshots" / "pre.json" / "blocker");
    TakenSnapshot taken;
    taken.document = {{"format", "fabgate.snapshot/1"},
                      {"taken_at", format_utc(now_utc())},
                      {"intent_commit", intent_commit},
                      {"devices", json::object()}};
    for (const auto* device : devices)
      taken.document["devices"][device->name] = {{"sources", json::object()}};
    return taken;
  }
};

TEST(SnapshotGate, ABaselineThatCannotBeWrittenToTheEvidenceBlocksTheChange) {
  // Given devices that answer every source but an evidence bundle where snapshots/pre.json
  // cannot be written, then snapshot-pre is no-evidence naming the file, the run is refused
  // (exit 3) and no step reaches a device: without pre.json neither a reviewer nor `recover`
  // has the baseline.
  intent::IntentRepository repository;
  repository.commit.id = "0123456789abcdef0123456789abcdef01234567";
  intent::Device leaf1;
  leaf1.name = "leaf1";
  leaf1.platform = "frr";
  leaf1.ssh = {"127.0.0.1", 22};
  repository.inventory.devices = {leaf1};
  intent::Change change;
  change.id = "snapshot-gate-test";
  change.targets = {"leaf1"};
  change.bounds.max_targets = 1;
  intent::Step step;
  step.device = "leaf1";
  step.run = "echo change";
  change.steps.push_back(step);
  step.run = "echo undo";
  change.rollback.push_back(step);

  testing::TempDir evidence_root("fabgate-snapshot-gate");
  auto bundle =
      EvidenceBundle::create(evidence_root.path(), change.id, now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok());
  CountingRemote remote;
  SnapshotterThatBlocksTheWrite snapshotter;
  snapshotter.bundle_dir = bundle.value()->dir();
  GateObserver observer;
  PipelineOptions options;
  options.mode = Mode::apply;
  options.operator_name = "snapshot-gate-test";
  Pipeline pipeline(repository, change, {remote, snapshotter, *bundle.value(), observer}, options);
  auto outcome = pipeline.run();

  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  EXPECT_EQ(remote.steps, 0);
  EXPECT_FALSE(outcome.change_started);
  const GateRecord* pre = nullptr;
  for (const auto& record : outcome.gates)
    if (record.name == "snapshot-pre") pre = &record;
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->verdict, Verdict::no_evidence);
  EXPECT_NE(pre->summary.find("snapshots/pre.json could not be written"), std::string::npos)
      << pre->summary;
}

}  // namespace
}  // namespace fabgate::pipeline
