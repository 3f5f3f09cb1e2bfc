// The compat gate inside a real Pipeline, with a scripted Remote and Snapshotter whose snapshots
// have the collector's shape: what the matrix at the intent commit makes of the identity the
// pre-change snapshot collected, and whether anything was sent to a device.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

const std::string kMatrix = R"(version: 1
platforms:
  frr:
    frr: ">=8.4 <9"
    kernel: ">=5.10"
)";

json leaf1_identity(const std::string& frr_version) {
  json identity = {{"hostname", "leaf1"},
                   {"os", "Debian GNU/Linux 12 (bookworm)"},
                   {"kernel", "6.1.0-28-amd64"}};
  if (!frr_version.empty()) identity["frr_version"] = frr_version;
  return identity;
}

using Fixture = ScriptedRun;

TEST(CompatGate, AVersionOutsideTheMatrixRefusesBeforeAnyStep) {
  // Given leaf1 running FRR 7.5.1 and a matrix allowing >=8.4 <9, then the compat gate fails
  // naming device, component, found, allowed and the matrix line; the run exits 3 and no step
  // reaches a device.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  auto outcome = fixture.run();
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::fail);
  EXPECT_NE(std::find(compat->details.begin(), compat->details.end(),
                      "leaf1: frr 7.5.1 not in >=8.4 <9 (policies/compat.yaml:4:10)"),
            compat->details.end())
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);
  EXPECT_EQ(gate_named(outcome, "execute"), nullptr);
  EXPECT_FALSE(outcome.change_started);
  EXPECT_NE(outcome.first_disproven.find("leaf1: frr 7.5.1 not in >=8.4 <9"), std::string::npos)
      << outcome.first_disproven;
}

TEST(CompatGate, AComponentTheMatrixRequiresButIdentityLacksIsNoEvidence) {
  // Given leaf1's identity without an FRR version, then compat is no-evidence (not pass), the
  // run exits 3 and nothing is sent.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("");
  auto outcome = fixture.run();
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*compat).find("leaf1: frr: no evidence: identity has no frr_version "
                                      "(required by policies/compat.yaml:4:10)"),
            std::string::npos)
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);
}

TEST(CompatGate, ATargetWithoutIdentityIsNoEvidenceWithOrWithoutAMatrix) {
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  auto outcome = fixture.run();  // the snapshotter collected no identity for leaf1
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*compat).find("leaf1: no identity collected"), std::string::npos)
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);

  Fixture without_matrix({"leaf1"});
  without_matrix.with_matrix(std::nullopt);
  auto unmatrixed = without_matrix.run();
  EXPECT_EQ(unmatrixed.exit_code, ExitCode::refused);
  const auto* plain = gate_named(unmatrixed, "compat");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->verdict, Verdict::no_evidence);
  EXPECT_NE(plain->summary.find("identity missing on 1 target"), std::string::npos)
      << plain->summary;
  EXPECT_EQ(without_matrix.remote.sent("step"), 0u);
}

TEST(CompatGate, VersionsInsideTheMatrixLetTheChangeProceedToExecute) {
  // Given leaf1 on FRR 8.4.4 and kernel 6.1, then compat passes and the step is sent.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("8.4.4");
  auto outcome = fixture.run();
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::pass) << all_details(*compat);
  EXPECT_NE(compat->summary.find("policies/compat.yaml"), std::string::npos) << compat->summary;
  const auto* execute = gate_named(outcome, "execute");
  ASSERT_NE(execute, nullptr);
  EXPECT_EQ(execute->verdict, Verdict::pass) << all_details(*execute);
  EXPECT_EQ(fixture.remote.sent("step"), 1u);
  EXPECT_TRUE(outcome.change_started);
}

TEST(CompatGate, APlatformTheMatrixDoesNotListIsNoEvidence) {
  // Given a change on host1, whose platform (linux) the matrix does not list, then compat is
  // no-evidence naming the platform and the target (no version of it was ever qualified), the
  // run exits 3 and no step is sent.
  Fixture fixture({"host1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["host1"] = {{"hostname", "host1"}, {"kernel", "2.6.32"}};
  auto outcome = fixture.run();
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::no_evidence) << all_details(*compat);
  EXPECT_NE(compat->summary.find("platform linux is not in policies/compat.yaml (host1)"),
            std::string::npos)
      << compat->summary;
  EXPECT_NE(all_details(*compat).find("host1: platform linux is not in policies/compat.yaml"),
            std::string::npos)
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);
}

TEST(CompatGate, APlatformListedWithNothingUnderItPasses) {
  // Given a matrix that lists linux with no requirement, then host1 passes compat on purpose
  // and the step is sent.
  Fixture fixture({"host1"});
  fixture.with_matrix(kMatrix + "  linux:\n");
  fixture.snapshotter.identities["host1"] = {{"hostname", "host1"}, {"kernel", "2.6.32"}};
  auto outcome = fixture.run();
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::pass) << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 1u);
}

TEST(CompatGate, WithoutAMatrixNoVersionIsCheckedSoNothingIsProvenAndNothingIsSent) {
  // Given no policies/compat.yaml at the commit and leaf1's identity collected, then compat
  // made 0 real checks: no-evidence (not pass), the summary says so and the details say how
  // to fix it; the run exits 3 and no step is sent.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(std::nullopt);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  auto outcome = fixture.run();
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::no_evidence) << all_details(*compat);
  EXPECT_NE(compat->summary.find("no compatibility matrix (policies/compat.yaml), so no version "
                                 "was checked: 0 real checks"),
            std::string::npos)
      << compat->summary;
  EXPECT_NE(all_details(*compat).find("not_wanted: {compat:"), std::string::npos)
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);
}

TEST(CompatGate, AChangeThatSaysItWantsNoCompatGateSkipsItWithItsReason) {
  // Given no matrix and a change saying not_wanted: {compat: ...}, then compat is skipped with
  // the change's reason in its summary (the reviewer reads it) and the step is sent.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(std::nullopt);
  fixture.change.not_wanted["compat"] = "lab images are not version-qualified";
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  auto outcome = fixture.run();
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::skipped) << all_details(*compat);
  EXPECT_EQ(compat->summary,
            "not wanted by the change: lab images are not version-qualified (0 versions checked)");
  EXPECT_EQ(fixture.remote.sent("step"), 1u);
}

TEST(CompatGate, AChangeCannotSetAsideTheRepositorysMatrix) {
  // Given a matrix allowing FRR >=8.4 <9, leaf1 on 7.5.1 and a change saying it wants no
  // compat gate, then the matrix still applies: compat fails, says why the change's line does
  // not apply, and nothing is sent.
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.change.not_wanted["compat"] = "trust me";
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  auto outcome = fixture.run();
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::fail);
  EXPECT_NE(all_details(*compat).find("not_wanted.compat does not apply: policies/compat.yaml "
                                      "exists"),
            std::string::npos)
      << all_details(*compat);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);
}

TEST(CompatGate, AMatrixThatRequiresNothingSaysZeroRealChecks) {
  // Given a matrix listing frr with nothing under it, then compat passes (the matrix says so on
  // purpose) and its summary says that 0 real checks were made, not "versions within".
  Fixture fixture({"leaf1"});
  fixture.with_matrix("version: 1\nplatforms:\n  frr:\n");
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  auto outcome = fixture.run();
  const auto* compat = gate_named(outcome, "compat");
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(compat->verdict, Verdict::pass) << all_details(*compat);
  EXPECT_NE(compat->summary.find("0 real checks: policies/compat.yaml requires nothing of "
                                 "platform frr (1 target)"),
            std::string::npos)
      << compat->summary;
}

TEST(CompatGate, TheFindingsLandInTheEvidence) {
  Fixture fixture({"leaf1"});
  fixture.with_matrix(kMatrix);
  fixture.snapshotter.identities["leaf1"] = leaf1_identity("7.5.1");
  (void)fixture.run();
  // <root>/<change-id>/<time>-<run-id>/compat.json
  std::string found;
  for (const auto& change_dir : std::filesystem::directory_iterator(fixture.evidence_root.path()))
    for (const auto& run_dir : std::filesystem::directory_iterator(change_dir.path()))
      if (testing::file_exists(run_dir.path().string() + "/compat.json"))
        found = testing::read_file(run_dir.path().string() + "/compat.json");
  ASSERT_FALSE(found.empty());
  auto document = json::parse(found);
  EXPECT_EQ(document["matrix"], "policies/compat.yaml");
  ASSERT_EQ(document["findings"].size(), 2u);
  EXPECT_EQ(document["findings"][0]["verdict"], "fail");
  EXPECT_EQ(document["findings"][0]["found"], "7.5.1");
}

}  // namespace
}  // namespace fabgate::pipeline
