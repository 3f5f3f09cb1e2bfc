#include "adapters/flows/watch.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "adapters/flows/wire.h"

namespace fabgate::flows {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxFlows = 256;
constexpr milliseconds kMaxDuration{6 * 60 * 60 * 1000};

std::uint64_t steady_ns(Clock::time_point when) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count());
}

struct WatchFlow {
  Fd fd;
  WatchFlowResult result;
  std::vector<std::uint8_t> received;  // per tick; one byte each keeps hours of samples small
};

// Echoes arriving later than the reply timeout count as lost: a path that delays packets by
// seconds is interrupted for the workload even if it eventually delivers.
void drain(WatchFlow& flow, const std::vector<Clock::time_point>& tick_sent,
           milliseconds reply_timeout, Clock::time_point now) {
  std::array<std::byte, 512> buffer;
  while (true) {
    ssize_t n = ::recv(flow.fd.get(), buffer.data(), buffer.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      ++flow.result.send_errors;  // ICMP error for an earlier sample; keep sampling
      continue;
    }
    auto message = ProbeMessage::decode(std::span(buffer.data(), static_cast<std::size_t>(n)));
    if (!message || message->sequence >= flow.received.size()) continue;
    if (flow.received[message->sequence]) continue;
    if (now - tick_sent[message->sequence] > reply_timeout) continue;
    flow.received[message->sequence] = 1;
    ++flow.result.received;
  }
}

}  // namespace

std::vector<std::string> validate(const WatchOptions& options) {
  std::vector<std::string> problems;
  if (!parse_ipv4(options.target, options.port)) {
    problems.push_back("target '" + options.target + "' is not an IPv4 address");
  }
  if (options.port == 0) problems.push_back("port must be 1-65535");
  if (options.count < 1 || options.count > kMaxFlows) {
    problems.push_back("count must be 1-" + std::to_string(kMaxFlows));
  }
  if (options.interval < milliseconds(10) || options.interval > milliseconds(100)) {
    problems.push_back("interval must be 10ms-100ms (the sampling contract is at most 100 ms)");
  }
  if (options.max_duration <= milliseconds(0) || options.max_duration > kMaxDuration) {
    problems.push_back("max duration must be more than 0 and at most 6h");
  }
  if (options.reply_timeout <= milliseconds(0) || options.reply_timeout > milliseconds(10000)) {
    problems.push_back("reply timeout must be more than 0 and at most 10s");
  }
  if (options.max_interruption < milliseconds(0)) {
    problems.push_back("max interruption must not be negative");
  }
  return problems;
}

Verdict judge(const std::vector<WatchFlowResult>& flows, milliseconds max_interruption,
              std::string& reason) {
  int answered = 0;
  int over = 0;
  milliseconds worst{0};
  for (const auto& flow : flows) {
    if (flow.received > 0) ++answered;
    if (flow.interruptions.longest) {
      worst = std::max(worst, flow.interruptions.longest->length);
      if (flow.interruptions.longest->length > max_interruption) ++over;
    }
  }
  if (answered == 0) {
    reason = "no flow received any reply: the watch never observed a working path";
    return Verdict::no_evidence;
  }
  if (over > 0) {
    reason = std::to_string(over) + " of " + std::to_string(flows.size()) +
             " flows interrupted longer than " + std::to_string(max_interruption.count()) +
             " ms (longest " + std::to_string(worst.count()) + " ms)";
    return Verdict::fail;
  }
  reason = "no flow interrupted longer than " + std::to_string(max_interruption.count()) +
           " ms (longest " + std::to_string(worst.count()) + " ms)";
  return Verdict::pass;
}

Expected<WatchReport, SocketError> run_watch(const WatchOptions& options,
                                             const std::atomic<bool>& stop,
                                             const WatchSampling& on_sampling) {
  auto target = parse_ipv4(options.target, options.port);
  if (!target) {
    return SocketError{SocketFailure::invalid_address,
                       "target '" + options.target + "' is not an IPv4 address"};
  }
  WatchReport report;
  report.options = options;
  std::vector<WatchFlow> flows(static_cast<std::size_t>(options.count));
  for (auto& flow : flows) {
    flow.fd = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!flow.fd.valid() || ::connect(flow.fd.get(), reinterpret_cast<const sockaddr*>(&*target),
                                      sizeof *target) != 0) {
      return SocketError{SocketFailure::create, std::string("udp socket: ") + std::strerror(errno)};
    }
    flow.result.src_port = local_port(flow.fd.get());
  }

  report.started_at = now_utc();
  const auto started = Clock::now();
  const auto utc_origin = report.started_at;
  const auto last_tick_by = started + options.max_duration;
  std::vector<Clock::time_point> tick_sent;
  std::vector<TimePoint> tick_utc;
  std::vector<pollfd> pollfds(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) pollfds[i] = pollfd{flows[i].fd.get(), POLLIN, 0};

  auto next_tick = started;
  Clock::time_point sampling_ended;
  Clock::time_point drain_until;
  bool sampling = true;
  while (true) {
    auto now = Clock::now();
    if (sampling && (stop.load() || now >= last_tick_by)) {
      sampling = false;
      report.stopped = stop.load();
      sampling_ended = now;
      drain_until = now + options.reply_timeout;
    }
    if (!sampling) {
      bool all_answered = std::all_of(flows.begin(), flows.end(), [](const WatchFlow& f) {
        return f.result.received == f.result.sent;
      });
      if (all_answered || now >= drain_until) break;
    }
    if (sampling && now >= next_tick) {
      const auto sequence = static_cast<std::uint32_t>(tick_sent.size());
      tick_sent.push_back(now);
      tick_utc.push_back(utc_origin + std::chrono::duration_cast<milliseconds>(now - started));
      auto bytes = ProbeMessage{sequence, steady_ns(now)}.encode();
      for (auto& flow : flows) {
        flow.received.push_back(0);
        ++flow.result.sent;
        if (::send(flow.fd.get(), bytes.data(), bytes.size(), 0) < 0) ++flow.result.send_errors;
      }
      // Ticks keep their schedule; after a stall (a stopped process) sampling resumes from now.
      next_tick += options.interval;
      if (next_tick < now) next_tick = now + options.interval;
      continue;
    }
    auto wake = sampling ? std::min(next_tick, last_tick_by) : drain_until;
    int timeout = wake <= now ? 0
                              : static_cast<int>(std::min<long long>(
                                    std::chrono::ceil<milliseconds>(wake - now).count(), 100));
    if (::poll(pollfds.data(), pollfds.size(), timeout) <= 0) continue;
    now = Clock::now();
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (pollfds[i].revents) drain(flows[i], tick_sent, options.reply_timeout, now);
    }
    if (!report.sampling_since && std::all_of(flows.begin(), flows.end(), [](const WatchFlow& f) {
          return f.result.received > 0;
        })) {
      report.sampling_since = utc_origin + std::chrono::duration_cast<milliseconds>(now - started);
      if (on_sampling) on_sampling();
    }
  }
  report.ended_at = utc_origin + std::chrono::duration_cast<milliseconds>(sampling_ended - started);

  std::vector<Sample> samples;
  for (auto& flow : flows) {
    samples.clear();
    for (std::size_t tick = 0; tick < flow.received.size(); ++tick) {
      samples.push_back(Sample{tick_utc[tick], flow.received[tick] != 0});
    }
    flow.result.interruptions = find_interruptions(samples, report.ended_at);
    report.flows.push_back(flow.result);
  }
  report.verdict = judge(report.flows, options.max_interruption, report.reason);
  return report;
}

}  // namespace fabgate::flows
