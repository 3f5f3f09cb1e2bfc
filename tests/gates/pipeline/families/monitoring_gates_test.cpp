// The monitoring gates (docs/monitoring.md) inside a real Pipeline, against the real Debian
// prometheus, alertmanager and node exporter on 127.0.0.1 (tests/adapters/prom/
// monitoring_stack.h); devices, steps and snapshots are scripted. The node exporter's textfile
// metric fabgate_lab_link_up{device="leaf1"} stands for leaf1's link: a step that sets it to 0
// makes the FabgateLinkDown alert fire, as an interface set down would.

#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gates/pipeline/families/monitoring.h"
#include "tests/adapters/prom/monitoring_stack.h"
#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

using testing::eventually;
using testing::MonitoringStack;

std::string machine_hostname() {
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Sends steps nowhere, but a step whose command says "link down" (or "link up") sets leaf1's
// link metric, so a change really makes the monitoring see something.
class LinkRemote final : public Remote {
 public:
  explicit LinkRemote(MonitoringStack* stack) : stack_(stack) {}
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string& command, Duration,
                   std::string_view purpose) override {
    if (purpose == "step") ++steps;
    if (command.find("link down") != std::string::npos) stack_->set_link(false);
    if (command.find("link up") != std::string::npos) stack_->set_link(true);
    if (command.find("link blip") != std::string::npos) {
      // Down long enough for a scrape and a rule evaluation to see it, then up again.
      stack_->set_link(false);
      std::this_thread::sleep_for(std::chrono::milliseconds(3'500));
      stack_->set_link(true);
    }
    if (command.find("exporter blip") != std::string::npos) {
      // The exporter hung until Prometheus recorded two failed scrapes in a row (two up == 0
      // samples since the hang began: every scrape fails while it hangs, and one isolated
      // failure would be tolerated), then answering again until Prometheus recorded a
      // successful scrape: bounded polls, no fixed sleep. The range counts from the hang, so a
      // failed scrape of an earlier test does not count.
      auto prometheus = stack_->prometheus_client();
      auto seen = [&](const std::function<std::string()>& query) {
        return eventually([&] {
          auto answer = prometheus.query_now(query());
          return answer.ok() && !answer->series.empty();
        });
      };
      stack_->pause_exporter();
      const TimePoint hung_at = now_utc();
      blip_seen = seen([&] {
        const auto since = std::chrono::duration_cast<Duration>(now_utc() - hung_at).count();
        const std::string range = "[" + std::to_string(std::max<long long>(since, 1)) + "ms]";
        return "count_over_time(up{job=\"node\"}" + range + ") - sum_over_time(up{job=\"node\"}" +
               range + ") >= 2";
      });
      stack_->resume_exporter();
      blip_seen = seen([] { return std::string("up{job=\"node\"} == 1"); }) && blip_seen;
    }
    ssh::CommandResult result;
    result.exit_status = 0;
    result.started_at = now_utc();
    return result;
  }
  int steps = 0;
  bool blip_seen = false;

 private:
  MonitoringStack* stack_;
};

// The real Alertmanager, except that expiring a silence fails (as when Alertmanager went away
// after the change).
class AlertmanagerThatCannotExpire final : public prom::AlertmanagerClient {
 public:
  using prom::AlertmanagerClient::AlertmanagerClient;
  Expected<Ok, prom::AlertFailure> expire_silence(const std::string&) const override {
    return prom::AlertFailure{prom::AlertFailure::Kind::unreachable, "connection refused"};
  }
};

class MonitoringGates : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!MonitoringStack::missing().empty()) return;
    stack_ = new MonitoringStack();
    ready_ = stack_->wait_ready();
  }
  static void TearDownTestSuite() {
    delete stack_;
    stack_ = nullptr;
  }
  void SetUp() override {
    if (auto why = MonitoringStack::missing(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(ready_) << stack_->logs();
    // Every test starts from a healthy leaf1 with no alert and no running exporter problem.
    stack_->set_link(true);
    ASSERT_TRUE(eventually([] {
      auto alerts = stack_->alertmanager_client().alerts();
      auto up = stack_->prometheus_client().query("up == 1", now_utc());
      return alerts.ok() && alerts->empty() && up.ok() && !up->series.empty();
    })) << stack_->logs();

    run_.repository.inventory.devices[0].labels["exporter"] = stack_->exporter_address();
    intent::PrometheusSettings prometheus;
    prometheus.endpoint.url = stack_->prometheus_url();
    prometheus.series = "instance=\"{{label.exporter}}\"";
    prometheus.max_age = Duration{10'000};
    prometheus.fresh = {"fabgate_lab_link_up"};
    run_.repository.settings.monitoring.prometheus = prometheus;
    intent::AlertmanagerSettings alertmanager;
    alertmanager.endpoint.url = stack_->alertmanager_url();
    run_.repository.settings.monitoring.alertmanager = alertmanager;
    // leaf1's exporter reports this machine's hostname.
    intent::ExpectedIdentity identity;
    identity.hostname = machine_hostname();
    run_.repository.inventory.devices[0].identity = identity;
    // A kernel too: one compare rule must reach something, or compare is no-evidence.
    run_.snapshotter.identities["leaf1"] = {{"hostname", machine_hostname()},
                                            {"kernel", "6.1.0-28-amd64"}};
    run_.change.steps[0].run = "set leaf1 link down";
    run_.change.rollback[0].run = "set leaf1 link up";
    intent::Probe link;
    link.name = "link-up-metric";
    link.layer = "link";
    link.kind = "promql";
    link.host = "leaf1";
    link.query = "fabgate_lab_link_up{ {{series}} }";
    link.expect = "== 1";
    run_.change.acceptance.probes = {link};
    // The change window must hold at least two scrapes (1 s apart) and a rule evaluation for
    // freshness-post and alerts-acceptance to speak for it (docs/monitoring.md).
    run_.change.acceptance.settle = Duration{3'000};
  }

  enum class Expiry { works, fails };
  RunOutcome run(Duration timeout = Duration{3'000}, Expiry expiry = Expiry::works) {
    prom::PrometheusClient prometheus(
        {run_.repository.settings.monitoring.prometheus->endpoint.url, "", "", timeout});
    prom::HttpEndpoint am_endpoint{run_.repository.settings.monitoring.alertmanager->endpoint.url,
                                   "", "", timeout};
    prom::AlertmanagerClient working(am_endpoint);
    AlertmanagerThatCannotExpire failing(am_endpoint);
    const prom::AlertmanagerClient& alertmanager =
        expiry == Expiry::works ? working : static_cast<const prom::AlertmanagerClient&>(failing);
    auto bundle = EvidenceBundle::create(run_.evidence_root.path(), run_.change.id, now_utc(),
                                         "run" + std::to_string(++runs_), Redactor{});
    EXPECT_TRUE(bundle.ok());
    if (!bundle.ok()) return RunOutcome{};
    bundle_dir_ = bundle.value()->dir();
    GateObserver observer;
    PipelineOptions options;
    options.mode = Mode::apply;
    options.operator_name = "monitoring-test";
    Pipeline::Collaborators with{remote_, run_.snapshotter, *bundle.value(), observer};
    with.prometheus = &prometheus;
    with.alertmanager = &alertmanager;
    Pipeline pipeline(run_.repository, run_.change, with, options);
    return pipeline.run();
  }

  nlohmann::json evidence(const std::string& file) const {
    std::ifstream in(bundle_dir_ / file);
    return nlohmann::json::parse(in, nullptr, false);
  }

  static MonitoringStack* stack_;
  static bool ready_;
  ScriptedRun run_{{"leaf1"}};
  LinkRemote remote_{stack_};
  std::filesystem::path bundle_dir_;
  int runs_ = 0;
};

MonitoringStack* MonitoringGates::stack_ = nullptr;
bool MonitoringGates::ready_ = false;

TEST_F(MonitoringGates, AHealthyChangePassesWithItsQueriesInTheEvidenceAndItsSilenceExpired) {
  // Given a fresh, correctly identified target and a change that touches nothing the monitoring
  // sees, then freshness, alerts and the promql probe pass; every query, its raw answer and
  // its evaluation time are in the bundle; the change-window silence was active during the
  // change and is expired afterwards, both journaled.
  run_.change.steps[0].run = "echo harmless";
  std::string silence_during;
  run_.snapshotter.before_returning = [&] {
    auto silence = evidence("monitoring/silence.json");
    if (silence.is_object() && silence.contains("id")) {
      auto state = stack_->alertmanager_client().silence(silence["id"].get<std::string>());
      if (state.ok()) silence_during = state->state;
    }
  };
  auto outcome = run();
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;
  for (const char* name : {"freshness-pre", "alerts-pre", "silence", "freshness-post",
                           "alerts-acceptance", "silence-expire"}) {
    const GateRecord* record = gate_named(outcome, name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_EQ(record->verdict, Verdict::pass) << name << ": " << all_details(*record);
  }
  EXPECT_EQ(silence_during, "active");
  auto silence = evidence("monitoring/silence.json");
  ASSERT_TRUE(silence.contains("id"));
  EXPECT_NE(silence["comment"].get<std::string>().find("change gate-test"), std::string::npos);
  auto after = stack_->alertmanager_client().silence(silence["id"].get<std::string>());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state, "expired");

  auto freshness = evidence("monitoring/freshness-pre.json");
  ASSERT_TRUE(freshness.is_object());
  bool identity_seen = false;
  EXPECT_EQ(freshness["targets"]["status"], "success");  // /api/v1/targets, kept once
  bool aged = false, listed = false;
  for (const auto& query : freshness["queries"]) {
    EXPECT_TRUE(query.contains("evaluated_at"));
    listed |= query["purpose"] == "target-scraped" && query["verdict"] == "pass";
    if (query["purpose"] == "target-scraped") continue;
    EXPECT_EQ(query["answer"]["status"], "success");
    aged |= query["purpose"] == "target-up-age" && query["verdict"] == "pass";
    identity_seen |= query["purpose"] == "identity" && query["verdict"] == "pass";
  }
  EXPECT_TRUE(identity_seen) << freshness.dump(2);
  EXPECT_TRUE(aged && listed) << freshness.dump(2);
  // After the change, the window's scrapes and rule evaluations were judged too.
  auto post = evidence("monitoring/freshness-post.json");
  EXPECT_TRUE(post["window"]["queries"].is_array()) << post.dump(2);
  auto acceptance = evidence("monitoring/alerts-acceptance.json");
  ASSERT_TRUE(acceptance["rule_evaluation"]["groups"].is_array()) << acceptance.dump(2);
  EXPECT_EQ(acceptance["rule_evaluation"]["groups"][0]["verdict"], "pass");
  auto probes = evidence("probes/baseline.json");
  ASSERT_TRUE(probes.is_array());
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(probes[0]["verdict"], "pass");
  EXPECT_EQ(probes[0]["detail"]["query"],
            "fabgate_lab_link_up{ instance=\"" + stack_->exporter_address() + "\" }");
  EXPECT_EQ(probes[0]["detail"]["answer"]["data"]["resultType"], "vector");
  std::ifstream journal(bundle_dir_ / "journal.jsonl");
  std::string text((std::istreambuf_iterator<char>(journal)), {});
  EXPECT_NE(text.find("silence-created"), std::string::npos);
  EXPECT_NE(text.find("silence-expired"), std::string::npos);
}

TEST_F(MonitoringGates, AChangeThatMakesAnAlertFireIsRolledBackWithTheAlertNamed) {
  // Given a step that sets leaf1's link down (FabgateLinkDown fires, silenced by fabgate's own
  // silence), then alerts-acceptance fails naming the alert, the change is rolled back (exit 4),
  // and the silence is expired all the same.
  // A scrape (1 s), a rule evaluation (1 s) and the delivery to Alertmanager, with margin for a
  // loaded CI machine.
  run_.change.acceptance.settle = Duration{6'000};
  run_.change.acceptance.probes[0].expect = ">= 0";  // only the alert gate judges the link
  auto outcome = run();
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back) << outcome.first_disproven;
  const GateRecord* alerts = gate_named(outcome, "alerts-acceptance");
  ASSERT_NE(alerts, nullptr);
  EXPECT_EQ(alerts->verdict, Verdict::fail);
  ASSERT_FALSE(alerts->details.empty());
  EXPECT_NE(alerts->details[0].find("FabgateLinkDown{device=\"leaf1\""), std::string::npos)
      << all_details(*alerts);
  EXPECT_NE(alerts->details[0].find("(silenced)"), std::string::npos) << all_details(*alerts);
  EXPECT_NE(outcome.first_disproven.find("FabgateLinkDown"), std::string::npos);
  const GateRecord* expire = gate_named(outcome, "silence-expire");
  ASSERT_NE(expire, nullptr);
  EXPECT_EQ(expire->verdict, Verdict::pass);

  // Declared as expected, the same alert does not fail acceptance.
  run_.change.acceptance.expected_alerts = {"FabgateLinkDown"};
  ASSERT_TRUE(eventually([] {
    auto alerts = stack_->alertmanager_client().alerts();
    return alerts.ok() && alerts->empty();
  })) << stack_->logs();
  auto expected = run();
  const GateRecord* allowed = gate_named(expected, "alerts-acceptance");
  ASSERT_NE(allowed, nullptr);
  EXPECT_EQ(allowed->verdict, Verdict::pass) << all_details(*allowed);
  EXPECT_NE(all_details(*allowed).find("declared as expected"), std::string::npos);
}

TEST_F(MonitoringGates, AnAlertThatFiredAndResolvedWithinTheSettleTimeStillFailsTheChange) {
  // Given a step that takes leaf1's link down for 3.5 s and brings it back, and a settle time
  // long enough for FabgateLinkDown to fire and resolve before alerts-acceptance runs (so
  // Alertmanager no longer holds it), then Prometheus' ALERTS history still shows it: the gate
  // fails naming the alert as resolved, and the change is rolled back (exit 4).
  run_.change.steps[0].run = "set leaf1 link blip";
  run_.change.acceptance.settle = Duration{8'000};
  run_.change.acceptance.probes[0].expect = ">= 0";  // only the alert gate judges the link
  auto outcome = run();
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back) << outcome.first_disproven;
  const GateRecord* alerts = gate_named(outcome, "alerts-acceptance");
  ASSERT_NE(alerts, nullptr);
  EXPECT_EQ(alerts->verdict, Verdict::fail) << alerts->summary;
  EXPECT_NE(all_details(*alerts).find("FabgateLinkDown{device=\"leaf1\""), std::string::npos)
      << all_details(*alerts);
  EXPECT_NE(all_details(*alerts).find("resolved before this check"), std::string::npos)
      << all_details(*alerts);
  auto document = evidence("monitoring/alerts-acceptance.json");
  EXPECT_EQ(document["history"]["query"], "ALERTS{alertstate=\"firing\"}") << document.dump(2);
}

TEST_F(MonitoringGates, ASilenceThatCannotBeExpiredTurnsAnAcceptedRunIntoExitOne) {
  // Given a harmless change that passes every gate but whose silence cannot be expired, then
  // silence-expire fails, the run exits 1 (not 0) and its device state names the silence that
  // still hides the targets' alerts; the silence itself ends at its end time.
  run_.change.steps[0].run = "echo harmless";
  auto outcome = run(Duration{3'000}, Expiry::fails);
  EXPECT_EQ(outcome.exit_code, ExitCode::internal_error) << outcome.first_disproven;
  const GateRecord* expire = gate_named(outcome, "silence-expire");
  ASSERT_NE(expire, nullptr);
  EXPECT_EQ(expire->verdict, Verdict::fail);
  EXPECT_NE(outcome.device_state.find("could not be expired"), std::string::npos)
      << outcome.device_state;
  auto silence = evidence("monitoring/silence.json");
  ASSERT_TRUE(silence.contains("id")) << silence.dump(2);
  // Leave the stack clean for the next test.
  EXPECT_TRUE(stack_->alertmanager_client().expire_silence(silence["id"].get<std::string>()).ok());
}

TEST_F(MonitoringGates, AnAlertFiringBeforeTheChangeRefusesItUnlessAnExceptionWaivesIt) {
  // Given FabgateLinkDown firing on leaf1 before the run, then alerts-pre fails naming it and
  // nothing is sent (exit 3); given an unexpired exception for alert:FabgateLinkDown on leaf1,
  // then the run proceeds and the waived alert is listed with its exception.
  stack_->set_link(false);
  ASSERT_TRUE(eventually([] {
    auto alerts = stack_->alertmanager_client().alerts();
    return alerts.ok() && !alerts->empty();
  })) << stack_->logs();
  run_.change.acceptance.probes[0].expect = ">= 0";
  run_.change.steps[0].run = "echo harmless";
  run_.change.rollback[0].run = "echo harmless";
  auto refused = run();
  EXPECT_EQ(refused.exit_code, ExitCode::refused);
  EXPECT_EQ(remote_.steps, 0);
  const GateRecord* pre = gate_named(refused, "alerts-pre");
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->verdict, Verdict::fail);
  EXPECT_NE(refused.first_disproven.find("alert FabgateLinkDown{device=\"leaf1\""),
            std::string::npos)
      << refused.first_disproven;
  EXPECT_EQ(gate_named(refused, "silence"), nullptr);

  run_.repository.policy_texts["policies/exceptions.yaml"] =
      "exceptions:\n"
      "  - id: EXC-LINK\n"
      "    scope: {device: leaf1, rule: 'alert:FabgateLinkDown'}\n"
      "    reason: optic on order\n"
      "    owner: netops@example.net\n"
      "    expiry: 2099-01-01T00:00:00Z\n";
  auto waived = run();
  const GateRecord* listed = gate_named(waived, "alerts-pre");
  ASSERT_NE(listed, nullptr);
  EXPECT_EQ(listed->verdict, Verdict::pass) << all_details(*listed);
  EXPECT_NE(all_details(*listed).find("WAIVED by EXC-LINK"), std::string::npos);
  EXPECT_EQ(waived.exceptions_used, std::vector<std::string>{"EXC-LINK"});
  EXPECT_EQ(remote_.steps, 1);
}

TEST_F(MonitoringGates, AWrongIdentityLabelFailsAndAnUnreachableOrStoppedSourceIsNoEvidence) {
  // Given the exporter reporting this machine's hostname where the inventory says spine9, then
  // freshness-pre fails; given Prometheus unreachable (a closed port, 500 ms deadline), then it
  // is no-evidence within the deadline; given the exporter stopped, then `up` is 0 and the gate
  // is no-evidence. Each time the run is refused and nothing is sent.
  run_.repository.inventory.devices[0].identity->hostname = "spine9";
  run_.snapshotter.identities["leaf1"] = {{"hostname", "spine9"}};
  auto wrong = run();
  EXPECT_EQ(wrong.exit_code, ExitCode::refused);
  const GateRecord* identity = gate_named(wrong, "freshness-pre");
  ASSERT_NE(identity, nullptr);
  EXPECT_EQ(identity->verdict, Verdict::fail);
  EXPECT_NE(all_details(*identity).find("inventory says spine9"), std::string::npos)
      << all_details(*identity);

  run_.repository.inventory.devices[0].identity->hostname = machine_hostname();
  run_.snapshotter.identities["leaf1"] = {{"hostname", machine_hostname()}};
  auto real_url = run_.repository.settings.monitoring.prometheus->endpoint.url;
  run_.repository.settings.monitoring.prometheus->endpoint.url =
      "http://127.0.0.1:" + std::to_string(testing::free_loopback_port());
  auto unreachable = run(Duration{500});
  EXPECT_EQ(unreachable.exit_code, ExitCode::refused);
  const GateRecord* down = gate_named(unreachable, "freshness-pre");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->verdict, Verdict::no_evidence);
  EXPECT_LT(down->duration, Duration{5'000});

  run_.repository.settings.monitoring.prometheus->endpoint.url = real_url;
  stack_->stop_exporter();
  ASSERT_TRUE(eventually([] {
    auto up = stack_->prometheus_client().query("up == 0", now_utc());
    return up.ok() && !up->series.empty();
  })) << stack_->logs();
  auto stopped = run();
  stack_->start_exporter();
  EXPECT_EQ(stopped.exit_code, ExitCode::refused);
  const GateRecord* stale = gate_named(stopped, "freshness-pre");
  ASSERT_NE(stale, nullptr);
  EXPECT_EQ(stale->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*stale).find("is down (up == 0)"), std::string::npos)
      << all_details(*stale);
  EXPECT_EQ(remote_.steps, 0);
}

TEST_F(MonitoringGates, ATargetWhoseScrapesFailedDuringTheChangeMakesTheAlertGateNoEvidence) {
  // Given a step during which leaf1's exporter hangs until Prometheus records two failed
  // scrapes in a row (up == 0), then answers again, and no alert firing, then freshness-post
  // passes (scraped again, often enough) but alerts-acceptance is no-evidence naming the target,
  // when its scrapes failed and that they failed in a row: an alert on its series could not
  // have fired then. The change is not accepted.
  run_.change.steps[0].run = "exporter blip";
  run_.change.acceptance.probes[0].expect = ">= 0";
  auto outcome = run();
  ASSERT_TRUE(remote_.blip_seen) << stack_->logs();
  EXPECT_NE(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;
  const GateRecord* fresh = gate_named(outcome, "freshness-post");
  ASSERT_NE(fresh, nullptr) << outcome.first_disproven;
  EXPECT_EQ(fresh->verdict, Verdict::pass) << all_details(*fresh);
  const GateRecord* alerts = gate_named(outcome, "alerts-acceptance");
  ASSERT_NE(alerts, nullptr);
  EXPECT_EQ(alerts->verdict, Verdict::no_evidence) << alerts->summary;
  EXPECT_NE(all_details(*alerts).find("leaf1: target {device=\"leaf1\",instance=\"" +
                                      stack_->exporter_address() +
                                      "\",job=\"node\"} was down during the change (up == 0, "),
            std::string::npos)
      << all_details(*alerts);
  auto document = evidence("monitoring/alerts-acceptance.json");
  EXPECT_NE(all_details(*alerts).find("failed scrapes in a row"), std::string::npos)
      << all_details(*alerts) << document["scrapes"].dump(1);
  EXPECT_TRUE(document["scrapes"]["queries"].is_array()) << document.dump(2);
}

TEST_F(MonitoringGates, AnEmptyPromqlAnswerIsNoEvidenceUnlessTheProbeSaysEmptyMeansZero) {
  // Given a promql probe on a metric nobody exports, then freshness-pre is no-evidence (the
  // probe's own metric has no series on its host) and the run is refused before any probe;
  // the probe alone reads the empty answer as no-evidence too. With empty_is_zero and `== 0`
  // (such a probe's metric is not required to exist), the same change passes.
  run_.change.acceptance.probes[0].query = "fabgate_no_such_metric{ {{series}} }";
  run_.change.acceptance.probes[0].expect = "== 0";
  run_.change.steps[0].run = "echo harmless";
  auto empty = run();
  EXPECT_EQ(empty.exit_code, ExitCode::refused);
  const GateRecord* freshness = gate_named(empty, "freshness-pre");
  ASSERT_NE(freshness, nullptr);
  EXPECT_EQ(freshness->verdict, Verdict::no_evidence);
  EXPECT_NE(all_details(*freshness).find("no fabgate_no_such_metric{"), std::string::npos)
      << all_details(*freshness);
  auto probe =
      run_promql_probe(stack_->prometheus_client(), *run_.repository.settings.monitoring.prometheus,
                       run_.repository.inventory.devices[0], run_.change.acceptance.probes[0],
                       "baseline", now_utc(), now_utc());
  EXPECT_EQ(probe.verdict, Verdict::no_evidence);
  EXPECT_NE(probe.reason.find("returned nothing"), std::string::npos) << probe.reason;

  run_.change.acceptance.probes[0].empty_is_zero = true;
  run_.change.acceptance.probes[0].range = true;
  auto zero = run();
  EXPECT_EQ(zero.exit_code, ExitCode::accepted) << zero.first_disproven;
}

}  // namespace
}  // namespace fabgate::pipeline
