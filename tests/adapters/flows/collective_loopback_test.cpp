// The collective exchange with every rank as a thread on loopback addresses (127.0.0.x): real
// TCP sockets, real deadlines. The ranks' ports are picked free before the table is built, as
// fabgate picks them from its probes port.

#include "adapters/flows/collective.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "adapters/flows/report_json.h"
#include "tests/support/test_port.h"

namespace fabgate::flows {
namespace {

using namespace std::chrono_literals;

std::uint16_t free_port(const std::string& address) {
  return static_cast<std::uint16_t>(testing::reserve_test_port(address));
}

std::vector<RankEndpoint> rank_table(int ranks) {
  std::vector<RankEndpoint> table;
  for (int i = 0; i < ranks; ++i) {
    const std::string address = "127.0.0." + std::to_string(i + 1);
    table.push_back({address, free_port(address)});
  }
  return table;
}

CollectiveOptions options_for(const std::vector<RankEndpoint>& table, CollectivePattern pattern) {
  CollectiveOptions options;
  options.ranks = table;
  options.pattern = pattern;
  options.size = 64 * 1024;
  options.iterations = 20;
  options.op_timeout = 1000ms;
  options.setup_timeout = 3000ms;
  return options;
}

// Runs ranks `running` of the table (the others never start), each in its own thread, with
// the options `for_rank` gives it (by default `base` with its rank set).
std::vector<std::optional<CollectiveReport>> run_ranks(
    const CollectiveOptions& base, const std::vector<int>& running, std::atomic<bool>& stop,
    const std::function<CollectiveOptions(int)>& for_rank = {}) {
  std::vector<std::optional<CollectiveReport>> reports(base.ranks.size());
  std::vector<std::thread> threads;
  for (int rank : running) {
    threads.emplace_back([&, rank] {
      CollectiveOptions options = for_rank ? for_rank(rank) : base;
      options.rank = rank;
      auto report = run_collective(options, stop);
      if (report) reports[static_cast<std::size_t>(rank)] = *report;
    });
  }
  for (auto& thread : threads) thread.join();
  return reports;
}

// A TCP forwarder standing in for one rank on the path from the ranks told to connect to it:
// it accepts their connections, connects each to the real rank, and passes bytes both ways,
// optionally flipping one byte of what one channel carries toward the real rank. The channel
// is read from the connection's hello (its third 32-bit word); `offset` counts the bytes after
// the hello. Every socket is shut down and every thread joined when it goes out of scope.
class Relay {
 public:
  struct Flip {
    std::uint32_t channel = 0;
    std::size_t offset = 0;
  };

  Relay(const RankEndpoint& listen_at, const RankEndpoint& target, std::optional<Flip> flip)
      : target_(target), flip_(flip) {
    auto address = parse_ipv4(listen_at.address, listen_at.port);
    if (!address) return;
    auto listener = bound_socket(SOCK_STREAM, *address);
    if (listener && ::listen(listener->get(), 16) == 0) {
      listener_ = std::move(*listener);
      acceptor_ = std::thread([this] { accept_loop(); });
    }
  }
  ~Relay() {
    stop_ = true;
    if (acceptor_.joinable()) acceptor_.join();                       // within one 100 ms poll
    for (const auto& fd : sockets_) ::shutdown(fd.get(), SHUT_RDWR);  // ends blocked pumps
    for (auto& thread : pumps_) thread.join();
  }
  bool listening() const { return listener_.valid(); }
  int flipped() const { return flipped_.load(); }

 private:
  static constexpr std::size_t kHello = 16;

  // Accepts for at most 10 s (the ranks connect within their 3 s setup timeout).
  void accept_loop() {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      pollfd p{listener_.get(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      Fd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client.valid()) continue;
      timeval five{5, 0};
      ::setsockopt(client.get(), SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
      std::byte hello[kHello];
      if (::recv(client.get(), hello, kHello, MSG_WAITALL) != static_cast<ssize_t>(kHello))
        continue;
      std::uint32_t channel = 0;
      std::memcpy(&channel, hello + 8, sizeof channel);
      Fd server = connect_target(until);
      if (!server.valid() ||
          ::send(server.get(), hello, kHello, MSG_NOSIGNAL) != static_cast<ssize_t>(kHello))
        continue;
      // Blocking reads that the destructor's shutdown ends; no receive timeout on the pumps.
      timeval none{0, 0};
      ::setsockopt(client.get(), SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
      // Forwarded at once, as the ranks send (Nagle would hold each 16-byte barrier message
      // for the previous segment's delayed ACK).
      int one = 1;
      for (const Fd* fd : {&client, &server})
        ::setsockopt(fd->get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::optional<std::size_t> flip_at;
      if (flip_ && flip_->channel == channel) flip_at = flip_->offset;
      const int from_rank = client.get();
      const int to_rank = server.get();
      sockets_.push_back(std::move(client));
      sockets_.push_back(std::move(server));
      pumps_.emplace_back(
          [this, from_rank, to_rank, flip_at] { pump(from_rank, to_rank, flip_at); });
      pumps_.emplace_back([this, from_rank, to_rank] { pump(to_rank, from_rank, std::nullopt); });
    }
  }

  // The real rank may not listen yet (the ranks start together): retried until `until`.
  Fd connect_target(std::chrono::steady_clock::time_point until) {
    auto address = parse_ipv4(target_.address, target_.port);
    while (address && !stop_ && std::chrono::steady_clock::now() < until) {
      Fd server(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (::connect(server.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof *address) ==
          0)
        return server;
      std::this_thread::sleep_for(20ms);
    }
    return Fd();
  }

  // Copies `from` to `to` until `from` ends, flipping every bit of byte `flip_at` on the way.
  void pump(int from, int to, std::optional<std::size_t> flip_at) {
    std::vector<std::byte> buffer(64 * 1024);
    std::size_t passed = 0;
    while (true) {
      const ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
      if (n <= 0) break;
      const auto got = static_cast<std::size_t>(n);
      if (flip_at && *flip_at >= passed && *flip_at < passed + got) {
        buffer[*flip_at - passed] ^= std::byte{0xff};
        ++flipped_;
      }
      passed += got;
      for (std::size_t sent = 0; sent < got;) {
        const ssize_t m = ::send(to, buffer.data() + sent, got - sent, MSG_NOSIGNAL);
        if (m <= 0) return;
        sent += static_cast<std::size_t>(m);
      }
    }
    ::shutdown(to, SHUT_WR);  // pass the end on: the ranks close in order after their last barrier
  }

  RankEndpoint target_;
  std::optional<Flip> flip_;
  Fd listener_;
  std::atomic<bool> stop_{false};
  std::atomic<int> flipped_{0};
  std::thread acceptor_;
  // Only the acceptor adds to these; the destructor reads them after joining it.
  std::vector<Fd> sockets_;
  std::vector<std::thread> pumps_;
};

TEST(CollectiveLoopback, RingOfThreeRanksCompletesEveryIteration) {
  // Given three ranks in a ring, then each completes all 20 iterations without errors and the
  // JSON carries one timing per iteration.
  auto table = rank_table(3);
  std::atomic<bool> stop{false};
  auto reports = run_ranks(options_for(table, CollectivePattern::ring), {0, 1, 2}, stop);
  for (const auto& report : reports) {
    ASSERT_TRUE(report);
    EXPECT_TRUE(report->errors.empty()) << report->errors.front();
    EXPECT_EQ(report->iteration_ms.size(), 20u);
    auto document = to_json(*report);
    EXPECT_EQ(document["verdict"], "pass");
    EXPECT_EQ(document["iteration_ms"].size(), 20u);
    EXPECT_EQ(document["chunk"], (64 * 1024 + 2) / 3);
  }
}

TEST(CollectiveLoopback, AllToAllOfFourRanksCompletesEveryIteration) {
  // Given four ranks exchanging all-to-all, then each completes all iterations without errors.
  auto table = rank_table(4);
  std::atomic<bool> stop{false};
  auto reports = run_ranks(options_for(table, CollectivePattern::all_to_all), {0, 1, 2, 3}, stop);
  for (const auto& report : reports) {
    ASSERT_TRUE(report);
    EXPECT_TRUE(report->errors.empty()) << report->errors.front();
    EXPECT_EQ(report->iteration_ms.size(), 20u);
  }
}

TEST(CollectiveLoopback, ARankThatNeverStartsIsAnErrorOnItsPeersWithinTheSetupDeadline) {
  // Given rank 2 of 3 never started, then ranks 0 and 1 stop with a setup error naming rank 2
  // within the 3 s setup deadline (plus one op timeout), and complete no iteration.
  auto table = rank_table(3);
  std::atomic<bool> stop{false};
  const auto started = std::chrono::steady_clock::now();
  auto reports = run_ranks(options_for(table, CollectivePattern::ring), {0, 1}, stop);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  for (int rank : {0, 1}) {
    ASSERT_TRUE(reports[rank]);
    ASSERT_FALSE(reports[rank]->errors.empty());
    EXPECT_NE(reports[rank]->errors.front().find("rank 2"), std::string::npos)
        << reports[rank]->errors.front();
    EXPECT_TRUE(reports[rank]->iteration_ms.empty());
    EXPECT_EQ(to_json(*reports[rank])["verdict"], "fail");
  }
}

// Two ranks in a ring, 2 channels, 64 KiB per iteration: each chunk is 32 KiB, striped as
// bytes [0, 16 KiB) on channel 0 and [16 KiB, 32 KiB) on channel 1. Rank 1 reaches rank 0
// through a relay (rank 1's table points rank 0 at it); after its hello, channel 1 carries
// only chunk data toward rank 0: 16 KiB of step 0, then 16 KiB of step 1, per iteration.
constexpr std::size_t kRelayedSlice = 16 * 1024;

std::vector<std::optional<CollectiveReport>> run_relayed_ring(
    std::optional<Relay::Flip> flip, int& flipped,
    std::size_t deferred_check_bytes = CollectiveOptions{}.deferred_check_bytes) {
  const auto table = rank_table(2);
  const RankEndpoint relay_at{"127.0.0.9", free_port("127.0.0.9")};
  CollectiveOptions base = options_for(table, CollectivePattern::ring);
  base.channels = 2;
  base.deferred_check_bytes = deferred_check_bytes;
  Relay relay(relay_at, table[0], flip);
  EXPECT_TRUE(relay.listening());
  std::atomic<bool> stop{false};
  auto reports = run_ranks(base, {0, 1}, stop, [&](int rank) {
    CollectiveOptions options = base;
    if (rank == 1) options.ranks[0] = relay_at;
    return options;
  });
  flipped = relay.flipped();
  return reports;
}

TEST(CollectiveLoopback, OneByteFlippedOnThePathFailsTheReceivingRankNamingSenderAndOffset) {
  // Given a relay between rank 1 and rank 0 that flips one byte of channel 1's data toward
  // rank 0: stream byte 2 x 32 KiB + 16 KiB + 796 after the hello, i.e. iteration 3, step 1,
  // byte 16 KiB + 796 = 17180 of that chunk (its payload, past the slice's 16-byte header),
  // then rank 0 fails with the corruption leading its reason (1 of its 40 chunks, from rank 1,
  // first at byte 17180) and in its JSON; it still completes every iteration, since TCP kept
  // the stream in step; and rank 1, whose chunks from rank 0 were untouched, passes.
  int flipped = 0;
  auto reports =
      run_relayed_ring(Relay::Flip{1, 2 * (2 * kRelayedSlice) + kRelayedSlice + 796}, flipped);
  ASSERT_EQ(flipped, 1);
  ASSERT_TRUE(reports[0]);
  ASSERT_TRUE(reports[1]);
  const auto receiver = to_json(*reports[0]);
  EXPECT_EQ(receiver["verdict"], "fail");
  const std::string reason = receiver["reason"];
  EXPECT_EQ(reason.rfind("rank 0 received 1 of 40 chunks corrupted from rank 1, first at byte "
                         "17180 (iteration 3 step 1: ",
                         0),
            0u)
      << reason;
  EXPECT_EQ(receiver["corrupted_chunks"], 1);
  EXPECT_EQ(receiver["chunks_received"], 40);
  EXPECT_EQ(receiver["first_corrupt_offset"], kRelayedSlice + 796);
  EXPECT_EQ(receiver["corrupted_from"], 1);
  EXPECT_EQ(receiver["completed_iterations"], 20);
  EXPECT_EQ(receiver["errors"].size(), 1u) << receiver["errors"].dump();
  const auto sender = to_json(*reports[1]);
  EXPECT_EQ(sender["verdict"], "pass") << sender["reason"];
  EXPECT_EQ(sender["corrupted_chunks"], 0);
  EXPECT_TRUE(sender["first_corrupt_offset"].is_null());
  EXPECT_TRUE(sender["corrupted_from"].is_null());
  EXPECT_EQ(sender["run_id"], receiver["run_id"]);
}

TEST(CollectiveLoopback, AFlipIsFoundAlsoWhereTheRingChecksEachChunkBeforeReusingItsBuffer) {
  // Given room to keep only one received chunk (as with a --size whose 2(N-1) chunks exceed
  // deferred_check_bytes), so that step 0's chunk is checked before step 1 reuses its buffer,
  // and the relay flipping byte 17180 of iteration 3's step 0 chunk (stream byte 2 x 32 KiB +
  // 796 on channel 1), then rank 0 reports that chunk, its sender and the offset.
  int flipped = 0;
  auto reports = run_relayed_ring(Relay::Flip{1, 2 * (2 * kRelayedSlice) + 796}, flipped, 1);
  ASSERT_EQ(flipped, 1);
  ASSERT_TRUE(reports[0]);
  const auto receiver = to_json(*reports[0]);
  EXPECT_EQ(receiver["verdict"], "fail");
  EXPECT_EQ(receiver["corrupted_chunks"], 1);
  EXPECT_EQ(receiver["chunks_received"], 40);
  EXPECT_EQ(receiver["first_corrupt_offset"], kRelayedSlice + 796);
  EXPECT_EQ(receiver["corrupted_from"], 1);
  const std::string reason = receiver["reason"];
  EXPECT_NE(reason.find("first at byte 17180 (iteration 3 step 0: "), std::string::npos) << reason;
}

TEST(CollectiveLoopback, TheSameRelayFlippingNothingPasses) {
  // Given the same relay between rank 1 and rank 0, flipping nothing, then both ranks pass
  // with every one of their 40 chunks checked and none corrupted: the relay itself does not
  // make the failure above.
  int flipped = 0;
  auto reports = run_relayed_ring(std::nullopt, flipped);
  EXPECT_EQ(flipped, 0);
  for (const auto& report : reports) {
    ASSERT_TRUE(report);
    const auto document = to_json(*report);
    EXPECT_EQ(document["verdict"], "pass") << document["reason"];
    EXPECT_EQ(document["chunks_received"], 40);
    EXPECT_EQ(document["corrupted_chunks"], 0);
  }
}

TEST(CollectiveLoopback, AllToAllCountsAFlippedByteFromTheRankThatSentIt) {
  // Given three ranks all-to-all, 2 channels, 64 KiB (chunks of 21846 B: channel 1 carries
  // bytes [10923, 21846)), and rank 2 reaching rank 1 through a relay that flips byte 4 x
  // 10923 + 100 of channel 1 after the hello (iteration 5, byte 11023 of its chunk), then rank
  // 1 fails naming rank 2 and byte 11023 of 40 chunks, and ranks 0 and 2 pass.
  const auto table = rank_table(3);
  const RankEndpoint relay_at{"127.0.0.9", free_port("127.0.0.9")};
  CollectiveOptions base = options_for(table, CollectivePattern::all_to_all);
  base.channels = 2;
  ASSERT_EQ(chunk_size(base), 21846u);
  std::optional<Relay> relay;
  relay.emplace(relay_at, table[1], Relay::Flip{1, 4 * 10923 + 100});
  ASSERT_TRUE(relay->listening());
  std::atomic<bool> stop{false};
  auto reports = run_ranks(base, {0, 1, 2}, stop, [&](int rank) {
    CollectiveOptions options = base;
    if (rank == 2) options.ranks[1] = relay_at;
    return options;
  });
  ASSERT_EQ(relay->flipped(), 1);
  relay.reset();
  for (const auto& report : reports) ASSERT_TRUE(report);
  const auto receiver = to_json(*reports[1]);
  EXPECT_EQ(receiver["verdict"], "fail");
  const std::string reason = receiver["reason"];
  EXPECT_EQ(reason.rfind("rank 1 received 1 of 40 chunks corrupted from rank 2, first at byte "
                         "11023 (iteration 5 step 0: ",
                         0),
            0u)
      << reason;
  EXPECT_EQ(receiver["first_corrupt_offset"], 11023);
  EXPECT_EQ(receiver["corrupted_from"], 2);
  for (int rank : {0, 2})
    EXPECT_EQ(to_json(*reports[rank])["verdict"], "pass") << to_json(*reports[rank])["reason"];
}

TEST(CollectiveLoopback, OptionsOutOfRangeAreAllReported) {
  // Given one rank, a rank index outside the table, no size, no iterations and a 1 ms op
  // timeout, then each problem is listed.
  CollectiveOptions options;
  options.ranks = {{"127.0.0.1", 7000}};
  options.rank = 3;
  options.size = 0;
  options.iterations = 0;
  options.op_timeout = 1ms;
  EXPECT_EQ(validate(options).size(), 5u);
}

}  // namespace
}  // namespace fabgate::flows
