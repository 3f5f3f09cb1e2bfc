// The alerts gates keep Alertmanager's raw answer in the evidence, even when the client refused
// it. That answer is data fabgate did not write: kept as JSON only when it nests no deeper than
// fabgate reads, else as text, so writing the evidence never overflows the stack.

#include <gtest/gtest.h>

#include "gates/pipeline/families/monitoring.h"

namespace fabgate::pipeline {
namespace {

// Answers with `raw` and refuses it, as the real client does with an answer it cannot read.
class RefusedAnswer : public prom::AlertmanagerClient {
 public:
  explicit RefusedAnswer(std::string raw)
      : prom::AlertmanagerClient({"http://alertmanager.invalid"}), raw_(std::move(raw)) {}
  Expected<std::vector<prom::Alert>, prom::AlertFailure> alerts(std::string* raw) const override {
    if (raw) *raw = raw_;
    return prom::AlertFailure{prom::PromFailure::Kind::bad_answer, "scripted: refused"};
  }

 private:
  std::string raw_;
};

struct AlertsEvidence : ::testing::Test {
  intent::AlertmanagerSettings settings;
  intent::Device leaf1;
  compare::ExceptionRegister no_exceptions;

  AlertsEvidence() { leaf1.name = "leaf1"; }

  MonitoringJudgement before(const std::string& raw) {
    return check_alerts_before(RefusedAnswer(raw), settings, {&leaf1}, no_exceptions, now_utc());
  }
  MonitoringJudgement after(const std::string& raw) {
    return check_alerts_after(RefusedAnswer(raw), settings, {&leaf1}, {},
                              now_utc() - std::chrono::seconds(30), {});
  }
};

TEST_F(AlertsEvidence, AnAnswerNestedTooDeeplyIsKeptAsTextAndTheGateHasNoEvidence) {
  // Given Alertmanager answering 300,000 levels of nesting, then both alerts gates are no
  // evidence, the answer is kept as text and the evidence can be written out (dumped) whole.
  const std::string deep = std::string(300'000, '[') + std::string(300'000, ']');
  for (auto judgement : {before(deep), after(deep)}) {
    EXPECT_EQ(judgement.verdict, Verdict::no_evidence);
    ASSERT_TRUE(judgement.evidence["answer"].is_string());
    EXPECT_EQ(judgement.evidence["answer"].get<std::string>().size(), deep.size());
    EXPECT_GT(judgement.evidence.dump().size(), deep.size());
  }
}

TEST_F(AlertsEvidence, AShallowAnswerIsKeptAsJson) {
  // Given an answer that parses and nests shallowly, then the evidence holds it as JSON.
  auto judgement = before(R"([{"labels":{"alertname":3}}])");
  EXPECT_TRUE(judgement.evidence["answer"].is_array());
  EXPECT_EQ(judgement.evidence["answer"][0]["labels"]["alertname"], 3);
}

}  // namespace
}  // namespace fabgate::pipeline
