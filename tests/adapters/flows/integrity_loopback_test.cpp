// The flow probe's payload check against echo servers on 127.0.0.1 that deliver every packet
// but not every byte: each test's server changes what it echoes in one precise way, and the
// probe must fail naming the flow, the count and the first wrong byte. Real sockets, ports the
// kernel picks.

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "adapters/flows/flow_probe.h"
#include "adapters/flows/report_json.h"
#include "adapters/flows/responder.h"
#include "adapters/flows/wire.h"

namespace fabgate::flows {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::byte>;

// Every server loop ends when its test ends, and at the latest after this long.
constexpr auto kServerLifetime = 30s;

// A UDP echo server that hands each datagram, numbered in arrival order from 0, to `tamper`
// before echoing it to its sender. Stopped and joined on scope exit, even when an assertion
// fails first.
class TamperingUdpEcho {
 public:
  using Tamper = std::function<void(Bytes& datagram, const sockaddr_in& sender, int number)>;

  explicit TamperingUdpEcho(Tamper tamper) : tamper_(std::move(tamper)) {
    auto bound = bound_socket(SOCK_DGRAM, *parse_ipv4("127.0.0.1", 0));
    if (!bound) return;
    fd_ = std::move(bound).value();
    thread_ = std::thread([this] { serve(); });
  }
  ~TamperingUdpEcho() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::uint16_t port() const { return fd_.valid() ? local_port(fd_.get()) : 0; }

 private:
  void serve() {
    const auto until = std::chrono::steady_clock::now() + kServerLifetime;
    int number = 0;
    Bytes buffer(65536);
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      pollfd ready{fd_.get(), POLLIN, 0};
      if (::poll(&ready, 1, 20) <= 0) continue;
      sockaddr_in sender{};
      socklen_t length = sizeof sender;
      ssize_t n = ::recvfrom(fd_.get(), buffer.data(), buffer.size(), 0,
                             reinterpret_cast<sockaddr*>(&sender), &length);
      if (n < 0) continue;
      Bytes datagram(buffer.begin(), buffer.begin() + n);
      tamper_(datagram, sender, number++);
      ::sendto(fd_.get(), datagram.data(), datagram.size(), 0,
               reinterpret_cast<const sockaddr*>(&sender), sizeof sender);
    }
  }

  Tamper tamper_;
  Fd fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A TCP echo server that echoes each connection's stream, handing every chunk it reads to
// `tamper` with the chunk's offset in that connection's stream and the connection's number
// (in accept order, from 0).
class TamperingTcpEcho {
 public:
  using Tamper = std::function<void(Bytes& chunk, std::size_t stream_offset, int connection)>;

  explicit TamperingTcpEcho(Tamper tamper) : tamper_(std::move(tamper)) {
    auto bound = bound_socket(SOCK_STREAM, *parse_ipv4("127.0.0.1", 0));
    if (!bound || ::listen(bound->get(), 64) != 0) return;
    listener_ = std::move(bound).value();
    thread_ = std::thread([this] { serve(); });
  }
  ~TamperingTcpEcho() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::uint16_t port() const { return listener_.valid() ? local_port(listener_.get()) : 0; }

 private:
  struct Connection {
    Fd fd;
    std::size_t offset = 0;
    int number = 0;
  };

  void serve() {
    const auto until = std::chrono::steady_clock::now() + kServerLifetime;
    std::vector<Connection> connections;
    Bytes buffer(65536);
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      std::vector<pollfd> ready{{listener_.get(), POLLIN, 0}};
      for (const auto& connection : connections) ready.push_back({connection.fd.get(), POLLIN, 0});
      if (::poll(ready.data(), ready.size(), 20) <= 0) continue;
      if (ready[0].revents != 0) {
        Fd accepted(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (accepted.valid())
          connections.push_back({std::move(accepted), 0, static_cast<int>(connections.size())});
      }
      for (std::size_t i = 1; i < ready.size(); ++i) {
        if (ready[i].revents == 0) continue;
        Connection& connection = connections[i - 1];
        ssize_t n = ::recv(connection.fd.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (n <= 0) continue;
        Bytes chunk(buffer.begin(), buffer.begin() + n);
        tamper_(chunk, connection.offset, connection.number);
        connection.offset += chunk.size();
        ::send(connection.fd.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL);
      }
    }
  }

  Tamper tamper_;
  Fd listener_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

FlowProbeOptions probe_of(std::uint16_t port, Protocol protocol, int flows, int packets) {
  FlowProbeOptions options;
  options.target = "127.0.0.1";
  options.port = port;
  options.protocol = protocol;
  options.count = flows;
  options.packets_per_flow = packets;
  options.spacing = 5ms;
  options.timeout = 3s;
  options.reply_timeout = 300ms;
  return options;
}

// The index of the first flow that saw a corrupted echo, -1 when none did.
int first_corrupted_flow(const FlowProbeReport& report) {
  for (std::size_t i = 0; i < report.flows.size(); ++i)
    if (report.flows[i].corrupted > 0) return static_cast<int>(i);
  return -1;
}

int total_corrupted(const FlowProbeReport& report) {
  int total = 0;
  for (const auto& flow : report.flows) total += flow.corrupted;
  return total;
}

TEST(FlowIntegrityLoopback, OneFlippedPaddingByteInOneDatagramOfSevenFailsTheProbe) {
  // Given an echo server that flips one bit of byte 812 (deep in the padding) of every 7th
  // datagram it echoes, and 4 flows of 5 datagrams of 1000 bytes (20 in all), then the 7th and
  // the 14th echoes are corrupted: the probe fails, and its reason counts 2 of 20 datagrams and
  // names the first flow that saw one and byte 812; every such flow counts it, the report's
  // summary too, and none of them completed. Before every byte was verified this passed.
  TamperingUdpEcho server([](Bytes& datagram, const sockaddr_in&, int number) {
    if (number % 7 == 6 && datagram.size() > 812) datagram[812] ^= std::byte{0x10};
  });
  ASSERT_NE(server.port(), 0);
  auto options = probe_of(server.port(), Protocol::udp, 4, 5);
  options.size = 1000;
  auto report = run_flow_probe(options);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::fail) << report->reason;
  const int named = first_corrupted_flow(*report);
  ASSERT_GE(named, 0) << report->reason;
  EXPECT_EQ(report->reason,
            "2 of 20 datagrams corrupted on flow " + std::to_string(named) +
                " (to 127.0.0.1:" + std::to_string(server.port()) + "), first at byte 812" +
                (report->flows[named].corrupted == 2 ? "" : ", and on 1 more flow"));
  EXPECT_EQ(total_corrupted(*report), 2);
  for (const auto& flow : report->flows) {
    if (flow.corrupted == 0) continue;
    EXPECT_EQ(flow.first_corrupt_offset, std::optional<std::size_t>(812));
    EXPECT_FALSE(flow.completed);
    EXPECT_EQ(flow.error, FlowError::corrupted);
    EXPECT_EQ(flow.received, 5 - flow.corrupted);
  }
  auto document = to_json(*report);
  EXPECT_EQ(document["summary"]["corrupted"], 2);
  EXPECT_EQ(document["summary"]["sent"], 20);
  EXPECT_EQ(document["flows"][named]["first_corrupt_offset"], 812);
  EXPECT_EQ(document["flows"][named]["error"], "corrupted");
}

TEST(FlowIntegrityLoopback, ATruncatedEchoIsCorruptedAtItsEnd) {
  // Given an echo server that drops the last byte of the 3rd datagram it echoes (default
  // 64-byte messages), then that echo counts as corrupted at byte 63 and the probe fails.
  TamperingUdpEcho server([](Bytes& datagram, const sockaddr_in&, int number) {
    if (number == 2) datagram.pop_back();
  });
  ASSERT_NE(server.port(), 0);
  auto report = run_flow_probe(probe_of(server.port(), Protocol::udp, 2, 3));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::fail) << report->reason;
  EXPECT_EQ(total_corrupted(*report), 1);
  const int named = first_corrupted_flow(*report);
  ASSERT_GE(named, 0);
  EXPECT_EQ(report->flows[named].first_corrupt_offset, std::optional<std::size_t>(63));
}

TEST(FlowIntegrityLoopback, AnEchoCarryingAnotherFlowsDatagramIsCaught) {
  // Given an echo server that, once, answers a flow with the datagram it had just received
  // from another flow (a swap between flows: the right size, a valid magic, often the same
  // sequence and even the same stamp, since flows send in the same instant), then the flow
  // that got it counts one corrupted echo, wrong at the latest at byte 16, the first pattern
  // byte (the pattern carries the flow), and the probe fails.
  bool swapped = false;
  Bytes previous;
  in_port_t previous_sender = 0;
  TamperingUdpEcho server([&](Bytes& datagram, const sockaddr_in& sender, int) {
    Bytes received = datagram;
    if (!swapped && !previous.empty() && previous_sender != sender.sin_port &&
        previous.size() == datagram.size()) {
      datagram = previous;
      swapped = true;
    }
    previous = std::move(received);
    previous_sender = sender.sin_port;
  });
  ASSERT_NE(server.port(), 0);
  auto report = run_flow_probe(probe_of(server.port(), Protocol::udp, 4, 3));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::fail) << report->reason;
  EXPECT_EQ(total_corrupted(*report), 1);
  const int named = first_corrupted_flow(*report);
  ASSERT_GE(named, 0);
  ASSERT_TRUE(report->flows[named].first_corrupt_offset);
  EXPECT_LE(*report->flows[named].first_corrupt_offset, FlowMessage::kHeaderSize);
}

TEST(FlowIntegrityLoopback, ARightHeaderOverAnotherSequencesPayloadIsCaughtAtTheFirstPatternByte) {
  // Given an echo server that, once, echoes a flow's second datagram with its own header but
  // the payload of that flow's first (a payload from another sequence behind a right header),
  // then that echo is corrupted at byte 16, the first pattern byte, and the probe fails.
  bool spliced = false;
  std::vector<std::pair<in_port_t, Bytes>> firsts;
  TamperingUdpEcho server([&](Bytes& datagram, const sockaddr_in& sender, int) {
    for (const auto& [port, first] : firsts) {
      if (port != sender.sin_port || spliced) continue;
      std::copy(first.begin() + FlowMessage::kHeaderSize, first.end(),
                datagram.begin() + FlowMessage::kHeaderSize);
      spliced = true;
      return;
    }
    if (!spliced) firsts.emplace_back(sender.sin_port, datagram);
  });
  ASSERT_NE(server.port(), 0);
  auto report = run_flow_probe(probe_of(server.port(), Protocol::udp, 2, 3));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::fail) << report->reason;
  EXPECT_EQ(total_corrupted(*report), 1);
  const int named = first_corrupted_flow(*report);
  ASSERT_GE(named, 0);
  EXPECT_EQ(report->flows[named].first_corrupt_offset,
            std::optional<std::size_t>(FlowMessage::kHeaderSize));
}

TEST(FlowIntegrityLoopback, AnIntactEchoPassesWithNothingCorrupted) {
  // Given the same kind of server changing nothing, and fabgate's own responder, then udp
  // flows (full-size and default messages) and tcp flows pass with 0 corrupted, a null first
  // offset, and tcp flows report their connect time.
  TamperingUdpEcho server([](Bytes&, const sockaddr_in&, int) {});
  ASSERT_NE(server.port(), 0);
  auto options = probe_of(server.port(), Protocol::udp, 4, 5);
  options.size = 1472;
  auto report = run_flow_probe(options);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::pass) << report->reason;
  EXPECT_EQ(total_corrupted(*report), 0);

  auto responder = Responder::open(ResponderOptions{"127.0.0.1", 0, 30s});
  ASSERT_TRUE(responder) << responder.error().message;
  std::atomic<bool> stop{false};
  std::thread serving([&] { responder->serve(stop); });
  auto udp = run_flow_probe(probe_of(responder->port(), Protocol::udp, 4, 5));
  auto tcp = run_flow_probe(probe_of(responder->port(), Protocol::tcp, 4, 5));
  stop = true;
  serving.join();
  ASSERT_TRUE(udp) << udp.error().message;
  ASSERT_TRUE(tcp) << tcp.error().message;
  EXPECT_EQ(udp->verdict, Verdict::pass) << udp->reason;
  EXPECT_EQ(tcp->verdict, Verdict::pass) << tcp->reason;
  auto document = to_json(*tcp);
  EXPECT_EQ(document["summary"]["corrupted"], 0);
  EXPECT_EQ(document["summary"]["sent"], 20);
  EXPECT_EQ(document["message_size"], FlowMessage::kDefaultSize);
  for (const auto& flow : document["flows"]) {
    EXPECT_EQ(flow["corrupted"], 0);
    EXPECT_TRUE(flow["first_corrupt_offset"].is_null());
    EXPECT_TRUE(flow["connect_ms"].is_number());
  }
  EXPECT_TRUE(to_json(*udp)["flows"][0]["connect_ms"].is_null());
}

TEST(FlowIntegrityLoopback, OneFlippedByteInATcpStreamFailsTheProbe) {
  // Given a TCP echo server that flips byte 50 of the third 64-byte message on its first
  // connection (stream offset 178), then that flow counts 1 corrupted message at byte 50, the
  // others are intact, and the probe fails with "1 of 20 messages corrupted on flow N".
  constexpr std::size_t kFlipped = 2 * FlowMessage::kDefaultSize + 50;
  TamperingTcpEcho server([](Bytes& chunk, std::size_t stream_offset, int connection) {
    if (connection == 0 && stream_offset <= kFlipped && kFlipped < stream_offset + chunk.size())
      chunk[kFlipped - stream_offset] ^= std::byte{0x01};
  });
  ASSERT_NE(server.port(), 0);
  auto report = run_flow_probe(probe_of(server.port(), Protocol::tcp, 4, 5));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, Verdict::fail) << report->reason;
  EXPECT_EQ(total_corrupted(*report), 1);
  const int named = first_corrupted_flow(*report);
  ASSERT_GE(named, 0);
  EXPECT_EQ(report->reason, "1 of 20 messages corrupted on flow " + std::to_string(named) +
                                " (to 127.0.0.1:" + std::to_string(server.port()) +
                                "), first at byte 50");
  EXPECT_EQ(report->flows[named].received, 4);
  EXPECT_EQ(report->flows[named].error, FlowError::corrupted);
}

}  // namespace
}  // namespace fabgate::flows
