// The compare gates inside a real Pipeline, with a scripted Remote and Snapshotter whose
// snapshots have the collector's shape: what a comparison that checked nothing proves.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

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

// The prefixes of `device`'s ipv4 list in the bundle's snapshots/<label>.json (empty: no file
// under `root`, or no such list).
std::set<std::string> listed_prefixes(const std::filesystem::path& root, const std::string& label,
                                      const std::string& device) {
  std::set<std::string> prefixes;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().filename() != label + ".json" ||
        entry.path().parent_path().filename() != "snapshots")
      continue;
    std::ifstream in(entry.path());
    auto document = nlohmann::json::parse(in, nullptr, false);
    const auto& list = document["devices"][device]["routes"]["ipv4"];
    if (!list.is_array()) continue;
    for (const auto& route : list) prefixes.insert(route.value("prefix", ""));
  }
  return prefixes;
}

// The text of the bundle's file `relative` under `root` (empty when there is none).
std::string bundle_text(const std::filesystem::path& root, const std::string& relative) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const auto path = entry.path().generic_string();
    if (path.size() < relative.size() + 1 ||
        path.compare(path.size() - relative.size() - 1, std::string::npos, "/" + relative) != 0)
      continue;
    std::ifstream in(entry.path());
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return {};
}

TEST(CompareGate, ARouteTheStepRemovedFromATableKeptApartFailsCompareAndTheRestoreIsVerified) {
  // Given leaf1's route table handed over apart from the document (as the collector does, so
  // a million routes are not held as JSON): 3 routes before the step, 10.1.2.0/24 gone after
  // it, all 3 back after the rollback. Then compare fails naming that route, the change is
  // rolled back, compare-restored verifies the baseline, and the bundle's pre.json and
  // post.json list the routes as they were (written from the tables).
  ScriptedRun run({"leaf1"});
  run.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"}};
  const std::vector<std::string> all = {"10.1.1.0/24", "10.1.2.0/24", "10.1.3.0/24"};
  run.snapshotter.ipv4_prefixes["leaf1"] = {all, {"10.1.1.0/24", "10.1.3.0/24"}, all};
  auto outcome = run.run();

  const auto* compare = gate_named(outcome, "compare");
  ASSERT_NE(compare, nullptr);
  EXPECT_EQ(compare->verdict, Verdict::fail) << all_details(*compare);
  EXPECT_NE(compare->summary.find("devices.leaf1.routes.ipv4: 0 added, 1 removed"),
            std::string::npos)
      << compare->summary;
  const std::string diff = bundle_text(run.evidence_root.path(), "diffs/post-vs-pre.txt");
  EXPECT_NE(diff.find("10.1.2.0/24"), std::string::npos) << diff;
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back) << outcome.first_disproven;
  EXPECT_EQ(run.remote.sent("rollback"), 1u);
  const auto* restored = gate_named(outcome, "compare-restored");
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->verdict, Verdict::pass) << all_details(*restored);
  EXPECT_EQ(listed_prefixes(run.evidence_root.path(), "pre", "leaf1"),
            std::set<std::string>(all.begin(), all.end()));
  EXPECT_EQ(listed_prefixes(run.evidence_root.path(), "post", "leaf1"),
            (std::set<std::string>{"10.1.1.0/24", "10.1.3.0/24"}));
}

TEST(CompareGate, AnUnchangedTableKeptApartLetsTheChangeStand) {
  // Given the same table before and after the step, then compare passes with the routes
  // checked and the run exits 0 without a rollback.
  ScriptedRun run({"leaf1"});
  run.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"}};
  run.snapshotter.ipv4_prefixes["leaf1"] = {{"10.1.1.0/24", "10.1.2.0/24"}};
  auto outcome = run.run();
  const auto* compare = gate_named(outcome, "compare");
  ASSERT_NE(compare, nullptr);
  EXPECT_EQ(compare->verdict, Verdict::pass) << all_details(*compare);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;
  EXPECT_EQ(run.remote.sent("rollback"), 0u);
}

}  // namespace
}  // namespace fabgate::pipeline
