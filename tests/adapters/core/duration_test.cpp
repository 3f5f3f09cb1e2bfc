#include "adapters/core/duration.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

using std::chrono::milliseconds;

TEST(ParseDuration, AcceptsEveryUnitUsersWrite) {
  // Given the spellings intent files use, then each parses to its exact length.
  EXPECT_EQ(parse_duration("500ms"), milliseconds(500));
  EXPECT_EQ(parse_duration("30s"), milliseconds(30'000));
  EXPECT_EQ(parse_duration("5m"), milliseconds(300'000));
  EXPECT_EQ(parse_duration("1h"), milliseconds(3'600'000));
  EXPECT_EQ(parse_duration("1m30s"), milliseconds(90'000));
}

TEST(ParseDuration, RejectsAmbiguousOrMalformedText) {
  // Given a bare number, a unit typo, a negative or empty text, then nothing is guessed.
  EXPECT_FALSE(parse_duration("30"));
  EXPECT_FALSE(parse_duration("30sec"));
  EXPECT_FALSE(parse_duration("-5s"));
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("s"));
  EXPECT_FALSE(parse_duration("99999999999s"));
}

TEST(FormatDuration, UsesTheLargestExactUnit) {
  EXPECT_EQ(format_duration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(format_duration(milliseconds(90'000)), "90s");
  EXPECT_EQ(format_duration(milliseconds(300'000)), "5m");
  EXPECT_EQ(format_duration(milliseconds(0)), "0ms");
}

}  // namespace
}  // namespace fabgate
