#include "adapters/rdma/write_result.h"

namespace fabgate::rdma {

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::no_evidence:
      return "no-evidence";
  }
  return "no-evidence";
}

void record_error(RdmaWriteResult& result, CompletionError error) {
  if (result.errors.size() < kMaxListedErrors) {
    result.errors.push_back(std::move(error));
  } else {
    ++result.errors_not_listed;
  }
}

namespace {
template <class T>
nlohmann::ordered_json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}
}  // namespace

nlohmann::ordered_json to_json(const RdmaWriteResult& result) {
  nlohmann::ordered_json document = {
      {"probe", "rdma-write"},
      {"role", result.role},
      {"verdict", to_string(result.verdict)},
      {"reason", result.reason},
      {"peer", result.peer},
      {"device", result.device.empty() ? nlohmann::ordered_json(nullptr)
                                       : nlohmann::ordered_json(result.device)},
      {"port", optional_json(result.port)},
      {"gid_index", optional_json(result.gid_index)},
      {"gid",
       result.gid.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(result.gid)},
      {"qps", result.qps},
      {"message_size", result.message_size},
      {"outstanding", result.outstanding},
      {"signal_every", result.signal_every},
      {"iterations", optional_json(result.iterations_requested)},
      {"duration_ms", optional_json(result.duration_requested_ms)},
      {"writes_completed", result.writes_completed},
      {"bytes_written", result.bytes_written},
      {"bandwidth_gbps", optional_json(result.bandwidth_gbps)},
  };
  if (result.latency) {
    document["latency_us"] = {{"median", result.latency->median_us},
                              {"p99", result.latency->p99_us},
                              {"max", result.latency->max_us},
                              {"samples", result.latency->samples}};
  } else {
    document["latency_us"] = nullptr;
  }
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const auto& error : result.errors) errors.push_back(to_json(error));
  document["errors"] = std::move(errors);
  document["errors_not_listed"] = result.errors_not_listed;
  document["flushed"] = result.flushed;
  document["drained"] = result.drained;
  if (result.connections_served) document["connections_served"] = *result.connections_served;
  if (result.reconnect) {
    const auto& reconnect = *result.reconnect;
    document["reconnect"] = {
        {"attempted", reconnect.attempted},
        {"existing_qp_recovered", optional_json(reconnect.existing_qp_recovered)},
        {"existing_qp_detail", reconnect.existing_qp_detail},
        {"fresh_qp_succeeded", optional_json(reconnect.fresh_qp_succeeded)},
        {"fresh_qp_detail", reconnect.fresh_qp_detail}};
  }
  nlohmann::ordered_json timings = nlohmann::ordered_json::object();
  for (const auto& timing : result.timings) timings[timing.phase + "_ms"] = timing.ms;
  document["timings"] = std::move(timings);
  return document;
}

}  // namespace fabgate::rdma
