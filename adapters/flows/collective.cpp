#include "adapters/flows/collective.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "adapters/flows/pattern.h"

namespace fabgate::flows {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kMaxRanks = 256;
constexpr std::size_t kMaxSize = 256u << 20;
constexpr int kMaxIterations = 100000;

// Every message starts with this header: a chunk that arrives from the wrong rank, for the
// wrong iteration or step, is an error rather than a fast iteration.
enum class Kind : std::uint32_t {
  hello = 0x46474348,
  barrier = 0x46474342,
  go = 0x46474347,
  data = 0x46474344
};
constexpr std::size_t kHeader = 16;

struct Header {
  Kind kind = Kind::data;
  std::uint32_t a = 0;  // hello: rank count; barrier/go/data: iteration
  std::uint32_t b = 0;  // hello: channel; go: the run id; data: step
  std::uint32_t sender = 0;
};

void encode(const Header& header, std::byte* out) {
  const std::uint32_t words[4] = {static_cast<std::uint32_t>(header.kind), header.a, header.b,
                                  header.sender};
  std::memcpy(out, words, kHeader);
}

Header decode(const std::byte* in) {
  std::uint32_t words[4];
  std::memcpy(words, in, kHeader);
  return Header{static_cast<Kind>(words[0]), words[1], words[2], words[3]};
}

std::string describe(const Header& h) {
  return "kind " + std::to_string(static_cast<std::uint32_t>(h.kind)) + " iteration " +
         std::to_string(h.a) + " step " + std::to_string(h.b) + " from rank " +
         std::to_string(h.sender);
}

// Rank 0's run id: a chunk of another run (a replay, a stale buffer on some box on the path)
// does not pass for one of this run. Falls back to the clock where the system has no entropy
// source; it need not be secret, only differ between runs.
std::uint32_t draw_run_id() {
  try {
    return std::random_device{}();
  } catch (const std::exception&) {
    return static_cast<std::uint32_t>(mix64(
        static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count())));
  }
}

// One peer's side of an exchange: bytes still to send to it and to receive from it.
struct Transfer {
  int peer = 0;
  int fd = -1;
  const std::byte* out = nullptr;
  std::size_t out_left = 0;
  std::byte* in = nullptr;
  std::size_t in_left = 0;
};

class Rank {
 public:
  Rank(const CollectiveOptions& options, const std::atomic<bool>& stop)
      : options_(options),
        stop_(stop),
        n_(static_cast<int>(options.ranks.size())),
        run_id_(options.rank == 0 ? draw_run_id() : 0) {}

  Expected<bool, SocketError> listen();
  std::optional<std::string> connect_mesh(Clock::time_point deadline);
  std::optional<std::string> barrier(std::uint32_t iteration, Clock::time_point deadline);
  // Writes the pattern of this iteration's chunks to each receiver, before its barrier, so that
  // filling them is not in the iteration's time.
  void prepare(std::uint32_t iteration);
  std::optional<std::string> iterate(std::uint32_t iteration);
  // When the last byte of the last iteration's chunks arrived (its end, for its timing).
  Clock::time_point last_received() const { return last_received_; }
  void finish(std::uint32_t iterations, Clock::time_point deadline);
  ChunkIntegrity integrity() const {
    ChunkIntegrity integrity = integrity_;
    integrity.run_id = run_id_;
    return integrity;
  }

 private:
  std::string peer_name(int peer) const {
    return "rank " + std::to_string(peer) + " (" + options_.ranks[peer].address + ")";
  }
  enum class Until { all, first_received };
  std::optional<std::string> exchange(std::vector<Transfer>& transfers, Clock::time_point deadline,
                                      milliseconds budget, Until until = Until::all);
  std::optional<std::string> connect_to(int peer, int channel, Clock::time_point deadline);
  // The slice of a chunk that `channel` carries.
  std::pair<std::size_t, std::size_t> slice(std::size_t chunk, int channel) const {
    const auto k = static_cast<std::size_t>(options_.channels);
    const auto c = static_cast<std::size_t>(channel);
    return {chunk * c / k, chunk * (c + 1) / k};
  }
  void stamp(std::vector<std::byte>& chunk, std::uint32_t iteration, std::uint32_t step) const;
  // Checks every byte of a chunk from `sender` (the headers at its slices' starts, the pattern
  // everywhere else) and counts it in integrity_.
  void verify_chunk(const std::vector<std::byte>& chunk, std::uint32_t iteration,
                    std::uint32_t step, int sender);
  std::optional<std::string> accept_from_higher(Clock::time_point deadline);
  std::optional<std::string> check(const std::byte* bytes, Kind kind, std::uint32_t a,
                                   std::uint32_t b, int sender) const;

  const CollectiveOptions& options_;
  const std::atomic<bool>& stop_;
  int n_;
  Fd listener_;
  // Bytes of releases still on their way over the other channels from rank 0 (the first one
  // to arrive released this rank): discarded before the next read on that socket.
  std::map<int, std::size_t> stale_;
  std::map<int, std::vector<Fd>> peers_;  // every other rank: `channels` connections
  // Drawn by rank 0, learnt by the others from the start barrier's release (iteration 0).
  std::uint32_t run_id_;
  // The buffers live as long as the rank: allocating them every iteration cost page faults
  // within the iteration's time (14,000 on rank 0 of a 100-iteration ring, measured).
  std::map<int, std::vector<std::byte>> out_;            // this iteration's, to each receiver
  std::vector<std::vector<std::byte>> ring_received_;    // ring: one per step, or fewer
  std::map<int, std::vector<std::byte>> received_from_;  // all-to-all: one per sender
  Clock::time_point last_received_;
  ChunkIntegrity integrity_;
};

Expected<bool, SocketError> Rank::listen() {
  const auto& self = options_.ranks[options_.rank];
  auto address = parse_ipv4(self.address, self.port);
  if (!address) return SocketError{SocketFailure::invalid_address, "bad address " + self.address};
  auto fd = bound_socket(SOCK_STREAM, *address);
  if (!fd) return fd.error();
  if (::listen(fd->get(), kMaxRanks) != 0) {
    return SocketError{SocketFailure::listen,
                       "listen " + format_endpoint(*address) + ": " + std::strerror(errno)};
  }
  listener_ = std::move(*fd);
  return true;
}

// Sends and receives everything in `transfers` at once (a ring step's send to the successor
// and receive from the predecessor may be the same socket), within `deadline`.
std::optional<std::string> Rank::exchange(std::vector<Transfer>& transfers,
                                          Clock::time_point deadline, milliseconds budget,
                                          Until until) {
  std::array<std::byte, kHeader> scratch;
  std::vector<pollfd> pollfds;
  std::vector<Transfer*> polled;
  while (true) {
    pollfds.clear();
    polled.clear();
    for (auto& t : transfers) {
      short events = 0;
      if (t.out_left > 0) events |= POLLOUT;
      if (t.in_left > 0) events |= POLLIN;
      if (events == 0) continue;
      pollfds.push_back(pollfd{t.fd, events, 0});
      polled.push_back(&t);
    }
    if (pollfds.empty()) return std::nullopt;
    if (until == Until::first_received && pollfds.size() < transfers.size()) return std::nullopt;
    if (stop_.load()) return std::string("stopped");
    const auto now = Clock::now();
    if (now >= deadline) {
      const Transfer& late = *polled.front();
      return std::string(late.in_left > 0 ? "receive from " : "send to ") + peer_name(late.peer) +
             " timed out after " + std::to_string(budget.count()) + " ms";
    }
    const int timeout = static_cast<int>(
        std::min<long long>(std::chrono::ceil<milliseconds>(deadline - now).count(), 100));
    if (::poll(pollfds.data(), pollfds.size(), timeout) < 0 && errno != EINTR)
      return std::string("poll: ") + std::strerror(errno);
    for (std::size_t i = 0; i < pollfds.size(); ++i) {
      Transfer& t = *polled[i];
      const short revents = pollfds[i].revents;
      if (revents & (POLLERR | POLLNVAL)) {
        int error = 0;
        socklen_t length = sizeof error;
        ::getsockopt(t.fd, SOL_SOCKET, SO_ERROR, &error, &length);
        return "connection to " + peer_name(t.peer) + ": " +
               (error ? std::strerror(error) : "socket error");
      }
      if ((revents & POLLOUT) && t.out_left > 0) {
        ssize_t n = ::send(t.fd, t.out, t.out_left, MSG_NOSIGNAL);
        if (n > 0) {
          t.out += n;
          t.out_left -= static_cast<std::size_t>(n);
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          return "send to " + peer_name(t.peer) + ": " + std::strerror(errno);
        }
      }
      if ((revents & (POLLIN | POLLHUP)) && t.in_left > 0) {
        auto stale = stale_.find(t.fd);
        const bool skipping = stale != stale_.end() && stale->second > 0;
        ssize_t n = skipping ? ::recv(t.fd, scratch.data(), std::min(stale->second, kHeader), 0)
                             : ::recv(t.fd, t.in, t.in_left, 0);
        if (skipping && n > 0) {
          stale->second -= static_cast<std::size_t>(n);
          continue;
        }
        if (n > 0) {
          t.in += n;
          t.in_left -= static_cast<std::size_t>(n);
        } else if (n == 0) {
          return "connection closed by " + peer_name(t.peer);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          return "receive from " + peer_name(t.peer) + ": " + std::strerror(errno);
        }
      }
    }
  }
}

std::optional<std::string> Rank::check(const std::byte* bytes, Kind kind, std::uint32_t a,
                                       std::uint32_t b, int sender) const {
  Header got = decode(bytes);
  if (got.kind == kind && got.a == a && got.b == b &&
      got.sender == static_cast<std::uint32_t>(sender))
    return std::nullopt;
  Header want{kind, a, b, static_cast<std::uint32_t>(sender)};
  return "out-of-order or corrupt message from " + peer_name(sender) + ": got " + describe(got) +
         ", expected " + describe(want);
}

void Rank::stamp(std::vector<std::byte>& chunk, std::uint32_t iteration, std::uint32_t step) const {
  for (int c = 0; c < options_.channels; ++c)
    encode(Header{Kind::data, iteration, step, static_cast<std::uint32_t>(options_.rank)},
           chunk.data() + slice(chunk.size(), c).first);
}

void Rank::verify_chunk(const std::vector<std::byte>& chunk, std::uint32_t iteration,
                        std::uint32_t step, int sender) {
  const auto from = static_cast<std::uint32_t>(sender);
  const std::uint64_t seed =
      chunk_seed(run_id_, from, static_cast<std::uint32_t>(options_.rank), iteration);
  std::array<std::byte, kHeader> header;
  encode(Header{Kind::data, iteration, step, from}, header.data());
  std::optional<CorruptChunk> corrupt;
  for (int c = 0; c < options_.channels && !corrupt; ++c) {
    const auto [begin, end] = slice(chunk.size(), c);
    for (std::size_t i = 0; i < kHeader; ++i) {
      if (chunk[begin + i] != header[i]) {
        corrupt = CorruptChunk{sender, iteration, step, begin + i, header[i], chunk[begin + i]};
        break;
      }
    }
    if (corrupt) break;
    if (auto offset = first_pattern_mismatch(chunk.data(), begin + kHeader, end, seed)) {
      const std::byte expected = pattern_byte(seed, *offset);
      corrupt = CorruptChunk{sender, iteration, step, *offset, expected, chunk[*offset]};
    }
  }
  ++integrity_.chunks_received;
  if (!corrupt) return;
  ++integrity_.corrupted_chunks;
  ++integrity_.corrupted_by_sender[sender];
  if (!integrity_.first) integrity_.first = *corrupt;
}

std::optional<std::string> Rank::connect_to(int peer, int channel, Clock::time_point deadline) {
  auto address = parse_ipv4(options_.ranks[peer].address, options_.ranks[peer].port);
  if (!address) return "bad address for " + peer_name(peer);
  std::string last = "not attempted";
  // The peer may not be listening yet (fabgate starts the ranks one SSH session each): retry
  // refused connects until the setup deadline.
  while (Clock::now() < deadline) {
    if (stop_.load()) return std::string("stopped");
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return std::string("socket: ") + std::strerror(errno);
    int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof *address);
    if (rc != 0 && errno != EINPROGRESS) {
      last = std::strerror(errno);
      std::this_thread::sleep_for(milliseconds(100));
      continue;
    }
    pollfd p{fd.get(), POLLOUT, 0};
    const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
    if (::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 1000))) <= 0) {
      last = "no answer";
      continue;
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      last = std::strerror(error);
      std::this_thread::sleep_for(milliseconds(100));
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::vector<std::byte> hello(kHeader);
    encode(Header{Kind::hello, static_cast<std::uint32_t>(n_), static_cast<std::uint32_t>(channel),
                  static_cast<std::uint32_t>(options_.rank)},
           hello.data());
    std::vector<Transfer> transfers{Transfer{peer, fd.get(), hello.data(), hello.size()}};
    if (auto failure = exchange(transfers, deadline, options_.setup_timeout)) return failure;
    auto& channels = peers_[peer];
    channels.resize(static_cast<std::size_t>(options_.channels));
    channels[static_cast<std::size_t>(channel)] = std::move(fd);
    return std::nullopt;
  }
  return "connect to " + peer_name(peer) + " " + format_endpoint(*address) + ": " + last +
         " (gave up after " + std::to_string(options_.setup_timeout.count()) + " ms)";
}

std::optional<std::string> Rank::accept_from_higher(Clock::time_point deadline) {
  const int expected = (n_ - 1 - options_.rank) * options_.channels;
  int accepted = 0;
  while (accepted < expected) {
    if (stop_.load()) return std::string("stopped");
    const auto now = Clock::now();
    if (now >= deadline) {
      std::string missing;
      for (int peer = options_.rank + 1; peer < n_; ++peer) {
        auto known = peers_.find(peer);
        const bool complete =
            known != peers_.end() && std::all_of(known->second.begin(), known->second.end(),
                                                 [](const Fd& fd) { return fd.valid(); });
        if (!complete) missing += (missing.empty() ? "" : ", ") + peer_name(peer);
      }
      return "no connection from " + missing + " within " +
             std::to_string(options_.setup_timeout.count()) + " ms";
    }
    pollfd p{listener_.get(), POLLIN, 0};
    const auto left = std::chrono::ceil<milliseconds>(deadline - now).count();
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100))) <= 0) continue;
    Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) continue;
    std::vector<std::byte> hello(kHeader);
    std::vector<Transfer> transfers{Transfer{-1, fd.get(), nullptr, 0, hello.data(), kHeader}};
    const auto hello_by = std::min(deadline, Clock::now() + options_.op_timeout);
    if (exchange(transfers, hello_by, options_.op_timeout)) continue;  // a stray connection
    Header h = decode(hello.data());
    const int peer = static_cast<int>(h.sender);
    const auto channel = static_cast<std::size_t>(h.b);
    if (h.kind != Kind::hello || h.a != static_cast<std::uint32_t>(n_) || peer <= options_.rank ||
        peer >= n_ || channel >= static_cast<std::size_t>(options_.channels))
      continue;
    auto& channels = peers_[peer];
    channels.resize(static_cast<std::size_t>(options_.channels));
    if (channels[channel].valid()) continue;  // a duplicate
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    channels[channel] = std::move(fd);
    ++accepted;
  }
  return std::nullopt;
}

// Every rank connects to the ranks below it and accepts the ranks above it: a full mesh, one
// TCP connection per pair, each used in both directions.
std::optional<std::string> Rank::connect_mesh(Clock::time_point deadline) {
  for (int peer = 0; peer < options_.rank; ++peer)
    for (int channel = 0; channel < options_.channels; ++channel)
      if (auto failure = connect_to(peer, channel, deadline)) return failure;
  return accept_from_higher(deadline);
}

// Rank 0 waits for every other rank's arrival and then releases them all; iteration k starts
// on every rank within about one one-way latency of the others.
std::optional<std::string> Rank::barrier(std::uint32_t iteration, Clock::time_point deadline) {
  const auto budget = std::chrono::ceil<milliseconds>(deadline - Clock::now());
  const std::uint32_t self = static_cast<std::uint32_t>(options_.rank);
  if (options_.rank == 0) {
    std::map<int, std::vector<std::byte>> arrived;
    std::vector<Transfer> transfers;
    for (auto& [peer, channels] : peers_) {
      auto& buffer = arrived[peer];
      buffer.resize(kHeader);
      transfers.push_back(Transfer{peer, channels[0].get(), nullptr, 0, buffer.data(), kHeader});
    }
    if (auto failure = exchange(transfers, deadline, budget)) return "barrier: " + *failure;
    for (auto& [peer, buffer] : arrived)
      if (auto failure = check(buffer.data(), Kind::barrier, iteration, 0, peer)) return failure;
    std::vector<std::byte> go(kHeader);
    encode(Header{Kind::go, iteration, run_id_, self}, go.data());
    transfers.clear();
    // The release goes out on every channel and the first to arrive counts: one packet dropped
    // on one path must not hold a rank back and bill its lateness to every other rank.
    for (auto& [peer, channels] : peers_)
      for (auto& fd : channels) transfers.push_back(Transfer{peer, fd.get(), go.data(), kHeader});
    if (auto failure = exchange(transfers, deadline, budget)) return "barrier: " + *failure;
    return std::nullopt;
  }
  std::vector<std::byte> arrive(kHeader);
  encode(Header{Kind::barrier, iteration, 0, self}, arrive.data());
  std::vector<Transfer> transfers{Transfer{0, peers_.at(0)[0].get(), arrive.data(), kHeader}};
  if (auto failure = exchange(transfers, deadline, budget)) return "barrier: " + *failure;
  const auto& channels = peers_.at(0);
  std::vector<std::byte> go(kHeader * channels.size());
  transfers.clear();
  for (std::size_t c = 0; c < channels.size(); ++c)
    transfers.push_back(
        Transfer{0, channels[c].get(), nullptr, 0, go.data() + c * kHeader, kHeader});
  if (auto failure = exchange(transfers, deadline, budget, Until::first_received))
    return "barrier: " + *failure;
  bool released = false;
  for (std::size_t c = 0; c < channels.size(); ++c) {
    if (transfers[c].in_left == 0) {
      const std::byte* release = go.data() + c * kHeader;
      if (iteration == 0 && !released) run_id_ = decode(release).b;
      if (auto failure = check(release, Kind::go, iteration, run_id_, 0)) return failure;
      released = true;
    } else {
      stale_[channels[c].get()] += transfers[c].in_left;
    }
  }
  if (!released) return std::string("barrier: no release from rank 0");
  return std::nullopt;
}

void Rank::prepare(std::uint32_t iteration) {
  const std::size_t chunk = chunk_size(options_);
  const auto self = static_cast<std::uint32_t>(options_.rank);
  auto fill = [&](int receiver) {
    auto& out = out_[receiver];
    out.resize(chunk);
    fill_pattern(out.data(), 0, chunk,
                 chunk_seed(run_id_, self, static_cast<std::uint32_t>(receiver), iteration));
  };
  if (options_.pattern == CollectivePattern::ring) {
    fill((options_.rank + 1) % n_);
  } else {
    for (const auto& [peer, channels] : peers_) fill(peer);
  }
}

std::optional<std::string> Rank::iterate(std::uint32_t iteration) {
  const std::size_t chunk = chunk_size(options_);
  // Adds the transfers of one peer: each channel carries its slice of the chunk.
  auto add = [&](std::vector<Transfer>& transfers, int peer, std::vector<std::byte>* out,
                 std::byte* in) {
    for (int c = 0; c < options_.channels; ++c) {
      const auto [begin, end] = slice(chunk, c);
      transfers.push_back(Transfer{peer, peers_.at(peer)[static_cast<std::size_t>(c)].get(),
                                   out ? out->data() + begin : nullptr, out ? end - begin : 0,
                                   in ? in + begin : nullptr, in ? end - begin : 0});
    }
  };
  if (options_.pattern == CollectivePattern::ring) {
    const int successor = (options_.rank + 1) % n_;
    const int predecessor = (options_.rank + n_ - 1) % n_;
    auto& out = out_.at(successor);
    const std::uint32_t steps = 2 * static_cast<std::uint32_t>(n_ - 1);
    // Every step's chunk is kept and checked once the iteration's last byte arrived, so that
    // checking is not in the iteration's time. Only where the iteration's chunks exceed
    // deferred_check_bytes is a buffer reused, and the chunk in it checked first, within it.
    const std::size_t slots =
        std::clamp<std::size_t>(options_.deferred_check_bytes / chunk, 1, steps);
    ring_received_.resize(slots);
    for (auto& buffer : ring_received_) buffer.resize(chunk);
    std::uint32_t verified = 0;  // steps [0, verified) are checked
    auto verify_through = [&](std::uint32_t end) {
      for (; verified < end; ++verified)
        verify_chunk(ring_received_[verified % slots], iteration, verified, predecessor);
    };
    for (std::uint32_t step = 0; step < steps; ++step) {
      if (step >= slots) verify_through(static_cast<std::uint32_t>(step + 1 - slots));
      std::byte* in = ring_received_[step % slots].data();
      stamp(out, iteration, step);
      std::vector<Transfer> transfers;
      if (successor == predecessor) {
        add(transfers, successor, &out, in);
      } else {
        add(transfers, successor, &out, nullptr);
        add(transfers, predecessor, nullptr, in);
      }
      // The next step cannot start before this one's chunk arrived (a ring all-reduce
      // forwards what it received).
      const auto deadline = Clock::now() + options_.op_timeout;
      if (auto failure = exchange(transfers, deadline, options_.op_timeout)) {
        verify_through(step);  // what did arrive is evidence too
        return "step " + std::to_string(step) + ": " + *failure;
      }
    }
    last_received_ = Clock::now();
    verify_through(steps);
    return std::nullopt;
  }
  std::vector<Transfer> transfers;
  for (auto& [peer, channels] : peers_) {
    auto& buffer = received_from_[peer];
    buffer.resize(chunk);
    stamp(out_.at(peer), iteration, 0);
    add(transfers, peer, &out_.at(peer), buffer.data());
  }
  if (auto failure = exchange(transfers, Clock::now() + options_.op_timeout, options_.op_timeout))
    return failure;
  last_received_ = Clock::now();
  for (auto& [peer, buffer] : received_from_) verify_chunk(buffer, iteration, 0, peer);
  return std::nullopt;
}

// After the last iteration: one more barrier, so that no rank closes while a slower one still
// reads its last chunk, then an orderly close (FIN, and whatever is still in flight read and
// dropped until the peer's FIN). Closing with unread bytes (a release copy still on its way)
// would send a reset that destroys the data a peer has not read yet. Its failures are not the
// run's: every iteration is already measured.
void Rank::finish(std::uint32_t iterations, Clock::time_point deadline) {
  (void)barrier(iterations + 1, deadline);
  std::vector<pollfd> open;
  for (auto& [peer, channels] : peers_)
    for (auto& fd : channels) {
      ::shutdown(fd.get(), SHUT_WR);
      open.push_back(pollfd{fd.get(), POLLIN, 0});
    }
  const auto until = Clock::now() + options_.op_timeout;
  std::array<std::byte, 4096> scratch;
  while (!open.empty() && Clock::now() < until) {
    const auto left = std::chrono::ceil<milliseconds>(until - Clock::now()).count();
    if (::poll(open.data(), open.size(), static_cast<int>(std::clamp<long long>(left, 0, 100))) <
            0 &&
        errno != EINTR)
      return;
    for (auto it = open.begin(); it != open.end();) {
      if (it->revents == 0) {
        ++it;
        continue;
      }
      const ssize_t n = ::recv(it->fd, scratch.data(), scratch.size(), 0);
      if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) {
        it->revents = 0;
        ++it;
      } else {
        it = open.erase(it);  // the peer's FIN (or an error): nothing more will come
      }
    }
  }
}

}  // namespace

std::optional<std::string> corruption_summary(int rank, const ChunkIntegrity& integrity) {
  if (integrity.corrupted_chunks == 0 || !integrity.first) return std::nullopt;
  const CorruptChunk& first = *integrity.first;
  std::string senders;
  for (const auto& [sender, count] : integrity.corrupted_by_sender)
    senders += (senders.empty() ? "" : ", ") + std::to_string(sender);
  const bool one_sender = integrity.corrupted_by_sender.size() == 1;
  auto hex = [](std::byte value) {
    static constexpr char kDigits[] = "0123456789abcdef";
    const auto v = std::to_integer<unsigned>(value);
    return std::string{'0', 'x', kDigits[v >> 4], kDigits[v & 15]};
  };
  return "rank " + std::to_string(rank) + " received " +
         std::to_string(integrity.corrupted_chunks) + " of " +
         std::to_string(integrity.chunks_received) + " chunks corrupted from rank" +
         (one_sender ? " " : "s ") + senders + ", first at byte " + std::to_string(first.offset) +
         (one_sender ? "" : " from rank " + std::to_string(first.sender)) + " (iteration " +
         std::to_string(first.iteration) + " step " + std::to_string(first.step) + ": " +
         hex(first.received) + " where " + hex(first.expected) + " was sent)";
}

std::string_view to_string(CollectivePattern pattern) {
  return pattern == CollectivePattern::ring ? "ring" : "all-to-all";
}

std::size_t chunk_size(const CollectiveOptions& options) {
  const std::size_t n = std::max<std::size_t>(1, options.ranks.size());
  const auto channels = static_cast<std::size_t>(std::max(1, options.channels));
  return std::max(kHeader * channels, (options.size + n - 1) / n);
}

std::vector<std::string> validate(const CollectiveOptions& options) {
  std::vector<std::string> problems;
  const int n = static_cast<int>(options.ranks.size());
  if (n < 2 || n > kMaxRanks) problems.push_back("the rank table needs 2-256 ranks");
  if (options.rank < 0 || options.rank >= n)
    problems.push_back("rank " + std::to_string(options.rank) + " is not in the rank table");
  for (std::size_t i = 0; i < options.ranks.size(); ++i) {
    const auto& entry = options.ranks[i];
    if (!parse_ipv4(entry.address, entry.port) || entry.port == 0)
      problems.push_back("rank " + std::to_string(i) + ": '" + entry.address + ":" +
                         std::to_string(entry.port) + "' is not an IPv4 address and port");
  }
  if (options.size < 1 || options.size > kMaxSize) problems.push_back("size must be 1 B-256 MiB");
  if (options.iterations < 1 || options.iterations > kMaxIterations)
    problems.push_back("iterations must be 1-" + std::to_string(kMaxIterations));
  if (options.channels < 1 || options.channels > 16) problems.push_back("channels must be 1-16");
  if (options.op_timeout < milliseconds(10) || options.op_timeout > milliseconds(60000))
    problems.push_back("op timeout must be 10ms-60s");
  if (options.setup_timeout < milliseconds(100) || options.setup_timeout > milliseconds(300000))
    problems.push_back("setup timeout must be 100ms-5m");
  return problems;
}

Expected<CollectiveReport, SocketError> run_collective(const CollectiveOptions& options,
                                                       const std::atomic<bool>& stop,
                                                       const std::function<void()>& on_listening) {
  Rank rank(options, stop);
  if (auto listening = rank.listen(); !listening) return listening.error();
  if (on_listening) on_listening();
  CollectiveReport report;
  report.options = options;
  const auto setup_deadline = Clock::now() + options.setup_timeout;
  // Corruption leads the errors: it is the finding, and a timeout after it may be its effect.
  auto integrity_first = [&] {
    report.integrity = rank.integrity();
    if (auto corrupted = corruption_summary(options.rank, report.integrity))
      report.errors.insert(report.errors.begin(), *corrupted);
  };
  auto record = [&](std::string what) {
    report.stopped = stop.load();
    report.errors.push_back(std::move(what));
    integrity_first();
    return report;
  };
  if (auto failure = rank.connect_mesh(setup_deadline)) return record("setup: " + *failure);
  // The start barrier (iteration 0) waits for the slowest rank to finish connecting, and its
  // release hands every rank the run id its chunks' patterns derive from. Later ones wait for
  // the slowest rank to finish its previous iteration (at most one op timeout behind).
  if (auto failure = rank.barrier(0, setup_deadline + options.op_timeout))
    return record("setup: " + *failure);
  auto barrier_deadline = Clock::now() + 2 * options.op_timeout;
  for (int i = 1; i <= options.iterations; ++i) {
    const auto iteration = static_cast<std::uint32_t>(i);
    rank.prepare(iteration);
    if (auto failure = rank.barrier(iteration, barrier_deadline))
      return record("iteration " + std::to_string(i) + ": " + *failure);
    const auto released = Clock::now();
    if (i == 1) report.started_at = now_utc();
    if (auto failure = rank.iterate(iteration))
      return record("iteration " + std::to_string(i) + ": " + *failure);
    const auto took = rank.last_received() - released;
    report.iteration_ms.push_back(std::chrono::duration<double, std::milli>(took).count());
    barrier_deadline = Clock::now() + 2 * options.op_timeout;
  }
  rank.finish(static_cast<std::uint32_t>(options.iterations), barrier_deadline);
  integrity_first();
  return report;
}

}  // namespace fabgate::flows
