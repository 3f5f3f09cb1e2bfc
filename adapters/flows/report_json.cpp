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
              {"lost_samples", interruption->lost_samples},
              {"unobserved_ms", interruption->unobserved.count()}};
}

json stall_json(const Stall& stall) {
  return json{{"started_at", format_utc(stall.started_at)},
              {"length_ms", stall.length.count()},
              {"by", stall.by == StallSource::responder ? "responder" : "sampler"}};
}

}  // namespace

json to_json(const FlowProbeReport& report) {
  json flows = json::array();
  int completed = 0;
  long long sent = 0;
  long long corrupted = 0;
  for (const auto& flow : report.flows) {
    if (flow.completed) ++completed;
    sent += flow.sent;
    corrupted += flow.corrupted;
    flows.push_back(
        json{{"src_port", flow.src_port},
             {"completed", flow.completed},
             {"sent", flow.sent},
             {"received", flow.received},
             {"loss", flow.loss},
             {"latency_ms", latency_json(flow.latency)},
             {"error", flow.error == FlowError::none ? json(nullptr) : json(to_string(flow.error))},
             {"detail", flow.detail},
             {"corrupted", flow.corrupted},
             {"first_corrupt_offset",
              flow.first_corrupt_offset ? json(*flow.first_corrupt_offset) : json(nullptr)},
             {"connect_ms", flow.connect_ms ? json(round_us(*flow.connect_ms)) : json(nullptr)}});
  }
  const auto& options = report.options;
  const bool icmp = options.protocol == Protocol::icmp;
  return json{
      {"probe", "flows"},
      {"verdict", to_string(report.verdict)},
      {"reason", report.reason},
      {"protocol", to_string(options.protocol)},
      {"target", options.target},
      {"port", icmp ? json(nullptr) : json(options.port)},
      {"count", options.count},
      {"packets_per_flow", options.packets_per_flow},
      {"timeout_ms", options.timeout.count()},
      {"reply_timeout_ms", options.reply_timeout.count()},
      {"size", options.size > 0 ? json(options.size) : json(nullptr)},
      {"dont_fragment", options.size > 0},
      {"message_size", message_size(options)},
      {"probe_id", report.probe_id},
      {"icmp_socket", report.icmp_socket ? json(to_string(*report.icmp_socket)) : json(nullptr)},
      {"source", options.source.empty() ? json(nullptr) : json(options.source)},
      {"started_at", format_utc(report.started_at)},
      {"duration_ms", report.duration.count()},
      {"summary",
       {{"flows", report.flows.size()},
        {"completed", completed},
        {"failed", static_cast<int>(report.flows.size()) - completed},
        {"sent", sent},
        {"corrupted", corrupted}}},
      {"flows", flows}};
}

json to_json(const WatchReport& report) {
  json flows = json::array();
  long long worst = 0;
  long long worst_possible = 0;
  for (const auto& flow : report.flows) {
    const auto& longest = flow.interruptions.longest;
    const auto& possible = flow.interruptions.longest_possible;
    if (longest) worst = std::max<long long>(worst, longest->length.count());
    if (possible) worst_possible = std::max<long long>(worst_possible, possible->count());
    flows.push_back(json{{"src_port", flow.src_port},
                         {"samples_sent", flow.sent},
                         {"samples_received", flow.received},
                         {"samples_late", flow.late},
                         {"samples_unjudged", flow.unjudged},
                         {"errors", flow.send_errors},
                         {"interruptions", flow.interruptions.interruptions},
                         {"longest_interruption_ms", longest ? longest->length.count() : 0},
                         {"longest_possible_interruption_ms", possible ? possible->count() : 0},
                         {"longest_interruption", interruption_json(longest)}});
  }
  json stalls = json::array();
  for (const auto& stall : report.stalls.stalls) stalls.push_back(stall_json(stall));
  const auto& options = report.options;
  return json{
      {"probe", "watch"},
      {"verdict", to_string(report.verdict)},
      {"reason", report.reason},
      {"protocol", "udp"},
      {"target", options.target},
      {"port", options.port},
      {"count", options.count},
      {"interval_ms", options.interval.count()},
      {"resolution_ms", options.interval.count()},
      {"sample_period_ms", sample_period(options).count()},
      {"late_after_ms", options.interval.count()},
      {"max_duration_ms", options.max_duration.count()},
      {"max_interruption_ms", options.max_interruption.count()},
      {"started_at", format_utc(report.started_at)},
      {"ended_at", format_utc(report.ended_at)},
      {"stopped_by", report.stopped ? "signal" : "max-duration"},
      {"longest_interruption_ms", worst},
      {"longest_possible_interruption_ms", worst_possible},
      {"stall_after_ms", report.stall_after.count()},
      {"max_tick_lateness_ms", report.max_tick_lateness.count()},
      {"stall_count", report.stalls.count},
      {"longest_stall_ms", report.stalls.longest ? report.stalls.longest->length.count() : 0},
      {"stalled_ms", report.stalls.total.count()},
      {"responder_stall_count", report.stalls.responder_count},
      {"stalls", stalls},
      {"echoes_with_residence", report.echoes_with_residence},
      {"echoes_without_residence", report.echoes_without_residence},
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

json to_json(const CollectiveReport& report) {
  const auto& options = report.options;
  json table = json::array();
  for (const auto& entry : options.ranks)
    table.push_back(entry.address + ":" + std::to_string(entry.port));
  json iterations = json::array();
  for (double ms : report.iteration_ms) iterations.push_back(round_us(ms));
  const bool completed =
      report.errors.empty() && static_cast<int>(report.iteration_ms.size()) == options.iterations;
  const auto& integrity = report.integrity;
  const auto& first = integrity.first;
  json by_sender = json::array();
  for (const auto& [sender, chunks] : integrity.corrupted_by_sender)
    by_sender.push_back(json{{"rank", sender}, {"chunks", chunks}});
  return json{
      {"probe", "collective"},
      {"verdict", completed ? "pass" : "fail"},
      {"reason",
       completed ? "completed " + std::to_string(options.iterations) + " iterations without errors"
                 : (report.errors.empty() ? std::string("incomplete") : report.errors.front())},
      {"transport", "tcp"},
      {"rank", options.rank},
      {"ranks", table},
      {"pattern", to_string(options.pattern)},
      {"size", options.size},
      {"chunk", chunk_size(options)},
      {"channels", options.channels},
      {"iterations", options.iterations},
      {"op_timeout_ms", options.op_timeout.count()},
      {"started_at", report.iteration_ms.empty() && report.errors.size() > 0
                         ? json(nullptr)
                         : json(format_utc(report.started_at))},
      {"stopped_by", report.stopped ? json("signal") : json(nullptr)},
      {"completed_iterations", report.iteration_ms.size()},
      {"iteration_ms", iterations},
      {"errors", report.errors},
      // Every byte of every chunk this rank received, checked against its sender's pattern.
      {"run_id", integrity.run_id},
      {"chunks_received", integrity.chunks_received},
      {"corrupted_chunks", integrity.corrupted_chunks},
      {"first_corrupt_offset", first ? json(first->offset) : json(nullptr)},
      {"corrupted_from", first ? json(first->sender) : json(nullptr)},
      {"corrupted_by_sender", by_sender}};
}

json no_evidence_json(const char* probe, const std::string& reason) {
  return json{
      {"probe", probe}, {"verdict", "no-evidence"}, {"reason", reason}, {"flows", json::array()}};
}

}  // namespace fabgate::flows
