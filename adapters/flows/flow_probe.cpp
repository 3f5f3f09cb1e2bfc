#include "adapters/flows/flow_probe.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <span>
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
  std::uint32_t index = 0;  // its place in the run: part of every pattern byte it sends
  bool connecting = false;  // TCP handshake in progress
  bool done = false;
  Clock::time_point connect_started;
  Clock::time_point next_send;
  Clock::time_point last_send;
  std::vector<bool> answered;
  // The stamp each sent sequence carried, strictly increasing: an echo's header must carry
  // exactly its sequence's stamp, and a stamp names the message even when the sequence field
  // is what got corrupted.
  std::vector<std::uint64_t> sent_ns;
  std::vector<double> rtts_ms;
  std::vector<std::byte> stream;      // TCP bytes not yet forming a whole message
  std::uint32_t stream_messages = 0;  // TCP: whole messages read back, in order
  std::uint16_t icmp_id = 0;          // icmp over a raw socket: the identifier it sends

  void fail(FlowError error, std::string detail) {
    if (result.error == FlowError::none) {
      result.error = error;
      result.detail = std::move(detail);
    }
    done = true;
  }
};

// What every flow of a run shares: the options, the pattern key and two scratch buffers.
struct Run {
  const FlowProbeOptions& options;
  std::uint32_t probe_id = 0;
  std::size_t message_size = FlowMessage::kDefaultSize;
  std::optional<IcmpSocketKind> icmp;
  std::vector<std::byte> expected;  // the message an echo is compared with
  std::vector<std::byte> outgoing;  // the packet being sent (icmp: with its ICMP header)
};

constexpr std::size_t kIcmpHeaderSize = 8;
constexpr std::uint8_t kIcmpEchoReply = 0;
constexpr std::uint8_t kIcmpEchoRequest = 8;

// The Internet checksum (RFC 1071) of an ICMP message, for raw sockets; a ping socket's kernel
// computes its own.
std::uint16_t internet_checksum(std::span<const std::byte> bytes) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < bytes.size(); i += 2)
    sum += (std::to_integer<std::uint32_t>(bytes[i]) << 8) |
           std::to_integer<std::uint32_t>(bytes[i + 1]);
  if (bytes.size() % 2 == 1) sum += std::to_integer<std::uint32_t>(bytes.back()) << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum & 0xffff);
}

void write_be16(std::byte* at, std::uint16_t value) {
  at[0] = static_cast<std::byte>(value >> 8);
  at[1] = static_cast<std::byte>(value & 0xff);
}

std::uint16_t read_be16(const std::byte* at) {
  return static_cast<std::uint16_t>((std::to_integer<unsigned>(at[0]) << 8) |
                                    std::to_integer<unsigned>(at[1]));
}

// Which of this flow's messages an echo is: the one whose sequence and stamp its header
// carries; with one of the two corrupted, the one the other names. None when it names no
// message this flow sent (then every byte of it is suspect).
std::optional<std::uint32_t> claimed_sequence(const Flow& flow, std::span<const std::byte> echo) {
  auto header = FlowMessage::read_header(echo);
  if (!header) return std::nullopt;
  const auto& stamps = flow.sent_ns;
  if (header->sequence < stamps.size() && stamps[header->sequence] == header->sent_ns)
    return header->sequence;
  auto stamp = std::lower_bound(stamps.begin(), stamps.end(), header->sent_ns);
  if (stamp != stamps.end() && *stamp == header->sent_ns)
    return static_cast<std::uint32_t>(stamp - stamps.begin());
  if (header->sequence < stamps.size()) return header->sequence;
  return std::nullopt;
}

void record_corrupted(Flow& flow, std::size_t offset) {
  if (flow.result.corrupted++ == 0) flow.result.first_corrupt_offset = offset;
}

// An echo is a reply only when every byte is the one sent for `sequence`, at the size sent;
// anything else is a corrupted message, counted with its first differing offset.
void take_echo(Flow& flow, Run& run, std::span<const std::byte> echo,
               std::optional<std::uint32_t> sequence, Clock::time_point now) {
  if (!sequence) {
    // It is no message this flow sent: wrong from its magic on, or from its sequence field.
    const std::uint32_t magic = FlowMessage::kMagic;
    const auto magic_bytes = std::as_bytes(std::span(&magic, 1));
    auto offset = first_difference(echo.first(std::min<std::size_t>(echo.size(), 4)), magic_bytes);
    record_corrupted(flow, offset.value_or(4));
    return;
  }
  run.expected.resize(run.message_size);
  FlowMessage::encode(run.expected, FlowMessage::Key{run.probe_id, flow.index, *sequence},
                      flow.sent_ns[*sequence]);
  if (auto offset = first_difference(echo, run.expected)) {
    record_corrupted(flow, *offset);
    return;
  }
  if (flow.answered[*sequence]) return;  // a duplicate is not a second reply
  flow.answered[*sequence] = true;
  ++flow.result.received;
  flow.rtts_ms.push_back(static_cast<double>(steady_ns(now) - flow.sent_ns[*sequence]) / 1e6);
}

void send_next(Flow& flow, Run& run, Clock::time_point now) {
  const FlowProbeOptions& options = run.options;
  const auto sequence = static_cast<std::uint32_t>(flow.sent_ns.size());
  std::uint64_t stamp = steady_ns(now);
  if (!flow.sent_ns.empty() && stamp <= flow.sent_ns.back()) stamp = flow.sent_ns.back() + 1;
  const bool icmp = options.protocol == Protocol::icmp;
  const std::size_t header = icmp ? kIcmpHeaderSize : 0;
  run.outgoing.assign(header + run.message_size, std::byte{0});
  FlowMessage::encode(std::span(run.outgoing).subspan(header),
                      FlowMessage::Key{run.probe_id, flow.index, sequence}, stamp);
  if (icmp) {
    // A ping socket's kernel writes the identifier and the checksum; a raw socket's owner must.
    run.outgoing[0] = std::byte{kIcmpEchoRequest};
    write_be16(&run.outgoing[6], static_cast<std::uint16_t>(sequence & 0xffff));
    if (run.icmp == IcmpSocketKind::raw) {
      write_be16(&run.outgoing[4], flow.icmp_id);
      write_be16(&run.outgoing[2], internet_checksum(run.outgoing));
    }
  }
  const auto& bytes = run.outgoing;
  ssize_t written = ::send(flow.fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (written == static_cast<ssize_t>(bytes.size())) {
    flow.sent_ns.push_back(stamp);
    ++flow.result.sent;
    flow.last_send = now;
    flow.next_send = now + options.spacing;
    return;
  }
  if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    flow.next_send = now + milliseconds(1);
    return;
  }
  // A partial TCP write of one small message on a socket the far end keeps reading does not
  // happen, and it would break the stream's framing: treat it as an error.
  int error = written < 0 ? errno : EIO;
  flow.fail(classify(error), describe(error, "send", options));
}

// The ICMP payload of an echo reply to this flow, none for any other ICMP message (a raw
// socket also sees the requests on loopback and other flows' replies).
std::optional<std::span<const std::byte>> echo_reply_payload(const Flow& flow, const Run& run,
                                                             std::span<const std::byte> packet) {
  if (run.icmp == IcmpSocketKind::raw) {
    if (packet.empty()) return std::nullopt;
    const std::size_t ip_header = (std::to_integer<std::size_t>(packet[0]) & 0x0f) * 4;
    if (packet.size() < ip_header + kIcmpHeaderSize) return std::nullopt;
    packet = packet.subspan(ip_header);
    if (read_be16(&packet[4]) != flow.icmp_id) return std::nullopt;
  }
  if (packet.size() < kIcmpHeaderSize) return std::nullopt;
  if (std::to_integer<std::uint8_t>(packet[0]) != kIcmpEchoReply) return std::nullopt;
  return packet.subspan(kIcmpHeaderSize);
}

void receive(Flow& flow, Run& run, Clock::time_point now) {
  const Protocol protocol = run.options.protocol;
  static thread_local std::array<std::byte, 65536> buffer;
  while (!flow.done) {
    ssize_t n = ::recv(flow.fd.get(), buffer.data(), buffer.size(), 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      int error = errno;
      flow.fail(classify(error), describe(error, "receive", run.options));
      return;
    }
    const auto bytes = std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(n));
    if (protocol == Protocol::udp) {
      take_echo(flow, run, bytes, claimed_sequence(flow, bytes), now);
      continue;
    }
    if (protocol == Protocol::icmp) {
      if (auto payload = echo_reply_payload(flow, run, bytes))
        take_echo(flow, run, *payload, claimed_sequence(flow, *payload), now);
      continue;
    }
    if (n == 0) {
      if (flow.result.received < static_cast<int>(flow.answered.size())) {
        flow.fail(FlowError::reset, "connection closed by the far end");
      }
      flow.done = true;
      return;
    }
    // A stream echoes in order: its k-th whole message must be exactly message k.
    flow.stream.insert(flow.stream.end(), bytes.begin(), bytes.end());
    const std::size_t size = run.message_size;
    const std::size_t whole = flow.stream.size() / size * size;
    for (std::size_t at = 0; at < whole; at += size) {
      const std::uint32_t position = flow.stream_messages++;
      std::optional<std::uint32_t> sequence;
      if (position < flow.sent_ns.size()) sequence = position;
      take_echo(flow, run, std::span<const std::byte>(flow.stream.data() + at, size), sequence,
                now);
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
  flow.result.connect_ms =
      std::chrono::duration<double, std::milli>(now - flow.connect_started).count();
}

// The socket a flow sends on: a datagram or stream socket, or an ICMP socket of the run's kind
// (the first flow's decides it for the others, so a run never mixes kinds).
Expected<Fd, SocketError> flow_socket(Run& run) {
  if (run.options.protocol == Protocol::icmp) {
    auto opened = icmp_socket(run.icmp ? run.icmp : run.options.icmp_socket);
    if (!opened) return std::move(opened).error();
    run.icmp = opened->kind;
    return std::move(opened->fd);
  }
  int type = run.options.protocol == Protocol::tcp ? SOCK_STREAM : SOCK_DGRAM;
  Fd fd(::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid())
    return SocketError{SocketFailure::create, std::string("socket: ") + std::strerror(errno)};
  return fd;
}

// Opens one flow's socket and starts connecting. A socket that cannot be created is this
// host's problem (no evidence); a connect that fails at once is the flow's outcome.
Expected<Flow, SocketError> open_flow(Run& run, std::uint32_t index, const sockaddr_in& target,
                                      Clock::time_point now) {
  const FlowProbeOptions& options = run.options;
  Flow flow;
  auto fd = flow_socket(run);
  if (!fd) return std::move(fd).error();
  flow.fd = std::move(fd).value();
  flow.index = index;
  flow.answered.assign(static_cast<std::size_t>(options.packets_per_flow), false);
  flow.sent_ns.reserve(static_cast<std::size_t>(options.packets_per_flow));
  flow.next_send = now;
  flow.connect_started = now;
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
  // connect() picks a distinct ephemeral source port per socket (a ping socket: a distinct
  // echo identifier): that is what makes each flow a distinct flow for the fabric's ECMP hash.
  // A raw ICMP socket's identifier is the flow's own, distinct within the run.
  int rc = ::connect(flow.fd.get(), reinterpret_cast<const sockaddr*>(&target), sizeof target);
  if (rc != 0 && errno == EINPROGRESS) {
    flow.connecting = true;
  } else if (rc != 0) {
    int error = errno;
    if (error == EMFILE || error == ENFILE || error == EADDRNOTAVAIL || error == ENOBUFS) {
      return SocketError{SocketFailure::create, std::string("connect: ") + std::strerror(error)};
    }
    flow.fail(classify(error), describe(error, "connect", options));
  } else if (options.protocol == Protocol::tcp) {
    flow.result.connect_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - flow.connect_started).count();
  }
  if (run.icmp == IcmpSocketKind::raw) {
    flow.icmp_id = static_cast<std::uint16_t>((run.probe_id + index) & 0xffff);
    flow.result.src_port = flow.icmp_id;
    if (int error = keep_only_echo_replies(flow.fd.get(), flow.icmp_id); error != 0)
      return SocketError{SocketFailure::create,
                         std::string("setsockopt SO_ATTACH_FILTER: ") + std::strerror(error)};
  } else {
    flow.result.src_port = local_port(flow.fd.get());
  }
  return flow;
}

// The nouns a reason counts messages in, by protocol.
const char* message_noun(Protocol protocol) {
  switch (protocol) {
    case Protocol::tcp:
      return "messages";
    case Protocol::icmp:
      return "echo replies";
    case Protocol::udp:
      return "datagrams";
  }
  return "datagrams";
}

int poll_timeout_ms(Clock::time_point now, Clock::time_point wake) {
  if (wake <= now) return 0;
  auto wait = std::chrono::ceil<milliseconds>(wake - now).count();
  return static_cast<int>(std::min<long long>(wait, 1000));
}

}  // namespace

const char* to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::tcp:
      return "tcp";
    case Protocol::icmp:
      return "icmp";
    case Protocol::udp:
      return "udp";
  }
  return "udp";
}

std::optional<Protocol> parse_protocol(std::string_view text) {
  if (text == "tcp") return Protocol::tcp;
  if (text == "udp") return Protocol::udp;
  if (text == "icmp") return Protocol::icmp;
  return std::nullopt;
}

std::size_t message_size(const FlowProbeOptions& options) {
  if (options.size > 0 && options.protocol != Protocol::tcp)
    return static_cast<std::size_t>(options.size);
  return FlowMessage::kDefaultSize;
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
    case FlowError::corrupted:
      return "corrupted";
  }
  return "none";
}

std::vector<std::string> validate(const FlowProbeOptions& options) {
  std::vector<std::string> problems;
  if (!parse_ipv4(options.target, options.port)) {
    problems.push_back("target '" + options.target + "' is not an IPv4 address");
  }
  if (options.port == 0 && options.protocol != Protocol::icmp)
    problems.push_back("port must be 1-65535");
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
    if (options.protocol == Protocol::tcp)
      problems.push_back("size needs udp or icmp: TCP re-segments, so a size is no frame size");
    // 65507 is both a UDP payload's and an ICMP echo payload's most: 65535 - 20 - 8.
    if (options.size < static_cast<int>(FlowMessage::kHeaderSize) || options.size > kMaxUdpPayload)
      problems.push_back("size must be " + std::to_string(FlowMessage::kHeaderSize) + "-" +
                         std::to_string(kMaxUdpPayload) + " bytes");
  }
  if (!options.source.empty() && !parse_ipv4(options.source, 0))
    problems.push_back("source '" + options.source + "' is not an IPv4 address");
  return problems;
}

Verdict judge(const std::vector<FlowResult>& flows, const FlowProbeOptions& options,
              std::string& reason) {
  int completed = 0;
  int refused = 0;
  int too_big = 0;
  int failed_otherwise = 0;  // not completed, with no corrupted echo
  long long sent = 0;
  long long corrupted = 0;
  int corrupted_flows = 0;
  std::optional<std::size_t> first_corrupted_flow;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const auto& flow = flows[i];
    if (flow.completed) ++completed;
    if (flow.error == FlowError::refused) ++refused;
    if (flow.error == FlowError::too_big) ++too_big;
    sent += flow.sent;
    if (flow.corrupted > 0) {
      corrupted += flow.corrupted;
      ++corrupted_flows;
      if (!first_corrupted_flow) first_corrupted_flow = i;
    } else if (!flow.completed) {
      ++failed_otherwise;
    }
  }
  const int total = static_cast<int>(flows.size());
  if (total == 0) {
    reason = "no flow was run";
    return Verdict::no_evidence;
  }
  const std::string not_completed = std::to_string(total - completed) + " of " +
                                    std::to_string(total) + " flows did not complete";
  // A packet refused for its size never crossed: that is the path failing full-size frames,
  // not a probe that could not run.
  const std::string emsgsize =
      too_big == 0 ? ""
                   : " (" + std::to_string(too_big) +
                         " with EMSGSIZE: message too long for the MTU with don't-fragment set)";
  // Delivered but not intact leads: a workload fails on it while every packet arrives.
  if (corrupted > 0) {
    const auto& flow = flows[*first_corrupted_flow];
    std::string to = options.target;
    if (options.protocol != Protocol::icmp) to += ":" + std::to_string(options.port);
    reason = std::to_string(corrupted) + " of " + std::to_string(sent) + " " +
             message_noun(options.protocol) + " corrupted on flow " +
             std::to_string(*first_corrupted_flow) + " (to " + to + "), first at byte " +
             std::to_string(flow.first_corrupt_offset.value_or(0));
    if (corrupted_flows > 1)
      reason += ", and on " + std::to_string(corrupted_flows - 1) +
                (corrupted_flows == 2 ? " more flow" : " more flows");
    if (failed_otherwise > 0) reason += "; " + not_completed + emsgsize;
    return Verdict::fail;
  }
  if (completed == total) {
    reason = "all " + std::to_string(total) + " flows completed";
    return Verdict::pass;
  }
  if (completed == 0 && refused == total) {
    reason = "every flow was refused by the far host: no responder, the path was not observed";
    return Verdict::no_evidence;
  }
  reason = not_completed + emsgsize;
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

  // A fresh key per run: an echo left over from an earlier run, or another prober's, differs.
  Run run{options};
  run.probe_id = std::random_device{}();
  run.message_size = message_size(options);
  report.probe_id = run.probe_id;

  std::vector<Flow> flows;
  flows.reserve(static_cast<std::size_t>(options.count));
  for (int i = 0; i < options.count; ++i) {
    auto flow = open_flow(run, static_cast<std::uint32_t>(i), *target, started);
    if (!flow) return std::move(flow).error();
    flows.push_back(std::move(flow).value());
  }
  report.icmp_socket = run.icmp;

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
        send_next(flow, run, now);
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
      receive(flow, run, now);
    }
  }

  for (auto& flow : flows) {
    FlowResult& result = flow.result;
    result.completed = result.received == options.packets_per_flow && result.corrupted == 0;
    result.loss =
        result.sent == 0 ? 1.0 : static_cast<double>(result.sent - result.received) / result.sent;
    result.latency = summarize_latency(flow.rtts_ms);
    if (result.corrupted > 0 && result.error == FlowError::none) {
      result.error = FlowError::corrupted;
      result.detail = std::to_string(result.corrupted) + " of " + std::to_string(result.sent) +
                      " " + message_noun(options.protocol) + " corrupted, first at byte " +
                      std::to_string(result.first_corrupt_offset.value_or(0));
    }
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
  report.verdict = judge(report.flows, options, report.reason);
  return report;
}

}  // namespace fabgate::flows
