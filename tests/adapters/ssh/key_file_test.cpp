#include "adapters/ssh/key_file.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/support/temp_dir.h"

namespace fabgate::ssh {
namespace {

using testing::TempDir;
using testing::write_file;

TEST(KeyFile, AcceptsAnOwnerOnlyKey) {
  // Given a key file with mode 0600 (or 0400), then it is accepted.
  TempDir dir;
  write_file(dir.file("id"), "key", 0600);
  write_file(dir.file("id_ro"), "key", 0400);
  EXPECT_TRUE(check_key_file(dir.file("id")));
  EXPECT_TRUE(check_key_file(dir.file("id_ro")));
}

TEST(KeyFile, RefusesAKeyOthersCanReadAndSaysHowToFixIt) {
  // Given a key file with mode 0644, then it is refused as an auth failure naming chmod 600.
  TempDir dir;
  write_file(dir.file("id"), "key", 0644);
  auto checked = check_key_file(dir.file("id"));
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().kind, SshFailure::Kind::auth);
  EXPECT_NE(checked.error().message.find("0644"), std::string::npos);
  EXPECT_NE(checked.error().message.find("chmod 600"), std::string::npos);
}

TEST(KeyFile, RefusesAMissingKeyWithTheCause) {
  // Given a key path that does not exist, then the failure names the path and the cause.
  auto checked = check_key_file("/nonexistent/fabgate/id");
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().message.find("/nonexistent/fabgate/id"), std::string::npos);
  EXPECT_NE(checked.error().message.find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::ssh

namespace fabgate::ssh {
namespace {

TEST(KeyFile, ExpandsAHomeRelativePath) {
  // Given paths written with ~ as inventories do, then they resolve under $HOME; others stay.
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  if (home.empty()) GTEST_SKIP() << "HOME is not set";
  EXPECT_EQ(expand_home("~/.ssh/id"), home + "/.ssh/id");
  EXPECT_EQ(expand_home("/etc/ssh/key"), "/etc/ssh/key");
  EXPECT_EQ(expand_home("~other/key"), "~other/key");
}

}  // namespace
}  // namespace fabgate::ssh
