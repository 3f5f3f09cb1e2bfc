// The layer-recovery model: computed once from a run's outcome and its comparisons, the same
// model the manifest's layer_recovery and report.html's "Recovery by layer" show.

#include "gates/pipeline/reporting/layer_recovery.h"

#include <gtest/gtest.h>

namespace fabgate::pipeline {
namespace {

const TimePoint kStart = *parse_iso8601("2026-12-01T02:00:00Z");

TimePoint at(int ms) {
  return kStart + Duration{ms};
}

GateRecord gate(const std::string& name, Verdict verdict, int start_ms, int length_ms) {
  GateRecord record;
  record.name = name;
  record.verdict = verdict;
  record.started = at(start_ms);
  record.duration = Duration{length_ms};
  return record;
}

ProbeOutcome probe(const std::string& phase, const std::string& layer, Verdict verdict,
                   int start_ms) {
  ProbeOutcome outcome;
  outcome.name = layer + "-probe";
  outcome.layer = layer;
  outcome.phase = phase;
  outcome.verdict = verdict;
  outcome.started = at(start_ms);
  outcome.duration = Duration{200};
  return outcome;
}

// A rehearsal that lost forwarding during the change, failed its acceptance probe and the
// post-change comparison, and was rolled back: probes, a continuous probe with one 700 ms
// interruption, both comparisons with their snapshot times, the telemetry through the
// rollback, a waived check and a layer no built-in order knows.
RunOutcome rolled_back_run() {
  RunOutcome outcome;
  outcome.exit_code = ExitCode::rolled_back;
  outcome.gates = {gate("snapshot-pre", Verdict::pass, 0, 400),
                   gate("baseline-probes", Verdict::pass, 405, 300),
                   gate("execute", Verdict::pass, 705, 500),
                   gate("disruption", Verdict::fail, 705, 900),
                   gate("acceptance", Verdict::fail, 1205, 300),
                   gate("compare", Verdict::fail, 1505, 50),
                   gate("rollback", Verdict::pass, 1600, 400),
                   gate("compare-restored", Verdict::pass, 2300, 50),
                   gate("restored-probes", Verdict::pass, 2100, 300),
                   gate("telemetry-restored", Verdict::pass, 2400, 10)};
  ProbeOutcome watch = probe("during", "forwarding", Verdict::fail, 700);
  watch.detail = {
      {"started_at", format_utc(at(700))},
      {"ended_at", format_utc(at(1600))},
      {"flows",
       {{{"src_port", 40001},
         {"samples_received", 93},
         {"longest_interruption",
          {{"started_at", format_utc(at(800))}, {"length_ms", 700}, {"ongoing", false}}}},
        {{"src_port", 40002}, {"samples_received", 100}, {"longest_interruption", nullptr}}}}};
  outcome.probes = {probe("baseline", "workload", Verdict::pass, 450),
                    probe("acceptance", "workload", Verdict::fail, 1250), watch,
                    probe("restored", "workload", Verdict::pass, 2150)};
  outcome.layers = {
      {"baseline", {{"workload", "pass"}}},
      {"during", {{"forwarding", "fail"}}},
      {"acceptance", {{"workload", "fail"}}},
      {"post-compare", {{"control-plane", "fail"}, {"link", "waived"}, {"bfd", "no-evidence"}}},
      {"restored-compare", {{"control-plane", "pass"}, {"link", "pass"}}},
      {"restored", {{"workload", "pass"}, {"gpu-fabric", "pass"}}},
      {"rollback", {{"telemetry", "pass"}}}};
  return outcome;
}

nlohmann::json comparison(int pre_ms, int post_ms) {
  return {{"verdict", "pass"},
          {"pre", {{"taken_at", format_utc(at(pre_ms))}}},
          {"post", {{"taken_at", format_utc(at(post_ms))}}}};
}

TEST(LayerRecovery, TheManifestJsonOfARolledBackRunIsUnchanged) {
  // Given a rolled-back run with every kind of layer evidence, then the manifest's
  // layer_recovery is exactly what fabgate wrote before the model had its own file (`fabgate
  // evidence show` and independent checks read it): each layer's status, last good, first
  // failure, restore and evidence sources, in the fabric's recovery order.
  RunOutcome outcome = rolled_back_run();
  nlohmann::json post = comparison(400, 1500);
  nlohmann::json restored = comparison(400, 2300);
  std::vector<ComparisonInput> comparisons = {
      {"post", &post, "diffs/post-vs-pre.json", ""},
      {"restored", &restored, "diffs/restored-vs-pre.json", ""}};
  EXPECT_EQ(to_json(compute_layer_recovery(outcome, comparisons)).dump(2), R"([
  {
    "evidence": [
      "post-change snapshot vs pre",
      "restored snapshot vs pre"
    ],
    "failed_at": null,
    "failed_by": "",
    "failed_verdict": "",
    "last_good": "2026-12-01T02:00:02.300Z",
    "layer": "link",
    "restored_at": null,
    "status": "held"
  },
  {
    "evidence": [
      "post-change snapshot vs pre"
    ],
    "failed_at": null,
    "failed_by": "",
    "failed_verdict": "",
    "last_good": null,
    "layer": "bfd",
    "restored_at": null,
    "status": "no evidence"
  },
  {
    "evidence": [
      "post-change snapshot vs pre",
      "restored snapshot vs pre"
    ],
    "failed_at": "2026-12-01T02:00:01.500Z",
    "failed_by": "post-change snapshot vs pre",
    "failed_verdict": "fail",
    "last_good": null,
    "layer": "control-plane",
    "restored_at": "2026-12-01T02:00:02.300Z",
    "status": "restored"
  },
  {
    "evidence": [
      "continuous probe",
      "continuous probe: flow 40001 back",
      "continuous probe: flow 40001 lost"
    ],
    "failed_at": "2026-12-01T02:00:00.800Z",
    "failed_by": "continuous probe: flow 40001 lost",
    "failed_verdict": "fail",
    "last_good": "2026-12-01T02:00:00.700Z",
    "layer": "forwarding",
    "restored_at": "2026-12-01T02:00:01.500Z",
    "status": "restored"
  },
  {
    "evidence": [],
    "failed_at": null,
    "failed_by": "",
    "failed_verdict": "",
    "last_good": null,
    "layer": "transport",
    "restored_at": null,
    "status": "no evidence"
  },
  {
    "evidence": [
      "telemetry through the rollback"
    ],
    "failed_at": null,
    "failed_by": "",
    "failed_verdict": "",
    "last_good": "2026-12-01T02:00:02.410Z",
    "layer": "telemetry",
    "restored_at": null,
    "status": "held"
  },
  {
    "evidence": [
      "acceptance probes",
      "baseline probes",
      "probes after rollback"
    ],
    "failed_at": "2026-12-01T02:00:01.450Z",
    "failed_by": "acceptance probes",
    "failed_verdict": "fail",
    "last_good": "2026-12-01T02:00:00.650Z",
    "layer": "workload",
    "restored_at": "2026-12-01T02:00:02.350Z",
    "status": "restored"
  },
  {
    "evidence": [
      "probes after rollback"
    ],
    "failed_at": null,
    "failed_by": "",
    "failed_verdict": "",
    "last_good": "2026-12-01T02:00:02.400Z",
    "layer": "gpu-fabric",
    "restored_at": null,
    "status": "held"
  }
])");
}

}  // namespace
}  // namespace fabgate::pipeline
