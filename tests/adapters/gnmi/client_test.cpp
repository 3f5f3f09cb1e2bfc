#include "adapters/gnmi/client.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace fabgate::gnmi {
namespace {

TEST(GnmiLogin, ComesFromTheEnvironmentAndIsNeverSilentlyAnonymous) {
  // Given a credential prefix whose variables are set, then they become the login; given one
  // whose variables are missing or empty, then it is an auth failure naming the variables; given
  // no prefix, then there is no login.
  ::setenv("FGT_UNIT_USERNAME", "ops", 1);
  ::setenv("FGT_UNIT_PASSWORD", "pw", 1);
  auto login = login_from_environment("FGT_UNIT");
  ASSERT_TRUE(login && *login);
  EXPECT_EQ((*login)->username, "ops");
  EXPECT_EQ((*login)->password, "pw");

  auto missing = login_from_environment("FGT_UNIT_ABSENT");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, GnmiFailure::Kind::auth);
  EXPECT_EQ(missing.error().message,
            "gnmi: credentials: FGT_UNIT_ABSENT_USERNAME and FGT_UNIT_ABSENT_PASSWORD must both "
            "be set, and not empty, in the environment");

  // An empty password is refused like a missing one: it would log in as nobody in particular.
  ::setenv("FGT_UNIT_PASSWORD", "", 1);
  auto empty = login_from_environment("FGT_UNIT");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().kind, GnmiFailure::Kind::auth);
  ::unsetenv("FGT_UNIT_PASSWORD");

  auto none = login_from_environment("");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST(GnmiSetOperation, KindsAreSpelledAsInChangeFiles) {
  // Given the operation words of change files, then each maps to its kind and back; anything
  // else is not an operation.
  for (const char* word : {"update", "replace", "delete"}) {
    auto kind = set_kind_from_name(word);
    ASSERT_TRUE(kind) << word;
    EXPECT_EQ(to_string(*kind), word);
  }
  EXPECT_FALSE(set_kind_from_name("merge"));
}

}  // namespace
}  // namespace fabgate::gnmi
