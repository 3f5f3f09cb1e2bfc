#pragma once

// The bytes a collective chunk carries, so that its receiver can check every one of them.
//
// A chunk's seed mixes what only the right chunk can have: the run's id (rank 0 draws it and
// hands it to every rank with the first release), the sending and receiving rank, and the
// iteration. Byte `offset` of the chunk is byte offset % 8 (little-endian) of word(offset / 8),
// where word(i) = x ^ (x >> 29) with x = seed + (i + 1) * kPatternStep. That map from x is a
// bijection, so two different seeds (a chunk of another iteration, another sender, another
// receiver, another run) differ in *every* word, and a chunk moved by whole words differs too;
// a flipped bit differs in its own byte. One add, one shift and one xor per 8 bytes: filling and
// checking a 1 MiB chunk costs about as much as copying it once, so a loaded 2-core host spends
// far less on it than on the TCP copies (docs/probes.md has the measured figures).
//
// Only the collective uses it (adapters/flows/collective.cpp); the flows probes' datagram
// pattern is theirs.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

namespace fabgate::flows {

inline constexpr std::uint64_t kPatternStep = 0x9e3779b97f4a7c15ULL;

// SplitMix64's finalizer: every input bit reaches every output bit.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t chunk_seed(std::uint64_t run_id, std::uint32_t sender,
                                   std::uint32_t receiver, std::uint32_t iteration) {
  std::uint64_t seed = mix64(run_id);
  seed = mix64(seed + ((std::uint64_t{sender} << 32) | receiver));
  return mix64(seed + iteration);
}

constexpr std::uint64_t pattern_word(std::uint64_t seed, std::size_t index) {
  const std::uint64_t x = seed + (static_cast<std::uint64_t>(index) + 1) * kPatternStep;
  return x ^ (x >> 29);
}

constexpr std::byte pattern_byte(std::uint64_t seed, std::size_t offset) {
  return static_cast<std::byte>(pattern_word(seed, offset / 8) >> (8 * (offset % 8)));
}

namespace pattern_detail {

inline std::uint64_t to_little_endian(std::uint64_t word) {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(word);
  return word;
}

}  // namespace pattern_detail

// Writes the pattern into bytes [begin, end) of `chunk` (offsets within the chunk).
inline void fill_pattern(std::byte* chunk, std::size_t begin, std::size_t end, std::uint64_t seed) {
  std::size_t offset = begin;
  for (; offset < end && offset % 8 != 0; ++offset) chunk[offset] = pattern_byte(seed, offset);
  std::uint64_t x = seed + (static_cast<std::uint64_t>(offset / 8) + 1) * kPatternStep;
  for (; offset + 8 <= end; offset += 8, x += kPatternStep) {
    const std::uint64_t word = pattern_detail::to_little_endian(x ^ (x >> 29));
    std::memcpy(chunk + offset, &word, 8);
  }
  for (; offset < end; ++offset) chunk[offset] = pattern_byte(seed, offset);
}

// The first offset in [begin, end) whose byte is not the pattern's, or none. Words are compared
// a block at a time and only a block with a difference is searched byte by byte, so an intact
// chunk costs one pass of loads, adds and xors that the compiler vectorizes.
inline std::optional<std::size_t> first_pattern_mismatch(const std::byte* chunk, std::size_t begin,
                                                         std::size_t end, std::uint64_t seed) {
  auto first_in = [&](std::size_t from, std::size_t to) -> std::optional<std::size_t> {
    for (std::size_t offset = from; offset < to; ++offset)
      if (chunk[offset] != pattern_byte(seed, offset)) return offset;
    return std::nullopt;
  };
  std::size_t offset = begin;
  const std::size_t head_end = std::min(end, (begin + 7) / 8 * 8);
  if (auto bad = first_in(offset, head_end)) return bad;
  offset = head_end;
  constexpr std::size_t kBlock = 4096;
  while (offset + 8 <= end) {
    const std::size_t block_end = offset + std::min(kBlock, (end - offset) / 8 * 8);
    std::uint64_t x = seed + (static_cast<std::uint64_t>(offset / 8) + 1) * kPatternStep;
    std::uint64_t difference = 0;
    for (std::size_t at = offset; at < block_end; at += 8, x += kPatternStep) {
      std::uint64_t word;
      std::memcpy(&word, chunk + at, 8);
      difference |= word ^ pattern_detail::to_little_endian(x ^ (x >> 29));
    }
    if (difference != 0) return first_in(offset, block_end);
    offset = block_end;
  }
  return first_in(offset, end);
}

}  // namespace fabgate::flows
