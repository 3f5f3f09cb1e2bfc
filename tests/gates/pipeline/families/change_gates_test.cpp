// The settle gate inside a real Pipeline with scripted collaborators: a settle the change's
// deadline cut short is no evidence and rolls the change back; a full one passes.

#include <gtest/gtest.h>

#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

// A run on leaf1 whose devices answer with an identity (the compat gate needs the target's)
// and one interface (a comparison that evaluates no check is no evidence), so only the settle
// gate decides.
ScriptedRun& answering(ScriptedRun& run) {
  for (const auto& device : run.repository.inventory.devices) {
    run.snapshotter.identities[device.name] = {{"hostname", device.name}};
    run.snapshotter.categories[device.name] = {
        {"interfaces", {{"eth0", {{"oper", "up"}, {"addresses", {"192.0.2.1/24"}}}}}}};
  }
  return run;
}

TEST(SettleGate, ASettleCutShortByTheDeadlineIsNoEvidenceAndRollsBack) {
  // Given a change declaring a 3 s settle within a 1 s deadline (counted from the run's start),
  // then settle waits what the deadline left, says how much of the declared settle that was and
  // why, is no evidence rather than pass, and the change is rolled back (exit 4).
  ScriptedRun run({"leaf1"});
  run.change.bounds.deadline = Duration{1'000};
  run.change.acceptance.settle = Duration{3'000};
  auto outcome = answering(run).run();

  const GateRecord* settle = gate_named(outcome, "settle");
  ASSERT_NE(settle, nullptr);
  EXPECT_EQ(settle->verdict, Verdict::no_evidence) << all_details(*settle);
  EXPECT_EQ(settle->summary.rfind("settled ", 0), 0u) << settle->summary;
  EXPECT_NE(settle->summary.find(" of the declared 3s: the change's deadline of 1s left no more"),
            std::string::npos)
      << settle->summary;
  EXPECT_LT(settle->duration, Duration{3'000});
  EXPECT_EQ(gate_named(outcome, "acceptance"), nullptr) << "acceptance judged an unsettled fabric";
  EXPECT_EQ(run.remote.sent("step"), 1u);
  EXPECT_EQ(run.remote.sent("rollback"), 1u);
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back);
}

TEST(SettleGate, ASettleWithinTheDeadlineIsWaitedInFullAndPasses) {
  // Given a 300 ms settle within the default 15 min deadline, then settle waits all of it and
  // passes, and nothing is rolled back.
  ScriptedRun run({"leaf1"});
  run.change.acceptance.settle = Duration{300};
  auto outcome = answering(run).run();

  const GateRecord* settle = gate_named(outcome, "settle");
  ASSERT_NE(settle, nullptr);
  EXPECT_EQ(settle->verdict, Verdict::pass) << all_details(*settle);
  EXPECT_EQ(settle->summary, "waited 300ms for the fabric to converge");
  EXPECT_GE(settle->duration, Duration{300});
  EXPECT_EQ(run.remote.sent("rollback"), 0u);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted);
}

}  // namespace
}  // namespace fabgate::pipeline
