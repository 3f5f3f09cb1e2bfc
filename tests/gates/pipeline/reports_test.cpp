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
