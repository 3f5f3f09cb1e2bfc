#include "adapters/core/time.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

TEST(ParseIso8601, UtcAndOffsetsDenoteTheSameInstant) {
  // Given one instant written in UTC and with a +01:00 offset, then both parse equal.
  auto utc = parse_iso8601("2026-12-01T02:00:00Z");
  auto offset = parse_iso8601("2026-12-01T03:00:00+01:00");
  ASSERT_TRUE(utc && offset);
  EXPECT_EQ(*utc, *offset);
  EXPECT_EQ(format_utc(*utc), "2026-12-01T02:00:00.000Z");
}

TEST(ParseIso8601, KeepsMilliseconds) {
  auto when = parse_iso8601("2026-12-01T02:00:00.25Z");
  ASSERT_TRUE(when);
  EXPECT_EQ(format_utc(*when), "2026-12-01T02:00:00.250Z");
}

TEST(ParseIso8601, RefusesTimesWithoutAZoneOrThatDoNotExist) {
  // Given a window time without a zone, then it is rejected rather than assumed local.
  EXPECT_FALSE(parse_iso8601("2026-12-01T02:00:00"));
  EXPECT_FALSE(parse_iso8601("2026-02-30T02:00:00Z"));
  EXPECT_FALSE(parse_iso8601("2026-12-01 25:00:00Z"));
  EXPECT_FALSE(parse_iso8601("tomorrow"));
}

TEST(FormatUtcCompact, IsSortableAndFileNameSafe) {
  auto when = parse_iso8601("2026-12-01T02:03:04Z");
  ASSERT_TRUE(when);
  EXPECT_EQ(format_utc_compact(*when), "20261201T020304Z");
}

}  // namespace
}  // namespace fabgate
