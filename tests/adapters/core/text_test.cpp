#include "adapters/core/text.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

TEST(NearestWord, SuggestsTheIntendedKeyForATypo) {
  std::vector<std::string> keys = {"step_timeout", "deadline", "max_targets", "waves"};
  EXPECT_EQ(nearest_word("step_timout", keys), "step_timeout");
  EXPECT_EQ(nearest_word("wave", keys), "waves");
}

TEST(NearestWord, StaysSilentWhenNothingIsClose) {
  std::vector<std::string> keys = {"deadline", "waves"};
  EXPECT_FALSE(nearest_word("rollback", keys));
}

TEST(ShellQuote, SurvivesSingleQuotes) {
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
}

TEST(SplitLines, DropsCarriageReturns) {
  auto lines = split_lines("a\r\nb\nc");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "a");
  EXPECT_EQ(lines[2], "c");
}

}  // namespace
}  // namespace fabgate
