// The snapshot-pre gate inside a real Pipeline with scripted collaborators: a snapshot that
// cannot be written to the evidence bundle is absent evidence and blocks the change.

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

TEST(SnapshotGate, ABaselineThatCannotBeWrittenToTheEvidenceBlocksTheChange) {
  // Given leaf1 answering every source but a bundle where snapshots/pre.json cannot be written
  // (a folder stands in its place, as a full or broken evidence volume would fail the write),
  // then snapshot-pre is no-evidence naming the file, the run is refused (exit 3) and no step
  // reaches a device: without pre.json neither a reviewer nor `recover` has the baseline.
  ScriptedRun run({"leaf1"});
  run.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"}};
  run.snapshotter.before_returning = [&] {
    for (const auto& change_dir : std::filesystem::directory_iterator(run.evidence_root.path()))
      for (const auto& bundle : std::filesystem::directory_iterator(change_dir.path()))
        std::filesystem::create_directories(bundle.path() / "snapshots" / "pre.json" / "x");
  };
  auto outcome = run.run();

  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  EXPECT_EQ(run.remote.sent("step"), 0u);
  EXPECT_FALSE(outcome.change_started);
  const GateRecord* pre = gate_named(outcome, "snapshot-pre");
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->verdict, Verdict::no_evidence);
  EXPECT_NE(pre->summary.find("snapshots/pre.json could not be written"), std::string::npos)
      << all_details(*pre);
}

}  // namespace
}  // namespace fabgate::pipeline
