#include "adapters/flows/responder.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <list>
#include <optional>
#include <span>
#include <vector>

#include "adapters/flows/wire.h"

namespace fabgate::flows {

namespace {

using Clock = std::chrono::steady_clock;

// A peer that reads nothing back cannot make the responder buffer without limit.
constexpr std::size_t kMaxPendingBytes = 1 << 20;

// See prepare_datagrams.
constexpr int kDatagramReceiveBuffer = 8 << 20;

struct Connection {
  Fd fd;
  std::vector<std::byte> pending;  // echo bytes the socket did not accept yet
  bool closed = false;
};

// Writes as much of `pending` as the socket takes now.
void flush(Connection& connection, ResponderStats& stats) {
  while (!connection.pending.empty()) {
    ssize_t n = ::send(connection.fd.get(), connection.pending.data(), connection.pending.size(),
                       MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      connection.closed = true;
      return;
    }
    stats.tcp_bytes_echoed += static_cast<std::uint64_t>(n);
    connection.pending.erase(connection.pending.begin(), connection.pending.begin() + n);
  }
}

void echo_stream(Connection& connection, ResponderStats& stats) {
  std::array<std::byte, 16384> buffer;
  while (!connection.closed) {
    ssize_t n = ::recv(connection.fd.get(), buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      connection.closed = true;
      break;
    }
    connection.pending.insert(connection.pending.end(), buffer.begin(), buffer.begin() + n);
    if (connection.pending.size() > kMaxPendingBytes) connection.closed = true;
  }
  if (!connection.closed) flush(connection, stats);
}

// The kernel's receive stamp of a datagram (CLOCK_REALTIME), when it gave one.
std::optional<std::int64_t> receive_stamp_ns(const msghdr& header) {
  for (cmsghdr* c = CMSG_FIRSTHDR(const_cast<msghdr*>(&header)); c != nullptr;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&header), c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec stamp{};
    std::memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
    return static_cast<std::int64_t>(stamp.tv_sec) * 1'000'000'000 + stamp.tv_nsec;
  }
  return std::nullopt;
}

void echo_datagrams(int fd, ResponderStats& stats) {
  std::array<std::byte, 65536> buffer;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(timespec)) * 2> control;
  for (int budget = 0; budget < 4096; ++budget) {  // yield to TCP now and then under load
    sockaddr_in peer{};
    iovec io{buffer.data(), buffer.size()};
    msghdr header{};
    header.msg_name = &peer;
    header.msg_namelen = sizeof peer;
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    header.msg_control = control.data();
    header.msg_controllen = control.size();
    ssize_t n = ::recvmsg(fd, &header, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or an ICMP error queued from an earlier echo: nothing to do
    }
    const auto datagram = std::span(buffer.data(), static_cast<std::size_t>(n));
    // A watch probe asks how long it sat here (wire.h): from the kernel's stamp to just before
    // the echo leaves. A stamp later than the clock (a wall-clock step) answers nothing.
    if (auto received = receive_stamp_ns(header)) {
      timespec now{};
      ::clock_gettime(CLOCK_REALTIME, &now);
      const std::int64_t residence =
          static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec - *received;
      if (residence >= 0) answer_residence(datagram, static_cast<std::uint64_t>(residence));
    }
    if (::sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<const sockaddr*>(&peer),
                 header.msg_namelen) == n) {
      ++stats.udp_datagrams_echoed;
    }
  }
}

// What the datagram socket needs: receive stamps for the watch's residence question, and a
// receive buffer deep enough that a responder not scheduled for a while (a busy host) holds
// the probes that arrive meanwhile instead of dropping them: a held probe is answered with its
// residence, so the watch can tell the hold from the path, while a dropped one is only a lost
// sample. 64 watch flows at 10 ms send about 19,000 probes a second, which fill the default
// 208 KiB in about 10 ms; 8 MiB holds about 400 ms of them. As root the kernel's limit
// (net.core.rmem_max) is overridden; otherwise the buffer is as large as that limit allows.
void prepare_datagrams(int fd) {
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  const int bytes = kDatagramReceiveBuffer;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

}  // namespace

Expected<Responder, SocketError> Responder::open(const ResponderOptions& options) {
  auto address = parse_ipv4(options.listen, options.port);
  if (!address) {
    return SocketError{SocketFailure::invalid_address,
                       "listen address '" + options.listen + "' is not an IPv4 address"};
  }
  // With port 0 the kernel picks the TCP port; the UDP socket must then take the same number,
  // which another program may hold for UDP, so a few fresh picks are tried.
  const int attempts = options.port == 0 ? 8 : 1;
  SocketError last{SocketFailure::bind, "no attempt"};
  for (int attempt = 0; attempt < attempts; ++attempt) {
    address->sin_port = htons(options.port);
    auto listener = bound_socket(SOCK_STREAM, *address);
    if (!listener) return std::move(listener).error();
    if (::listen(listener->get(), 1024) != 0) {
      return SocketError{SocketFailure::listen, std::string("listen: ") + std::strerror(errno)};
    }
    std::uint16_t port = local_port(listener->get());
    address->sin_port = htons(port);
    auto datagrams = bound_socket(SOCK_DGRAM, *address);
    if (datagrams) {
      prepare_datagrams(datagrams->get());
      return Responder(options, std::move(listener).value(), std::move(datagrams).value(), port);
    }
    last = std::move(datagrams).error();
  }
  return last;
}

std::string Responder::endpoint() const {
  auto address = parse_ipv4(options_.listen, port_);
  return address ? format_endpoint(*address) : options_.listen;
}

ResponderStats Responder::serve(const std::atomic<bool>& stop) {
  ResponderStats stats;
  const auto started = Clock::now();
  const auto end = started + options_.lifetime;
  std::list<Connection> connections;
  std::vector<pollfd> pollfds;
  std::vector<Connection*> polled;

  while (true) {
    auto now = Clock::now();
    if (stop.load()) {
      stats.stopped = true;
      break;
    }
    if (now >= end) break;
    connections.remove_if([](const Connection& c) { return c.closed; });

    pollfds.assign({pollfd{listener_.get(), POLLIN, 0}, pollfd{datagrams_.get(), POLLIN, 0}});
    polled.clear();
    for (auto& connection : connections) {
      short events = POLLIN;
      if (!connection.pending.empty()) events |= POLLOUT;
      pollfds.push_back(pollfd{connection.fd.get(), events, 0});
      polled.push_back(&connection);
    }
    auto remaining = std::chrono::ceil<std::chrono::milliseconds>(end - now).count();
    int timeout = static_cast<int>(std::clamp<long long>(remaining, 0, 100));
    if (::poll(pollfds.data(), pollfds.size(), timeout) <= 0) continue;

    if (pollfds[0].revents & POLLIN) {
      while (true) {
        Fd accepted(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!accepted.valid()) break;
        ++stats.tcp_connections;
        if (static_cast<int>(connections.size()) >= options_.max_connections) continue;  // closed
        connections.push_back(Connection{std::move(accepted), {}, false});
      }
    }
    if (pollfds[1].revents & POLLIN) echo_datagrams(datagrams_.get(), stats);
    for (std::size_t i = 2; i < pollfds.size(); ++i) {
      Connection& connection = *polled[i - 2];
      if (pollfds[i].revents & (POLLIN | POLLHUP | POLLERR)) echo_stream(connection, stats);
      if ((pollfds[i].revents & POLLOUT) && !connection.closed) flush(connection, stats);
    }
  }
  stats.ran_for = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return stats;
}

}  // namespace fabgate::flows
