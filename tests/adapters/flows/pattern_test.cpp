// The collective's chunk pattern (adapters/flows/pattern.h): what a receiver compares every
// byte of a chunk against.

#include "adapters/flows/pattern.h"

#include <gtest/gtest.h>

#include <vector>

namespace fabgate::flows {
namespace {

std::vector<std::byte> filled(std::size_t size, std::uint64_t seed) {
  std::vector<std::byte> chunk(size);
  fill_pattern(chunk.data(), 0, size, seed);
  return chunk;
}

TEST(ChunkPattern, AnIntactChunkMatchesOverAnyRangeAndPiecesFillAsTheWhole) {
  // Given a chunk of odd size filled whole, then every range (unaligned starts and ends, one
  // byte, past a 4 KiB block) matches, and filling it in pieces at odd offsets (as slices are)
  // writes the same bytes as filling it whole.
  const std::uint64_t seed = chunk_seed(7, 1, 2, 3);
  const std::size_t size = 3 * 4096 + 13;
  const auto whole = filled(size, seed);
  for (auto [begin, end] : {std::pair<std::size_t, std::size_t>{0, size},
                            {3, size - 5},
                            {16, 17},
                            {4090, 8200},
                            {size - 1, size},
                            {5, 5}})
    EXPECT_FALSE(first_pattern_mismatch(whole.data(), begin, end, seed)) << begin << ".." << end;
  std::vector<std::byte> pieces(size);
  for (std::size_t begin = 0; begin < size;) {
    const std::size_t end = std::min(size, begin + 1021);
    fill_pattern(pieces.data(), begin, end, seed);
    begin = end;
  }
  EXPECT_EQ(pieces, whole);
}

TEST(ChunkPattern, OneWrongByteIsFoundAtItsOffsetWhereverItIs) {
  // Given one byte flipped at the start of a range, in an unaligned head, mid-word, at a 4 KiB
  // block's edge or in the last byte, then the first mismatch is exactly that offset, and a
  // later second flip does not hide the first.
  const std::uint64_t seed = chunk_seed(7, 1, 2, 3);
  const std::size_t size = 3 * 4096 + 13;
  for (std::size_t at : {std::size_t{3}, std::size_t{6}, std::size_t{812}, std::size_t{4098},
                         std::size_t{4099}, std::size_t{8195}, size - 1}) {
    auto chunk = filled(size, seed);
    chunk[at] ^= std::byte{0x01};
    EXPECT_EQ(first_pattern_mismatch(chunk.data(), 3, size, seed), at);
    if (at + 100 < size) chunk[at + 100] ^= std::byte{0x80};
    EXPECT_EQ(first_pattern_mismatch(chunk.data(), 3, size, seed), at);
  }
}

TEST(ChunkPattern, AChunkOfAnotherRunSenderReceiverOrIterationDiffersInEveryWord) {
  // Given chunks that differ in one of run id, sender, receiver or iteration, then no 8-byte
  // word of one equals the same word of the other: a misdirected, replayed or stale chunk
  // fails at its first byte-word, not somewhere by chance.
  const std::size_t size = 64 * 1024;
  const auto reference = filled(size, chunk_seed(7, 1, 2, 3));
  for (std::uint64_t other : {chunk_seed(8, 1, 2, 3), chunk_seed(7, 2, 2, 3),
                              chunk_seed(7, 1, 0, 3), chunk_seed(7, 1, 2, 4)}) {
    const auto chunk = filled(size, other);
    std::size_t equal_words = 0;
    for (std::size_t offset = 0; offset < size; offset += 8)
      equal_words += std::equal(chunk.begin() + offset, chunk.begin() + offset + 8,
                                reference.begin() + offset);
    EXPECT_EQ(equal_words, 0u);
    EXPECT_LT(*first_pattern_mismatch(chunk.data(), 0, size, chunk_seed(7, 1, 2, 3)), 8u);
  }
}

}  // namespace
}  // namespace fabgate::flows
