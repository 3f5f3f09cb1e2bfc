#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace fabgate::rdma {

// The probe's two rdma_cm private-data messages. Fixed size, big-endian, with a magic number
// so a listener can reject a peer that is not fabgate-probe (or a different version of it)
// instead of letting it write into memory. Private data may arrive zero-padded, so decoding
// only requires at least the encoded size.
inline constexpr std::uint32_t kHelloMagic = 0x46475031;  // "FGP1"

// Sent by the connecting side with rdma_connect.
struct ClientHello {
  std::uint32_t qp_index = 0;
  std::uint64_t message_size = 0;
};
inline constexpr std::size_t kClientHelloSize = 16;

// Returned by the listener with rdma_accept: where the client may write.
struct ServerHello {
  std::uint32_t rkey = 0;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
};
inline constexpr std::size_t kServerHelloSize = 24;

std::array<std::uint8_t, kClientHelloSize> encode(const ClientHello& hello);
std::array<std::uint8_t, kServerHelloSize> encode(const ServerHello& hello);
std::optional<ClientHello> decode_client_hello(std::span<const std::uint8_t> bytes);
std::optional<ServerHello> decode_server_hello(std::span<const std::uint8_t> bytes);

}  // namespace fabgate::rdma
