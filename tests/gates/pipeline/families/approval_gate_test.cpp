// The approval gate inside a real Pipeline, with a scripted Remote, Snapshotter and judge:
// what the judge's verdict does to the run (nothing sent when it fails), what the judge is
// asked (the plan digest, whether a rehearsal counts), what lands in the evidence, and what a
// rehearsal run ends with.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <optional>

#include "gates/pipeline/reporting/plan_digest.h"
#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

// Returns the judgement the test set, and remembers what it was asked.
class FakeJudge final : public ApprovalJudge {
 public:
  ApprovalJudgement answer;
  int calls = 0;
  std::string asked_digest;
  std::optional<RehearsalCheck> asked_rehearsal;

  ApprovalJudgement judge(const intent::IntentRepository&, const intent::Change&,
                          const std::string& plan_digest, RehearsalCheck rehearsal) override {
    ++calls;
    asked_digest = plan_digest;
    asked_rehearsal = rehearsal;
    return answer;
  }
};

struct Fixture {
  intent::IntentRepository repository;
  intent::Change change;
  ScriptedRemote remote;
  ScriptedSnapshotter snapshotter;
  FakeJudge judge;
  testing::TempDir evidence_root{"fabgate-approval-gate"};
  std::filesystem::path bundle_dir;

  Fixture() {
    repository.commit.id = "0123456789abcdef0123456789abcdef01234567";
    repository.settings.approval.min_approvals = 1;
    intent::Device leaf1;
    leaf1.name = "leaf1";
    leaf1.platform = "linux";
    leaf1.ssh = {"127.0.0.1", 22};
    repository.inventory.devices = {leaf1};
    change.id = "approval-gate-test";
    change.targets = {"leaf1"};
    intent::Step step;
    step.device = "leaf1";
    step.run = "echo change";
    change.steps.push_back(step);
    step.run = "echo undo";
    change.rollback.push_back(step);
    intent::Probe probe;
    probe.name = "reachable";
    probe.host = "leaf1";
    probe.run = "true";
    change.acceptance.probes.push_back(probe);
    snapshotter.identities["leaf1"] = {{"hostname", "leaf1"}, {"kernel", "6.1.0"}};
    // compat makes a real check (any kernel), so the approval gate is what decides here.
    repository.policy_files.push_back("policies/compat.yaml");
    repository.policy_texts["policies/compat.yaml"] =
        "version: 1\nplatforms:\n  linux:\n    kernel: \"*\"\n";
    change.acceptance.restore_dwell = Duration::zero();  // a rehearsal's restore, judged once
  }

  RunOutcome run(Mode mode, ApprovalJudge* with_judge) {
    auto bundle =
        EvidenceBundle::create(evidence_root.path(), change.id, now_utc(), "run1", Redactor{});
    EXPECT_TRUE(bundle.ok());
    if (!bundle.ok()) return RunOutcome{};
    bundle_dir = bundle.value()->dir();
    GateObserver observer;
    PipelineOptions options;
    options.mode = mode;
    options.operator_name = "approval-test";
    options.approval_judge = with_judge;
    Pipeline pipeline(repository, change, {remote, snapshotter, *bundle.value(), observer},
                      options);
    return pipeline.run();
  }
  json read(const std::string& file) const {
    std::ifstream in(bundle_dir / file);
    return json::parse(in, nullptr, false);
  }
};

ApprovalJudgement refused_with_stale_approval() {
  ApprovalJudgement judgement;
  judgement.verdict = Verdict::fail;
  judgement.summary = "0 valid approvals of 1 required";
  ApprovalRecord record;
  record.file = "bob.json";
  record.approver = "bob@example.net";
  record.outcome = "stale";
  record.reason = "the change was modified after approval";
  judgement.approvals.push_back(record);
  judgement.details.push_back("bob@example.net: stale: the change was modified after approval");
  return judgement;
}

TEST(ApprovalGate, AFailingJudgementRefusesBeforeAnyStepAndIsRecorded) {
  // Given a judge that finds no valid approval, then apply exits 3, no step is sent, the gate's
  // detail is the first disproven hypothesis, and the manifest lists the approval's outcome.
  Fixture fixture;
  fixture.judge.answer = refused_with_stale_approval();
  auto outcome = fixture.run(Mode::apply, &fixture.judge);
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  EXPECT_EQ(fixture.remote.sent("step"), 0u);
  EXPECT_EQ(outcome.first_disproven,
            "approval: bob@example.net: stale: the change was modified after approval");
  // The judge was asked about this plan's digest, and to check a rehearsal per policy.
  EXPECT_EQ(fixture.judge.asked_digest, plan_digest(fixture.repository, fixture.change));
  EXPECT_EQ(fixture.judge.asked_rehearsal, RehearsalCheck::per_policy);
  auto manifest = fixture.read("manifest.json");
  EXPECT_EQ(manifest["plan_digest"], fixture.judge.asked_digest);
  ASSERT_EQ(manifest["approvals"].size(), 1u);
  EXPECT_EQ(manifest["approvals"][0]["outcome"], "stale");
  EXPECT_FALSE(manifest["approvals"][0]["counted"].get<bool>());
}

TEST(ApprovalGate, TheManifestRecordsLabOnlySecuritySettingsOfTheInventory) {
  // Given an inventory where spine1's gNMI endpoint allows credentials over plaintext (the lab
  // setting), then the run's manifest, which the bundle digest covers, names that setting and
  // device; without it the list is empty.
  Fixture fixture;
  fixture.judge.answer = refused_with_stale_approval();
  (void)fixture.run(Mode::apply, &fixture.judge);
  EXPECT_EQ(fixture.read("manifest.json")["lab_only_settings"], json::array());

  Fixture lab;
  intent::Device spine1;
  spine1.name = "spine1";
  spine1.platform = "linux";
  spine1.gnmi = intent::GnmiEndpoint{};
  spine1.gnmi->tls = false;
  spine1.gnmi->credentials_env = "LAB_GNMI";
  spine1.gnmi->lab_insecure_plaintext_credentials = true;
  lab.repository.inventory.devices.push_back(spine1);
  lab.judge.answer = refused_with_stale_approval();
  (void)lab.run(Mode::apply, &lab.judge);
  EXPECT_EQ(lab.read("manifest.json")["lab_only_settings"],
            json::array({"device 'spine1' gnmi: lab_insecure_plaintext_credentials: the login "
                         "from LAB_GNMI_USERNAME and LAB_GNMI_PASSWORD goes to the device in "
                         "clear text (lab only)"}));
}

TEST(ApprovalGate, APassingJudgementLetsTheChangeRun) {
  Fixture fixture;
  fixture.judge.answer.verdict = Verdict::pass;
  fixture.judge.answer.summary = "1 valid approval of 1 required";
  auto outcome = fixture.run(Mode::apply, &fixture.judge);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;
  EXPECT_EQ(fixture.remote.sent("step"), 1u);
}

TEST(ApprovalGate, TheBundleGetsTheBytesTheJudgeJudgedNotTheFileAsItIsNow) {
  // Given a judge that counted an approval whose file was replaced after it was judged, and
  // listed a file that is no approval, then the bundle's copy is the content that was judged,
  // listed in the manifest, and the other file is not copied (no bundle_copy, no file).
  Fixture fixture;
  testing::TempDir given("fabgate-approval-given");
  testing::write_file(given.file("alice.json"), "{\"swapped\": \"after it was judged\"}\n");
  testing::write_file(given.file("plan.json"), "{\"format\": \"fabgate.plan/1\"}\n");
  const std::string judged = "{\"format\": \"fabgate.approval/1\", \"approver\": \"alice\"}\n";
  fixture.judge.answer.verdict = Verdict::pass;
  fixture.judge.answer.summary = "1 valid approval of 1 required";
  ApprovalRecord alice;
  alice.file = given.file("alice.json");
  alice.approver = "alice@example.net";
  alice.outcome = "valid";
  alice.counted = true;
  alice.content = judged;
  ApprovalRecord plan;
  plan.file = given.file("plan.json");
  plan.outcome = "unreadable";
  fixture.judge.answer.approvals = {alice, plan};
  auto outcome = fixture.run(Mode::apply, &fixture.judge);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;

  EXPECT_EQ(testing::read_file((fixture.bundle_dir / "approvals/1-alice.json").string()), judged);
  EXPECT_FALSE(std::filesystem::exists(fixture.bundle_dir / "approvals/2-plan.json"));
  auto manifest = fixture.read("manifest.json");
  ASSERT_EQ(manifest["approvals"].size(), 2u);
  EXPECT_EQ(manifest["approvals"][0]["bundle_copy"], "approvals/1-alice.json");
  EXPECT_EQ(manifest["approvals"][1]["bundle_copy"], "");
  EXPECT_TRUE(manifest["files"].contains("approvals/1-alice.json"));
  EXPECT_FALSE(manifest["approvals"][0].contains("content"));
}

TEST(ApprovalGate, WithoutAJudgeOnlyAPolicyOfNoApprovalsPasses) {
  Fixture needs_one;
  auto refused = needs_one.run(Mode::apply, nullptr);
  EXPECT_EQ(refused.exit_code, ExitCode::refused);
  EXPECT_EQ(needs_one.remote.sent("step"), 0u);
  Fixture needs_none;
  needs_none.repository.settings.approval.min_approvals = 0;
  auto accepted = needs_none.run(Mode::apply, nullptr);
  EXPECT_EQ(accepted.exit_code, ExitCode::accepted) << accepted.first_disproven;
  EXPECT_EQ(needs_none.remote.sent("step"), 1u);
}

TEST(ApprovalGate, PlanReportsWhatIsNeededWithoutAskingTheJudge) {
  // Given a policy of two approvals and a rehearsal, then plan exits 0 without consulting the
  // judge, says what apply will need, and writes the digest into plan.json and review.md.
  Fixture fixture;
  fixture.repository.settings.approval.min_approvals = 2;
  fixture.repository.settings.approval.require_rehearsal = true;
  fixture.judge.answer = refused_with_stale_approval();
  auto outcome = fixture.run(Mode::plan, &fixture.judge);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;
  EXPECT_EQ(fixture.judge.calls, 0);
  const auto* approval = gate_named(outcome, "approval");
  ASSERT_NE(approval, nullptr);
  EXPECT_EQ(approval->summary,
            "policy requires 2 approvals of this plan's digest (needed before apply); a passing "
            "rehearsal is required");
  std::string digest = plan_digest(fixture.repository, fixture.change);
  auto plan = fixture.read("plan.json");
  EXPECT_EQ(plan["digest"], digest);
  EXPECT_EQ(digest_of_input(plan["digest_input"]), digest);
  std::ifstream in(fixture.bundle_dir / "review.md");
  std::string review((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(review.find("Plan digest: `" + digest + "`"), std::string::npos) << review;
  EXPECT_NE(review.find("## Rollback"), std::string::npos);
  EXPECT_NE(review.find("echo undo"), std::string::npos);
  EXPECT_NE(review.find("Wave 1 (1 device): leaf1"), std::string::npos) << review;
}

TEST(ApprovalGate, ARehearsalThatRestoresExitsZeroAndWritesAPassingRecord) {
  // Given an accepted change in rehearse mode, then it is rolled back anyway, the run exits 0,
  // the judge was not asked for a rehearsal, and rehearsal.json says passed for the digest.
  Fixture fixture;
  fixture.repository.settings.approval.require_rehearsal = true;
  fixture.judge.answer.verdict = Verdict::pass;
  auto outcome = fixture.run(Mode::rehearse, &fixture.judge);
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;
  EXPECT_EQ(fixture.judge.asked_rehearsal, RehearsalCheck::not_applicable);
  EXPECT_EQ(fixture.remote.sent("step"), 1u);
  EXPECT_EQ(fixture.remote.sent("rollback"), 1u);
  auto record = fixture.read("rehearsal.json");
  EXPECT_TRUE(record["passed"].get<bool>()) << record;
  EXPECT_EQ(record["digest"], plan_digest(fixture.repository, fixture.change));
  EXPECT_EQ(record["exit"], 0);
  auto check = verify_bundle(fixture.bundle_dir);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->intact());
}

TEST(ApprovalGate, ARehearsalRefusedByItsGatesRecordsThatItDidNotPass) {
  Fixture fixture;
  fixture.judge.answer = refused_with_stale_approval();
  auto outcome = fixture.run(Mode::rehearse, &fixture.judge);
  EXPECT_EQ(outcome.exit_code, ExitCode::refused);
  auto record = fixture.read("rehearsal.json");
  EXPECT_FALSE(record["passed"].get<bool>());
  EXPECT_EQ(record["exit"], 3);
}

}  // namespace
}  // namespace fabgate::pipeline
