// report.html: the page names the verdict and each failing layer, draws a layer without
// evidence as such (never green), puts unexpected differences before folded expected ones,
// stays small for a huge comparison, carries no secret, fetches nothing, and is part of every
// bundle's manifest.

#include "gates/pipeline/reporting/report_html.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <regex>

#include "adapters/core/sha256.h"
#include "gates/pipeline/reporting/reports.h"
#include "tests/gates/pipeline/scripted_pipeline.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

const std::string kConfigured = "Cn&ry<V|al\"ue";
const TimePoint kStart = *parse_iso8601("2026-12-01T02:00:00Z");

TimePoint at(int ms) {
  return kStart + Duration{ms};
}

GateRecord gate(const std::string& name, Verdict verdict, int start_ms, int length_ms,
                std::string summary = "") {
  GateRecord record;
  record.name = name;
  record.verdict = verdict;
  record.started = at(start_ms);
  record.duration = Duration{length_ms};
  record.summary = std::move(summary);
  return record;
}

ProbeOutcome probe(const std::string& phase, const std::string& layer, Verdict verdict,
                   int start_ms, std::string reason = "") {
  ProbeOutcome outcome;
  outcome.name = layer + "-probe";
  outcome.layer = layer;
  outcome.host = "host1";
  outcome.kind = "command";
  outcome.phase = phase;
  outcome.verdict = verdict;
  outcome.started = at(start_ms);
  outcome.duration = Duration{200};
  outcome.reason = std::move(reason);
  return outcome;
}

std::string between(const std::string& text, const std::string& from, const std::string& to) {
  auto begin = text.find(from);
  if (begin == std::string::npos) return {};
  auto end = text.find(to, begin + from.size());
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The row of the per-layer table for `layer`.
std::string layer_row(const std::string& page, const std::string& layer) {
  return between(between(page, "<th>proven restored</th>", "</table>"),
                 "<tr><td>" + layer + "</td>", "</tr>");
}

class ReportHtmlTest : public ::testing::Test {
 protected:
  ReportHtmlTest() : redactor_({kConfigured}) {
    repository_.commit.id = "0123456789abcdef0123456789abcdef01234567";
    repository_.commit.author_name = "Author";
    change_.id = "spine-drain";
    change_.title = "drain spine1";
    change_.file = "changes/spine-drain.yaml";
    change_.targets = {"leaf1"};
    // A change that failed its acceptance probe and was rolled back and verified.
    outcome_.exit_code = ExitCode::rolled_back;
    outcome_.device_state = "rolled back; baseline verified at every layer";
    outcome_.gates = {gate("window", Verdict::pass, 0, 5),
                      gate("snapshot-pre", Verdict::pass, 5, 400),
                      gate("baseline-probes", Verdict::pass, 405, 300),
                      gate("execute", Verdict::pass, 705, 500),
                      gate("acceptance", Verdict::fail, 1205, 300, "0/1 probes passed"),
                      gate("rollback", Verdict::pass, 1600, 400),
                      gate("restored-probes", Verdict::pass, 2100, 300)};
    outcome_.first_disproven = "acceptance: [workload] workload-probe on host1: fail";
    outcome_.probes = {probe("baseline", "workload", Verdict::pass, 450),
                       probe("acceptance", "workload", Verdict::fail, 1250, "exit 1"),
                       probe("restored", "workload", Verdict::pass, 2150)};
    outcome_.layers = {{"baseline", {{"workload", "pass"}}},
                       {"acceptance", {{"workload", "fail"}}},
                       {"restored", {{"workload", "pass"}}}};
  }

  ReportContext context() const {
    return ReportContext{repository_, change_, Mode::apply, "op", "run1", redactor_};
  }
  std::string render(std::vector<ComparisonInput> comparisons = {},
                     const nlohmann::json* identity = nullptr,
                     const ReportHtmlLimits& limits = {}) {
    auto ctx = context();
    ReportHtmlInput input{ctx, outcome_, identity, std::move(comparisons)};
    LayerRecovery layers = compute_layer_recovery(outcome_, input.comparisons);
    return render_report_html(input, layers, limits);
  }

  Redactor redactor_;
  intent::IntentRepository repository_;
  intent::Change change_;
  RunOutcome outcome_;
};

TEST_F(ReportHtmlTest, HeaderNamesTheVerdictExitCodeChangeAndDeviceState) {
  // Given a rolled-back run, then the page says so in words with its exit code, the change id
  // and title, the intent commit, the operator and the device state.
  std::string page = render();
  EXPECT_NE(page.find("ROLLED BACK: the change failed and was rolled back"), std::string::npos);
  EXPECT_NE(page.find("(exit 4)"), std::string::npos);
  EXPECT_NE(page.find("spine-drain — drain spine1"), std::string::npos);
  EXPECT_NE(page.find(repository_.commit.id), std::string::npos);
  EXPECT_NE(page.find("<dt>operator</dt><dd>op</dd>"), std::string::npos);
  EXPECT_NE(page.find("rolled back; baseline verified at every layer"), std::string::npos);
}

TEST_F(ReportHtmlTest, ApprovalsShowSignerAndKeyFingerprint) {
  // Given an apply with a counted approval, then its signer and key fingerprint are listed.
  ApprovalRecord approval;
  approval.approver = "alice@example.net";
  approval.key = "SHA256:abcdefFingerprint";
  approval.outcome = "valid";
  approval.counted = true;
  outcome_.approvals.push_back(approval);
  std::string page = render();
  std::string table = between(page, "<h3>Approvals</h3>", "</table>");
  EXPECT_NE(table.find("alice@example.net"), std::string::npos) << table;
  EXPECT_NE(table.find("SHA256:abcdefFingerprint"), std::string::npos) << table;
  // Where its copy in the bundle is (none given here: not copied).
  EXPECT_NE(table.find("<th>copy in bundle</th>"), std::string::npos) << table;
  EXPECT_NE(table.find("not copied"), std::string::npos) << table;
}

TEST_F(ReportHtmlTest, GateTimelineHasOneBarPerGateAndMarksTheFirstFailure) {
  // Given seven gates, the fifth failing, then the timeline draws seven bars and marks the
  // acceptance gate as the first failure.
  std::string page = render();
  std::string svg = between(page, "aria-label=\"gate timeline\"", "</svg>");
  std::regex bar("<rect class=\"(pass|fail|noev|skip)\"");
  auto bars =
      std::distance(std::sregex_iterator(svg.begin(), svg.end(), bar), std::sregex_iterator());
  EXPECT_EQ(bars, 7);
  EXPECT_NE(svg.find("first failure: acceptance"), std::string::npos);
  EXPECT_NE(svg.find("FAIL · 0.30 s"), std::string::npos);
}

TEST_F(ReportHtmlTest, FailedLayerShowsLastGoodFailedAndRestoredFromItsOwnTimestamps) {
  // Given the workload probe passing at baseline, failing at acceptance and passing after the
  // rollback, then the workload row says when it was last good, when it failed and when it was
  // proven restored, each the probe's own end time.
  std::string row = layer_row(render(), "workload");
  ASSERT_FALSE(row.empty());
  EXPECT_NE(row.find(">restored<"), std::string::npos) << row;
  EXPECT_NE(row.find("02:00:00.650"), std::string::npos) << row;  // baseline probe end
  EXPECT_NE(row.find("02:00:01.450"), std::string::npos) << row;  // acceptance probe end
  EXPECT_NE(row.find("02:00:02.350"), std::string::npos) << row;  // restored probe end
}

TEST_F(ReportHtmlTest, LayerThatNeverRecoveredIsNotRestored) {
  // Given the workload probe failing again after the rollback, then the layer is NOT RESTORED
  // and was never proven restored.
  outcome_.exit_code = ExitCode::not_restored;
  outcome_.probes.back().verdict = Verdict::fail;
  outcome_.layers["restored"]["workload"] = "fail";
  std::string page = render();
  std::string row = layer_row(page, "workload");
  EXPECT_NE(row.find("NOT RESTORED"), std::string::npos) << row;
  EXPECT_NE(row.find("<strong>never</strong>"), std::string::npos) << row;
  EXPECT_NE(page.find("NOT RESTORED: the rollback failed"), std::string::npos);
}

TEST_F(ReportHtmlTest, LayerWithoutEvidenceIsDrawnAsSuchNeverGreen) {
  // Given no check of the transport layer and a link layer whose only check had no evidence,
  // then both rows say "no evidence", are hatched in the timeline and have no green bar or dot.
  outcome_.layers["post-compare"]["link"] = "no-evidence";
  std::string page = render();
  for (const std::string layer : {"transport", "link"}) {
    std::string row = layer_row(page, layer);
    EXPECT_NE(row.find("badge noev\">no evidence<"), std::string::npos) << layer << ": " << row;
  }
  std::string svg = between(page, "aria-label=\"recovery timeline per layer\"", "</svg>");
  std::string transport = between(svg, ">transport</text>", "<text class=\"row\"");
  EXPECT_NE(transport.find("class=\"noev\""), std::string::npos) << transport;
  EXPECT_EQ(transport.find("class=\"pass"), std::string::npos) << transport;
  std::string link = between(svg, ">link</text>", "<text class=\"row\"");
  EXPECT_EQ(link.find("class=\"pass"), std::string::npos) << link;
}

TEST_F(ReportHtmlTest, ContinuousProbeGapsArePerFlowWithLoss) {
  // Given a continuous probe whose flow 40001 lost 700 ms, then the disruption section draws
  // the gap on that flow's row, lists its loss, and forwarding failed at the gap's start and was
  // back at its end.
  ProbeOutcome watch = probe("during", "forwarding", Verdict::fail, 700, "longest 700 ms");
  watch.detail = {
      {"started_at", format_utc(at(700))},
      {"ended_at", format_utc(at(1600))},
      {"flows",
       {{{"src_port", 40001},
         {"samples_sent", 100},
         {"samples_received", 93},
         {"interruptions", 1},
         {"longest_interruption_ms", 700},
         {"longest_interruption",
          {{"started_at", format_utc(at(800))}, {"length_ms", 700}, {"ongoing", false}}}},
        {{"src_port", 40002},
         {"samples_sent", 100},
         {"samples_received", 100},
         {"interruptions", 0},
         {"longest_interruption_ms", 0},
         {"longest_interruption", nullptr}}}}};
  outcome_.probes.push_back(watch);
  outcome_.layers["during"]["forwarding"] = "fail";
  std::string page = render();
  std::string section = between(page, "<h2>Disruption during the change</h2>", "<h2>");
  EXPECT_NE(section.find("lost 700 ms from 02:00:00.800"), std::string::npos) << section;
  EXPECT_NE(section.find("7.00 %"), std::string::npos) << section;
  std::string row = layer_row(page, "forwarding");
  EXPECT_NE(row.find("02:00:00.800"), std::string::npos) << row;  // failed
  EXPECT_NE(row.find("02:00:01.500"), std::string::npos) << row;  // back
}

TEST_F(ReportHtmlTest, TheWatchsOwnStallsAreListedApartFromTheFlowsInterruptions) {
  // Given a continuous probe whose sampler stalled twice (40 ms and 25 ms) while its flow was
  // answered throughout, then the disruption section lists both stalls as no evidence, not as
  // path outages, and draws no loss on the flow.
  ProbeOutcome watch = probe("during", "forwarding", Verdict::pass, 700, "longest 0 ms");
  watch.detail = {{"started_at", format_utc(at(700))},
                  {"ended_at", format_utc(at(1600))},
                  {"stall_count", 2},
                  {"stalls",
                   {{{"started_at", format_utc(at(900))}, {"length_ms", 40}},
                    {{"started_at", format_utc(at(1200))}, {"length_ms", 25}}}},
                  {"flows",
                   {{{"src_port", 40001},
                     {"samples_sent", 100},
                     {"samples_received", 100},
                     {"interruptions", 0},
                     {"longest_interruption_ms", 0},
                     {"longest_interruption", nullptr}}}}};
  outcome_.probes.push_back(watch);
  outcome_.layers["during"]["forwarding"] = "pass";
  std::string section = between(render(), "<h2>Disruption during the change</h2>", "<h2>");
  EXPECT_NE(section.find("The watch itself stalled (its sampler, or its responder holding "
                         "probes: no evidence for these spans; not path outages): "
                         "02:00:00.900 for 40 ms, 02:00:01.200 for 25 ms"),
            std::string::npos)
      << section;
  EXPECT_EQ(section.find("lost "), std::string::npos) << section;
}

TEST_F(ReportHtmlTest, TelemetrySectionsShowTheDropDuringTheChangeAndTheReturnAfterRollback) {
  // Given a during window where leaf1's session to 10.0.1.0 dropped and a rollback window
  // (rollback began at 1.6 s) where it came back, then the page has both sections in that
  // order, each event in its own section as "bgp 10.0.1.0" at its device time, the rollback's
  // start, each window's JSON linked, and the telemetry layer last seen good at the end of
  // telemetry-restored, named as the telemetry through the rollback.
  const std::int64_t base_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(kStart.time_since_epoch()).count();
  auto window = [&](const char* phase, int event_ms, const char* what) {
    TelemetryOutcome telemetry;
    telemetry.phase = phase;
    telemetry.verdict = Verdict::pass;
    telemetry.summary = "1 of 1 devices covered";
    DeviceTelemetry leaf1;
    leaf1.device = "leaf1";
    leaf1.why = "target";
    leaf1.samples = 5;
    leaf1.verdict = Verdict::pass;
    leaf1.events = {{.timestamp_ns = base_ns + event_ms * 1'000'000LL,
                     .source = gnmi::TelemetrySource::bgp_neighbors,
                     .subject = "10.0.1.0",
                     .what = what}};
    telemetry.devices = {leaf1};
    return telemetry;
  };
  outcome_.telemetry = window("during", 900, "session-state ESTABLISHED -> IDLE");
  outcome_.rollback_telemetry = window("rollback", 1900, "session-state ACTIVE -> ESTABLISHED");
  outcome_.rollback_telemetry->rollback_started = at(1600);
  outcome_.gates.push_back(gate("telemetry-restored", Verdict::pass, 2400, 10));
  outcome_.layers["rollback"]["telemetry"] = "pass";
  std::string page = render();
  std::string during = between(page, "<h2>During-change telemetry (gNMI)</h2>", "<h2>");
  std::string rollback = between(page, "<h2>Telemetry through the rollback (gNMI)</h2>", "<h2>");
  ASSERT_FALSE(during.empty()) << page;
  ASSERT_FALSE(rollback.empty()) << page;
  EXPECT_LT(page.find("During-change telemetry"), page.find("Telemetry through the rollback"));
  EXPECT_NE(during.find("<td class=\"mono\">2026-12-01T02:00:00.900Z</td><td>leaf1</td><td "
                        "class=\"mono\">bgp 10.0.1.0</td><td>session-state ESTABLISHED -&gt; "
                        "IDLE</td>"),
            std::string::npos)
      << during;
  EXPECT_EQ(during.find("ACTIVE -&gt; ESTABLISHED"), std::string::npos) << during;
  EXPECT_NE(rollback.find("bgp 10.0.1.0</td><td>session-state ACTIVE -&gt; ESTABLISHED"),
            std::string::npos)
      << rollback;
  EXPECT_NE(rollback.find("the rollback began at 2026-12-01T02:00:01.600Z"), std::string::npos)
      << rollback;
  EXPECT_NE(during.find("href=\"telemetry/during.json\""), std::string::npos);
  EXPECT_NE(rollback.find("href=\"telemetry/rollback.json\""), std::string::npos);
  // Last seen good at the end of telemetry-restored, from the telemetry through the rollback.
  std::string row = layer_row(page, "telemetry");
  EXPECT_NE(row.find("held"), std::string::npos) << row;
  EXPECT_NE(row.find("02:00:02.410"), std::string::npos) << row;
  EXPECT_NE(row.find("telemetry through the rollback"), std::string::npos) << row;
}

TEST_F(ReportHtmlTest, ContinuousProbeThatHeardNothingNeverCountsAsGood) {
  // Given a continuous probe that started but received no reply at all (no evidence), then
  // forwarding was never seen good: its row says no evidence, with no last-good time.
  ProbeOutcome watch = probe("during", "forwarding", Verdict::no_evidence, 700, "no reply");
  watch.detail = {
      {"started_at", format_utc(at(700))},
      {"ended_at", format_utc(at(1600))},
      {"flows", {{{"src_port", 40001}, {"samples_sent", 50}, {"samples_received", 0}}}}};
  outcome_.probes.push_back(watch);
  outcome_.layers["during"]["forwarding"] = "no-evidence";
  std::string row = layer_row(render(), "forwarding");
  EXPECT_NE(row.find("badge noev\">no evidence<"), std::string::npos) << row;
  EXPECT_EQ(row.find("02:00:00.700"), std::string::npos) << row;
}

TEST_F(ReportHtmlTest, ProbeResultsPerFlowOrRankAreTabled) {
  // Given a flows probe with per-flow results and a collective probe with per-rank results,
  // then each gets a table of its rows.
  ProbeOutcome flows = probe("acceptance", "forwarding", Verdict::pass, 1300);
  flows.name = "ecmp-flows";
  flows.detail = {{"flows", {{{"src_port", 41000}, {"loss", 0.25}, {"completed", true}}}}};
  ProbeOutcome ranks = probe("acceptance", "workload", Verdict::pass, 1300);
  ranks.name = "allreduce";
  ranks.detail = {
      {"ranks", {{{"rank", 0}, {"busbw_gbps", 180.5}}, {{"rank", 1}, {"busbw_gbps", 12.0}}}}};
  outcome_.probes.push_back(flows);
  outcome_.probes.push_back(ranks);
  std::string page = render();
  EXPECT_NE(page.find("ecmp-flows (acceptance): 1 flows"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"mono\">41000</td>"), std::string::npos);
  EXPECT_NE(page.find("allreduce (acceptance): 2 ranks"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"mono\">12.0</td>"), std::string::npos);
}

nlohmann::json result(const std::string& rule, const std::string& verdict, int n,
                      const std::string& layer = "control-plane") {
  return {
      {"rule", rule},
      {"rule_set", rule == "expected-difference" ? "change" : "fabric-default"},
      {"layer", layer},
      {"device", "leaf1"},
      {"path", "devices.leaf1.bgp.peers.10.0.0." + std::to_string(n) + ".state"},
      {"pre", "\"Established\""},
      {"post", verdict == "pass" && rule != "expected-difference" ? "\"Established\"" : "\"Idle\""},
      {"verdict", verdict},
      {"reason", verdict == "fail" ? "changed" : "ok"}};
}

TEST_F(ReportHtmlTest, UnexpectedDifferencesComeFirstExpectedOnesFolded) {
  // Given a comparison with expected differences, passes and one unexpected failure, then the
  // unexpected one is listed first, open, and the expected ones and passes are folded counts.
  nlohmann::json doc = {
      {"verdict", "fail"},
      {"counts", {{"total", 4}, {"pass", 2}, {"fail", 1}, {"no_evidence", 0}, {"waived", 0}}},
      {"pre", {{"taken_at", format_utc(at(400))}}},
      {"post", {{"taken_at", format_utc(at(1500))}}},
      {"results",
       {result("expected-difference", "pass", 1), result("bgp-peer-state", "pass", 2),
        result("bgp-peer-state", "fail", 3), result("expected-difference", "pass", 4)}},
      {"first_disproven", result("bgp-peer-state", "fail", 3)}};
  std::string page =
      render({{"Post-change snapshot vs pre-change", &doc, "diffs/post-vs-pre.json", ""}});
  std::string section = between(page, "<h2>Comparison</h2>", "<h2>Exceptions");
  auto unexpected = section.find("<h3>Unexpected differences (1)</h3>");
  auto expected =
      section.find("<details><summary>Expected differences, as the change declared (2)");
  auto held = section.find("<details><summary>Held (1)");
  ASSERT_NE(unexpected, std::string::npos) << section;
  ASSERT_NE(expected, std::string::npos) << section;
  ASSERT_NE(held, std::string::npos) << section;
  EXPECT_LT(unexpected, expected);
  EXPECT_NE(section.find("First disproven:"), std::string::npos);
  EXPECT_NE(section.find("href=\"diffs/post-vs-pre.json\""), std::string::npos);
}

TEST_F(ReportHtmlTest, WhatChangedNamesTheRoutesAndLinksTheFullList) {
  // Given a comparison where 12 routes were withdrawn on leaf1, 10.1.2.0/24 among them, then the
  // page names the first 10 under "What changed" with the count, and links the full list in
  // diffs/post-vs-pre-changes.txt for the 2 more.
  nlohmann::json routes = result("route-table", "fail", 0, "forwarding");
  routes["path"] = "devices.leaf1.routes.ipv4";
  routes["details"] = nlohmann::json::array();
  for (int i = 0; i < 12; ++i)
    routes["details"].push_back("- 10.1." + std::to_string(i) + ".0/24 via 10.0.1.0");
  nlohmann::json doc = {
      {"verdict", "fail"}, {"counts", {{"total", 1}, {"fail", 1}}}, {"results", {routes}}};
  std::string page =
      render({{"Post-change snapshot vs pre-change", &doc, "diffs/post-vs-pre.json", ""}});
  std::string section = between(page, "<h4>What changed</h4>", "</ul>");
  EXPECT_NE(section.find("<strong>routes</strong>: 12 removed"), std::string::npos) << section;
  EXPECT_NE(section.find("<code>- leaf1 routes.ipv4: 10.1.2.0/24 via 10.0.1.0</code>"),
            std::string::npos)
      << section;
  EXPECT_EQ(section.find("10.1.10.0/24"), std::string::npos) << section;
  EXPECT_NE(section.find("and 2 more, full list in <a href=\"diffs/post-vs-pre-changes.txt\">"),
            std::string::npos)
      << section;
}

TEST_F(ReportHtmlTest, HugeComparisonKeepsThePageSmallAndLinksTheRawFile) {
  // Given a comparison of 300,000 differing elements under three rules, and one route-table
  // result with 1,000,000 example lines, then the page stays under 1 MiB, lists the first
  // entries of each rule and says how many more are in the raw file.
  nlohmann::json results = nlohmann::json::array();
  for (int i = 0; i < 300'000; ++i)
    results.push_back(result("rule-" + std::to_string(i % 3), "fail", i));
  nlohmann::json routes = result("route-count", "fail", 0, "forwarding");
  routes["details"] = nlohmann::json::array();
  for (int i = 0; i < 1'000'000; ++i) routes["details"].push_back("- 10.0.0.0/24 via x");
  results.push_back(routes);
  nlohmann::json doc = {{"verdict", "fail"},
                        {"counts", {{"total", results.size()}, {"fail", results.size()}}},
                        {"results", std::move(results)}};
  std::string page =
      render({{"Post-change snapshot vs pre-change", &doc, "diffs/post-vs-pre.json", ""}});
  std::printf("page of %zu bytes for 1,000,001 differing elements\n", page.size());
  EXPECT_LT(page.size(), 1u << 20) << "page of " << page.size() << " bytes";
  EXPECT_NE(page.find("… 99980 more in <a href=\"diffs/post-vs-pre.json\">"), std::string::npos);
  EXPECT_NE(page.find("… 999995 more</li>"), std::string::npos);
}

TEST_F(ReportHtmlTest, LongValuesAreShortenedAfterAWholePhrase) {
  // Given a compared value's reason longer than a value may be, then the page shows it cut
  // after its last whole phrase inside the limit with an ellipsis, never inside a word.
  nlohmann::json failing = result("bgp-peer-state", "fail", 3);
  failing["reason"] =
      "session to 10.0.0.3 left Established after 40 s, 12 prefixes withdrawn; "
      "the peer's hold timer expired on spine1";
  nlohmann::json doc = {{"verdict", "fail"},
                        {"counts", {{"total", 1}, {"fail", 1}}},
                        {"results", nlohmann::json::array({failing})},
                        {"first_disproven", failing}};
  ReportHtmlLimits limits;
  limits.value_chars = 90;
  std::string page =
      render({{"Post-change snapshot vs pre-change", &doc, "diffs/post-vs-pre.json", ""}}, nullptr,
             limits);
  EXPECT_NE(page.find("session to 10.0.0.3 left Established after 40 s, 12 prefixes withdrawn…"),
            std::string::npos);
  EXPECT_EQ(page.find("the peer&#39;s hold ti"), std::string::npos);
  EXPECT_EQ(page.find("the peer's hold ti"), std::string::npos);
}

TEST_F(ReportHtmlTest, NoSecretInAnyFormAndNothingToFetch) {
  // Given secrets in a step command, a gate summary, a probe reason, a compared value and a
  // device identity (a configured value holding '&', '<', '|' and '"', and secret shapes), then
  // the page holds none of them in any form, has no script, and fetches nothing.
  StepRun step;
  step.device = "leaf1";
  step.index = 1;
  step.command = "vtysh -c 'neighbor 10.0.0.1 password CanaryR3'";
  step.reason = "stderr: " + kConfigured;
  outcome_.steps.push_back(step);
  outcome_.gates[4].summary = "probe said: neighbor 10.0.0.1 password \"CanaryR1\"";
  outcome_.gates[4].details = {"token=" + kConfigured};
  outcome_.probes[1].reason = "exit 1: secret CanaryR2 & " + kConfigured;
  outcome_.first_disproven = "acceptance: " + kConfigured;
  nlohmann::json doc = {{"verdict", "fail"}, {"results", {result("snmp", "fail", 1)}}};
  doc["results"][0]["post"] = "snmp-server community CanaryR4 ro";
  nlohmann::json snapshot = {{"devices", {{"leaf1", {{"identity", {{"os", kConfigured}}}}}}}};
  std::string page = render({{"post", &doc, "", ""}}, &snapshot);
  for (std::string form : {"CanaryR1", "CanaryR2", "CanaryR3", "CanaryR4", "Cn&ry", "Cn&amp;ry",
                           "V|al", "&lt;V|al", "V al"})
    EXPECT_EQ(page.find(form), std::string::npos) << form;
  EXPECT_NE(page.find("&lt;redacted&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
}

TEST_F(ReportHtmlTest, ExceptionsUsedShowOwnerAndExpiry) {
  // Given a probe waived by an exception of the register, then the page lists its owner and
  // expiry.
  repository_.settings.policies_dir = "policies";
  repository_.policy_texts["policies/exceptions.yaml"] =
      "exceptions:\n  - id: EX-7\n    scope: {device: host1, rule: 'probe:workload-probe'}\n"
      "    reason: NIC in RMA\n    owner: netops@example.net\n    expiry: 2099-01-01T00:00:00Z\n";
  outcome_.exceptions_used = {"EX-7"};
  std::string section = between(render(), "<h2>Exceptions used</h2>", "<h2>");
  EXPECT_NE(section.find("netops@example.net"), std::string::npos) << section;
  EXPECT_NE(section.find("2099-01-01T00:00:00.000Z"), std::string::npos) << section;
}

TEST_F(ReportHtmlTest, DeviceIdentityListsSoftwareAndFirmware) {
  // Given a snapshot with OS, FRR and NIC firmware versions, and a device without identity,
  // then both are listed, the second as no evidence.
  nlohmann::json snapshot = {{"taken_at", format_utc(at(400))},
                             {"devices",
                              {{"leaf1",
                                {{"identity",
                                  {{"os", "Debian 12"},
                                   {"frr_version", "8.4.4"},
                                   {"nics", {{"eth1", {{"firmware", "16.35.2000"}}}}}}}}},
                               {"host1", {{"identity", nlohmann::json::object()}}}}}};
  std::string section = between(render({}, &snapshot), "<h2>Software and firmware</h2>", "<h2>");
  EXPECT_NE(section.find("<code>frr_version</code> 8.4.4"), std::string::npos) << section;
  EXPECT_NE(section.find("<code>nics.eth1.firmware</code> 16.35.2000"), std::string::npos);
  EXPECT_NE(between(section, "<td>host1</td>", "</tr>").find("NO EVIDENCE"), std::string::npos);
}

TEST_F(ReportHtmlTest, WronglyTypedProbeDetailsAndLayersRenderAsAbsentNeverThrow) {
  // Given a continuous probe whose report has every field of another type (a flow that is a
  // number, counts as strings, an interruption length as text, a start time as a number), a
  // second one whose flows are a string, a probe whose detail is a number, and layer verdicts
  // that are not words, then report.html and report.md are still written: the odd values are
  // absent (no loss computed, no interruption drawn, no per-flow record) or no evidence, and
  // nothing throws. (Before the typed lookups, "samples_received": "7" threw type_error out of
  // the renderer, and so did a verdict that was a number in report.md.)
  ProbeOutcome watch = probe("during", "forwarding", Verdict::fail, 700, "odd report");
  watch.detail = {
      {"started_at", 7},
      {"ended_at", format_utc(at(1600))},
      {"stall_count", "2"},
      {"stalls", {5, {{"started_at", "x"}, {"length_ms", "40"}}}},
      {"flows",
       {5,
        "x",
        {{"src_port", 40001},
         {"samples_sent", "100"},
         {"samples_received", "7"},
         {"completed", "7"},
         {"interruptions", {{{"started_at", format_utc(at(900))}, {"length_ms", "x"}}}},
         {"longest_interruption",
          {{"started_at", format_utc(at(800))}, {"length_ms", "700"}, {"ongoing", "no"}}}}}}};
  ProbeOutcome no_flows = probe("during", "overlay", Verdict::no_evidence, 700);
  no_flows.detail = {{"flows", "x"}, {"stalls", {{"length_ms", 3}}}};
  ProbeOutcome number_detail = probe("acceptance", "rdma", Verdict::pass, 1300);
  number_detail.detail = 42;
  outcome_.probes.insert(outcome_.probes.end(), {watch, no_flows, number_detail});
  outcome_.layers["during"] = {{"forwarding", 7}, {"overlay", {{"nested", true}}}};
  outcome_.layers["odd-phase"] = "x";

  std::string page;
  ASSERT_NO_THROW(page = render());
  std::string section = between(page, "<h2>Disruption during the change</h2>", "<h2>");
  EXPECT_EQ(section.find("lost "), std::string::npos) << section;  // no length: not drawn
  EXPECT_NE(section.find("<td>100</td><td>7</td><td>—</td>"), std::string::npos) << section;
  EXPECT_NE(section.find("The continuous probe left no per-flow record"), std::string::npos);
  // Forwarding was lost at the interruption's start; when it came back is unknown, so it is
  // never shown restored.
  std::string row = layer_row(page, "forwarding");
  EXPECT_NE(row.find("NOT RESTORED"), std::string::npos) << row;
  EXPECT_NE(row.find("02:00:00.800"), std::string::npos) << row;

  std::string markdown;
  ASSERT_NO_THROW(markdown = render_report_markdown(context(), outcome_));
  EXPECT_NE(markdown.find("| during | forwarding | no-evidence |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| odd-phase | - | no-evidence |"), std::string::npos) << markdown;
}

TEST(ReportHtmlBundle, ComparisonFilesThatAreNotJsonOrOfOddShapeAreLeftOutNeverThrown) {
  // Given a bundle whose post-change comparison is not JSON and whose restored comparison has
  // fields of other types (exceptions_used a string, results a number, snapshot times numbers),
  // then the bundle's page is written, the unreadable comparison is left out, no exception is
  // invented from the string, and the layer recovery is still computed.
  testing::TempDir bundle;
  std::filesystem::create_directories(bundle.path() + "/diffs");
  testing::write_file(bundle.path() + "/diffs/post-vs-pre.json", "{\"verdict\": ");
  testing::write_file(bundle.path() + "/diffs/restored-vs-pre.json",
                      R"({"verdict": 5, "counts": "x", "results": 5, "exceptions_used": "E1",
                          "pre": {"taken_at": 3}, "post": 4, "first_disproven": 5})");
  intent::IntentRepository repository;
  intent::Change change;
  Redactor redactor;
  ReportContext context{repository, change, Mode::apply, "op", "run1", redactor};
  RunOutcome outcome;
  outcome.layers = {{"restored-compare", {{"control-plane", "pass"}}}};
  BundlePage page;
  ASSERT_NO_THROW(page = render_bundle_report(context, outcome, bundle.path(), nullptr));
  EXPECT_EQ(page.html.find("Post-change snapshot vs pre-change"), std::string::npos);
  EXPECT_NE(page.html.find("Restored snapshot vs pre-change"), std::string::npos);
  EXPECT_NE(page.html.find("<p>None: nothing was waived.</p>"), std::string::npos);
  ASSERT_FALSE(page.layers.layers.empty());
  EXPECT_EQ(to_json(page.layers).size(), page.layers.layers.size());
}

TEST(ReportHtmlBundle, EveryRunBundleHasTheHashedPage) {
  // Given a real Pipeline run with scripted collaborators, then report.html is in the bundle,
  // listed in manifest.json with its sha256, and the bundle verifies intact.
  ScriptedRun run({"leaf1"});
  auto outcome = run.run();
  std::filesystem::path bundle;
  for (const auto& change : std::filesystem::directory_iterator(run.evidence_root.path()))
    for (const auto& dir : std::filesystem::directory_iterator(change.path())) bundle = dir.path();
  ASSERT_TRUE(std::filesystem::exists(bundle / "report.html"));
  std::string page = testing::read_file((bundle / "report.html").string());
  EXPECT_NE(page.find("<h2>Recovery by layer</h2>"), std::string::npos);
  auto manifest = nlohmann::json::parse(testing::read_file((bundle / "manifest.json").string()));
  ASSERT_TRUE(manifest["files"].contains("report.html"));
  EXPECT_EQ(manifest["files"]["report.html"], sha256_hex(page));
  auto check = verify_bundle(bundle);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->intact());
}

TEST(ReportHtmlComparisonPage, DiffPageHasTheComparisonView) {
  // Given a comparison document, then the stand-alone page shows the same view, redacted.
  nlohmann::json doc = {{"verdict", "fail"}, {"results", {result("bgp-peer-state", "fail", 3)}}};
  doc["results"][0]["reason"] = "password CanaryR5";
  Redactor redactor;
  std::string page = render_comparison_page({"pre.json vs post.json", &doc, "", ""}, redactor);
  EXPECT_NE(page.find("<h3>Unexpected differences (1)</h3>"), std::string::npos);
  EXPECT_EQ(page.find("CanaryR5"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::pipeline
