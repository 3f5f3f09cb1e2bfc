#include "adapters/rdma/write_options.h"

#include "adapters/core/duration.h"

namespace fabgate::rdma {

namespace {

constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::minutes(10);
constexpr std::chrono::milliseconds kMaxDuration = std::chrono::hours(1);

std::optional<std::chrono::milliseconds> parse_bounded(const std::string& flag,
                                                       const std::string& text,
                                                       std::chrono::milliseconds max,
                                                       std::vector<std::string>& problems) {
  auto parsed = parse_duration(text);
  if (!parsed) {
    problems.push_back(flag + " '" + text + "' is not a duration (write e.g. 500ms, 5s, 1m)");
    return std::nullopt;
  }
  if (parsed->count() <= 0 || *parsed > max) {
    problems.push_back(flag + " " + text + " is outside 1ms.." + format_duration(max));
    return std::nullopt;
  }
  return parsed;
}

}  // namespace

Expected<WritePlan, std::vector<std::string>> validate_write_options(
    const RdmaWriteOptions& options) {
  std::vector<std::string> problems;
  WritePlan plan;

  bool connect = !options.connect_host.empty();
  if (options.listen == connect) {
    problems.push_back("give exactly one of --listen or --connect HOST");
  }
  plan.role = options.listen ? Role::listen : Role::connect;
  plan.host = options.connect_host;
  if (options.service.empty()) problems.push_back("--cm-port must not be empty");
  plan.service = options.service;
  plan.bind_address = options.bind_address;
  plan.device = options.device;

  if (options.port < 0 || options.port > 255) {
    problems.push_back("--port " + std::to_string(options.port) + " is outside 1..255 (0 = any)");
  }
  plan.port = options.port;
  if (options.gid_index < -1 || options.gid_index > 255) {
    problems.push_back("--gid-index " + std::to_string(options.gid_index) + " is outside 0..255");
  }
  plan.gid_index = options.gid_index;

  if (options.message_size == 0 || options.message_size > kMaxMessageSize) {
    problems.push_back("--size " + std::to_string(options.message_size) + " is outside 1.." +
                       std::to_string(kMaxMessageSize) + " bytes");
  }
  plan.message_size = options.message_size;

  if (options.outstanding < 1 || options.outstanding > kMaxOutstanding) {
    problems.push_back("--outstanding " + std::to_string(options.outstanding) + " is outside 1.." +
                       std::to_string(kMaxOutstanding));
  }
  plan.outstanding = options.outstanding;
  if (options.signal_every < 1) {
    problems.push_back("--signal-every " + std::to_string(options.signal_every) +
                       " must be at least 1");
  } else if (options.signal_every > options.outstanding) {
    // With fewer outstanding slots than the signaling interval no signaled WR could ever be
    // posted, so the send queue would fill with unsignaled WRs and never drain.
    problems.push_back("--signal-every " + std::to_string(options.signal_every) +
                       " exceeds --outstanding " + std::to_string(options.outstanding));
  }
  plan.signal_every = options.signal_every;

  if (options.qps < 1 || options.qps > kMaxQueuePairs) {
    problems.push_back("--qps " + std::to_string(options.qps) + " is outside 1.." +
                       std::to_string(kMaxQueuePairs));
  }
  plan.qps = options.qps;

  bool has_iterations = options.iterations != 0;
  bool has_duration = !options.duration.empty();
  if (has_iterations && has_duration) {
    problems.push_back("give --iterations or --duration, not both");
  }
  if (has_iterations) {
    if (options.iterations > kMaxIterations) {
      problems.push_back("--iterations " + std::to_string(options.iterations) + " exceeds " +
                         std::to_string(kMaxIterations));
    }
    plan.iterations = options.iterations;
  } else if (has_duration) {
    plan.duration = parse_bounded("--duration", options.duration, kMaxDuration, problems);
  } else {
    plan.iterations = kDefaultIterations;
  }

  auto timeout = [&](const char* flag, const std::string& text, std::chrono::milliseconds& out) {
    if (auto parsed = parse_bounded(flag, text, kMaxTimeout, problems)) out = *parsed;
  };
  timeout("--resolve-timeout", options.resolve_timeout, plan.resolve_timeout);
  timeout("--connect-timeout", options.connect_timeout, plan.connect_timeout);
  timeout("--completion-timeout", options.completion_timeout, plan.completion_timeout);
  timeout("--listen-timeout", options.listen_timeout, plan.listen_timeout);
  plan.reconnect = options.reconnect;
  if (options.reconnect && options.listen && !connect) {
    problems.push_back(
        "--reconnect applies to --connect; the listener serves reconnections anyway");
  }

  if (!problems.empty()) return problems;
  return plan;
}

}  // namespace fabgate::rdma
