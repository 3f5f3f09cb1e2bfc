// How run_probes reads the JSON a probe host prints (fabgate-probe's flows and collective
// reports, the document a responder leaves when it exits before it is ready): data fabgate did
// not write, so a wrongly typed field or 300,000 levels of nesting is no evidence naming the
// host, the operation and the field, never an exception or a stack overflow. The remote is
// scripted: each command is answered from what it runs.

#include <gtest/gtest.h>

#include <functional>

#include "gates/pipeline/families/probes.h"
#include "tests/gates/pipeline/probe_hosts.h"

namespace fabgate::pipeline {
namespace {

using Answer = std::function<ssh::CommandResult(const intent::Device&, const std::string&)>;

class ScriptedProbeRemote final : public Remote {
 public:
  explicit ScriptedProbeRemote(Answer answer) : answer_(std::move(answer)) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole, const std::string& command,
                   Duration, std::string_view) override {
    return answer_(device, command);
  }

 private:
  Answer answer_;
};

ssh::CommandResult printed(const std::string& stdout_text, int exit_status = 0) {
  ssh::CommandResult result;
  result.exit_status = exit_status;
  result.stdout_text = stdout_text;
  return result;
}

bool runs(const std::string& command, const std::string& part) {
  return command.find(part) != std::string::npos;
}

// The shape of start_detached's answer when the probe became ready (pid and output file).
ssh::CommandResult started_detached() {
  return printed("4242 /tmp/fabgate-probe.scripted\n");
}

const std::string kDeep = std::string(300'000, '[') + std::string(300'000, ']');

void expect_no_evidence_saying(const ProbeOutcome& outcome, const std::string& says) {
  EXPECT_EQ(outcome.verdict, Verdict::no_evidence);
  EXPECT_NE(outcome.reason.find(says), std::string::npos) << outcome.reason.substr(0, 300);
}

struct ProbeReports : ::testing::Test {
  intent::Inventory inventory{{probe_host("host1", "10.0.0.1"), probe_host("host2", "10.0.0.2")}};
  intent::ProbeSettings settings;

  ProbeOutcome run_one(const intent::Probe& probe, Answer answer) {
    ScriptedProbeRemote remote(std::move(answer));
    ProbeContext context{inventory, settings};
    std::vector<ProbeOutcome> outcomes;
    EXPECT_NO_THROW(outcomes = run_probes(remote, context, {probe}, "acceptance"));
    return outcomes.empty() ? ProbeOutcome{} : outcomes.front();
  }

  // A flows probe host1 -> host2 whose report is `report`; the responder starts.
  ProbeOutcome flows_reporting(const std::string& report) {
    return run_one(flows_probe(), [report](const intent::Device&, const std::string& command) {
      if (runs(command, "--respond")) return started_detached();
      if (runs(command, " flows --to ")) return printed(report);
      return printed("");
    });
  }

  // A flows probe whose responder exits before it is ready, printing `document` on stdout.
  ProbeOutcome responder_exiting_with(const std::string& document) {
    constexpr int kExitedBeforeReady = 1;
    return run_one(flows_probe(), [document](const intent::Device&, const std::string& command) {
      if (runs(command, "--respond")) return printed(document, kExitedBeforeReady);
      return printed("");
    });
  }

  // A collective over host1 and host2: rank 0 reports well, rank 1 prints `rank1_report`.
  ProbeOutcome collective_with_rank1(const std::string& rank1_report) {
    intent::Probe probe;
    probe.name = "ring";
    probe.layer = "forwarding";
    probe.kind = "collective";
    probe.host = "host1";
    probe.hosts = {"host1", "host2"};
    probe.iterations = 3;
    probe.timeout = Duration{5'000};
    const std::string good = R"({"verdict":"pass","iteration_ms":[1.0,1.1,1.2],"errors":[]})";
    return run_one(probe, [=](const intent::Device& device, const std::string& command) {
      if (runs(command, " collective --rank ")) return started_detached();
      if (runs(command, "cat '/tmp/fabgate-probe.scripted'"))
        return printed(device.name == "host1" ? good : rank1_report);
      return printed("");
    });
  }

  static intent::Probe flows_probe() {
    intent::Probe probe;
    probe.name = "host1-to-host2";
    probe.layer = "forwarding";
    probe.kind = "flows";
    probe.host = "host1";
    probe.target = "host2";
    probe.flows = 4;
    probe.timeout = Duration{5'000};
    return probe;
  }
};

TEST_F(ProbeReports, AFlowsSummaryWithWellTypedFiguresIsCountedInTheReason) {
  // Given a passing flows report with integer figures, then it passes and says how many
  // flows completed.
  auto outcome = flows_reporting(
      R"({"verdict":"pass","reason":"all flows answered","summary":{"flows":4,"completed":4}})");
  EXPECT_EQ(outcome.verdict, Verdict::pass) << outcome.reason;
  EXPECT_EQ(outcome.reason, "all flows answered (4/4 flows completed)");
}

TEST_F(ProbeReports, AFlowsSummaryWithAStringFigureIsNoEvidenceNamingTheField) {
  // Given a passing flows report whose summary.completed is the string "4", then the probe is
  // no evidence naming the host, the operation and the field: a pass cannot rest on it.
  auto outcome = flows_reporting(
      R"({"verdict":"pass","reason":"all flows answered","summary":{"flows":4,"completed":"4"}})");
  EXPECT_EQ(outcome.verdict, Verdict::no_evidence);
  EXPECT_EQ(outcome.reason,
            "host1: fabgate-probe flows: field 'summary.completed' is a string, not an integer");
}

TEST_F(ProbeReports, AFlowsSummaryThatIsNotAnObjectIsNoEvidenceAndAFailStaysAFail) {
  // Given a summary that is a string, then a pass becomes no evidence naming it; given the same
  // in a failing report, then the probe still fails (it saw something) and the reason says both.
  auto passing = flows_reporting(R"({"verdict":"pass","reason":"ok","summary":"4 of 4"})");
  EXPECT_EQ(passing.verdict, Verdict::no_evidence);
  EXPECT_EQ(passing.reason,
            "host1: fabgate-probe flows: field 'summary' is a string, not an object");

  auto failing = flows_reporting(R"({"verdict":"fail","reason":"2 flows lost","summary":[2,4]})");
  EXPECT_EQ(failing.verdict, Verdict::fail);
  EXPECT_EQ(failing.reason,
            "2 flows lost; host1: fabgate-probe flows: field 'summary' is an array, not an object");
}

TEST_F(ProbeReports, AResponderThatExitsWithAWronglyTypedReasonNamesTheField) {
  // Given a responder that exits before it is ready and prints a report whose reason is a
  // number, then the probe is no evidence saying which responder, on which device, and that
  // field 'reason' held an integer.
  auto outcome = responder_exiting_with(R"({"verdict":"no-evidence","reason":7})");
  EXPECT_EQ(outcome.verdict, Verdict::no_evidence);
  EXPECT_EQ(outcome.reason,
            "flows responder on host2 exited before it was ready: field 'reason' is an integer, "
            "not a string");
}

TEST_F(ProbeReports, AResponderThatExitsPrintingDeeplyNestedJsonIsRefusedWithTheDepth) {
  // Given a responder that exits before it is ready printing 300,000 levels of nesting, then the
  // probe is no evidence saying the output nests too deep (and fabgate does not overflow its
  // stack); a readable reason still comes through as it is.
  expect_no_evidence_saying(responder_exiting_with(kDeep),
                            "flows responder on host2 exited before it was ready: its output is "
                            "nested deeper than 64 levels");

  auto readable = responder_exiting_with(R"({"verdict":"no-evidence","reason":"no such address"})");
  EXPECT_EQ(readable.reason,
            "flows responder on host2 exited before it was ready: no such address");
}

TEST_F(ProbeReports, ACollectiveRankWithAWronglyTypedVerdictNeverReportedNamingTheField) {
  // Given rank 1 printing a report whose verdict is a number, then the collective is no
  // evidence and names the rank, its host, the operation and the field.
  expect_no_evidence_saying(
      collective_with_rank1(R"({"verdict":3,"iteration_ms":[1.0,1.1,1.2]})"),
      "rank 1 (host2): fabgate-probe collective: field 'verdict' is an integer, not a string");
}

TEST_F(ProbeReports, ACollectiveRankWithAStringTimingNeverReportedNamingTheElement) {
  // Given rank 1 timing its second iteration as a string, then that rank did not report (its
  // timings cannot be judged) and the reason names the element.
  expect_no_evidence_saying(
      collective_with_rank1(R"({"verdict":"pass","iteration_ms":[1.0,"1.1",1.2]})"),
      "rank 1 (host2): fabgate-probe collective: field 'iteration_ms[1]' is not a number");
}

TEST_F(ProbeReports, ACollectiveRankThatReceivedCorruptedChunksFailsNamingTheSendersHost) {
  // Given rank 1 reporting fast iterations and one chunk from rank 0 with a wrong byte, then
  // the collective fails, its reason naming both hosts, and the total is in the detail.
  auto outcome = collective_with_rank1(
      R"({"verdict":"fail","iteration_ms":[1.0,1.1,1.2],"corrupted_chunks":1,)"
      R"("corrupted_from":0,"errors":["rank 1 received 1 of 6 chunks corrupted from rank 0, )"
      R"(first at byte 17180"]})");
  EXPECT_EQ(outcome.verdict, Verdict::fail);
  EXPECT_NE(outcome.reason.find("rank 1 (host2) received 1 corrupted chunk (the first from rank 0 "
                                "(host1)): rank 1 received 1 of 6 chunks corrupted"),
            std::string::npos)
      << outcome.reason;
  EXPECT_EQ(outcome.detail.value("corrupted_chunks", -1), 1) << outcome.detail.dump();
}

TEST_F(ProbeReports, ACollectiveRankWithAWronglyTypedCorruptionCountNeverReported) {
  // Given rank 1 printing its corrupted-chunk count as a string, then the collective is no
  // evidence naming the field: a count fabgate cannot read proves nothing either way.
  expect_no_evidence_saying(
      collective_with_rank1(
          R"({"verdict":"pass","iteration_ms":[1.0,1.1,1.2],"corrupted_chunks":"0"})"),
      "rank 1 (host2): fabgate-probe collective: field 'corrupted_chunks'");
}

TEST_F(ProbeReports, ACollectiveRankPrintingDeeplyNestedJsonIsRefusedWithTheDepth) {
  // Given rank 1 printing 300,000 levels of nesting, then the collective is no evidence saying
  // the rank's report nests too deep.
  expect_no_evidence_saying(
      collective_with_rank1(kDeep),
      "rank 1 (host2): fabgate-probe collective: no report (nested deeper than 64 levels");
}

}  // namespace
}  // namespace fabgate::pipeline
