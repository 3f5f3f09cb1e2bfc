#include "adapters/rdma/write_probe.h"

#include <algorithm>

#include "adapters/rdma/cm_events.h"
#include "adapters/rdma/write_client.h"
#include "adapters/rdma/write_listener.h"

namespace fabgate::rdma {

namespace {

// The fresh-pair check of --reconnect is short on purpose: it answers "does a new QP work",
// not "how fast".
constexpr std::uint64_t kFreshPairIterations = 100;

void describe_plan(const WritePlan& plan, RdmaWriteResult& result) {
  result.qps = plan.qps;
  result.message_size = plan.message_size;
  result.outstanding = plan.outstanding;
  result.signal_every = plan.signal_every;
  result.iterations_requested = plan.iterations;
  if (plan.duration) result.duration_requested_ms = static_cast<double>(plan.duration->count());
}

ReconnectOutcome reconnect_with_fresh_pair(const WritePlan& plan, ReconnectOutcome outcome,
                                           RdmaWriteResult& result) {
  WritePlan fresh = plan;
  fresh.qps = 1;
  fresh.duration.reset();
  fresh.iterations = std::min(plan.iterations.value_or(kFreshPairIterations), kFreshPairIterations);
  fresh.reconnect = false;
  auto start = Clock::now();
  RdmaWriteResult attempt = run_write_client(fresh, nullptr);
  result.timings.push_back({"fresh_qp", milliseconds_since(start)});
  outcome.fresh_qp_succeeded = attempt.verdict == Verdict::pass;
  outcome.fresh_qp_detail = attempt.verdict == Verdict::pass
                                ? "fresh QP wrote " + std::to_string(attempt.writes_completed) +
                                      " x " + std::to_string(plan.message_size) + " bytes"
                                : std::string(to_string(attempt.verdict)) + ": " + attempt.reason;
  return outcome;
}

}  // namespace

RdmaWriteResult run_rdma_write(const WritePlan& plan, DeviceScanner scanner,
                               const ListenerReady& on_listening) {
  auto start = Clock::now();
  DeviceScan scan = scanner();
  double scan_ms = milliseconds_since(start);
  if (auto reason = no_usable_port_reason(scan, plan.device, plan.port)) {
    RdmaWriteResult result;
    result.role = plan.role == Role::listen ? "listen" : "connect";
    result.peer = plan.role == Role::connect  ? plan.host
                  : plan.bind_address.empty() ? std::string("*")
                                              : plan.bind_address;
    result.peer += ":" + plan.service;
    result.verdict = Verdict::no_evidence;
    result.reason = *reason;
    describe_plan(plan, result);
    result.timings.push_back({"device_scan", scan_ms});
    if (plan.reconnect) result.reconnect = ReconnectOutcome{};
    return result;
  }

  if (plan.role == Role::listen) {
    RdmaWriteResult result = run_write_listener(plan, on_listening);
    describe_plan(plan, result);
    result.timings.insert(result.timings.begin(), {"device_scan", scan_ms});
    return result;
  }

  ReconnectOutcome outcome;
  RdmaWriteResult result = run_write_client(plan, plan.reconnect ? &outcome : nullptr);
  describe_plan(plan, result);
  result.timings.insert(result.timings.begin(), {"device_scan", scan_ms});
  if (plan.reconnect) {
    // Only a transport failure is something to recover from; no-evidence (nobody listening,
    // no device on the path) leaves both facts unknown.
    if (result.verdict == Verdict::fail) {
      outcome.attempted = true;
      result.reconnect = reconnect_with_fresh_pair(plan, std::move(outcome), result);
    } else {
      result.reconnect = ReconnectOutcome{};
    }
  }
  return result;
}

}  // namespace fabgate::rdma
