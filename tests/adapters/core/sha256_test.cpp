#include "adapters/core/sha256.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

TEST(Sha256, MatchesTheStandardTestVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  Sha256 hash;
  hash.update("a");
  hash.update("bc");
  EXPECT_EQ(hash.hex_digest(), sha256_hex("abc"));
}

}  // namespace
}  // namespace fabgate
