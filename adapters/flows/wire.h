#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace fabgate::flows {

// One probe message. The responder echoes bytes verbatim, so the prober reads back its own
// sequence number and send time; nothing on the far host needs a clock or state. The magic
// keeps stray datagrams (or a different service on the port) from being counted as replies.
struct ProbeMessage {
  static constexpr std::uint32_t kMagic = 0x46475031;  // "FGP1"
  static constexpr std::size_t kSize = 16;

  std::uint32_t sequence = 0;
  std::uint64_t sent_ns = 0;  // steady clock of the prober

  std::array<std::byte, kSize> encode() const {
    std::array<std::byte, kSize> bytes{};
    std::memcpy(bytes.data(), &kMagic, 4);
    std::memcpy(bytes.data() + 4, &sequence, 4);
    std::memcpy(bytes.data() + 8, &sent_ns, 8);
    return bytes;
  }

  static std::optional<ProbeMessage> decode(std::span<const std::byte> bytes) {
    if (bytes.size() != kSize) return std::nullopt;
    std::uint32_t magic = 0;
    std::memcpy(&magic, bytes.data(), 4);
    if (magic != kMagic) return std::nullopt;
    ProbeMessage message;
    std::memcpy(&message.sequence, bytes.data() + 4, 4);
    std::memcpy(&message.sent_ns, bytes.data() + 8, 8);
    return message;
  }
};

}  // namespace fabgate::flows
