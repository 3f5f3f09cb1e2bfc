#pragma once

// The Prometheus HTTP API (v1) as fabgate uses it: instant and range queries, and readiness.
// The answer keeps the raw body and the evaluation time, because the evidence bundle records
// both next to the verdict (docs/monitoring.md "Evidence").

#include <map>
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

// Parses one /api/v1/query or /api/v1/query_range body (exposed for tests of garbage answers).
Expected<QueryAnswer, PromFailure> parse_query_answer(const std::string& body, long http_status,
                                                      const std::string& what);

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

 private:
  HttpEndpoint endpoint_;
};

// Seconds since the epoch with millisecond precision, as the API takes times ("1700000000.123").
std::string api_time(TimePoint when);
TimePoint from_api_time(double seconds);

}  // namespace fabgate::prom
