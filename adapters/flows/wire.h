#pragma once

#include <algorithm>
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

// The flows probe's message (udp, tcp and icmp alike): a 16-byte header laid out like
// ProbeMessage's (magic, sequence, send stamp) under its own magic, then pattern bytes to the
// message's full size. Every byte is known to the prober, so it verifies the whole echo: a
// stuck or flipped byte, a payload shifted within the message, or a message of another flow,
// sequence or run all differ somewhere. The own magic keeps the responder from ever reading a
// flows message as a watch probe (answer_residence needs ProbeMessage's magic), whatever its
// pattern bytes happen to be.
struct FlowMessage {
  static constexpr std::uint32_t kMagic = 0x32504746;  // "FGP2" on the wire
  static constexpr std::size_t kHeaderSize = 16;        // magic, sequence, send stamp (ns)
  static constexpr std::size_t kDefaultSize = 64;       // without --size: 48 pattern bytes

  // What the pattern is derived from: the run (a random id per probe run), the flow (its
  // index in the run) and the message's sequence within the flow.
  struct Key {
    std::uint32_t probe_id = 0;
    std::uint32_t flow = 0;
    std::uint32_t sequence = 0;
  };

  // A cheap bijective 64-bit mix (splitmix64's finalizer): distinct inputs give distinct,
  // well-scattered outputs, so neighbouring words, flows and sequences share no bytes.
  static constexpr std::uint64_t mix(std::uint64_t value) {
    value ^= value >> 30;
    value *= 0xbf58476d1ce4e5b9ULL;
    value ^= value >> 27;
    value *= 0x94d049bb133111ebULL;
    value ^= value >> 31;
    return value;
  }

  static constexpr std::uint64_t seed(const Key& key) {
    std::uint64_t run_and_flow = (std::uint64_t{key.probe_id} << 32) | key.flow;
    return mix(mix(run_and_flow) ^ (std::uint64_t{key.sequence} * 0x9e3779b97f4a7c15ULL));
  }

  // The pattern byte at `offset` of the message: byte (offset % 8) of the mixed 64-bit word
  // number offset / 8, least significant first, whatever the host's byte order.
  static constexpr std::byte pattern_byte(const Key& key, std::size_t offset) {
    const std::uint64_t word = mix(seed(key) + (offset / 8) * 0xd6e8feb86659fd93ULL);
    return static_cast<std::byte>((word >> (8 * (offset % 8))) & 0xff);
  }

  // Writes the whole message into `out` (its size is the message size, at least kHeaderSize).
  static void encode(std::span<std::byte> out, const Key& key, std::uint64_t sent_ns) {
    const std::uint32_t magic = kMagic;
    std::memcpy(out.data(), &magic, 4);
    std::memcpy(out.data() + 4, &key.sequence, 4);
    std::memcpy(out.data() + 8, &sent_ns, 8);
    const std::uint64_t base = seed(key);
    for (std::size_t offset = kHeaderSize; offset < out.size(); offset += 8) {
      const std::uint64_t word = mix(base + (offset / 8) * 0xd6e8feb86659fd93ULL);
      for (std::size_t byte = 0; byte < 8 && offset + byte < out.size(); ++byte)
        out[offset + byte] = static_cast<std::byte>((word >> (8 * byte)) & 0xff);
    }
  }

  // The header fields of a received message, read without judging them (they may be corrupt);
  // none when it is too short to hold a header.
  struct Header {
    std::uint32_t magic = 0;
    std::uint32_t sequence = 0;
    std::uint64_t sent_ns = 0;
  };
  static std::optional<Header> read_header(std::span<const std::byte> bytes) {
    if (bytes.size() < kHeaderSize) return std::nullopt;
    Header header;
    std::memcpy(&header.magic, bytes.data(), 4);
    std::memcpy(&header.sequence, bytes.data() + 4, 4);
    std::memcpy(&header.sent_ns, bytes.data() + 8, 8);
    return header;
  }
};

// The first offset at which `received` differs from `expected`; a message of another length
// differs at the shorter one's end when their common bytes agree. None when they are equal.
inline std::optional<std::size_t> first_difference(std::span<const std::byte> received,
                                                   std::span<const std::byte> expected) {
  const std::size_t common = std::min(received.size(), expected.size());
  const auto mismatch = std::mismatch(received.begin(), received.begin() + common,
                                      expected.begin());
  const auto offset = static_cast<std::size_t>(mismatch.first - received.begin());
  if (offset < common) return offset;
  if (received.size() != expected.size()) return common;
  return std::nullopt;
}

}  // namespace fabgate::flows
