#include "gates/compare/path_pattern.h"

#include <gtest/gtest.h>

namespace fabgate::compare {
namespace {

PathPattern parse(const std::string& text) {
  std::string error;
  auto pattern = PathPattern::parse(text, &error);
  EXPECT_TRUE(pattern) << error;
  return pattern.value_or(PathPattern{});
}

TEST(PathPattern, StarMatchesAnyMapKeyOrListIndex) {
  // Given a pattern with two wildcards, then keys and list indices both match at those places.
  auto pattern = parse("devices.*.bgp.peers.*.state");
  EXPECT_TRUE(pattern.matches({"devices", "leaf1", "bgp", "peers", "10.0.1.0", "state"}));
  EXPECT_TRUE(pattern.matches({"devices", "leaf1", "bgp", "peers", "0", "state"}));
  EXPECT_FALSE(pattern.matches({"devices", "leaf1", "bgp", "peers", "10.0.1.0", "uptime_ms"}));
  EXPECT_FALSE(pattern.matches({"devices", "leaf1", "bgp", "peers"}));
}

TEST(PathPattern, GlobInsideASegmentMatchesPartOfTheKey) {
  // Given `leaf*` and `*version*`, then only keys with that shape match.
  auto pattern = parse("devices.leaf*.identity.*version*");
  EXPECT_TRUE(pattern.matches({"devices", "leaf12", "identity", "frr_version"}));
  EXPECT_FALSE(pattern.matches({"devices", "spine1", "identity", "frr_version"}));
  EXPECT_FALSE(pattern.matches({"devices", "leaf1", "identity", "hostname"}));
}

TEST(PathPattern, QuotedSegmentHoldsDotsAndIsLiteral) {
  // Given a peer address with dots in quotes, then it is one literal segment.
  auto pattern = parse("devices.leaf1.bgp.peers.\"10.0.1.0\".state");
  ASSERT_EQ(pattern.size(), 6u);
  EXPECT_EQ(pattern.segments()[4].text, "10.0.1.0");
  EXPECT_FALSE(pattern.segments()[4].glob);
  EXPECT_EQ(format_path({"devices", "leaf1", "bgp", "peers", "10.0.1.0", "state"}),
            "devices.leaf1.bgp.peers.\"10.0.1.0\".state");
}

TEST(PathPattern, MalformedPatternsAreRejectedWithAReason) {
  // Given empty segments or an open quote, then parsing fails and says why.
  for (const char* text : {"", "devices..bgp", "devices.\"leaf1", "devices.leaf1.", "a\"b\".c"}) {
    std::string error;
    EXPECT_FALSE(PathPattern::parse(text, &error)) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
}

TEST(PathPattern, PrefixMatchCoversElementsInsideANamedSubtree) {
  // Given a pattern naming a peer, then elements below that peer are inside it.
  auto pattern = parse("bgp.peers.*");
  EXPECT_TRUE(pattern.matches_prefix_of({"bgp", "peers", "p1", "state"}));
  EXPECT_FALSE(pattern.matches_prefix_of({"bgp"}));
}

}  // namespace
}  // namespace fabgate::compare
