#pragma once

// The Prometheus HTTP API (v1) as fabgate uses it: instant and range queries, the scrape
// targets, the rule groups, and readiness.
// The answer keeps the raw body and the evaluation time, because the evidence bundle records
// both next to the verdict (docs/monitoring.md "Evidence").

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/prom/http_client.h"

namespace fabgate::prom {

struct PromFailure {
  enum class Kind {
    unreachable,  // no connection, TLS failure, answer too large
    timeout,      // the deadline passed
    rejected,     // Prometheus answered with an error (bad query, auth, overloaded)
    bad_answer,   // the answer is not the API's JSON (a proxy's page, garbage)
  };
  Kind kind = Kind::unreachable;
  std::string message;
};
std::string_view to_string(PromFailure::Kind kind);

struct SamplePoint {
  double time = 0;   // seconds since the epoch, as Prometheus gives it
  double value = 0;  // NaN and infinities as Prometheus writes them
};

struct Series {
  std::map<std::string, std::string> labels;
  std::vector<SamplePoint> points;  // one for an instant vector or scalar, many for a range
};

struct QueryAnswer {
  std::string query;
  std::string result_type;  // vector | matrix | scalar | string
  std::vector<Series> series;
  std::string raw;         // the HTTP body as received
  TimePoint evaluated_at;  // instant: the evaluation time; range: its end
  std::vector<std::string> warnings;
};

// One target Prometheus scrapes now (/api/v1/targets, activeTargets).
struct ScrapeTarget {
  std::map<std::string, std::string> labels;  // after relabelling: the labels its series carry
  std::string scrape_url;
  std::string health;                    // up | down | unknown
  Duration scrape_interval{0};           // as configured for its job
  std::optional<TimePoint> last_scrape;  // empty: not scraped yet
  std::string last_error;
};

// One rule of a group (/api/v1/rules).
struct Rule {
  std::string name;
  std::string type;    // alerting | recording
  std::string health;  // ok | err | unknown
  std::string last_error;
};

// One rule group as Prometheus' rule manager reports it now: the same last evaluation time as
// its metric prometheus_rule_group_last_evaluation_timestamp_seconds, which is in the TSDB only
// when Prometheus scrapes itself.
struct RuleGroup {
  std::string name;
  std::string file;
  Duration interval{0};
  std::optional<TimePoint> last_evaluation;  // empty: never evaluated
  std::vector<Rule> rules;
  bool has_alerting_rules() const;
};

// Parses one /api/v1/query or /api/v1/query_range body (exposed for tests of garbage answers).
Expected<QueryAnswer, PromFailure> parse_query_answer(const std::string& body, long http_status,
                                                      const std::string& what);
// Parses one /api/v1/targets or /api/v1/rules body. A target or group whose fields have other
// types or shapes makes the whole answer a bad answer naming the field.
Expected<std::vector<ScrapeTarget>, PromFailure> parse_targets_answer(const std::string& body,
                                                                      long http_status);
Expected<std::vector<RuleGroup>, PromFailure> parse_rules_answer(const std::string& body,
                                                                 long http_status);
// A duration as Prometheus writes it ("15s", "1m30s", "900ms", "1d"); empty when it is not one.
std::optional<Duration> parse_prometheus_duration(std::string_view text);

// The client. Virtual so gate logic can be tested with a scripted source; the real one talks
// HTTP through http_client.h.
class PrometheusClient {
 public:
  explicit PrometheusClient(HttpEndpoint endpoint) : endpoint_(std::move(endpoint)) {}
  virtual ~PrometheusClient() = default;

  const HttpEndpoint& endpoint() const { return endpoint_; }
  // GET /-/ready: Prometheus has loaded its TSDB and answers queries.
  virtual Expected<Ok, PromFailure> ready() const;
  virtual Expected<QueryAnswer, PromFailure> query(const std::string& promql, TimePoint at) const;
  virtual Expected<QueryAnswer, PromFailure> query_range(const std::string& promql, TimePoint start,
                                                         TimePoint end, Duration step) const;
  // An instant query at Prometheus' own clock (no time sent): every sample carries the time
  // Prometheus evaluated it at, so ages computed from it need no agreement between clocks.
  virtual Expected<QueryAnswer, PromFailure> query_now(const std::string& promql) const;
  // The targets it scrapes now, and its rule groups; `raw` receives the body for the evidence.
  virtual Expected<std::vector<ScrapeTarget>, PromFailure> targets(
      std::string* raw = nullptr) const;
  virtual Expected<std::vector<RuleGroup>, PromFailure> rule_groups(
      std::string* raw = nullptr) const;

 private:
  HttpEndpoint endpoint_;
};

// Seconds since the epoch with millisecond precision, as the API takes times ("1700000000.123").
std::string api_time(TimePoint when);
TimePoint from_api_time(double seconds);

}  // namespace fabgate::prom
