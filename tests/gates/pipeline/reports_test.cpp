// The report writers redact each value before they escape it: JUnit XML and Markdown carry no
// secret in any form, and redaction never breaks their markup.

#include "gates/pipeline/reports.h"

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
