#include "adapters/flows/report_json.h"

#include <cmath>

namespace fabgate::flows {

namespace {

using json = nlohmann::ordered_json;

// Latencies are printed to the microsecond: more digits would be noise.
double round_us(double ms) {
  return std::round(ms * 1000.0) / 1000.0;
}

json latency_json(const std::optional<LatencySummary>& latency) {
  if (!latency) return nullptr;
  return json{{"min", round_us(latency->min_ms)},
              {"median", round_us(latency->median_ms)},
              {"max", round_us(latency->max_ms)}};
}

json interruption_json(const std::optional<Interruption>& interruption) {
  if (!interruption) return nullptr;
  return json{{"length_ms", interruption->length.count()},
              {"started_at", format_utc(interruption->started_at)},
              {"ongoing", interruption->ongoing},
              {"lost_samples", interruption->lost_samples}};
}

}  // namespace

json to_json(const FlowProbeReport& report) {
  json flows = json::array();
  int completed = 0;
  for (const auto& flow : report.flows) {
    if (flow.completed) ++completed;
    flows.push_back(
        json{{"src_port", flow.src_port},
             {"completed", flow.completed},
             {"sent", flow.sent},
             {"received", flow.received},
             {"loss", flow.loss},
             {"latency_ms", latency_json(flow.latency)},
             {"error", flow.error == FlowError::none ? json(nullptr) : json(to_string(flow.error))},
             {"detail", flow.detail}});
  }
  const auto& options = report.options;
  return json{{"probe", "flows"},
              {"verdict", to_string(report.verdict)},
              {"reason", report.reason},
              {"protocol", to_string(options.protocol)},
              {"target", options.target},
              {"port", options.port},
              {"count", options.count},
              {"packets_per_flow", options.packets_per_flow},
              {"timeout_ms", options.timeout.count()},
              {"reply_timeout_ms", options.reply_timeout.count()},
              {"size", options.size > 0 ? json(options.size) : json(nullptr)},
              {"dont_fragment", options.size > 0},
              {"source", options.source.empty() ? json(nullptr) : json(options.source)},
              {"started_at", format_utc(report.started_at)},
              {"duration_ms", report.duration.count()},
              {"summary",
               {{"flows", report.flows.size()},
                {"completed", completed},
                {"failed", static_cast<int>(report.flows.size()) - completed}}},
              {"flows", flows}};
}

json to_json(const WatchReport& report) {
  json flows = json::array();
  long long worst = 0;
  for (const auto& flow : report.flows) {
    const auto& longest = flow.interruptions.longest;
    if (longest) worst = std::max<long long>(worst, longest->length.count());
    flows.push_back(json{{"src_port", flow.src_port},
                         {"samples_sent", flow.sent},
                         {"samples_received", flow.received},
                         {"errors", flow.send_errors},
                         {"interruptions", flow.interruptions.interruptions},
                         {"longest_interruption_ms", longest ? longest->length.count() : 0},
                         {"longest_interruption", interruption_json(longest)}});
  }
  const auto& options = report.options;
  return json{{"probe", "watch"},
              {"verdict", to_string(report.verdict)},
              {"reason", report.reason},
              {"protocol", "udp"},
              {"target", options.target},
              {"port", options.port},
              {"count", options.count},
              {"interval_ms", options.interval.count()},
              {"max_duration_ms", options.max_duration.count()},
              {"max_interruption_ms", options.max_interruption.count()},
              {"started_at", format_utc(report.started_at)},
              {"ended_at", format_utc(report.ended_at)},
              {"stopped_by", report.stopped ? "signal" : "max-duration"},
              {"longest_interruption_ms", worst},
              {"flows", flows}};
}

json to_json(const ResponderStats& stats, const std::string& endpoint) {
  return json{{"probe", "flows-responder"},
              {"listen", endpoint},
              {"tcp_connections", stats.tcp_connections},
              {"tcp_bytes_echoed", stats.tcp_bytes_echoed},
              {"udp_datagrams_echoed", stats.udp_datagrams_echoed},
              {"ran_for_ms", stats.ran_for.count()},
              {"stopped_by", stats.stopped ? "signal" : "lifetime"}};
}

json no_evidence_json(const char* probe, const std::string& reason) {
  return json{
      {"probe", probe}, {"verdict", "no-evidence"}, {"reason", reason}, {"flows", json::array()}};
}

}  // namespace fabgate::flows
