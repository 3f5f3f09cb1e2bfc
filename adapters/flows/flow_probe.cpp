#include "adapters/flows/flow_probe.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "adapters/flows/wire.h"

namespace fabgate::flows {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxFlows = 1024;
constexpr int kMaxPacketsPerFlow = 1000;
constexpr milliseconds kMaxTimeout{10 * 60 * 1000};
constexpr int kMaxUdpPayload = 65507;  // 65535 - 20 (IPv4) - 8 (UDP)

std::uint64_t steady_ns(Clock::time_point when) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count());
}

// Maps a socket errno to the flow outcome a reader of the report cares about.
FlowError classify(int error) {
  switch (error) {
    case ECONNREFUSED:
      return FlowError::refused;
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
      return FlowError::unreachable;
    case ETIMEDOUT:
      return FlowError::timed_out;
    case EMSGSIZE:
      return FlowError::too_big;
    default:
      return FlowError::reset;
  }
}

// The flow's error detail: the system's words, and for EMSGSIZE what it means for the path.
std::string describe(int error, const char* operation, const FlowProbeOptions& options) {
  std::string text = std::string(operation) + ": " + std::strerror(error);
  if (error == EMSGSIZE)
    text += " (EMSGSIZE: a " + std::to_string(options.size) +
            "-byte payload with don't-fragment set exceeds the MTU; full-size frames do not "
            "cross this path)";
  return text;
}

// One flow's progress. Packets are sent on a fixed schedule (every `spacing`) whether or not
// earlier ones were answered, so a lossy path shows as loss, not as a stalled flow.
struct Flow {
  Fd fd;
  FlowResult result;
  bool connecting = false;  // TCP handshake in progress
  bool done = false;
  Clock::time_point next_send;
  Clock::time_point last_send;
  std::vector<bool> answered;
  std::vector<double> rtts_ms;
  std::vector<std::byte> stream;  // TCP bytes not yet forming a whole message

  void fail(FlowError error, std::string detail) {
    if (result.error == FlowError::none) {
      result.error = error;
      result.detail = std::move(detail);
    }
    done = true;
  }
};

// An echo counts only at the size it was sent: the probe message is its first 16 bytes.
void record_echo(Flow& flow, std::span<const std::byte> bytes, std::size_t expected_size,
                 Clock::time_point now) {
  if (bytes.size() != expected_size) return;
  auto message = ProbeMessage::decode(bytes.first(ProbeMessage::kSize));
  if (!message || message->sequence >= flow.answered.size()) return;
  if (message->sequence >= static_cast<std::uint32_t>(flow.result.sent)) return;
  if (flow.answered[message->sequence]) return;  // a duplicate is not a second reply
  flow.answered[message->sequence] = true;
  ++flow.result.received;
  double rtt_ms = static_cast<double>(steady_ns(now) - message->sent_ns) / 1e6;
  flow.rtts_ms.push_back(rtt_ms);
}

void send_next(Flow& flow, const FlowProbeOptions& options, Clock::time_point now) {
  ProbeMessage message{static_cast<std::uint32_t>(flow.result.sent), steady_ns(now)};
  auto encoded = message.encode();
  std::vector<std::byte> bytes(encoded.begin(), encoded.end());
  if (options.size > 0) bytes.resize(static_cast<std::size_t>(options.size), std::byte{0});
  ssize_t written = ::send(flow.fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (written == static_cast<ssize_t>(bytes.size())) {
    ++flow.result.sent;
    flow.last_send = now;
    flow.next_send = now + options.spacing;
    return;
  }
  if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    flow.next_send = now + milliseconds(1);
    return;
  }
  // A partial TCP write of 16 bytes on an empty socket does not happen; treat it as an error.
  int error = written < 0 ? errno : EIO;
  flow.fail(classify(error), describe(error, "send", options));
}

void receive(Flow& flow, const FlowProbeOptions& options, Clock::time_point now) {
  const Protocol protocol = options.protocol;
  const std::size_t expected =
      options.size > 0 ? static_cast<std::size_t>(options.size) : ProbeMessage::kSize;
  static thread_local std::array<std::byte, 65536> buffer;
  while (!flow.done) {
    ssize_t n = ::recv(flow.fd.get(), buffer.data(), buffer.size(), 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      int error = errno;
      flow.fail(classify(error), describe(error, "receive", options));
      return;
    }
    if (protocol == Protocol::udp) {
      record_echo(flow, std::span(buffer.data(), static_cast<std::size_t>(n)), expected, now);
      continue;
    }
    if (n == 0) {
      if (flow.result.received < static_cast<int>(flow.answered.size())) {
        flow.fail(FlowError::reset, "connection closed by the far end");
      }
      flow.done = true;
      return;
    }
    flow.stream.insert(flow.stream.end(), buffer.begin(), buffer.begin() + n);
    std::size_t whole = flow.stream.size() / ProbeMessage::kSize * ProbeMessage::kSize;
    for (std::size_t at = 0; at < whole; at += ProbeMessage::kSize) {
      record_echo(flow, std::span(flow.stream.data() + at, ProbeMessage::kSize),
                  ProbeMessage::kSize, now);
    }
    flow.stream.erase(flow.stream.begin(),
                      flow.stream.begin() + static_cast<std::ptrdiff_t>(whole));
  }
}

void finish_connect(Flow& flow, Clock::time_point now) {
  int error = 0;
  socklen_t length = sizeof error;
  ::getsockopt(flow.fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
  if (error != 0) {
    flow.fail(classify(error), std::string("connect: ") + std::strerror(error));
    return;
  }
  flow.connecting = false;
  flow.next_send = now;
}

// Opens one flow's socket and starts connecting. A socket that cannot be created is this
// host's problem (no evidence); a connect that fails at once is the flow's outcome.
Expected<Flow, SocketError> open_flow(const FlowProbeOptions& options, const sockaddr_in& target,
                                      Clock::time_point now) {
  int type = options.protocol == Protocol::tcp ? SOCK_STREAM : SOCK_DGRAM;
  Flow flow;
  flow.fd = Fd(::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!flow.fd.valid()) {
    return SocketError{SocketFailure::create, std::string("socket: ") + std::strerror(errno)};
  }
  flow.answered.assign(static_cast<std::size_t>(options.packets_per_flow), false);
  flow.next_send = now;
  if (options.size > 0) {
    if (int error = set_dont_fragment(flow.fd.get()); error != 0)
      return SocketError{SocketFailure::create,
                         std::string("setsockopt IP_MTU_DISCOVER: ") + std::strerror(error)};
  }
  if (!options.source.empty()) {
    auto source = parse_ipv4(options.source, 0);
    if (!source)
      return SocketError{SocketFailure::invalid_address,
                         "source '" + options.source + "' is not an IPv4 address"};
    if (::bind(flow.fd.get(), reinterpret_cast<const sockaddr*>(&*source), sizeof *source) != 0)
      return SocketError{SocketFailure::bind,
                         "bind " + options.source + ": " + std::strerror(errno)};
  }
  // connect() picks a distinct ephemeral source port per socket: that port is what makes each
  // flow a distinct 5-tuple for the fabric's ECMP hash.
  int rc = ::connect(flow.fd.get(), reinterpret_cast<const sockaddr*>(&target), sizeof target);
  if (rc != 0 && errno == EINPROGRESS) {
    flow.connecting = true;
  } else if (rc != 0) {
    int error = errno;
    if (error == EMFILE || error == ENFILE || error == EADDRNOTAVAIL || error == ENOBUFS) {
      return SocketError{SocketFailure::create, std::string("connect: ") + std::strerror(error)};
    }
    flow.fail(classify(error), describe(error, "connect", options));
  }
  flow.result.src_port = local_port(flow.fd.get());
  return flow;
}

int poll_timeout_ms(Clock::time_point now, Clock::time_point wake) {
  if (wake <= now) return 0;
  auto wait = std::chrono::ceil<milliseconds>(wake - now).count();
  return static_cast<int>(std::min<long long>(wait, 1000));
}

}  // namespace

const char* to_string(Protocol protocol) {
  return protocol == Protocol::tcp ? "tcp" : "udp";
}

std::optional<Protocol> parse_protocol(std::string_view text) {
  if (text == "tcp") return Protocol::tcp;
  if (text == "udp") return Protocol::udp;
  return std::nullopt;
}

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

const char* to_string(FlowError error) {
  switch (error) {
    case FlowError::none:
      return "none";
    case FlowError::refused:
      return "refused";
    case FlowError::unreachable:
      return "unreachable";
    case FlowError::reset:
      return "reset";
    case FlowError::timed_out:
      return "timed-out";
    case FlowError::too_big:
      return "message-too-long";
  }
  return "none";
}

std::vector<std::string> validate(const FlowProbeOptions& options) {
  std::vector<std::string> problems;
  if (!parse_ipv4(options.target, options.port)) {
    problems.push_back("target '" + options.target + "' is not an IPv4 address");
  }
  if (options.port == 0) problems.push_back("port must be 1-65535");
  if (options.count < 1 || options.count > kMaxFlows) {
    problems.push_back("count must be 1-" + std::to_string(kMaxFlows));
  }
  if (options.packets_per_flow < 1 || options.packets_per_flow > kMaxPacketsPerFlow) {
    problems.push_back("packets must be 1-" + std::to_string(kMaxPacketsPerFlow));
  }
  if (options.timeout <= milliseconds(0) || options.timeout > kMaxTimeout) {
    problems.push_back("timeout must be more than 0 and at most 10m");
  }
  if (options.reply_timeout <= milliseconds(0))
    problems.push_back("reply timeout must be more than 0");
  if (options.spacing < milliseconds(0)) problems.push_back("spacing must not be negative");
  if (options.size != 0) {
    if (options.protocol != Protocol::udp)
      problems.push_back("size needs udp: TCP re-segments, so a size is no frame size");
    if (options.size < static_cast<int>(ProbeMessage::kSize) || options.size > kMaxUdpPayload)
      problems.push_back("size must be " + std::to_string(ProbeMessage::kSize) + "-" +
                         std::to_string(kMaxUdpPayload) + " bytes");
  }
  if (!options.source.empty() && !parse_ipv4(options.source, 0))
    problems.push_back("source '" + options.source + "' is not an IPv4 address");
  return problems;
}

Verdict judge(const std::vector<FlowResult>& flows, std::string& reason) {
  int completed = 0;
  int refused = 0;
  int too_big = 0;
  for (const auto& flow : flows) {
    if (flow.completed) ++completed;
    if (flow.error == FlowError::refused) ++refused;
    if (flow.error == FlowError::too_big) ++too_big;
  }
  const int total = static_cast<int>(flows.size());
  if (total == 0) {
    reason = "no flow was run";
    return Verdict::no_evidence;
  }
  if (completed == total) {
    reason = "all " + std::to_string(total) + " flows completed";
    return Verdict::pass;
  }
  if (completed == 0 && refused == total) {
    reason = "every flow was refused by the far host: no responder, the path was not observed";
    return Verdict::no_evidence;
  }
  reason = std::to_string(total - completed) + " of " + std::to_string(total) +
           " flows did not complete";
  // A packet refused for its size never crossed: that is the path failing full-size frames,
  // not a probe that could not run.
  if (too_big > 0)
    reason += " (" + std::to_string(too_big) +
              " with EMSGSIZE: message too long for the MTU with don't-fragment set)";
  return Verdict::fail;
}

Expected<FlowProbeReport, SocketError> run_flow_probe(const FlowProbeOptions& options) {
  auto target = parse_ipv4(options.target, options.port);
  if (!target) {
    return SocketError{SocketFailure::invalid_address,
                       "target '" + options.target + "' is not an IPv4 address"};
  }
  FlowProbeReport report;
  report.options = options;
  report.started_at = now_utc();
  const auto started = Clock::now();
  const auto deadline = started + options.timeout;

  std::vector<Flow> flows;
  flows.reserve(static_cast<std::size_t>(options.count));
  for (int i = 0; i < options.count; ++i) {
    auto flow = open_flow(options, *target, started);
    if (!flow) return std::move(flow).error();
    flows.push_back(std::move(flow).value());
  }

  std::vector<pollfd> pollfds;
  std::vector<Flow*> polled;
  for (auto now = Clock::now(); now < deadline; now = Clock::now()) {
    auto wake = deadline;
    bool active = false;
    pollfds.clear();
    polled.clear();
    for (auto& flow : flows) {
      if (flow.done) continue;
      const int planned = options.packets_per_flow;
      if (!flow.connecting && flow.result.sent < planned && now >= flow.next_send) {
        send_next(flow, options, now);
      }
      if (flow.done) continue;
      if (flow.result.sent == planned &&
          (flow.result.received == planned || now >= flow.last_send + options.reply_timeout)) {
        flow.done = true;
        continue;
      }
      active = true;
      if (!flow.connecting && flow.result.sent < planned) wake = std::min(wake, flow.next_send);
      if (flow.result.sent == planned)
        wake = std::min(wake, flow.last_send + options.reply_timeout);
      short events = POLLIN;
      if (flow.connecting) events |= POLLOUT;
      pollfds.push_back(pollfd{flow.fd.get(), events, 0});
      polled.push_back(&flow);
    }
    if (!active) break;
    int ready = ::poll(pollfds.data(), pollfds.size(), poll_timeout_ms(now, wake));
    if (ready <= 0) continue;  // timeout, or EINTR: the loop re-reads the clock
    now = Clock::now();
    for (std::size_t i = 0; i < pollfds.size(); ++i) {
      Flow& flow = *polled[i];
      if (pollfds[i].revents == 0) continue;
      if (flow.connecting) {
        finish_connect(flow, now);
        continue;
      }
      receive(flow, options, now);
    }
  }

  for (auto& flow : flows) {
    FlowResult& result = flow.result;
    result.completed = result.received == options.packets_per_flow;
    result.loss =
        result.sent == 0 ? 1.0 : static_cast<double>(result.sent - result.received) / result.sent;
    result.latency = summarize_latency(flow.rtts_ms);
    if (!result.completed && result.error == FlowError::none) {
      result.error = FlowError::timed_out;
      result.detail = flow.connecting
                          ? "TCP connection not established before the deadline"
                          : std::to_string(options.packets_per_flow - result.received) + " of " +
                                std::to_string(options.packets_per_flow) + " packets unanswered";
    }
    report.flows.push_back(std::move(result));
  }
  report.duration = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
  report.verdict = judge(report.flows, report.reason);
  return report;
}

}  // namespace fabgate::flows
