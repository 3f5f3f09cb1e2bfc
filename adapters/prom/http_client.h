#pragma once

// HTTP for the monitoring adapters (Prometheus, Alertmanager), through libcurl. Every request
// has a hard deadline, talks to the endpoint directly (no proxy from the environment), follows
// no redirect, verifies TLS against the configured CA, and reads at most a bounded answer.

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"

namespace fabgate::prom {

// Kept-alive connections, shared by every request whose endpoint names this pool, from any
// thread. A client that calls one service often (etcd: five calls per claim and a renewal every
// few seconds) then pays one TCP (and TLS) set-up per member instead of one per call. A
// connection the server closed is noticed before reuse, and a request that found it dead before
// anything came back is sent again on a new one (libcurl's own rule); its deadline is unchanged.
class HttpConnectionPool {
 public:
  HttpConnectionPool();
  ~HttpConnectionPool();
  HttpConnectionPool(const HttpConnectionPool&) = delete;
  HttpConnectionPool& operator=(const HttpConnectionPool&) = delete;

  struct State;  // libcurl's share handle and its locks (http_client.cpp)
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

struct HttpEndpoint {
  std::string base_url;       // http://127.0.0.1:9090 or https://prometheus.example:9090
  std::string ca_file;        // TLS trust anchor; empty: the system's
  std::string bearer_token;   // empty: no "Bearer" Authorization header; never logged
  Duration timeout{10'000};   // the whole request, connect included
  std::string authorization;  // a raw Authorization value (etcd's token), never logged; used
                              // only without bearer_token
  std::string cert_file;      // TLS client certificate (PEM); empty: none
  std::string key_file;       // its private key (PEM); empty: in cert_file or none
  std::shared_ptr<HttpConnectionPool> connections;  // empty: a new connection per request
};

struct HttpFailure {
  enum class Kind {
    unreachable,  // refused, no route, name not resolved, connection reset
    timeout,      // the deadline passed
    tls,          // certificate or handshake
    too_large,    // the answer exceeded the limit
  };
  Kind kind = Kind::unreachable;
  std::string message;  // "GET http://127.0.0.1:9/api/v1/query: connection refused"
};
std::string_view to_string(HttpFailure::Kind kind);

struct HttpResponse {
  long status = 0;
  std::string body;
};

enum class HttpMethod { get, post, del };

// One request. Its socket is close-on-exec, so no program the controller starts inherits a
// connection. `path` starts with '/' and is appended to the base URL (query string included);
// `form` is sent url-encoded as the body of a POST, `json_body` as application/json.
Expected<HttpResponse, HttpFailure> http_request(
    const HttpEndpoint& endpoint, HttpMethod method, const std::string& path,
    const std::map<std::string, std::string>& form = {},
    const std::optional<std::string>& json_body = {});

// Percent-encodes one query-string value.
std::string url_encode(const std::string& text);

}  // namespace fabgate::prom
