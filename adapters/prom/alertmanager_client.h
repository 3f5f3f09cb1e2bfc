#pragma once

// The Alertmanager API v2 as fabgate uses it: the alerts it holds, and silences fabgate creates
// for a change window and expires when the run ends (docs/monitoring.md "Silence lifecycle").

#include <map>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/prom/http_client.h"
#include "adapters/prom/prometheus_client.h"

namespace fabgate::prom {

// Failures share Prometheus' kinds: unreachable, timeout, rejected, bad_answer.
using AlertFailure = PromFailure;

struct Alert {
  std::map<std::string, std::string> labels;
  std::string fingerprint;
  std::string state;  // active | suppressed | unprocessed
  TimePoint starts_at;
  std::vector<std::string> silenced_by;
  std::vector<std::string> inhibited_by;

  std::string name() const;  // the alertname label, or "(unnamed)"
  // "NodeInterfaceDown{device=\"eth1\",instance=\"...\"}"
  std::string to_line() const;
};

// One label matcher of a silence: equality or a regular expression.
struct SilenceMatcher {
  std::string name;
  std::string value;
  bool is_regex = false;
};

struct SilenceRequest {
  std::vector<SilenceMatcher> matchers;
  TimePoint starts_at;
  TimePoint ends_at;
  std::string created_by;
  std::string comment;
};

struct SilenceState {
  std::string id;
  std::string state;  // active | pending | expired
  std::string comment;
  TimePoint ends_at;
};

class AlertmanagerClient {
 public:
  explicit AlertmanagerClient(HttpEndpoint endpoint) : endpoint_(std::move(endpoint)) {}
  virtual ~AlertmanagerClient() = default;

  const HttpEndpoint& endpoint() const { return endpoint_; }
  virtual Expected<Ok, AlertFailure> ready() const;
  // Every alert Alertmanager holds that is firing: active, silenced, inhibited or unprocessed.
  // `raw` receives the body for the evidence bundle.
  virtual Expected<std::vector<Alert>, AlertFailure> alerts(std::string* raw = nullptr) const;
  // Returns the new silence's id.
  virtual Expected<std::string, AlertFailure> create_silence(const SilenceRequest& request) const;
  // Expiring an already expired silence succeeds (recover may run twice).
  virtual Expected<Ok, AlertFailure> expire_silence(const std::string& id) const;
  virtual Expected<SilenceState, AlertFailure> silence(const std::string& id) const;

 private:
  HttpEndpoint endpoint_;
};

// Parses a GET /api/v2/alerts body (exposed for tests of garbage answers).
Expected<std::vector<Alert>, AlertFailure> parse_alerts(const std::string& body, long http_status);

}  // namespace fabgate::prom
