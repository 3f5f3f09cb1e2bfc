// KnownHostsFilter: a fleet's known_hosts read once per run, and each session handed only the
// lines that can apply to its host (issue 46 item 2). Then LibsshShell with such a file
// against a real sshd.

#include "adapters/ssh/known_hosts_filter.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "adapters/ssh/connection_cache.h"
#include "adapters/ssh/libssh_shell.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::ssh {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

constexpr const char* kKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";

std::string fleet_known_hosts(int devices) {
  std::string text;
  for (int i = 1; i <= devices; ++i) {
    text += "[10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250) + "]:22 " + kKey +
            " device" + std::to_string(i) + "\n";
  }
  return text;
}

TEST(KnownHostsFilter, AHostGetsItsOwnLinesAndEveryLineTheIndexCannotRuleOutInFileOrder) {
  // Given a known_hosts with comments, other hosts, a hashed name, a wildcard, a negated
  // pattern, a marker and two lines for the host (one in a comma list, one upper case), then
  // the extract for the host holds exactly its two lines and the four unresolvable ones, in
  // the file's order, and nothing of the other hosts.
  TempDir dir;
  const std::string file = dir.file("known_hosts");
  write_file(file,
             "# fleet\n"
             "leaf1 " + std::string(kKey) + " a\n"
             "|1|c2FsdA==|aGFzaA== " + kKey + " b\n"
             "spine1,LEAF2 " + kKey + " c\n"
             "*.lab " + kKey + " d\n"
             "\n"
             "[leaf2]:2222 " + kKey + " e\n"
             "@revoked * " + kKey + " f\n"
             "!leaf3,leaf* " + kKey + " g\n"
             "leaf2 " + kKey + " h\n",
             0600);
  KnownHostsFilter filter;
  auto extract = filter.for_host(file, "leaf2");
  ASSERT_TRUE(extract) << extract.error();
  EXPECT_EQ(read_file(extract->path()),
            "|1|c2FsdA==|aGFzaA== " + std::string(kKey) + " b\n"
            "spine1,LEAF2 " + kKey + " c\n"
            "*.lab " + kKey + " d\n"
            "@revoked * " + kKey + " f\n"
            "!leaf3,leaf* " + kKey + " g\n"
            "leaf2 " + kKey + " h\n");
  auto on_port = filter.for_host(file, "[leaf2]:2222");
  ASSERT_TRUE(on_port) << on_port.error();
  EXPECT_NE(read_file(on_port->path()).find(" e\n"), std::string::npos);
  EXPECT_EQ(read_file(on_port->path()).find(" h\n"), std::string::npos);
}

TEST(KnownHostsFilter, APort22HostAlsoGetsItsBracketedLines) {
  // Given "[host]:22" in the file, then the host on port 22 gets it (libssh matches it too).
  TempDir dir;
  const std::string file = dir.file("known_hosts");
  write_file(file, fleet_known_hosts(3), 0600);
  KnownHostsFilter filter;
  auto extract = filter.for_host(file, "10.0.0.2");
  ASSERT_TRUE(extract) << extract.error();
  EXPECT_EQ(read_file(extract->path()), "[10.0.0.2]:22 " + std::string(kKey) + " device2\n");
}

TEST(KnownHostsFilter, AFleetFileIsReadOnceUntilItChangesAndExtractsGoAway) {
  // Given a 10,000-line file and 1,000 hosts looked up, then the file was read once; each
  // extract lives in memory and is gone (its descriptor closed) when dropped; and after the
  // file changes, the next lookup reads it again and sees the change.
  TempDir dir;
  const std::string file = dir.file("known_hosts");
  write_file(file, fleet_known_hosts(10'000), 0600);
  KnownHostsFilter filter;
  std::string last_path;
  for (int i = 1; i <= 1000; ++i) {
    auto extract = filter.for_host(file, "[10.0." + std::to_string(i / 250) + "." +
                                             std::to_string(i % 250) + "]:22");
    ASSERT_TRUE(extract) << extract.error();
    ASSERT_NE(read_file(extract->path()).find(" device" + std::to_string(i) + "\n"),
              std::string::npos);
    ASSERT_EQ(extract->path().rfind("/proc/self/fd/", 0), 0u);
    last_path = extract->path();
  }
  EXPECT_EQ(filter.lines_read(), 10'000u);
  char target[256] = {};
  const ssize_t length = ::readlink(last_path.c_str(), target, sizeof target - 1);
  EXPECT_TRUE(length < 0 || std::string(target).find("fabgate-known-hosts") == std::string::npos)
      << "the extract is still open: " << target;

  write_file(file, "newhost " + std::string(kKey) + " z\n", 0600);
  auto changed = filter.for_host(file, "newhost");
  ASSERT_TRUE(changed) << changed.error();
  EXPECT_EQ(read_file(changed->path()), "newhost " + std::string(kKey) + " z\n");
  EXPECT_EQ(filter.lines_read(), 10'001u);
}

TEST(KnownHostsFilter, AnAppendedKeyIsInTheFileAndTheIndexWithoutARead) {
  // Given a file already indexed, when a key is appended through the filter, then the file
  // ends with it, the next extract for that host has it, and the file was not read again.
  TempDir dir;
  const std::string file = dir.file("known_hosts");
  write_file(file, fleet_known_hosts(10), 0600);
  KnownHostsFilter filter;
  ASSERT_TRUE(filter.for_host(file, "nobody"));
  std::string error;
  ASSERT_TRUE(filter.append(file, "[fresh]:2200 " + std::string(kKey), &error)) << error;
  EXPECT_NE(read_file(file).find("\n[fresh]:2200 " + std::string(kKey) + "\n"), std::string::npos);
  auto extract = filter.for_host(file, "[fresh]:2200");
  ASSERT_TRUE(extract) << extract.error();
  EXPECT_EQ(read_file(extract->path()), "[fresh]:2200 " + std::string(kKey) + "\n");
  EXPECT_EQ(filter.lines_read(), 10u);
}

TEST(KnownHostsFilter, AMissingFileIsAnEmptyExtractAndAnAppendCreatesIt) {
  // Given no file, then a host's extract is empty (libssh: unknown host), and an accepted key
  // creates the file with mode 0600.
  TempDir dir;
  const std::string file = dir.file("absent");
  KnownHostsFilter filter;
  auto extract = filter.for_host(file, "leaf1");
  ASSERT_TRUE(extract) << extract.error();
  EXPECT_EQ(read_file(extract->path()), "");
  ASSERT_TRUE(filter.append(file, "leaf1 " + std::string(kKey) + "\n", nullptr));
  struct stat status {};
  ASSERT_EQ(::stat(file.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0600u);
  EXPECT_EQ(read_file(file), "leaf1 " + std::string(kKey) + "\n");
}

// ---- with a real sshd ----------------------------------------------------------------------

class KnownHostsFilterSshd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = testing::SshdFixture::start();
    ASSERT_TRUE(sshd_) << testing::SshdFixture::last_error();
  }
  std::unique_ptr<testing::SshdFixture> sshd_;
};

TEST_F(KnownHostsFilterSshd, TheDeviceIsTrustedAmongTenThousandOthersAndACHANGEDKeyStillRefused) {
  // Given the fixture's known_hosts line inside 10,000 other devices' lines, then the device
  // connects; given the same fleet file with a different key for it, then it is refused as
  // CHANGED and the message names the fleet file, not an extract.
  TempDir dir;
  const std::string own = read_file(sshd_->known_hosts());
  const std::string fleet = dir.file("fleet_known_hosts");
  write_file(fleet, fleet_known_hosts(5'000) + own + fleet_known_hosts(5'000), 0600);
  auto options = sshd_->options();
  options.known_hosts_file = fleet;
  // With many descriptors open (as in a fan-out), the extract's path is long enough to live
  // on the heap: a dangling copy of it would read freed memory and see no known_hosts at all.
  std::vector<int> held;
  for (int i = 0; i < 200; ++i) held.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  auto shell = LibsshShell::connect(sshd_->device("leaf1"), CredentialRole::read, options);
  for (int fd : held) ::close(fd);
  ASSERT_TRUE(shell) << shell.error().message;

  const std::string changed = dir.file("changed_fleet");
  write_file(changed, fleet_known_hosts(5'000) + read_file(sshd_->changed_known_hosts()), 0600);
  options.known_hosts_file = changed;
  auto refused = LibsshShell::connect(sshd_->device("leaf1"), CredentialRole::read, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, SshFailure::Kind::host_key);
  EXPECT_NE(refused.error().message.find("CHANGED"), std::string::npos);
  EXPECT_NE(refused.error().message.find(changed), std::string::npos) << refused.error().message;
}

TEST_F(KnownHostsFilterSshd, AnAcceptedKeyIsAppendedToTheFleetFileAndTrustedNextTime) {
  // Given a fleet file without the device and accept_and_record, then the key is appended to
  // that file (not to an extract) and a strict connect afterwards trusts it.
  TempDir dir;
  const std::string fleet = dir.file("fleet_known_hosts");
  write_file(fleet, fleet_known_hosts(2'000), 0600);
  auto options = sshd_->options();
  options.known_hosts_file = fleet;
  options.unknown_host_keys = UnknownHostKeys::accept_and_record;
  auto accepted = LibsshShell::connect(sshd_->device("leaf1"), CredentialRole::read, options);
  ASSERT_TRUE(accepted) << accepted.error().message;
  ASSERT_TRUE(accepted.value()->accepted_host_key());
  EXPECT_TRUE(accepted.value()->accepted_host_key()->saved);
  EXPECT_EQ(accepted.value()->accepted_host_key()->known_hosts_file, fleet);
  const std::string after = read_file(fleet);
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 2001);
  const std::string last_line = after.substr(after.rfind('\n', after.size() - 2) + 1);
  EXPECT_EQ(last_line.rfind(accepted.value()->accepted_host_key()->host + " ssh-ed25519 ", 0), 0u)
      << last_line;

  options.unknown_host_keys = UnknownHostKeys::refuse;
  auto again = LibsshShell::connect(sshd_->device("leaf1"), CredentialRole::read, options);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(again.value()->accepted_host_key());
}

}  // namespace
}  // namespace fabgate::ssh
