// Given text longer than the room for it (a report value, a quoted error line), then it is cut
// after a whole phrase or word with an ellipsis, never inside one.

#include "adapters/core/shorten.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

TEST(Shorten, CutsAtTheLastPhraseInsideTheLimit) {
  std::string summary =
      "bgp session to spine1 went down, 4 prefixes withdrawn; rollback started at 03:12";
  EXPECT_EQ(shorten(summary, 60), "bgp session to spine1 went down, 4 prefixes withdrawn…");
  EXPECT_EQ(shorten(summary, 40), "bgp session to spine1 went down…");
  EXPECT_EQ(shorten(summary, summary.size()), summary);
}

TEST(Shorten, FallsBackToAWordBoundaryWhenNoPhraseEndsLateEnough) {
  std::string summary = "interfaces leaf1 swp1 swp2 swp3 swp4 swp5 swp6 lost carrier";
  std::string cut = shorten(summary, 30);
  EXPECT_EQ(cut, "interfaces leaf1 swp1 swp2…");
  // A word that ends exactly at the limit is kept whole.
  EXPECT_EQ(shorten("alpha beta gamma", 10), "alpha beta…");
}

TEST(Shorten, CutsOneLongWordAtACharacterBoundary) {
  std::string word = "aaaaaaa\xC3\xA9\xC3\xA9\xC3\xA9";  // é is two bytes
  std::string cut = shorten(word, 8);
  EXPECT_EQ(cut, "aaaaaaa…");
  EXPECT_LE(cut.size(), 8u + std::string("…").size());
}

}  // namespace
}  // namespace fabgate
