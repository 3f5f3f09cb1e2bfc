// The collective probe on the Clos lab, through the real fabgate binary from the lab's
// management namespace:
//   - healthy lab: the all-to-all collective of change 8 passes as a baseline probe (`plan`),
//     and its tail ratio is printed as a figure (docs/benchmarks-history.md);
//   - change 8, an nftables rule on spine1 dropping a random 2 % of packets toward host4:
//     BGP, links and routes stay as they were and the fleet average stays within its bound,
//     but host4's rank has a tail far above the median: exit 4, rolled back, the report names
//     host4's rank, and the average alone would have passed.
//
// Needs root, FRR, sshd, jq and nft; skips with the reason otherwise. Its own lab prefix (fgr-)
// and state folder, swept by the lab fixture like the other lab tests.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/examples/clos-lab/lab_harness.h"

namespace fabgate {
namespace {

using nlohmann::json;
using testing::clos_lab::control_plane;
using testing::clos_lab::evidence_of;
using testing::clos_lab::Lab;
using testing::clos_lab::read_json;

const Lab lab("fgr-", "/run/fabgate-lab-collective-scenario");

// The collective probe's outcome in a probes/*.json file of a run.
json collective_in(const std::filesystem::path& file) {
  json probes = read_json(file);
  if (probes.is_object() && probes.contains("probes")) probes = probes["probes"];
  if (probes.is_array())
    for (const auto& probe : probes)
      if (probe.value("kind", "") == "collective") return probe;
  return json();
}

class CollectiveScenario : public testing::clos_lab::SharedLabSuite {
 protected:
  static void SetUpTestSuite() { bring_up(lab, "lab intent for the collective scenario test"); }
};

TEST_F(CollectiveScenario, HealthyLabPassesWithItsTailRatioRecorded) {
  // Given the healthy lab, then the collective runs as a baseline probe of `plan` and passes:
  // every rank completed every iteration and the tail ratio stays under 3.
  auto out = fabgate("plan random-drop-spine1");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  auto probe = collective_in(evidence_of(out) / "probes/baseline.json");
  ASSERT_TRUE(probe.is_object()) << out.output;
  EXPECT_EQ(probe["verdict"], "pass") << probe.dump(2);
  const auto& detail = probe["detail"];
  std::cout << "[ figures ] collective all-to-all, healthy lab: tail ratio "
            << detail.value("tail_ratio", -1.0) << ", median p99 "
            << detail.value("median_p99_ms", -1.0) << " ms, fleet mean "
            << detail.value("fleet_mean_ms", -1.0) << " ms\n";
}

TEST_F(CollectiveScenario, RandomDropTowardOneHostFailsOnItsRankWhileTheAverageWouldPass) {
  // Given change 8 (spine1 drops 2 % of packets toward host4), then the collective fails on the
  // tail of host4's rank (3), the average alone would have passed, fabgate rolls back and
  // verifies the baseline (exit 4), and routes and BGP never changed.
  auto out = fabgate("apply random-drop-spine1");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto bundle = evidence_of(out);
  auto probe = collective_in(bundle / "probes/acceptance.json");
  ASSERT_TRUE(probe.is_object()) << out.output;
  EXPECT_EQ(probe["verdict"], "fail") << probe.dump(2);
  const auto& detail = probe["detail"];
  EXPECT_EQ(detail["slow_rank"], 3) << probe.dump(2);
  EXPECT_NE(probe["reason"].get<std::string>().find("rank 3 (host4)"), std::string::npos)
      << probe["reason"];
  // The point of the scenario: a fleet average would have called this change healthy.
  EXPECT_EQ(detail["average_verdict"], "pass") << detail["average_reason"];
  auto report = testing::read_file((bundle / "report.md").string());
  EXPECT_NE(report.find("rank 3 (host4)"), std::string::npos);
  EXPECT_NE(report.find("an average alone would have passed"), std::string::npos);
  EXPECT_EQ(control_plane(read_json(bundle / "snapshots/post.json")),
            control_plane(read_json(bundle / "snapshots/pre.json")));
  EXPECT_EQ(control_plane(read_json(bundle / "snapshots/restored.json")),
            control_plane(read_json(bundle / "snapshots/pre.json")));
  auto restored = collective_in(bundle / "probes/restored.json");
  EXPECT_EQ(restored.value("verdict", ""), "pass") << restored.dump(2);
  std::cout << "[ figures ] random drop 2 % toward host4: tail ratio "
            << detail.value("tail_ratio", -1.0) << "; " << detail.value("average_reason", "")
            << "\n";
}

}  // namespace
}  // namespace fabgate
