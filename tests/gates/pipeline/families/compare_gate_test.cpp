// The compare gates inside a real Pipeline, with a scripted Remote and Snapshotter whose
// snapshots have the collector's shape: what a comparison that checked nothing proves.

#include <gtest/gtest.h>

#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

TEST(CompareGate, ZeroEvaluatedChecksIsNoEvidenceAndTheChangeIsRolledBack) {
  // Given snapshots in which no compare rule reaches any element (host1's identity has only a
  // hostname; no other category is collected), then the compare gate is no-evidence, not
  // "PASS: 0 checks": the change is rolled back and the run does not exit 0.
  ScriptedRun run({"host1"});
  run.snapshotter.identities["host1"] = {{"hostname", "host1"}};
  auto outcome = run.run();
  const auto* compare = gate_named(outcome, "compare");
  ASSERT_NE(compare, nullptr);
  EXPECT_EQ(compare->verdict, Verdict::no_evidence) << all_details(*compare);
  EXPECT_EQ(compare->summary.rfind("NO-EVIDENCE: 0 checks", 0), 0u) << compare->summary;
  EXPECT_NE(outcome.exit_code, ExitCode::accepted);
  EXPECT_EQ(run.remote.sent("step"), 1u);
  EXPECT_EQ(run.remote.sent("rollback"), 1u);
  const auto* restored = gate_named(outcome, "compare-restored");
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->verdict, Verdict::no_evidence) << all_details(*restored);
}

TEST(CompareGate, OneEvaluatedCheckThatHoldsLetsTheChangeStand) {
  // Given the same run but host1's kernel collected (one identity rule reaches it and it holds),
  // then compare passes and the run exits 0 without a rollback.
  ScriptedRun run({"host1"});
  run.snapshotter.identities["host1"] = {{"hostname", "host1"}, {"kernel", "6.1.0-28-amd64"}};
  auto outcome = run.run();
  const auto* compare = gate_named(outcome, "compare");
  ASSERT_NE(compare, nullptr);
  EXPECT_EQ(compare->verdict, Verdict::pass) << all_details(*compare);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;
  EXPECT_EQ(run.remote.sent("rollback"), 0u);
}

}  // namespace
}  // namespace fabgate::pipeline
