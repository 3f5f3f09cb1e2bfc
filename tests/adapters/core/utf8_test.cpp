// The UTF-8 check that every input file passes before its text can reach JSON evidence.

#include "adapters/core/utf8.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

TEST(Utf8, WellFormedTextOfEveryLengthPasses) {
  // Given ASCII, 2-, 3- and 4-byte characters (including the highest code point), then no
  // problem is found.
  EXPECT_FALSE(find_invalid_utf8("plain ascii\n"));
  EXPECT_FALSE(find_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"));
  EXPECT_FALSE(find_invalid_utf8(""));
}

TEST(Utf8, FirstBadByteIsNamedWithOffsetLineAndColumn) {
  // Given a stray 0xff on line 3, then the problem names that byte, its offset and 3:5.
  auto problem = find_invalid_utf8("a: 1\nb: 2\nc: \xff\n");
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->offset, 13u);
  EXPECT_EQ(problem->line, 3);
  EXPECT_EQ(problem->column, 4);
  EXPECT_EQ(problem->describe(), "byte 0xff at offset 13 (line 3, column 4) is not UTF-8");
}

TEST(Utf8, OverlongSurrogateTooHighAndTruncatedSequencesAreRefused) {
  // Given each ill-formed shape RFC 3629 excludes, then each is found at its first byte.
  for (const char* bad : {
           "\xc0\xaf",          // overlong '/'
           "\xe0\x80\xaf",      // overlong 3-byte
           "\xed\xa0\x80",      // UTF-16 surrogate U+D800
           "\xf4\x90\x80\x80",  // U+110000
           "\xf5\x80\x80\x80",  // lead byte past F4
           "\xe2\x82",          // cut short at the end
           "\x80",              // continuation byte alone
       }) {
    auto problem = find_invalid_utf8(std::string("ok ") + bad);
    ASSERT_TRUE(problem) << "accepted: " << escape_invalid_utf8(bad);
    EXPECT_EQ(problem->offset, 3u);
  }
}

TEST(Utf8, EscapingKeepsGoodCharactersAndSpellsOutBadBytes) {
  // Given text mixing a good character and bad bytes, then the bad bytes become \xNN and the
  // result is itself UTF-8.
  auto escaped = escape_invalid_utf8("caf\xc3\xa9 \xff\xfe!");
  EXPECT_EQ(escaped, "caf\xc3\xa9 \\xff\\xfe!");
  EXPECT_FALSE(find_invalid_utf8(escaped));
}

}  // namespace
}  // namespace fabgate
