#include "tests/support/test_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <utility>

namespace fabgate::testing {
namespace {

// The kernel's ephemeral range; Linux's default when it cannot be read.
std::pair<int, int> ephemeral_range() {
  std::ifstream file("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  int high = 60999;
  if (!(file >> low >> high) || low < 1 || high < low || high > 65535) return {32768, 60999};
  return {low, high};
}

// Ports the kernel never hands out: the largest stretch below or above the ephemeral range,
// starting above the well-known and commonly configured service ports.
std::pair<int, int> candidate_range() {
  auto [low, high] = ephemeral_range();
  constexpr int kFirst = 20000;
  const int below = low - 1 - kFirst;
  const int above = 65535 - (high + 1);
  if (below >= above && below > 1000) return {kFirst, low - 1};
  if (above > 1000) return {high + 1, 65535};
  return {0, 0};  // an unusual range: fall back to the kernel's choice
}

bool bindable(int type, const in_addr& address, int port) {
  int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  socket_address.sin_addr = address;
  socket_address.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&socket_address), sizeof socket_address) == 0;
  ::close(fd);
  return ok;
}

// Claims `port` among fabgate test processes; the descriptor stays open (and the claim held)
// until the process exits.
bool claim(int port) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un name{};
  name.sun_family = AF_UNIX;
  char text[64];
  int length = std::snprintf(text, sizeof text, "fabgate-test-port-%d", port);
  std::memcpy(name.sun_path + 1, text, static_cast<std::size_t>(length));  // abstract: leading NUL
  auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&name), size) != 0) {
    ::close(fd);
    return false;
  }
  return true;  // deliberately kept open
}

int kernel_choice(const in_addr& address) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  socket_address.sin_addr = address;
  socklen_t size = sizeof socket_address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&socket_address), sizeof socket_address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&socket_address), &size) == 0)
    port = ntohs(socket_address.sin_port);
  ::close(fd);
  return port;
}

}  // namespace

int reserve_test_port(const std::string& address) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  in_addr parsed{};
  if (::inet_pton(AF_INET, address.c_str(), &parsed) != 1) return 0;
  auto [first, last] = candidate_range();
  if (first == 0) return kernel_choice(parsed);
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> pick(first, last);
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = pick(random);
    if (!bindable(SOCK_STREAM, parsed, port) || !bindable(SOCK_DGRAM, parsed, port)) continue;
    if (claim(port)) return port;
  }
  return 0;
}

LoopbackListener listen_on_loopback(int backlog) {
  LoopbackListener listener;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return listener;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, backlog) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    ::close(fd);
    return listener;
  }
  listener.fd = fd;
  listener.port = ntohs(address.sin_port);
  return listener;
}

}  // namespace fabgate::testing
