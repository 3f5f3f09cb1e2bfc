// fabgate-gnmid's login check (adapters/gnmi/target/login_check.h): what it admits and what it
// reads from the environment. That the comparison takes the same time whatever the values is
// a property of its construction (digests compared with CRYPTO_memcmp), not a timed test.

#include "adapters/gnmi/target/login_check.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace fabgate::gnmi::target {
namespace {

TEST(EqualInConstantTime, IsEqualityOfTheBytesWhateverTheLengths) {
  // Given equal values, then they are equal; given a prefix, an extension, one differing last
  // byte, an empty value or an embedded NUL, then they are not: a length difference is a
  // difference, never a comparison of the shorter length only.
  EXPECT_TRUE(equal_in_constant_time("s3cret", "s3cret"));
  EXPECT_TRUE(equal_in_constant_time("", ""));
  EXPECT_FALSE(equal_in_constant_time("s3cre", "s3cret"));
  EXPECT_FALSE(equal_in_constant_time("s3cret", "s3cret!"));
  EXPECT_FALSE(equal_in_constant_time("s3cret", "s3creT"));
  EXPECT_FALSE(equal_in_constant_time("", "s3cret"));
  EXPECT_FALSE(equal_in_constant_time(std::string("s3cret\0x", 8), "s3cret"));
  std::string long_value(1 << 16, 'a');
  std::string other = long_value;
  other.back() = 'b';
  EXPECT_TRUE(equal_in_constant_time(long_value, std::string(1 << 16, 'a')));
  EXPECT_FALSE(equal_in_constant_time(long_value, other));
}

TEST(LoginCheck, AdmitsOnlyTheExpectedUsernameAndPasswordTogether) {
  // Given the login fabgate/s3cret, then exactly that pair is admitted: a wrong or missing
  // (empty) password, a wrong username, a prefix of the password or the two swapped are not.
  LoginCheck check(GnmiLogin{"fabgate", "s3cret"});
  EXPECT_TRUE(check.admits("fabgate", "s3cret"));
  EXPECT_FALSE(check.admits("fabgate", "guess"));
  EXPECT_FALSE(check.admits("fabgate", ""));
  EXPECT_FALSE(check.admits("fabgate", "s3cre"));
  EXPECT_FALSE(check.admits("", "s3cret"));
  EXPECT_FALSE(check.admits("admin", "s3cret"));
  EXPECT_FALSE(check.admits("s3cret", "fabgate"));
  EXPECT_FALSE(check.admits("", ""));
}

TEST(ExpectedLogin, ComesFromTheEnvironmentOnlyWhenBothValuesAreNonEmpty) {
  // Given both variables set, then they are the login; given the password (or the username)
  // unset or empty, then it is an auth failure naming the variable and why, so fabgate-gnmid
  // refuses to start instead of admitting calls without a password.
  ::setenv("FGT_LC_USERNAME", "fabgate", 1);
  ::setenv("FGT_LC_PASSWORD", "s3cret", 1);
  auto login = expected_login_from_environment("FGT_LC");
  ASSERT_TRUE(login) << login.error().message;
  EXPECT_EQ(login->username, "fabgate");
  EXPECT_EQ(login->password, "s3cret");

  ::setenv("FGT_LC_PASSWORD", "", 1);
  auto empty = expected_login_from_environment("FGT_LC");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().kind, GnmiFailure::Kind::auth);
  EXPECT_EQ(empty.error().message.rfind("--credentials-env FGT_LC: FGT_LC_PASSWORD is empty: ", 0),
            0u)
      << empty.error().message;

  ::unsetenv("FGT_LC_PASSWORD");
  auto unset = expected_login_from_environment("FGT_LC");
  ASSERT_FALSE(unset);
  EXPECT_EQ(
      unset.error().message.rfind("--credentials-env FGT_LC: FGT_LC_PASSWORD is not set: ", 0), 0u)
      << unset.error().message;

  ::setenv("FGT_LC_USERNAME", "", 1);
  ::setenv("FGT_LC_PASSWORD", "s3cret", 1);
  auto no_user = expected_login_from_environment("FGT_LC");
  ASSERT_FALSE(no_user);
  EXPECT_NE(no_user.error().message.find("FGT_LC_USERNAME is empty"), std::string::npos)
      << no_user.error().message;
  ::unsetenv("FGT_LC_USERNAME");
  ::unsetenv("FGT_LC_PASSWORD");
}

}  // namespace
}  // namespace fabgate::gnmi::target
