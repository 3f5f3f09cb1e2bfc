// Version strings as devices report them, and the constraints of the compatibility matrix:
// every rule docs/compat.md states has a case here.

#include <gtest/gtest.h>

#include "gates/compat/version.h"

namespace fabgate::compat {
namespace {

Version v(std::string_view text) {
  auto version = parse_version(text);
  EXPECT_TRUE(version.has_value()) << text;
  return version.value_or(Version{});
}

int order(std::string_view a, std::string_view b) {
  auto result = compare_numbers(v(a), v(b));
  return result < 0 ? -1 : (result > 0 ? 1 : 0);
}

Constraint constraint(std::initializer_list<std::string_view> alternatives) {
  Constraint result;
  result.listed = alternatives.size() > 1;
  for (auto text : alternatives) {
    auto alternative = parse_alternative(text);
    EXPECT_TRUE(alternative.ok()) << text << ": " << (alternative.ok() ? "" : alternative.error());
    if (alternative.ok()) result.alternatives.push_back(alternative.value());
  }
  return result;
}

bool allowed(std::string_view found, std::initializer_list<std::string_view> alternatives) {
  return admits(constraint(alternatives), v(found)).admitted;
}

std::string problem(std::string_view text) {
  auto alternative = parse_alternative(text);
  return alternative.ok() ? std::string("(accepted)") : alternative.error();
}

TEST(VersionParse, RealVersionStringsKeepTheirNumbersAndSetTheSuffixAside) {
  // Given version strings collected from real devices, then the numbers that order them are
  // extracted and the distribution or build suffix is kept aside.
  EXPECT_EQ(v("8.4.4").numbers, (std::vector<std::string>{"8", "4", "4"}));
  auto ubuntu = v("5.15.0-91-generic");
  EXPECT_EQ(ubuntu.numbers, (std::vector<std::string>{"5", "15", "0", "91"}));
  EXPECT_EQ(ubuntu.suffix, "-generic");
  EXPECT_FALSE(ubuntu.pre_release.has_value());
  auto debian = v("6.1.0-28-amd64");
  EXPECT_EQ(debian.numbers, (std::vector<std::string>{"6", "1", "0", "28"}));
  EXPECT_FALSE(debian.pre_release.has_value());  // "amd64" is not "alpha"
  EXPECT_EQ(v("16.35.2000").numbers, (std::vector<std::string>{"16", "35", "2000"}));
  auto firmware = v("16.35.2000 (MT_0000000008)");
  EXPECT_EQ(firmware.numbers, (std::vector<std::string>{"16", "35", "2000"}));
  EXPECT_EQ(firmware.suffix, " (MT_0000000008)");
  EXPECT_EQ(v("535.129.03").numbers, (std::vector<std::string>{"535", "129", "3"}));
  auto package = v("8.4.4-1.1~deb12u2");
  EXPECT_EQ(package.numbers, (std::vector<std::string>{"8", "4", "4", "1", "1"}));
  EXPECT_EQ(package.suffix, "~deb12u2");
  EXPECT_FALSE(package.pre_release.has_value());
  auto sonic = v("SONiC.202305.1");
  EXPECT_EQ(sonic.numbers, (std::vector<std::string>{"202305", "1"}));
  EXPECT_EQ(v("v8.4").numbers, (std::vector<std::string>{"8", "4"}));
  EXPECT_EQ(v("Debian GNU/Linux 12 (bookworm)").numbers, (std::vector<std::string>{"12"}));
  EXPECT_EQ(v("1:2.3").epoch, "1");
  EXPECT_EQ(v("  8.4.4\n").text, "8.4.4");
}

TEST(VersionParse, TextWithoutDigitsIsNotAVersion) {
  EXPECT_FALSE(parse_version("").has_value());
  EXPECT_FALSE(parse_version("N/A").has_value());
  EXPECT_FALSE(parse_version("unknown").has_value());
}

TEST(VersionParse, PreReleaseMarkersAreWholeWordsOnly) {
  // Given suffixes that start like a marker word, then only a real marker counts.
  EXPECT_EQ(v("9.0-rc1").pre_release, (PreRelease{"rc", "1"}));
  EXPECT_EQ(v("8.5.0beta2").pre_release, (PreRelease{"beta", "2"}));
  EXPECT_EQ(v("10.0-dev").pre_release, (PreRelease{"dev", ""}));
  EXPECT_EQ(v("6.9.0-RC03+").pre_release, (PreRelease{"rc", "3"}));
  EXPECT_FALSE(v("6.1.0-1-preempt").pre_release.has_value());
  EXPECT_FALSE(v("5.15.0-1051-realtime").pre_release.has_value());
  EXPECT_FALSE(v("6.1.0-rc1x").pre_release.has_value());
}

TEST(VersionOrder, NumbersCompareNumericallyAndMissingOnesAreZero) {
  EXPECT_EQ(order("8.4.4", "8.4.4"), 0);
  EXPECT_EQ(order("8.4", "8.4.0"), 0);  // documented: 8.4 == 8.4.0
  EXPECT_EQ(order("8.4", "8.4.0.0"), 0);
  EXPECT_EQ(order("8.4", "8.4.1"), -1);
  EXPECT_EQ(order("8.10", "8.9"), 1);  // not string order
  EXPECT_EQ(order("535.129.03", "535.129.3"), 0);
  EXPECT_EQ(order("16.35.2000", "16.35.1012"), 1);
  EXPECT_EQ(order("5.15.0-91-generic", "5.15.0-101-generic"), -1);
  EXPECT_EQ(order("5.15.0-91-generic", "5.15.0-91-lowlatency"), 0);  // the flavour is ignored
  EXPECT_EQ(order("5.15.0-91-generic", "5.15"), 1);
  EXPECT_EQ(order("8.4.4-1.1~deb12u2", "8.4.4"), 1);  // the Debian revision is a number
  EXPECT_EQ(order("1:1.0", "2.0"), 1);                // epoch first
  EXPECT_EQ(order("123456789012345678901234567890", "99999999999999999999"), 1);  // no overflow
}

TEST(Constraint, RangeBoundsAreInclusiveOrExclusiveAsWritten) {
  // Given the range ">=8.4 <9", then 8.4 itself and anything up to but not including 9 pass.
  EXPECT_TRUE(allowed("8.4", {">=8.4 <9"}));
  EXPECT_TRUE(allowed("8.4.0", {">=8.4 <9"}));
  EXPECT_TRUE(allowed("8.4.4", {">=8.4 <9"}));
  EXPECT_TRUE(allowed("8.99.99", {">=8.4 <9"}));
  EXPECT_FALSE(allowed("9", {">=8.4 <9"}));
  EXPECT_FALSE(allowed("9.0.0", {">=8.4 <9"}));
  EXPECT_FALSE(allowed("8.3.9", {">=8.4 <9"}));
  EXPECT_FALSE(allowed("7.5.1", {">=8.4 <9"}));
  EXPECT_FALSE(allowed("8.4", {">8.4"}));
  EXPECT_TRUE(allowed("8.4.1", {">8.4"}));
  EXPECT_TRUE(allowed("9.0", {"<=9"}));
  EXPECT_FALSE(allowed("9.0.1", {"<=9"}));
  EXPECT_TRUE(allowed("8.4.4", {">= 8.4  < 9"}));  // spaces after operators are fine
}

TEST(Constraint, RealStringsAgainstRealBounds) {
  EXPECT_TRUE(allowed("5.15.0-91-generic", {">=5.15"}));
  EXPECT_TRUE(allowed("5.15.0-91-generic", {">=5.15.0-91"}));
  EXPECT_FALSE(allowed("5.15.0-91-generic", {">=5.15.0-92"}));
  EXPECT_TRUE(allowed("6.1.0-28-amd64", {">=5.10 <6.2"}));
  EXPECT_TRUE(allowed("16.35.2000", {">=16.35"}));
  EXPECT_FALSE(allowed("16.31.1014", {">=16.35"}));
  EXPECT_TRUE(allowed("535.129.03", {">=535 <550"}));
  EXPECT_TRUE(allowed("8.4.4-1.1~deb12u2", {">=8.4.4 <8.4.5"}));
  EXPECT_TRUE(allowed("SONiC.202305.1", {">=202305"}));
  EXPECT_TRUE(allowed("Debian GNU/Linux 12 (bookworm)", {">=11"}));
}

TEST(Constraint, ExactEntriesMatchTheNumbersOnly) {
  // Given an exact list, then a version passes when its numbers equal one entry; "8.4" is
  // exactly 8.4.0 and does not stand for the whole 8.4 series.
  EXPECT_TRUE(allowed("8.4.4", {"8.4.4", "8.5.1"}));
  EXPECT_TRUE(allowed("8.5.1", {"8.4.4", "8.5.1"}));
  EXPECT_FALSE(allowed("8.5.0", {"8.4.4", "8.5.1"}));
  EXPECT_TRUE(allowed("8.4.0", {"8.4"}));
  EXPECT_FALSE(allowed("8.4.4", {"8.4"}));
  EXPECT_TRUE(allowed("8.4.4", {"=8.4.4"}));
  EXPECT_TRUE(allowed("8.4.4", {"==8.4.4"}));
  EXPECT_FALSE(allowed("8.4.4-1.1~deb12u2", {"8.4.4"}));  // 8.4.4.1.1 is not 8.4.4
  EXPECT_TRUE(allowed("535.129.03", {"535.129.3"}));
  EXPECT_FALSE(allowed("8.4.3", {">=8.4 !=8.4.3"}));
  EXPECT_TRUE(allowed("8.4.4", {">=8.4 !=8.4.3"}));
}

TEST(Constraint, WildcardsMatchAPrefixOfNumbers) {
  EXPECT_TRUE(allowed("8.4.4", {"8.4.*"}));
  EXPECT_TRUE(allowed("8.4", {"8.4.*"}));  // 8.4 is 8.4.0
  EXPECT_TRUE(allowed("8.4.4-1.1~deb12u2", {"8.4.*"}));
  EXPECT_FALSE(allowed("8.40.1", {"8.4.*"}));  // numbers, not characters
  EXPECT_FALSE(allowed("8.5.0", {"8.4.*"}));
  EXPECT_FALSE(allowed("8", {"8.4.*"}));
  EXPECT_TRUE(allowed("8.0.1", {"8.*"}));
  EXPECT_TRUE(allowed("0.0.1", {"*"}));
  EXPECT_TRUE(allowed("8.4.1", {"8.4.* !=8.4.3"}));
  EXPECT_FALSE(allowed("8.4.3", {"8.4.* !=8.4.3"}));
  EXPECT_TRUE(allowed("9.1.2", {"8.4.*", "9.1.*"}));
}

TEST(Constraint, PreReleasesPassOnlyAnExactEntryNamingThem) {
  // Given a release candidate, then neither a range nor a wildcard admits it (so "<9" does not
  // let 9.0-rc1 in), and an exact entry naming it does.
  auto refused = admits(constraint({">=8.4 <9"}), v("9.0-rc1"));
  EXPECT_FALSE(refused.admitted);
  EXPECT_NE(refused.why_not.find("pre-release"), std::string::npos);
  EXPECT_FALSE(allowed("8.5.0-rc1", {">=8.5"}));
  EXPECT_FALSE(allowed("8.5.0-rc1", {"8.5.*"}));
  EXPECT_FALSE(allowed("8.5.0-rc1", {"8.5.0"}));
  EXPECT_TRUE(allowed("8.5.0-rc1", {"8.5.0-rc1"}));
  EXPECT_TRUE(allowed("8.5-rc01", {"=8.5.0-rc1"}));
  EXPECT_FALSE(allowed("8.5.0-rc2", {"8.5.0-rc1"}));
  EXPECT_TRUE(allowed("8.5.0-rc2", {">=8.4 <8.5", "8.5.0-rc2"}));
  EXPECT_FALSE(allowed("8.5.0", {"8.5.0-rc1"}));  // the release is not its candidate
}

TEST(Constraint, MalformedConstraintsAreRejectedNamingTheToken) {
  EXPECT_NE(problem("").find("empty"), std::string::npos);
  EXPECT_NE(problem(">=8.4 <").find("'<': an operator needs a version"), std::string::npos);
  EXPECT_NE(problem("~8.4").find("'~8.4'"), std::string::npos);
  EXPECT_NE(problem(">=v8.4").find("starting with a digit"), std::string::npos);
  EXPECT_NE(problem(">=8.4.*").find("wildcard takes no operator"), std::string::npos);
  EXPECT_NE(problem("8.*.1").find("last numbers"), std::string::npos);
  EXPECT_NE(problem("8.4*").find("last numbers"), std::string::npos);
  EXPECT_NE(problem(">=5.15.0-generic").find("'-generic' would be ignored"), std::string::npos);
  EXPECT_NE(problem("<9.0-rc1").find("cannot be a pre-release"), std::string::npos);
  EXPECT_NE(problem(">=9 <8").find("admits no version"), std::string::npos);
  EXPECT_NE(problem(">8.4 <8.4").find("admits no version"), std::string::npos);
  EXPECT_NE(problem(">=8.4 <8.4.0").find("admits no version"), std::string::npos);
  EXPECT_EQ(problem(">=8.4 <=8.4"), "(accepted)");  // exactly 8.4
  EXPECT_EQ(problem("1:2.*"), "(accepted)");
}

TEST(Constraint, DescribeShowsWhatTheMatrixSays) {
  EXPECT_EQ(constraint({">=8.4 <9"}).describe(), ">=8.4 <9");
  EXPECT_EQ(constraint({"8.4.4", "8.5.1"}).describe(), "[8.4.4, 8.5.1]");
}

}  // namespace
}  // namespace fabgate::compat
