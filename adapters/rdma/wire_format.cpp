#include "adapters/rdma/wire_format.h"

namespace fabgate::rdma {

namespace {

template <class T>
void put(std::uint8_t* out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out[i] = static_cast<std::uint8_t>(value >> (8 * (sizeof(T) - 1 - i)));
  }
}

template <class T>
T get(const std::uint8_t* in) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value = static_cast<T>((value << 8) | in[i]);
  return value;
}

}  // namespace

std::array<std::uint8_t, kClientHelloSize> encode(const ClientHello& hello) {
  std::array<std::uint8_t, kClientHelloSize> bytes{};
  put<std::uint32_t>(bytes.data(), kHelloMagic);
  put<std::uint32_t>(bytes.data() + 4, hello.qp_index);
  put<std::uint64_t>(bytes.data() + 8, hello.message_size);
  return bytes;
}

std::array<std::uint8_t, kServerHelloSize> encode(const ServerHello& hello) {
  std::array<std::uint8_t, kServerHelloSize> bytes{};
  put<std::uint32_t>(bytes.data(), kHelloMagic);
  put<std::uint32_t>(bytes.data() + 4, hello.rkey);
  put<std::uint64_t>(bytes.data() + 8, hello.address);
  put<std::uint64_t>(bytes.data() + 16, hello.size);
  return bytes;
}

std::optional<ClientHello> decode_client_hello(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kClientHelloSize || get<std::uint32_t>(bytes.data()) != kHelloMagic)
    return std::nullopt;
  ClientHello hello;
  hello.qp_index = get<std::uint32_t>(bytes.data() + 4);
  hello.message_size = get<std::uint64_t>(bytes.data() + 8);
  return hello;
}

std::optional<ServerHello> decode_server_hello(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kServerHelloSize || get<std::uint32_t>(bytes.data()) != kHelloMagic)
    return std::nullopt;
  ServerHello hello;
  hello.rkey = get<std::uint32_t>(bytes.data() + 4);
  hello.address = get<std::uint64_t>(bytes.data() + 8);
  hello.size = get<std::uint64_t>(bytes.data() + 16);
  return hello;
}

}  // namespace fabgate::rdma
