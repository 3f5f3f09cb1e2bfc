// The Prometheus and Alertmanager clients against the real Debian daemons on 127.0.0.1
// (tests/adapters/prom/monitoring_stack.h), and against endpoints that are down, hang or answer
// garbage: every failure is a typed value within the deadline, never a crash or a hang.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "tests/adapters/prom/monitoring_stack.h"

namespace fabgate::prom {
namespace {

using testing::eventually;
using testing::MonitoringStack;

// A one-connection-at-a-time TCP server on 127.0.0.1 that answers every request with `reply`
// (or with nothing, holding the connection, when `reply` is empty). Stops with the object.
class StubServer {
 public:
  explicit StubServer(std::string reply) : reply_(std::move(reply)) {
    auto listener = testing::listen_on_loopback(8);
    fd_ = listener.fd;
    port_ = listener.port;
    thread_ = std::thread([this] {
      while (!stopping_) {
        int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) return;
        char buffer[4096];
        (void)::recv(client, buffer, sizeof buffer, 0);
        if (!reply_.empty()) {
          (void)::send(client, reply_.data(), reply_.size(), MSG_NOSIGNAL);
          ::close(client);
        } else {
          held_.push_back(client);
        }
      }
    });
  }
  ~StubServer() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int client : held_) ::close(client);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::vector<int> held_;
  std::thread thread_;
};

std::string http_reply(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

TEST(PrometheusClient, AnEndpointThatIsDownHangsOrAnswersGarbageIsATypedFailureWithinTheDeadline) {
  // Given a closed port, a server that never answers, a server answering HTML and one answering
  // JSON of the wrong shape, then each query fails as unreachable, timeout or bad-answer, and
  // the hanging one gives up after its 500 ms deadline, not later.
  auto at = now_utc();
  PrometheusClient closed(
      {"http://127.0.0.1:" + std::to_string(testing::free_loopback_port()), "", "", Duration{500}});
  auto refused = closed.query("up", at);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, PromFailure::Kind::unreachable) << refused.error().message;

  StubServer silent("");
  PrometheusClient hanging({silent.url(), "", "", Duration{500}});
  auto start = std::chrono::steady_clock::now();
  auto timed_out = hanging.query("up", at);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.error().kind, PromFailure::Kind::timeout) << timed_out.error().message;
  EXPECT_NE(timed_out.error().message.find("timed out after 500ms"), std::string::npos)
      << timed_out.error().message;
  EXPECT_LT(took, std::chrono::seconds(3));

  StubServer html(http_reply("<html>proxy login</html>"));
  auto not_json = PrometheusClient({html.url(), "", "", Duration{2'000}}).query("up", at);
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().kind, PromFailure::Kind::bad_answer);
  EXPECT_NE(not_json.error().message.find("not JSON"), std::string::npos);

  StubServer shape(http_reply(R"({"status":"success","data":{"resultType":"vector",)"
                              R"("result":[{"metric":{},"value":["x"]}]}})"));
  auto wrong = PrometheusClient({shape.url(), "", "", Duration{2'000}}).query("up", at);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().kind, PromFailure::Kind::bad_answer);

  auto alerts = AlertmanagerClient({html.url(), "", "", Duration{2'000}}).alerts();
  ASSERT_FALSE(alerts.ok());
  EXPECT_EQ(alerts.error().kind, PromFailure::Kind::bad_answer);
}

TEST(PrometheusClient, ParsesNaNInfinitiesScalarsAndTheApiErrorObject) {
  // Given answers as Prometheus writes them, then special values survive and an API error is
  // `rejected` with Prometheus' own words.
  auto answer = parse_query_answer(
      R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"a":"1"},"value":[1700000000.5,"NaN"]},{"metric":{},"value":[1,"+Inf"]}]}})",
      200, "q");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  ASSERT_EQ(answer->series.size(), 2u);
  EXPECT_TRUE(std::isnan(answer->series[0].points[0].value));
  EXPECT_EQ(answer->series[0].labels.at("a"), "1");
  EXPECT_TRUE(std::isinf(answer->series[1].points[0].value));
  auto scalar = parse_query_answer(
      R"({"status":"success","data":{"resultType":"scalar","result":[1,"4"]}})", 200, "q");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->series.at(0).points.at(0).value, 4);
  auto error = parse_query_answer(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", 400, "q");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().kind, PromFailure::Kind::rejected);
  EXPECT_NE(error.error().message.find("bad_data: parse error at char 3"), std::string::npos);
}

TEST(PrometheusClient, WronglyTypedOrDeeplyNestedAnswersAreBadAnswersNamingTheField) {
  // Given answers with a field of the wrong type (an errorType that is a number, a resultType
  // that is a list, a value pair whose time is a string) or 300,000 levels of nesting, then each
  // is a `bad-answer` naming what was wrong: never an exception or a stack overflow mid-change.
  auto error_type = parse_query_answer(R"({"status":"error","errorType":7,"error":"x"})", 400, "q");
  ASSERT_FALSE(error_type.ok());
  EXPECT_EQ(error_type.error().kind, PromFailure::Kind::rejected);  // still Prometheus' refusal
  auto result_type = parse_query_answer(
      R"({"status":"success","data":{"resultType":["vector"],"result":[]}})", 200, "q");
  ASSERT_FALSE(result_type.ok());
  EXPECT_EQ(result_type.error().kind, PromFailure::Kind::bad_answer);
  EXPECT_NE(result_type.error().message.find("data.resultType is an array"), std::string::npos)
      << result_type.error().message;
  auto status = parse_query_answer(R"({"status":1})", 200, "q");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("status is an integer"), std::string::npos)
      << status.error().message;
  auto time = parse_query_answer(
      R"({"status":"success","data":{"resultType":"vector","result":[{"value":["1","2"]}]}})", 200,
      "q");
  ASSERT_FALSE(time.ok());
  EXPECT_EQ(time.error().kind, PromFailure::Kind::bad_answer);

  std::string deep(300'000, '[');
  deep += std::string(300'000, ']');
  auto nested = parse_query_answer(R"({"status":"success","data":)" + deep + "}", 200, "q");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message.find("nested deeper than 64 levels"), std::string::npos);
  auto nested_alerts = parse_alerts(deep, 200);
  ASSERT_FALSE(nested_alerts.ok());
  EXPECT_EQ(nested_alerts.error().kind, PromFailure::Kind::bad_answer);

  auto alerts = parse_alerts(R"([{"labels":{"alertname":"A"},"startsAt":5,"status":{}}])", 200);
  ASSERT_FALSE(alerts.ok());
  EXPECT_NE(alerts.error().message.find("startsAt"), std::string::npos) << alerts.error().message;
  auto state = parse_alerts(
      R"([{"labels":{"alertname":"A"},"startsAt":"2026-12-01T00:00:00Z","status":{"state":3}}])",
      200);
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.error().message.find("without a state"), std::string::npos)
      << state.error().message;
}

TEST(PrometheusClient, TargetsAndRuleGroupsOfAnotherShapeAreBadAnswersNamingTheField) {
  // Given /api/v1/targets and /api/v1/rules answers with a field of another type (an interval
  // that is a number, rules that are an object, a lastEvaluation that is not a time) or
  // nested too deeply, then each is a `bad-answer` naming the field; Go's zero time reads as
  // "never", and Prometheus' duration spellings (1m30s, 900ms, 1d) are read.
  auto interval = parse_targets_answer(
      R"({"status":"success","data":{"activeTargets":[{"labels":{"job":"node"},)"
      R"("scrapeInterval":15}]}})",
      200);
  ASSERT_FALSE(interval.ok());
  EXPECT_EQ(interval.error().kind, PromFailure::Kind::bad_answer);
  EXPECT_NE(interval.error().message.find("scrapeInterval"), std::string::npos)
      << interval.error().message;
  auto rules = parse_rules_answer(
      R"({"status":"success","data":{"groups":[{"name":"g","interval":1,"rules":{}}]}})", 200);
  ASSERT_FALSE(rules.ok());
  EXPECT_NE(rules.error().message.find("group g's rules"), std::string::npos)
      << rules.error().message;
  auto when =
      parse_rules_answer(R"({"status":"success","data":{"groups":[{"name":"g","interval":1,)"
                         R"("lastEvaluation":"yesterday","rules":[]}]}})",
                         200);
  ASSERT_FALSE(when.ok());
  EXPECT_NE(when.error().message.find("lastEvaluation"), std::string::npos) << when.error().message;
  std::string deep(300'000, '[');
  deep += std::string(300'000, ']');
  EXPECT_FALSE(parse_targets_answer(deep, 200).ok());
  EXPECT_FALSE(parse_rules_answer(deep, 200).ok());

  auto never = parse_rules_answer(
      R"({"status":"success","data":{"groups":[{"name":"g","file":"r.yml","interval":60,)"
      R"("lastEvaluation":"0001-01-01T00:00:00Z","rules":[{"name":"A","type":"alerting",)"
      R"("health":"unknown"}]}]}})",
      200);
  ASSERT_TRUE(never.ok()) << never.error().message;
  ASSERT_EQ(never->size(), 1u);
  EXPECT_FALSE(never->at(0).last_evaluation.has_value());
  EXPECT_EQ(never->at(0).interval, Duration{60'000});
  EXPECT_TRUE(never->at(0).has_alerting_rules());
  EXPECT_EQ(parse_prometheus_duration("1m30s"), Duration{90'000});
  EXPECT_EQ(parse_prometheus_duration("900ms"), Duration{900});
  EXPECT_EQ(parse_prometheus_duration("1d"), Duration{86'400'000});
  EXPECT_FALSE(parse_prometheus_duration("15").has_value());
  EXPECT_FALSE(parse_prometheus_duration("s").has_value());
}

TEST(MonitoringDaemons, QueriesAlertsAndTheSilenceLifecycleAgainstRealPrometheusAndAlertmanager) {
  // Given the real prometheus scraping a real node exporter and alerting a real alertmanager,
  // then: `up` and node_uname_info come back with their labels and a sample time near now; a
  // range query returns several points; a bad query is rejected; a link set down makes
  // FabgateLinkDown fire in Alertmanager; a silence fabgate creates suppresses it and names
  // itself in the alert; expiring it (twice) leaves it expired and the alert active again.
  if (auto why = MonitoringStack::missing(); !why.empty()) GTEST_SKIP() << why;
  MonitoringStack stack;
  ASSERT_TRUE(stack.wait_ready()) << stack.logs();
  auto prometheus = stack.prometheus_client();
  auto alertmanager = stack.alertmanager_client();

  auto up = prometheus.query("up{instance=\"" + stack.exporter_address() + "\"}", now_utc());
  ASSERT_TRUE(up.ok()) << up.error().message;
  ASSERT_EQ(up->series.size(), 1u);
  EXPECT_EQ(up->series[0].points[0].value, 1);
  EXPECT_NE(up->raw.find("\"status\":\"success\""), std::string::npos);
  auto uname = prometheus.query("timestamp(node_uname_info)", now_utc());
  ASSERT_TRUE(uname.ok()) << uname.error().message;
  ASSERT_EQ(uname->series.size(), 1u);
  EXPECT_LT(std::abs(uname->series[0].points[0].value -
                     std::chrono::duration<double>(now_utc().time_since_epoch()).count()),
            10.0);
  ASSERT_TRUE(eventually([&] {
    auto range = prometheus.query_range("up", now_utc() - std::chrono::seconds(5), now_utc(),
                                        Duration{1'000});
    return range.ok() && range->result_type == "matrix" && !range->series.empty() &&
           range->series[0].points.size() >= 2;
  })) << stack.logs();
  auto bad = prometheus.query("up{", now_utc());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, PromFailure::Kind::rejected);

  // At Prometheus' own clock: the sample carries the time it evaluated at.
  auto clock = prometheus.query_now("time()");
  ASSERT_TRUE(clock.ok()) << clock.error().message;
  EXPECT_EQ(clock->result_type, "scalar");
  EXPECT_LT(std::abs(std::chrono::duration<double>(clock->evaluated_at - now_utc()).count()), 10.0);
  // The target it scrapes, with its interval, and the rule group it evaluates.
  std::string raw;
  auto targets = prometheus.targets(&raw);
  ASSERT_TRUE(targets.ok()) << targets.error().message;
  ASSERT_EQ(targets->size(), 1u) << raw;
  EXPECT_EQ(targets->at(0).labels.at("instance"), stack.exporter_address());
  EXPECT_EQ(targets->at(0).labels.at("device"), "leaf1");
  EXPECT_EQ(targets->at(0).scrape_interval, Duration{1'000});
  std::vector<RuleGroup> groups;
  ASSERT_TRUE(eventually([&] {
    auto answer = prometheus.rule_groups();
    if (!answer.ok() || answer->empty()) return false;
    groups = *answer;
    return groups[0].last_evaluation.has_value();
  })) << stack.logs();
  EXPECT_EQ(groups[0].name, "fabgate-test");
  EXPECT_EQ(groups[0].interval, Duration{1'000});
  EXPECT_TRUE(groups[0].has_alerting_rules());
  EXPECT_LT(std::abs(std::chrono::duration<double>(*groups[0].last_evaluation - now_utc()).count()),
            10.0);

  stack.set_link(false);
  std::vector<Alert> firing;
  ASSERT_TRUE(eventually([&] {
    auto alerts = alertmanager.alerts();
    if (!alerts.ok()) return false;
    firing = *alerts;
    return !firing.empty();
  })) << stack.logs();
  EXPECT_EQ(firing[0].name(), "FabgateLinkDown");
  EXPECT_EQ(firing[0].labels.at("device"), "leaf1");
  EXPECT_EQ(firing[0].state, "active");

  SilenceRequest request{{{"device", "leaf1", false}},
                         now_utc(),
                         now_utc() + std::chrono::minutes(10),
                         "fabgate",
                         "fabgate run run1 change drain-leaf1"};
  auto id = alertmanager.create_silence(request);
  ASSERT_TRUE(id.ok()) << id.error().message;
  auto created = alertmanager.silence(*id);
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(created->state, "active");
  EXPECT_EQ(created->comment, "fabgate run run1 change drain-leaf1");
  ASSERT_TRUE(eventually([&] {
    auto alerts = alertmanager.alerts();
    return alerts.ok() && !alerts->empty() && alerts->at(0).state == "suppressed" &&
           alerts->at(0).silenced_by == std::vector<std::string>{*id};
  })) << stack.logs();

  ASSERT_TRUE(alertmanager.expire_silence(*id).ok());
  auto expired = alertmanager.silence(*id);
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(expired->state, "expired");
  auto again = alertmanager.expire_silence(*id);
  EXPECT_TRUE(again.ok()) << again.error().message;
  ASSERT_TRUE(eventually([&] {
    auto alerts = alertmanager.alerts();
    return alerts.ok() && !alerts->empty() && alerts->at(0).state == "active";
  })) << stack.logs();
}

}  // namespace
}  // namespace fabgate::prom
