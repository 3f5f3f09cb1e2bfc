// The report writers redact each value before they escape it: JUnit XML and Markdown carry no
// secret in any form, and redaction never breaks their markup.

#include "gates/pipeline/reporting/reports.h"

#include <gtest/gtest.h>

namespace fabgate::pipeline {
namespace {

// A configured secret with the characters XML escapes and one Markdown flattens.
const std::string kConfigured = "Cn&ry<V|al\"ue";

class ReportsTest : public ::testing::Test {
 protected:
  ReportsTest() : redactor_({kConfigured}) {
    change_.id = "c";
    change_.title = "test change";
    change_.targets = {"d1"};
    GateRecord gate;
    gate.name = "acceptance";
    gate.verdict = Verdict::fail;
    gate.summary = "probe said: neighbor 10.0.0.1 password \"CanaryR1\"";
    gate.details = {"token=" + kConfigured, "echo " + kConfigured + " | wc"};
    outcome_.exit_code = ExitCode::rolled_back;
    outcome_.gates.push_back(gate);
    ProbeOutcome probe;
    probe.name = "config-healthy";
    probe.layer = "workload";
    probe.phase = "acceptance";
    probe.verdict = Verdict::fail;
    probe.reason = "exit 1: secret CanaryR2 & " + kConfigured;
    outcome_.probes.push_back(probe);
    StepRun step;
    step.device = "d1";
    step.index = 1;
    step.command = "vtysh -c 'neighbor 10.0.0.1 password CanaryR3'";
    step.reason = "stderr: " + kConfigured;
    outcome_.steps.push_back(step);
    outcome_.first_disproven = "acceptance: " + kConfigured;
  }

  ReportContext context() const {
    return ReportContext{repository_, change_, Mode::apply, "op", "run1", redactor_};
  }

  static void expect_no_secret(const std::string& text, const std::string& what) {
    for (std::string form :
         {"CanaryR1", "CanaryR2", "CanaryR3", "Cn&ry", "Cn&amp;ry", "V|al", "&lt;V|al", "V al"})
      EXPECT_EQ(text.find(form), std::string::npos) << form << " in " << what << ":\n" << text;
  }

  Redactor redactor_;
  intent::IntentRepository repository_;
  intent::Change change_;
  RunOutcome outcome_;
};

TEST_F(ReportsTest, JunitCarriesNoSecretAndNoRawRedactionMarker) {
  // Given failures whose messages hold secrets (quoted, shaped, configured with '&' and '<'),
  // then junit.xml holds none of them in any form, says "&lt;redacted&gt;" where they were,
  // and has no '<' that does not start a tag.
  std::string xml = render_junit(context(), outcome_);
  expect_no_secret(xml, "junit.xml");
  EXPECT_NE(xml.find("password &quot;&lt;redacted&gt;&quot;"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<redacted>"), std::string::npos) << xml;
  for (std::size_t at = xml.find('<'); at != std::string::npos; at = xml.find('<', at + 1)) {
    char next = xml[at + 1];
    EXPECT_TRUE(next == '?' || next == '/' || (next >= 'a' && next <= 'z'))
        << "stray '<' at " << at << ":\n"
        << xml;
  }
}

TEST_F(ReportsTest, MarkdownRedactsBeforeItFlattensTableCells) {
  // Given a configured secret holding '|' (which a table cell turns into a space, so the
  // secret would no longer match afterwards), then report.md does not hold it, flattened or
  // not, and the step's command keeps its closing quote.
  std::string md = render_report_markdown(context(), outcome_);
  expect_no_secret(md, "report.md");
  EXPECT_NE(md.find("vtysh -c 'neighbor 10.0.0.1 password <redacted>'"), std::string::npos) << md;
}

TEST_F(ReportsTest, TelemetrySectionListsEventsAtDeviceTimeAndTheGapsThatMakeNoEvidence) {
  // Given a telemetry layer where leaf1 saw to-host2 flap and spine1's stream fell silent,
  // then report.md has the section with both devices' verdicts, each event as a row at its
  // device time, the silence named, and the --json summary carries the same events.
  TelemetryOutcome telemetry;
  telemetry.verdict = Verdict::no_evidence;
  telemetry.summary = "1 of 2 devices covered 9.0 s at 1s: 2 interface events";
  DeviceTelemetry leaf1;
  leaf1.device = "leaf1";
  leaf1.why = "target";
  leaf1.samples = 9;
  leaf1.first_ns = 1'796'100'000'000'000'000;
  leaf1.last_ns = leaf1.first_ns + 8'000'000'000;
  leaf1.verdict = Verdict::pass;
  leaf1.events = {{.timestamp_ns = leaf1.first_ns + 1'000'000'000,
                   .subject = "to-host2",
                   .what = "oper-status UP -> DOWN"},
                  {.timestamp_ns = leaf1.first_ns + 3'000'000'000,
                   .subject = "to-host2",
                   .what = "oper-status DOWN -> UP"}};
  DeviceTelemetry spine1;
  spine1.device = "spine1";
  spine1.why = "neighbour of leaf1 (BGP)";
  spine1.samples = 2;
  spine1.gaps = {"no sample in the last 7.0 s of the window (the stream stopped delivering)"};
  telemetry.devices = {leaf1, spine1};
  outcome_.telemetry = telemetry;

  std::string md = render_report_markdown(context(), outcome_);
  auto section = md.find("## During-change telemetry (gNMI)");
  ASSERT_NE(section, std::string::npos) << md;
  EXPECT_NE(md.find("| leaf1 | target | 9 | " + format_device_time(leaf1.first_ns), section),
            std::string::npos)
      << md.substr(section);
  EXPECT_NE(md.find("| spine1 | neighbour of leaf1 (BGP) | 2 |", section), std::string::npos);
  EXPECT_NE(md.find("| " + format_device_time(leaf1.first_ns + 1'000'000'000) +
                        " | leaf1 | to-host2 | oper-status UP -> DOWN |",
                    section),
            std::string::npos)
      << md.substr(section);
  EXPECT_NE(md.find("- spine1: no sample in the last 7.0 s of the window (the stream stopped "
                    "delivering)",
                    section),
            std::string::npos)
      << md.substr(section);
  auto summary = render_summary_json(context(), outcome_, "/e");
  EXPECT_EQ(summary["telemetry"]["verdict"], "no-evidence");
  EXPECT_EQ(summary["telemetry"]["devices"][0]["events"][1]["event"], "oper-status DOWN -> UP");
}

TEST_F(ReportsTest, RollbackTelemetryIsItsOwnSectionWithBgpEvents) {
  // Given a during window where spine1's session to leaf1 dropped and a rollback window where
  // it came back, then report.md shows both sections in that order, each BGP event as a row
  // "bgp <neighbour>" at its device time, the rollback's start, and rollback.json named; the
  // --json summary carries the rollback window with the neighbour address.
  const std::int64_t base = 1'796'100'000'000'000'000;
  auto window = [&](const char* phase, std::int64_t at, const char* what) {
    TelemetryOutcome telemetry;
    telemetry.phase = phase;
    telemetry.verdict = Verdict::pass;
    telemetry.summary = "1 of 1 devices covered 9.0 s at 1s: 0 interface events, 1 BGP event";
    DeviceTelemetry spine1;
    spine1.device = "spine1";
    spine1.why = "target";
    spine1.samples = 9;
    spine1.first_ns = base;
    spine1.last_ns = base + 8'000'000'000;
    spine1.verdict = Verdict::pass;
    spine1.events = {{.timestamp_ns = at,
                      .source = gnmi::TelemetrySource::bgp_neighbors,
                      .subject = "10.0.1.1",
                      .what = what}};
    telemetry.devices = {spine1};
    return telemetry;
  };
  outcome_.telemetry = window("during", base + 1'000'000'000, "session-state ESTABLISHED -> IDLE");
  outcome_.rollback_telemetry =
      window("rollback", base + 20'000'000'000, "session-state ACTIVE -> ESTABLISHED");
  outcome_.rollback_telemetry->rollback_started = outcome_.rollback_telemetry->window_start;

  std::string md = render_report_markdown(context(), outcome_);
  auto during = md.find("## During-change telemetry (gNMI)");
  auto rollback = md.find("## Telemetry through the rollback (gNMI)");
  ASSERT_NE(during, std::string::npos) << md;
  ASSERT_NE(rollback, std::string::npos) << md;
  EXPECT_LT(during, rollback);
  EXPECT_NE(md.find("| " + format_device_time(base + 1'000'000'000) +
                        " | spine1 | bgp 10.0.1.1 | session-state ESTABLISHED -> IDLE |",
                    during),
            std::string::npos)
      << md.substr(during);
  EXPECT_LT(md.find("ESTABLISHED -> IDLE"), rollback);
  EXPECT_NE(md.find("| " + format_device_time(base + 20'000'000'000) +
                        " | spine1 | bgp 10.0.1.1 | session-state ACTIVE -> ESTABLISHED |",
                    rollback),
            std::string::npos)
      << md.substr(rollback);
  EXPECT_NE(md.find("; the rollback began at ", rollback), std::string::npos);
  EXPECT_NE(md.find("`telemetry/rollback.json`", rollback), std::string::npos);
  auto summary = render_summary_json(context(), outcome_, "/e");
  const auto& event = summary["rollback_telemetry"]["devices"][0]["events"][0];
  EXPECT_EQ(summary["rollback_telemetry"]["phase"], "rollback");
  EXPECT_EQ(event["source"], "bgp");
  EXPECT_EQ(event["bgp_neighbor"], "10.0.1.1");
  EXPECT_EQ(event["event"], "session-state ACTIVE -> ESTABLISHED");
}

TEST_F(ReportsTest, ReviewShowsARehearsalsConfigurationDiffOrWhyNot) {
  // Given a plan whose outcome carries a rehearsal's configuration delta, then review.md shows
  // the diff and names the rehearsal; given one refused (another digest), review.md says why.
  outcome_.config_deltas = {
      {"spine1", "post vs pre", "--- a\n+++ b\n+ neighbor LEAVES shutdown\n", ""}};
  outcome_.config_deltas_from = "rehearsal evidence/c/r1";
  auto plan = ReportContext{repository_, change_, Mode::plan, "op", "run1", redactor_};
  std::string review = render_review_markdown(plan, outcome_);
  EXPECT_NE(review.find("+ neighbor LEAVES shutdown"), std::string::npos) << review;
  EXPECT_NE(review.find("The diffs above are those of the rehearsal evidence/c/r1, which "
                        "rehearsed this plan's digest."),
            std::string::npos)
      << review;

  outcome_.config_deltas.clear();
  outcome_.config_deltas_from.clear();
  outcome_.config_deltas_refused =
      "the rehearsal in evidence/c/r0 is of \"sha256:00\", not of this plan";
  review = render_review_markdown(plan, outcome_);
  EXPECT_NE(review.find("No rehearsal diff: the rehearsal in evidence/c/r0 is of"),
            std::string::npos)
      << review;
  EXPECT_EQ(review.find("## Configuration changes"), std::string::npos) << review;
}

}  // namespace
}  // namespace fabgate::pipeline

namespace fabgate::pipeline {
namespace {

class ReviewWordingTest : public ::testing::Test {
 protected:
  ReviewWordingTest() {
    change_.id = "c";
    change_.title = "test change";
    change_.targets = {"d1"};
    GateRecord gate;
    gate.name = "baseline-probes";
    gate.verdict = Verdict::pass;
    gate.summary = "1/1 probes passed";
    outcome_.gates.push_back(gate);
  }
  ReportContext context(Mode mode) const {
    return ReportContext{repository_, change_, mode, "op", "run1", redactor_};
  }

  Redactor redactor_;
  intent::IntentRepository repository_;
  intent::Change change_;
  RunOutcome outcome_;
};

TEST_F(ReviewWordingTest, AReadyPlanSaysNothingWasAppliedAndNeverAccepted) {
  // Given a plan whose gates passed (exit 0), then review.md and report.md say the plan is ready
  // for review and nothing has been applied, never "accepted", and review.md shows how to approve.
  outcome_.exit_code = ExitCode::accepted;
  std::string review = render_review_markdown(context(Mode::plan), outcome_);
  std::string report = render_report_markdown(context(Mode::plan), outcome_);
  for (const auto* text : {&review, &report}) {
    EXPECT_NE(text->find("exit 0 — plan ready for review, nothing has been applied"),
              std::string::npos)
        << *text;
    EXPECT_EQ(text->find("accepted"), std::string::npos) << *text;
  }
  EXPECT_NE(review.find("## Approve"), std::string::npos) << review;
  EXPECT_NE(review.find("fabgate approve plan.json"), std::string::npos) << review;
  // An apply that passed is still "accepted".
  EXPECT_NE(render_report_markdown(context(Mode::apply), outcome_).find("exit 0 — accepted"),
            std::string::npos);
}

TEST_F(ReviewWordingTest, ARefusedPlanHasNoApproveSection) {
  // Given a plan whose baseline probe failed (exit 3), then review.md offers no way to approve
  // it: no "Approve" section, no approve command, and it says approve refuses this plan.
  outcome_.exit_code = ExitCode::refused;
  outcome_.gates[0].verdict = Verdict::fail;
  std::string review = render_review_markdown(context(Mode::plan), outcome_);
  EXPECT_EQ(review.find("## Approve"), std::string::npos) << review;
  EXPECT_EQ(review.find("fabgate approve plan.json"), std::string::npos) << review;
  EXPECT_NE(review.find("## Not ready for approval"), std::string::npos) << review;
  EXPECT_NE(review.find("`fabgate approve` refuses to sign this plan"), std::string::npos)
      << review;
  EXPECT_NE(review.find("exit 3 — refused before any change; nothing was touched"),
            std::string::npos)
      << review;
}

TEST_F(ReviewWordingTest, ReportNamesWhatChangedAndPointsToTheFullList) {
  // Given a comparison that found 15 routes withdrawn on leaf1 (10.1.0.0/24 .. 10.1.14.0/24),
  // then report.md names the first 10 of them, 10.1.2.0/24 among them, says 5 more are in
  // diffs/post-vs-pre-changes.txt, and an approval points to its copy in the bundle.
  outcome_.exit_code = ExitCode::accepted;
  nlohmann::json details = nlohmann::json::array();
  for (int i = 0; i < 15; ++i)
    details.push_back("- 10.1." + std::to_string(i) + ".0/24 via 10.0.1.0");
  nlohmann::json comparison = {{"results",
                                {{{"device", "leaf1"},
                                  {"path", "devices.leaf1.routes.ipv4"},
                                  {"pre", "20 routes"},
                                  {"post", "5 routes"},
                                  {"verdict", "pass"},
                                  {"expected_difference", true},
                                  {"details", details}}}}};
  outcome_.changes.push_back(
      {"post vs pre", "diffs/post-vs-pre-changes.txt", changes_of(comparison)});
  ApprovalRecord approval;
  approval.file = "/tmp/reviewer.json";
  approval.approver = "reviewer@example.net";
  approval.outcome = "valid";
  approval.bundle_copy = "approvals/1-reviewer.json";
  outcome_.approvals.push_back(approval);
  std::string report = render_report_markdown(context(Mode::apply), outcome_);
  EXPECT_NE(report.find("## What changed"), std::string::npos) << report;
  EXPECT_NE(report.find("**routes**: 15 removed"), std::string::npos) << report;
  EXPECT_NE(report.find("`- leaf1 routes.ipv4: 10.1.2.0/24 via 10.0.1.0`"), std::string::npos)
      << report;
  EXPECT_NE(report.find("10.1.9.0/24"), std::string::npos) << report;
  EXPECT_EQ(report.find("10.1.10.0/24"), std::string::npos) << report;
  EXPECT_NE(report.find("and 5 more, full list in `diffs/post-vs-pre-changes.txt`"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("reviewer@example.net (valid, copy in approvals/1-reviewer.json)"),
            std::string::npos)
      << report;
}

}  // namespace
}  // namespace fabgate::pipeline
