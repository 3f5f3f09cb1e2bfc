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

// The watch's probe: a ProbeMessage followed by a question the responder answers in place, so
// that the prober can tell the path's time from the responder's: how long the datagram sat on
// the responder's host between its kernel's receive stamp and the echo leaving (its
// residence, on the responder's own clock; only a difference of two of its readings travels,
// so the two hosts' clocks need not agree). A responder that does not know the question (an
// older fabgate-probe) echoes it unanswered, and the prober then has no residence: the whole
// round trip counts as the path's, as before.
struct ResidenceTrailer {
  static constexpr std::uint32_t kAsked = 0x51524746;     // "FGRQ"
  static constexpr std::uint32_t kAnswered = 0x41524746;  // "FGRA"
  static constexpr std::size_t kSize = 16;                // magic, 4 spare bytes, residence ns
};

constexpr std::size_t kWatchProbeSize = ProbeMessage::kSize + ResidenceTrailer::kSize;

inline std::array<std::byte, kWatchProbeSize> encode_watch_probe(const ProbeMessage& message) {
  std::array<std::byte, kWatchProbeSize> bytes{};
  const auto head = message.encode();
  std::memcpy(bytes.data(), head.data(), head.size());
  std::memcpy(bytes.data() + ProbeMessage::kSize, &ResidenceTrailer::kAsked, 4);
  return bytes;
}

// The responder's side: answers the question in a watch probe with `residence_ns`; false (and
// nothing written) for any other datagram, which is echoed as it came.
inline bool answer_residence(std::span<std::byte> datagram, std::uint64_t residence_ns) {
  if (datagram.size() != kWatchProbeSize) return false;
  if (!ProbeMessage::decode(datagram.first(ProbeMessage::kSize))) return false;
  std::uint32_t asked = 0;
  std::memcpy(&asked, datagram.data() + ProbeMessage::kSize, 4);
  if (asked != ResidenceTrailer::kAsked) return false;
  std::memcpy(datagram.data() + ProbeMessage::kSize, &ResidenceTrailer::kAnswered, 4);
  std::memcpy(datagram.data() + ProbeMessage::kSize + 8, &residence_ns, 8);
  return true;
}

// The prober's side: the residence the responder wrote, none when it did not answer.
inline std::optional<std::uint64_t> read_residence(std::span<const std::byte> echo) {
  if (echo.size() != kWatchProbeSize) return std::nullopt;
  std::uint32_t answered = 0;
  std::memcpy(&answered, echo.data() + ProbeMessage::kSize, 4);
  if (answered != ResidenceTrailer::kAnswered) return std::nullopt;
  std::uint64_t residence_ns = 0;
  std::memcpy(&residence_ns, echo.data() + ProbeMessage::kSize + 8, 8);
  return residence_ns;
}

}  // namespace fabgate::flows
