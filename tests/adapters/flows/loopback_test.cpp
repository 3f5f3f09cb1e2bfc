// The flow probe, the watch and the responder talking to each other on 127.0.0.1, with real
// sockets on ports the kernel picks.

#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "adapters/flows/flow_probe.h"
#include "adapters/flows/report_json.h"
#include "adapters/flows/responder.h"
#include "adapters/flows/watch.h"
#include "tests/support/test_port.h"

namespace fabgate::flows {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

// A responder serving on a background thread; stopped and joined on scope exit, even when an
// assertion fails first.
class RunningResponder {
 public:
  explicit RunningResponder(milliseconds start_delay = 0ms) {
    auto opened = Responder::open(ResponderOptions{"127.0.0.1", 0, 30s});
    if (!opened) {
      error_ = opened.error().message;
      return;
    }
    responder_.emplace(std::move(opened).value());
    port_ = responder_->port();
    thread_ = std::thread([this, start_delay] {
      std::this_thread::sleep_for(start_delay);
      stats_ = responder_->serve(stop_);
    });
  }
  ~RunningResponder() { stop(); }

  ResponderStats stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return stats_;
  }
  std::uint16_t port() const { return port_; }
  const std::string& error() const { return error_; }

 private:
  std::optional<Responder> responder_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  ResponderStats stats_;
  std::uint16_t port_ = 0;
  std::string error_;
};

FlowProbeOptions options_for(std::uint16_t port, Protocol protocol, int count) {
  FlowProbeOptions options;
  options.target = "127.0.0.1";
  options.port = port;
  options.protocol = protocol;
  options.count = count;
  options.packets_per_flow = 3;
  options.spacing = 5ms;
  options.timeout = 3s;
  options.reply_timeout = 300ms;
  return options;
}

TEST(FlowProbeLoopback, UdpFlowsAllCompleteFromDistinctSourcePorts) {
  // Given a responder on loopback, then 16 UDP flows complete, each from its own source port,
  // with a latency and no loss.
  RunningResponder responder;
  ASSERT_TRUE(responder.error().empty()) << responder.error();
  auto report = run_flow_probe(options_for(responder.port(), Protocol::udp, 16));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::pass) << report->reason;
  std::set<std::uint16_t> ports;
  for (const auto& flow : report->flows) {
    ports.insert(flow.src_port);
    EXPECT_TRUE(flow.completed);
    EXPECT_EQ(flow.received, 3);
    EXPECT_DOUBLE_EQ(flow.loss, 0.0);
    EXPECT_TRUE(flow.latency);
  }
  EXPECT_EQ(ports.size(), 16u);
  EXPECT_EQ(responder.stop().udp_datagrams_echoed, 48u);
}

TEST(FlowProbeLoopback, FullSizePayloadsCrossWithDontFragmentSet) {
  // Given a responder on loopback, then 4 flows of 1472-byte payloads (a full 1500-byte
  // frame) with don't-fragment set complete, and the JSON says the size and DF.
  RunningResponder responder;
  ASSERT_TRUE(responder.error().empty()) << responder.error();
  auto options = options_for(responder.port(), Protocol::udp, 4);
  options.size = 1472;
  options.source = "127.0.0.1";
  auto report = run_flow_probe(options);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::pass) << report->reason;
  auto document = to_json(*report);
  EXPECT_EQ(document["size"], 1472);
  EXPECT_EQ(document["dont_fragment"], true);
  EXPECT_EQ(document["source"], "127.0.0.1");
}

TEST(FlowProbeLoopback, OversizePayloadRefusedLocallyFailsWithEmsgsize) {
  // Given a private network namespace whose loopback has MTU 1500 (root only), then a
  // 1472-byte probe passes and a 1600-byte probe with DF set fails: the stack refuses each send
  // with EMSGSIZE, and every flow says so. Never a pass, never no-evidence.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace with a small MTU";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNET) != 0) ::_exit(10);
    if (std::system("ip link set lo mtu 1500 up") != 0) ::_exit(11);
    RunningResponder responder;
    if (!responder.error().empty()) ::_exit(12);
    auto options = options_for(responder.port(), Protocol::udp, 4);
    options.size = 1472;
    auto fits = run_flow_probe(options);
    if (!fits || fits->verdict != Verdict::pass) ::_exit(13);
    options.size = 1600;
    auto oversize = run_flow_probe(options);
    if (!oversize || oversize->verdict != Verdict::fail) ::_exit(14);
    for (const auto& flow : oversize->flows)
      if (flow.error != FlowError::too_big || flow.detail.find("EMSGSIZE") == std::string::npos)
        ::_exit(15);
    if (oversize->reason.find("EMSGSIZE") == std::string::npos) ::_exit(16);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  // 13: the fitting probe did not pass; 14: the oversize one did not fail; 15/16: not EMSGSIZE.
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(FlowProbeLoopback, TcpFlowsAllCompleteAndJsonCarriesEachFlow) {
  // Given a responder on loopback, then 8 TCP flows connect and echo, and the JSON document
  // lists every flow with its source port, counts and latency.
  RunningResponder responder;
  ASSERT_TRUE(responder.error().empty()) << responder.error();
  auto report = run_flow_probe(options_for(responder.port(), Protocol::tcp, 8));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::pass) << report->reason;
  auto document = to_json(*report);
  EXPECT_EQ(document["verdict"], "pass");
  EXPECT_EQ(document["protocol"], "tcp");
  ASSERT_EQ(document["flows"].size(), 8u);
  EXPECT_EQ(document["flows"][0]["sent"], 3);
  EXPECT_TRUE(document["flows"][0]["latency_ms"].contains("median"));
  EXPECT_TRUE(document["flows"][0]["connect_ms"].is_number());
  EXPECT_EQ(document["summary"]["corrupted"], 0);
  EXPECT_EQ(responder.stop().tcp_connections, 8u);
}

TEST(FlowProbeLoopback, NoResponderIsNoEvidence) {
  // Given nothing listening on the port (one reserved for this test and never bound), then
  // every flow is refused and the probe reports no evidence for both protocols.
  auto closed_port = static_cast<std::uint16_t>(testing::reserve_test_port());
  ASSERT_NE(closed_port, 0);
  for (auto protocol : {Protocol::udp, Protocol::tcp}) {
    auto report = run_flow_probe(options_for(closed_port, protocol, 4));
    ASSERT_TRUE(report);
    EXPECT_EQ(report->verdict, Verdict::no_evidence)
        << to_string(protocol) << ": " << report->reason;
    EXPECT_EQ(report->flows[0].error, FlowError::refused);
  }
}

TEST(FlowProbeLoopback, SilentPeerFailsWithinTheHardDeadline) {
  // Given a UDP socket that receives but never answers (a silent drop), then every flow times
  // out, the probe fails rather than reporting no evidence, and it ends within its deadline.
  auto silent = bound_socket(SOCK_DGRAM, *parse_ipv4("127.0.0.1", 0));
  ASSERT_TRUE(silent);
  auto options = options_for(local_port(silent->get()), Protocol::udp, 4);
  options.timeout = 800ms;
  options.reply_timeout = 5s;  // longer than the deadline: the deadline must still win
  auto started = std::chrono::steady_clock::now();
  auto report = run_flow_probe(options);
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(report);
  EXPECT_EQ(report->verdict, Verdict::fail);
  EXPECT_EQ(report->flows[0].error, FlowError::timed_out);
  EXPECT_EQ(report->flows[0].received, 0);
  // The deadline (800 ms) won over the 5 s reply timeout. Compared with the bound that lost,
  // not with the deadline plus a margin: a busy machine may add a few hundred ms of scheduling
  // delay without changing which bound stopped the probe.
  EXPECT_LT(took, 4s);
}

TEST(FlowProbeLoopback, TcpHandshakeWithoutEchoFailsWithinTheHardDeadline) {
  // Given a TCP listener that never accepts or echoes, then the flows time out within the
  // deadline and the probe fails.
  auto listener = bound_socket(SOCK_STREAM, *parse_ipv4("127.0.0.1", 0));
  ASSERT_TRUE(listener);
  ASSERT_EQ(::listen(listener->get(), 16), 0);
  auto options = options_for(local_port(listener->get()), Protocol::tcp, 3);
  options.timeout = 700ms;
  auto started = std::chrono::steady_clock::now();
  auto report = run_flow_probe(options);
  ASSERT_TRUE(report);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1000ms);
  EXPECT_EQ(report->verdict, Verdict::fail);
  EXPECT_EQ(report->flows[0].sent, 3);
  EXPECT_EQ(report->flows[0].received, 0);
}

FlowProbeOptions icmp_to(const std::string& target, int count) {
  FlowProbeOptions options;
  options.target = target;
  options.protocol = Protocol::icmp;
  options.count = count;
  options.packets_per_flow = 3;
  options.spacing = 5ms;
  options.timeout = 3s;
  options.reply_timeout = 300ms;
  return options;
}

TEST(FlowProbeLoopback, IcmpEchoToLoopbackPassesWithEveryByteVerified) {
  // Given 127.0.0.1 and no responder (the kernel answers echo requests), then 4 icmp flows of
  // 64-byte payloads and 4 of 1472-byte payloads with don't-fragment set complete, each with
  // its own echo identifier, nothing corrupted; the JSON says icmp, no port, and the socket
  // kind. Only where this process may open neither a ping socket (the group range) nor a raw
  // one (root) is there nothing to run.
  auto report = run_flow_probe(icmp_to("127.0.0.1", 4));
  if (!report && ::geteuid() != 0)
    GTEST_SKIP() << "no ICMP socket for this user: " << report.error().message;
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::pass) << report->reason;
  ASSERT_TRUE(report->icmp_socket);
  std::set<std::uint16_t> identifiers;
  for (const auto& flow : report->flows) {
    identifiers.insert(flow.src_port);
    EXPECT_EQ(flow.received, 3);
    EXPECT_EQ(flow.corrupted, 0);
  }
  EXPECT_EQ(identifiers.size(), 4u);
  auto document = to_json(*report);
  EXPECT_EQ(document["protocol"], "icmp");
  EXPECT_TRUE(document["port"].is_null());
  EXPECT_EQ(document["icmp_socket"], to_string(*report->icmp_socket));
  auto full_size = icmp_to("127.0.0.1", 4);
  full_size.size = 1472;
  auto full = run_flow_probe(full_size);
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(full->verdict, Verdict::pass) << full->reason;
  EXPECT_EQ(to_json(*full)["dont_fragment"], true);
}

// An ICMP echo request with `identifier` and an empty payload, checksum included.
std::array<std::uint8_t, 8> echo_request(std::uint16_t identifier) {
  std::array<std::uint8_t, 8> request{8,
                                      0,
                                      0,
                                      0,
                                      static_cast<std::uint8_t>(identifier >> 8),
                                      static_cast<std::uint8_t>(identifier & 0xff),
                                      0,
                                      1};
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < request.size(); i += 2)
    sum += static_cast<std::uint32_t>(request[i] << 8 | request[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  request[2] = static_cast<std::uint8_t>((~sum >> 8) & 0xff);
  request[3] = static_cast<std::uint8_t>(~sum & 0xff);
  return request;
}

TEST(FlowProbeLoopback, ARawIcmpFlowQueuesOnlyItsOwnEchoReplies) {
  // Given a raw ICMP socket filtered for identifier 0x1234 (root only), when it sends an echo
  // request with another identifier and then one with its own to 127.0.0.1, then the only
  // packet it receives is the echo reply to its own: not the other reply, and not the requests
  // a raw socket on loopback also sees. Unfiltered, every flow's queue held every flow's
  // replies, and 256 raw flows overflowed their queues and failed on an intact loopback.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a raw socket";
  auto raw = icmp_socket(IcmpSocketKind::raw);
  ASSERT_TRUE(raw) << raw.error().message;
  auto target = *parse_ipv4("127.0.0.1", 0);
  ASSERT_EQ(::connect(raw->fd.get(), reinterpret_cast<const sockaddr*>(&target), sizeof target), 0);
  ASSERT_EQ(keep_only_echo_replies(raw->fd.get(), 0x1234), 0);
  for (std::uint16_t identifier : {std::uint16_t{0x4321}, std::uint16_t{0x1234}}) {
    auto request = echo_request(identifier);
    ASSERT_EQ(::send(raw->fd.get(), request.data(), request.size(), 0), 8);
  }
  std::vector<std::pair<int, int>> received;  // ICMP type, identifier
  std::array<std::uint8_t, 256> packet{};
  // Loopback delivers in order: whatever the filter let through ahead of the own reply is
  // queued by the time the own reply is, so the wait ends with it (at most 5 s) and the queue
  // is then read empty.
  const std::pair<int, int> own_reply{0, 0x1234};
  const auto until = std::chrono::steady_clock::now() + 5s;
  bool own_seen = false;
  while (std::chrono::steady_clock::now() < until) {
    pollfd ready{raw->fd.get(), POLLIN, 0};
    if (::poll(&ready, 1, own_seen ? 0 : 50) <= 0) {
      if (own_seen) break;
      continue;
    }
    ssize_t n = ::recv(raw->fd.get(), packet.data(), packet.size(), 0);
    if (n < 28) continue;
    const std::size_t icmp = (packet[0] & 0x0f) * 4u;
    received.emplace_back(packet[icmp], packet[icmp + 4] << 8 | packet[icmp + 5]);
    own_seen = own_seen || received.back() == own_reply;
  }
  EXPECT_EQ(received, (std::vector<std::pair<int, int>>{{0, 0x1234}}));
}

TEST(FlowProbeLoopback, IcmpRunsOverBothSocketKindsAndFailsWhereEchoRequestsAreDropped) {
  // Given a private network namespace (root only): a raw socket's flows to 127.0.0.1 pass; with
  // net.ipv4.ping_group_range opened to group 0 a ping socket is used and passes; and once an
  // nftables rule drops echo requests (an ICMP-only filter: UDP still crosses), the icmp probe
  // fails with every flow timed out, while a udp probe to a responder still passes.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNET) != 0) ::_exit(10);
    if (std::system("ip link set lo up") != 0) ::_exit(11);
    auto raw = icmp_to("127.0.0.1", 4);
    raw.icmp_socket = IcmpSocketKind::raw;
    auto over_raw = run_flow_probe(raw);
    if (!over_raw || over_raw->verdict != Verdict::pass) ::_exit(12);
    if (over_raw->icmp_socket != IcmpSocketKind::raw) ::_exit(13);
    {
      std::ofstream range("/proc/sys/net/ipv4/ping_group_range");
      range << "0 0\n";
    }
    auto over_ping = run_flow_probe(icmp_to("127.0.0.1", 4));
    if (!over_ping || over_ping->verdict != Verdict::pass) ::_exit(14);
    if (over_ping->icmp_socket != IcmpSocketKind::ping) ::_exit(15);
    if (std::system("command -v nft >/dev/null") != 0) ::_exit(20);
    if (std::system("nft add table ip fgtest && nft add chain ip fgtest input '{ type filter hook "
                    "input priority 0; policy accept; }' && nft add rule ip fgtest input icmp "
                    "type echo-request drop") != 0)
      ::_exit(16);
    auto dropped_options = icmp_to("127.0.0.1", 4);
    dropped_options.timeout = 800ms;
    auto dropped = run_flow_probe(dropped_options);
    if (!dropped || dropped->verdict != Verdict::fail) ::_exit(17);
    for (const auto& flow : dropped->flows)
      if (flow.error != FlowError::timed_out || flow.received != 0) ::_exit(18);
    RunningResponder responder;
    if (!responder.error().empty()) ::_exit(11);
    auto udp = run_flow_probe(options_for(responder.port(), Protocol::udp, 4));
    if (!udp || udp->verdict != Verdict::pass) ::_exit(19);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 20) GTEST_SKIP() << "nft is not installed: no ICMP-only filter";
  // 12/13: the raw socket's probe did not pass or used another kind; 14/15: the same for the
  // ping socket; 16: the nftables rule could not be added; 17/18: the icmp probe did not fail
  // with every flow timed out behind the filter; 19: udp did not pass beside it.
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

WatchOptions watch_options(std::uint16_t port) {
  WatchOptions options;
  options.target = "127.0.0.1";
  options.port = port;
  options.count = 4;
  options.interval = 50ms;
  options.max_duration = 5s;
  options.reply_timeout = 100ms;
  options.max_interruption = 200ms;
  return options;
}

TEST(WatchLoopback, StopFlagEndsTheWatchWithAnUninterruptedReport) {
  // Given a healthy responder and a watch stopped after about 600 ms, then it reports the stop
  // as a signal, samples at the 50 ms interval and no interruption. On a host busy enough to
  // stall the sampler it may have no evidence (naming the stall), never a failure.
  RunningResponder responder;
  ASSERT_TRUE(responder.error().empty()) << responder.error();
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(600ms);
    stop = true;
  });
  auto report = run_watch(watch_options(responder.port()), stop);
  stopper.join();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->stopped);
  EXPECT_NE(report->verdict, Verdict::fail) << report->reason;
  const bool on_schedule = report->stalls.count == 0;
  if (on_schedule) {
    EXPECT_EQ(report->verdict, Verdict::pass) << report->reason;
  }
  for (const auto& flow : report->flows) {
    if (on_schedule) {
      EXPECT_GE(flow.sent, 10);
    }
    EXPECT_EQ(flow.received, flow.sent);
    EXPECT_FALSE(flow.interruptions.longest);
  }
}

TEST(WatchLoopback, AResponderNotServingWhileTheProbesWaitIsItsStallNotAnInterruption) {
  // Given a responder whose socket is open but whose process only starts serving after 300 ms
  // (the probes wait in its receive buffer, as behind a responder that is not scheduled), with
  // a 1 s reply timeout, then no flow reports an interruption, the report names a stall of the
  // responder's of about 300 ms, and against a 200 ms allowance the watch has no evidence (an
  // outage that long could have hidden in it): never a failure of the paths. Before the
  // responder reported its residence, every flow read 300 ms interrupted and the watch failed.
  RunningResponder responder(300ms);
  ASSERT_TRUE(responder.error().empty()) << responder.error();
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(1000ms);
    stop = true;
  });
  auto options = watch_options(responder.port());
  options.reply_timeout = 1s;
  auto report = run_watch(options, stop);
  stopper.join();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::no_evidence) << report->reason;
  EXPECT_NE(report->reason.find("the responder's"), std::string::npos) << report->reason;
  EXPECT_GE(report->stalls.responder_count, 1);
  ASSERT_TRUE(report->stalls.longest);
  EXPECT_GE(report->stalls.longest->length, 250ms);
  EXPECT_GT(report->echoes_with_residence, 0);
  for (const auto& flow : report->flows) {
    EXPECT_FALSE(flow.interruptions.longest) << "flow " << flow.src_port;
    EXPECT_EQ(flow.received, flow.sent);
  }
  auto document = to_json(*report);
  EXPECT_EQ(document["longest_interruption_ms"], 0);
  EXPECT_EQ(document["responder_stall_count"], report->stalls.responder_count);
}

TEST(WatchLoopback, ResponderStartingLateShowsAsOneMeasuredInterruption) {
  // Given a responder that only starts answering after 500 ms, longer than the 100 ms reply
  // timeout (the probes of its first 400 ms are judged lost before any echo could say the
  // responder held them: docs/probes.md, Limits), then each flow shows one interruption of
  // about 500 ms that began when the watch started, and the watch fails against a 200 ms
  // allowance.
  RunningResponder responder(500ms);
  ASSERT_TRUE(responder.error().empty()) << responder.error();
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(1200ms);
    stop = true;
  });
  auto report = run_watch(watch_options(responder.port()), stop);
  stopper.join();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::fail) << report->reason;
  for (const auto& flow : report->flows) {
    ASSERT_TRUE(flow.interruptions.longest);
    EXPECT_FALSE(flow.interruptions.longest->ongoing);
    EXPECT_GE(flow.interruptions.longest->length, 350ms);
    EXPECT_LE(flow.interruptions.longest->length, 800ms);
    EXPECT_LE(flow.interruptions.longest->started_at - report->started_at, 60ms);
    EXPECT_GT(flow.received, 0);
  }
  auto document = to_json(*report);
  EXPECT_GE(document["longest_interruption_ms"].get<long long>(), 350);
  EXPECT_EQ(document["stopped_by"], "signal");
}

TEST(WatchLoopback, SaysItIsSamplingOnceEveryFlowIsAnsweredLongBeforeItStops) {
  // Given a healthy responder and a watch stopped after about 600 ms, then the watch says
  // exactly once that it is sampling, within its first few ticks (not at the stop), and the
  // report records when.
  RunningResponder responder;
  ASSERT_TRUE(responder.error().empty()) << responder.error();
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(600ms);
    stop = true;
  });
  int calls = 0;
  bool stopped_when_called = true;
  auto report = run_watch(watch_options(responder.port()), stop, [&] {
    ++calls;
    stopped_when_called = stop.load();
  });
  stopper.join();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(stopped_when_called);
  ASSERT_TRUE(report->sampling_since);
  EXPECT_LE(*report->sampling_since - report->started_at, 300ms);
}

// A UDP echo peer that holds every datagram for `slow_delay` during its first `slow_for`, then
// echoes at once; it reports no residence, so the watch bills the hold to the path.
class SlowThenPromptEcho {
 public:
  SlowThenPromptEcho(std::chrono::milliseconds slow_for, std::chrono::milliseconds slow_delay)
      : socket_(bound_socket(SOCK_DGRAM, *parse_ipv4("127.0.0.1", 0))) {
    if (!socket_) return;
    const auto prompt_from = std::chrono::steady_clock::now() + slow_for;
    thread_ = std::thread([this, prompt_from, slow_delay] {
      struct Held {
        std::chrono::steady_clock::time_point due;
        std::vector<char> data;
        sockaddr_in peer;
      };
      std::vector<Held> held;
      while (!stop_) {
        pollfd fd{socket_->get(), POLLIN, 0};
        ::poll(&fd, 1, 2);
        const auto now = std::chrono::steady_clock::now();
        std::array<char, 2048> buffer;
        sockaddr_in peer{};
        socklen_t length = sizeof peer;
        ssize_t n = ::recvfrom(socket_->get(), buffer.data(), buffer.size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&peer), &length);
        if (n > 0)
          held.push_back({now < prompt_from ? now + slow_delay : now,
                          std::vector<char>(buffer.data(), buffer.data() + n), peer});
        for (auto it = held.begin(); it != held.end();) {
          if (it->due > std::chrono::steady_clock::now()) {
            ++it;
            continue;
          }
          ::sendto(socket_->get(), it->data.data(), it->data.size(), 0,
                   reinterpret_cast<const sockaddr*>(&it->peer), sizeof it->peer);
          it = held.erase(it);
        }
      }
    });
  }
  ~SlowThenPromptEcho() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return static_cast<bool>(socket_); }
  std::uint16_t port() const { return local_port(socket_->get()); }

 private:
  Expected<Fd, SocketError> socket_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(WatchLoopback, LateEchoesAreNotAWorkingBaselineToSaySamplingOn) {
  // Given a peer whose echoes take 75 ms for its first 500 ms (within the 100 ms reply timeout,
  // past the 50 ms late bound) and come back at once after that, then the watch says it is
  // sampling only once echoes come back within the late bound: a path slow from the start is
  // not the working baseline a change would be judged against.
  SlowThenPromptEcho peer(500ms, 75ms);
  ASSERT_TRUE(peer.ok());
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(3s);
    stop = true;
  });
  int calls = 0;
  auto report = run_watch(watch_options(peer.port()), stop, [&] { ++calls; });
  stopper.join();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(calls, 1);
  ASSERT_TRUE(report->sampling_since);
  EXPECT_GE(*report->sampling_since - report->started_at, 400ms);
}

TEST(WatchLoopback, NeverSaysItIsSamplingWhenNoFlowIsAnswered) {
  // Given a UDP peer that receives but never answers, then the watch never says it is
  // sampling and its report has no sampling time: whoever started it must not proceed.
  auto silent = bound_socket(SOCK_DGRAM, *parse_ipv4("127.0.0.1", 0));
  ASSERT_TRUE(silent);
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(400ms);
    stop = true;
  });
  int calls = 0;
  auto report = run_watch(watch_options(local_port(silent->get())), stop, [&] { ++calls; });
  stopper.join();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(report->sampling_since);
  EXPECT_EQ(report->verdict, Verdict::no_evidence);
}

}  // namespace
}  // namespace fabgate::flows
