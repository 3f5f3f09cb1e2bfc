#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/rdma/completion_error.h"
#include "adapters/rdma/latency_summary.h"

namespace fabgate::rdma {

// The three outcomes of every fabgate check. no_evidence is not a softer pass: it blocks like
// fail unless an exception waives it.
enum class Verdict { pass, fail, no_evidence };
const char* to_string(Verdict verdict);

// After a failure, two different facts (DESIGN.md rule 2): did the QP that failed work again,
// and does a brand-new QP pair to the same peer work? A link flap typically leaves the old RC
// QP in the error state for good while a fresh connection succeeds.
struct ReconnectOutcome {
  bool attempted = false;  // false when the first run did not fail
  std::optional<bool> existing_qp_recovered;
  std::string existing_qp_detail;  // e.g. "QP state ERR; probe write: status 5 (Work Request
                                   // Flushed Error)"
  std::optional<bool> fresh_qp_succeeded;
  std::string fresh_qp_detail;
};

// One phase and how long it took, in the order the phases ran.
struct PhaseTiming {
  std::string phase;
  double ms = 0;
};

struct RdmaWriteResult {
  std::string role = "connect";  // "connect" or "listen"
  Verdict verdict = Verdict::no_evidence;
  std::string reason;  // why; empty only for a clean pass
  std::string peer;    // HOST:PORT connected to, or the listen address
  std::string device;  // RDMA device the traffic used, e.g. mlx5_0
  std::optional<int> port;
  std::optional<int> gid_index;
  std::string gid;
  int qps = 0;
  std::uint64_t message_size = 0;
  int outstanding = 0;
  int signal_every = 0;
  std::optional<std::uint64_t> iterations_requested;  // per QP
  std::optional<double> duration_requested_ms;
  std::uint64_t writes_completed = 0;  // all QPs together, successful only
  std::uint64_t bytes_written = 0;
  std::optional<double> bandwidth_gbps;
  std::optional<LatencySummary> latency;
  std::vector<CompletionError> errors;  // real failures; flushed requests are only counted
  std::uint64_t errors_not_listed = 0;
  std::uint64_t flushed = 0;
  bool drained = true;                    // every posted request accounted for after a failure
  std::optional<int> connections_served;  // listener only
  std::optional<ReconnectOutcome> reconnect;
  std::vector<PhaseTiming> timings;
};

// Caps the error list so a failing 64-QP run cannot print megabytes.
inline constexpr std::size_t kMaxListedErrors = 64;
void record_error(RdmaWriteResult& result, CompletionError error);

// The JSON document fabgate-probe prints (documented in docs/rdma.md).
nlohmann::ordered_json to_json(const RdmaWriteResult& result);

}  // namespace fabgate::rdma
