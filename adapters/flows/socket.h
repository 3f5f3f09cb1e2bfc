#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/core/result.h"

namespace fabgate::flows {

// A move-only file descriptor: the probes open hundreds of sockets, and every early return
// must close them.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();

 private:
  int fd_ = -1;
};

// Why a socket could not be set up on this machine: the probe then has no evidence at all.
enum class SocketFailure { invalid_address, create, bind, listen };

struct SocketError {
  SocketFailure failure;
  std::string message;  // "bind 10.1.2.11:7000: Address already in use"
};

// IPv4 only: the lab and the fabrics fabgate gates address hosts by IPv4.
std::optional<sockaddr_in> parse_ipv4(std::string_view address, std::uint16_t port);
std::string format_endpoint(const sockaddr_in& address);
std::uint16_t local_port(int fd);

// Sets the don't-fragment bit on everything `fd` sends, against the interface MTU only
// (IP_PMTUDISC_PROBE): a datagram larger than the path MTU is then dropped on the path, or
// refused here with EMSGSIZE when it exceeds the outgoing interface's MTU, never fragmented.
// A path MTU learned from an earlier ICMP message (which lingers for minutes) is not applied,
// so a probe after a repaired path sees the repaired path. Returns errno, 0 on success.
int set_dont_fragment(int fd);

// A non-blocking socket of `type` (SOCK_STREAM or SOCK_DGRAM) bound to `address`.
Expected<Fd, SocketError> bound_socket(int type, const sockaddr_in& address);

}  // namespace fabgate::flows
