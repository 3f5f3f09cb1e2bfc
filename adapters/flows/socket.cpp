#include "adapters/flows/socket.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace fabgate::flows {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

std::optional<sockaddr_in> parse_ipv4(std::string_view address, std::uint16_t port) {
  sockaddr_in result{};
  result.sin_family = AF_INET;
  result.sin_port = htons(port);
  std::string text(address);
  if (::inet_pton(AF_INET, text.c_str(), &result.sin_addr) != 1) return std::nullopt;
  return result;
}

std::string format_endpoint(const sockaddr_in& address) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address.sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(address.sin_port));
}

std::uint16_t local_port(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  return ntohs(address.sin_port);
}

int set_dont_fragment(int fd) {
  int mode = IP_PMTUDISC_PROBE;
  return ::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &mode, sizeof mode) == 0 ? 0 : errno;
}

Expected<Fd, SocketError> bound_socket(int type, const sockaddr_in& address) {
  Fd fd(::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return SocketError{SocketFailure::create, std::string("socket: ") + std::strerror(errno)};
  }
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return SocketError{SocketFailure::bind,
                       "bind " + format_endpoint(address) + ": " + std::strerror(errno)};
  }
  return fd;
}

const char* to_string(IcmpSocketKind kind) {
  return kind == IcmpSocketKind::ping ? "ping" : "raw";
}

namespace {

// The group range that decides whether a ping socket is allowed, for the error message.
std::string ping_group_range() {
  std::ifstream file("/proc/sys/net/ipv4/ping_group_range");
  std::string low;
  std::string high;
  if (!(file >> low >> high)) return "unreadable";
  return low + " " + high;
}

}  // namespace

Expected<IcmpSocket, SocketError> icmp_socket(std::optional<IcmpSocketKind> kind) {
  std::string ping_failure;
  if (!kind || *kind == IcmpSocketKind::ping) {
    Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP));
    if (fd.valid()) return IcmpSocket{std::move(fd), IcmpSocketKind::ping};
    ping_failure = std::string("ping socket: ") + std::strerror(errno) +
                   " (net.ipv4.ping_group_range is '" + ping_group_range() + "', group " +
                   std::to_string(::getegid()) + ")";
    if (kind) return SocketError{SocketFailure::create, ping_failure};
  }
  Fd fd(::socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP));
  if (fd.valid()) return IcmpSocket{std::move(fd), IcmpSocketKind::raw};
  std::string raw_failure =
      std::string("raw socket: ") + std::strerror(errno) + " (needs root or CAP_NET_RAW)";
  return SocketError{SocketFailure::create,
                     ping_failure.empty() ? raw_failure : ping_failure + "; " + raw_failure};
}

int keep_only_echo_replies(int fd, std::uint16_t identifier) {
  // Classic BPF over the IPv4 packet a raw socket sees: X = the IP header's length, then the
  // ICMP type must be 0 (echo reply) and the identifier (loaded in network order) ours.
  sock_filter code[] = {
      BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),
      BPF_STMT(BPF_LD | BPF_B | BPF_IND, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
      BPF_STMT(BPF_LD | BPF_H | BPF_IND, 4),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, identifier, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0xffffffffU),
      BPF_STMT(BPF_RET | BPF_K, 0),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(code)), code};
  return ::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) == 0 ? 0 : errno;
}

}  // namespace fabgate::flows
