// Monitoring gates end to end (docs/monitoring.md): the fabgate binary, a real sshd standing for
// devices d1 and d2, and the real Debian prometheus, alertmanager and node exporter on 127.0.0.1
// (tests/adapters/prom/monitoring_stack.h). The exporter's scrape target carries device="d1";
// d1's "link" is the textfile metric fabgate_lab_link_up, which a step writes over SSH, and
// FabgateLinkDown fires when it is 0.

#include <gtest/gtest.h>

#include <csignal>

#include "tests/adapters/prom/monitoring_stack.h"
#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::eventually;
using testing::MonitoringStack;
using testing::shell_quoted;

// Identity only: the monitoring gates do not depend on what else a snapshot holds.
const std::string kLightProfile = R"(platform: linux
sources:
  - category: identity
    timeout: 10s
    commands:
      - {run: hostname, parse: hostname}
      - {run: uname -r, parse: kernel-release}
)";

class MonitoringEndToEnd : public testing::FabgateEndToEnd {
 protected:
  void SetUp() override {
    if (auto why = MonitoringStack::missing(); !why.empty()) GTEST_SKIP() << why;
    FabgateEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    stack_ = std::make_unique<MonitoringStack>("d1", "", tls_);
    ASSERT_TRUE(stack_->wait_ready()) << stack_->logs();
    repo_.write("policies/collectors/linux.yaml", kLightProfile);
  }

  // A change on d1 whose step writes `link_value` into d1's textfile metric; the rollback
  // writes 1. Settle 6 s: a scrape (1 s), a rule evaluation (1 s) and the delivery to
  // Alertmanager, with margin for a loaded CI machine. The probe asks Prometheus for the metric
  // (>= 0, so only the alert gate judges).
  void commit_change(const std::string& link_value) {
    std::string write = "printf 'fabgate_lab_link_up %s\\\\n' " + link_value + " > " +
                        stack_->textfile_dir() + "/.t && mv " + stack_->textfile_dir() + "/.t " +
                        stack_->textfile_dir() + "/lab.prom";
    std::string undo = "printf 'fabgate_lab_link_up 1\\\\n' > " + stack_->textfile_dir() +
                       "/.t && mv " + stack_->textfile_dir() + "/.t " + stack_->textfile_dir() +
                       "/lab.prom";
    std::string change_yaml =
        "id: c\ntitle: set d1's link\ntargets: [d1]\n"
        "bounds: {max_targets: 1, step_timeout: 40s, deadline: 2m}\n"
        "steps:\n  - device: d1\n    run: \"" +
        write +
        "\"\n"
        "rollback:\n  - device: d1\n    run: \"" +
        undo +
        "\"\n"
        "acceptance:\n  settle: 6s\n  probes:\n"
        "    - {name: link-metric, kind: promql, layer: link, host: d1, "
        "query: 'fabgate_lab_link_up{ {{series}} }', expect: '>= 0'}\n";
    std::string settings =
        "monitoring:\n"
        "  prometheus:\n"
        "    url: " +
        stack_->prometheus_url() + "\n" + endpoint_extra("PROM_TOKEN") +
        "    timeout: 3s\n"
        "    series: 'device=\"{{name}}\"'\n"
        "    max_age: 10s\n"
        "    fresh: [fabgate_lab_link_up]\n"
        "    identity: none\n"
        "  alertmanager:\n"
        "    url: " +
        stack_->alertmanager_url() + "\n" + endpoint_extra("AM_TOKEN") + "    timeout: 3s\n";
    commit_intent(change_yaml, settings);
  }

  std::string silence_state(const std::filesystem::path& dir) {
    auto silence = read_json(dir / "monitoring/silence.json");
    if (!silence.is_object() || !silence.contains("id")) return "(no silence)";
    auto state = stack_->alertmanager_client().silence(silence["id"].get<std::string>());
    return state.ok() ? state->state : state.error().message;
  }

  // Over TLS: the stack's CA and the token's environment variable.
  std::string endpoint_extra(const std::string& token_env) const {
    if (tls_ == MonitoringStack::Tls::off) return "";
    return "    ca_file: " + stack_->ca_file() + "\n    token_env: " + token_env + "\n";
  }

  MonitoringStack::Tls tls_ = MonitoringStack::Tls::off;
  std::unique_ptr<MonitoringStack> stack_;
};

class MonitoringOverTls : public MonitoringEndToEnd {
 protected:
  void SetUp() override {
    if (std::system("command -v openssl python3 >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "openssl and python3 are needed for the TLS endpoints";
    tls_ = MonitoringStack::Tls::on;
    MonitoringEndToEnd::SetUp();
  }
};

TEST_F(MonitoringEndToEnd, AChangeThatMakesAnAlertFireIsRolledBackAndTheReportNamesTheAlert) {
  // Given a step that sets d1's link down, then FabgateLinkDown fires during the change,
  // alerts-acceptance fails, the change is rolled back (exit 4), report.md names the alert, and
  // the change-window silence fabgate created is expired.
  commit_change("0");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_NE(out.output.find("FabgateLinkDown{device=\"d1\""), std::string::npos) << out.output;
  auto dir = evidence_of(out);
  std::string report = testing::read_file((dir / "report.md").string());
  EXPECT_NE(report.find("FabgateLinkDown{device=\"d1\""), std::string::npos) << report;
  EXPECT_EQ(silence_state(dir), "expired");
  auto probes = read_json(dir / "probes/baseline.json");
  ASSERT_TRUE(probes.is_array() && !probes.empty()) << probes.dump();
  EXPECT_EQ(probes[0]["detail"]["query"], "fabgate_lab_link_up{ device=\"d1\" }");
  EXPECT_TRUE(probes[0]["detail"].contains("evaluated_at"));
}

TEST_F(MonitoringEndToEnd, AStoppedExporterRefusesTheChangeWithNothingSent) {
  // Given d1's exporter stopped (Prometheus marks the target down), then freshness-pre is
  // no-evidence, apply exits 3 and no step reaches d1.
  commit_change("0");
  stack_->stop_exporter();
  ASSERT_TRUE(testing::eventually([&] {
    auto up = stack_->prometheus_client().query("up == 0", now_utc());
    return up.ok() && !up->series.empty();
  })) << stack_->logs();
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("is down (up == 0)"), std::string::npos) << out.output;
  EXPECT_TRUE(commands("step", "d1").empty());
}

TEST_F(MonitoringEndToEnd, ASilenceLeftByAKilledRunIsExpiredByRecover) {
  // Given apply killed with SIGKILL right after it journaled its first step (the silence was
  // created before it), then the silence is still active; `fabgate recover` expires it,
  // journals that, and rolls the change back.
  commit_change("1");
  // Find the journal position of the first step-start from an uninterrupted run.
  auto full = fabgate("apply c");
  ASSERT_EQ(full.exit_code, 0) << full.output;
  std::size_t step_record = 0;
  {
    std::ifstream in(evidence_of(full) / "journal.jsonl");
    std::string line;
    for (std::size_t i = 1; std::getline(in, line) && !step_record; ++i)
      if (line.find("\"step-start\"") != std::string::npos) step_record = i;
  }
  ASSERT_GT(step_record, 0u);
  std::filesystem::remove_all(evidence_);
  auto killed = repo_.run("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(step_record) + " " +
                          shell_quoted(testing::kFabgate) + " apply c 2>&1");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  auto dir = bundle();
  EXPECT_EQ(silence_state(dir), "active");
  auto recovered = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_NE(recovered.output.find("left by the run: expired"), std::string::npos)
      << recovered.output;
  EXPECT_EQ(silence_state(dir), "expired");
  std::string journal = testing::read_file((dir / "journal.jsonl").string());
  EXPECT_NE(journal.find("\"silence-expired\""), std::string::npos);
}

TEST_F(MonitoringOverTls, TokensFromTheEnvironmentAreSentOverTlsAndNeverWritten) {
  // Given Prometheus serving HTTPS itself and Alertmanager behind a TLS proxy that refuses any
  // request without the right bearer token, both trusted through ca_file, and the tokens in
  // PROM_TOKEN and AM_TOKEN, then a harmless change is accepted with every monitoring gate
  // passing, the proxy refused nothing (the token was sent), and neither token appears in
  // fabgate's output or any file of the evidence bundle.
  commit_change("1");
  const std::string prom_token = "CanaryPromTok" + std::to_string(::getpid());
  const std::string env = "PROM_TOKEN=" + prom_token + " AM_TOKEN=" + stack_->token() + " ";
  auto out = repo_.run(env + shell_quoted(testing::kFabgate) + " apply c 2>&1");
  EXPECT_EQ(out.exit_code, 0) << out.output << stack_->logs();
  auto dir = evidence_of(out);
  auto manifest = read_json(dir / "manifest.json");
  for (const char* gate : {"freshness-pre", "alerts-pre", "silence", "freshness-post",
                           "alerts-acceptance", "silence-expire"}) {
    std::string verdict = "(not run)";
    for (const auto& record : manifest["gates"])
      if (record["name"] == gate) verdict = record["verdict"];
    EXPECT_EQ(verdict, "pass") << gate << "\n" << out.output;
  }
  EXPECT_EQ(stack_->refusals(), 0u) << "the proxy saw a request without the token";
  for (const auto& token : {prom_token, stack_->token()}) {
    EXPECT_EQ(out.output.find(token), std::string::npos) << "token on the terminal";
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      EXPECT_EQ(testing::read_file(entry.path().string()).find(token), std::string::npos)
          << "token in " << entry.path();
    }
  }

  // A wrong token: Alertmanager's proxy refuses, alerts-pre has no evidence, nothing is sent.
  auto wrong = repo_.run("PROM_TOKEN=" + prom_token + " AM_TOKEN=CanaryWrongTok " +
                         shell_quoted(testing::kFabgate) + " apply c 2>&1");
  EXPECT_EQ(wrong.exit_code, 3) << wrong.output;
  EXPECT_GT(stack_->refusals(), 0u);
  EXPECT_EQ(wrong.output.find("CanaryWrongTok"), std::string::npos) << wrong.output;
}

}  // namespace
}  // namespace fabgate
