// allowed_signers as the approval gate reads it: exact principals only, wildcard and negated
// patterns refused by line, and the text handed to ssh-keygen without the refused lines.

#include "gates/approval/allowed_signers.h"

#include <gtest/gtest.h>

#include "adapters/core/text.h"

namespace fabgate::approval {
namespace {

const char* kSigners =
    "# reviewers\n"
    "alice@example.net ssh-ed25519 AAAA\n"
    "*@ops.example.net,!eve@ops.example.net namespaces=\"fabgate-plan\" ssh-ed25519 BBBB\n"
    "\"carol smith,dave@example.net\" ssh-ed25519 CCCC\n"
    "  # indented comment\n"
    "ops?@example.net ssh-ed25519 DDDD\n";

TEST(AllowedSigners, OnlyExactPrincipalsAreListed) {
  // Given exact, quoted, comma-listed and pattern principals, then exactly the literal names
  // are listed (case-sensitive, as OpenSSH compares them) and nothing a pattern would match.
  AllowedSigners signers(kSigners);
  EXPECT_TRUE(signers.lists("alice@example.net"));
  EXPECT_TRUE(signers.lists("carol smith"));
  EXPECT_TRUE(signers.lists("dave@example.net"));
  EXPECT_FALSE(signers.lists("Alice@example.net"));
  EXPECT_FALSE(signers.lists("bob@ops.example.net"));
  EXPECT_FALSE(signers.lists("*@ops.example.net"));
  EXPECT_FALSE(signers.lists("ops1@example.net"));
  EXPECT_FALSE(signers.lists("reviewers"));
  EXPECT_EQ(signers.principals(),
            (std::vector<std::string>{"alice@example.net", "carol smith", "dave@example.net"}));
}

TEST(AllowedSigners, WildcardLinesAreNamedAndLeftOutOfWhatIsVerified) {
  // Given pattern lines 3 and 6, then a name they match is traced to its line, a name the
  // negation excludes is not, and the text for ssh-keygen keeps every line number but blanks
  // those two lines.
  AllowedSigners signers(kSigners);
  auto bob = signers.wildcard_line_for("bob@ops.example.net");
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->line, 3);
  EXPECT_EQ(bob->principals, "*@ops.example.net,!eve@ops.example.net");
  EXPECT_FALSE(signers.wildcard_line_for("eve@ops.example.net"));
  auto ops = signers.wildcard_line_for("ops7@example.net");
  ASSERT_TRUE(ops);
  EXPECT_EQ(ops->line, 6);
  EXPECT_FALSE(signers.wildcard_line_for("ops77@example.net"));

  auto lines = split_lines(signers.usable_text());
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[1], "alice@example.net ssh-ed25519 AAAA");
  EXPECT_EQ(lines[2], "");
  EXPECT_EQ(lines[5], "");
  EXPECT_EQ(signers.usable_text().find("BBBB"), std::string::npos);
  EXPECT_EQ(signers.usable_text().find("DDDD"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::approval
