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

// The two ways to send ICMP echo requests. A ping socket (SOCK_DGRAM, IPPROTO_ICMP) needs no
// privilege when net.ipv4.ping_group_range covers the process's group; the kernel then sets
// the echo identifier (the socket's "port") and the checksum and hands back only this
// socket's replies, without the IP header. A raw socket needs root (CAP_NET_RAW) and sees
// every ICMP message for the host: its owner sets identifier and checksum and filters.
enum class IcmpSocketKind { ping, raw };
const char* to_string(IcmpSocketKind kind);

struct IcmpSocket {
  Fd fd;
  IcmpSocketKind kind;
};

// A non-blocking ICMP socket of `kind`, or, without a kind, a ping socket where the group
// range allows one, else a raw socket. Neither available is a SocketError naming both causes
// (the range this host sets, and that raw sockets need root).
Expected<IcmpSocket, SocketError> icmp_socket(std::optional<IcmpSocketKind> kind = std::nullopt);

// Lets only ICMP echo replies carrying `identifier` into a raw ICMP socket's receive queue. A
// raw socket otherwise queues every ICMP message its host receives, so with many flows each
// flow's queue would fill with the other flows' replies and overflow, dropping its own: a loss
// the path never caused. Returns errno, 0 on success.
int keep_only_echo_replies(int fd, std::uint16_t identifier);

}  // namespace fabgate::flows
