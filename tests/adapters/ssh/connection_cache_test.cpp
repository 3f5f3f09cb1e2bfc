#include "adapters/ssh/connection_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace fabgate::ssh {
namespace {

class EchoShell final : public RemoteShell {
 public:
  explicit EchoShell(std::string user) : user_(std::move(user)) {}
  Expected<CommandResult, SshFailure> run(const std::string& command, Duration) override {
    CommandResult result;
    result.exit_status = 0;
    result.stdout_text = user_ + ":" + command;
    return result;
  }

 private:
  std::string user_;
};

// Records every connect so tests can see which login was used and how often.
class RecordingConnector final : public ShellConnector {
 public:
  Expected<std::unique_ptr<RemoteShell>, SshFailure> connect(const SshDevice& device,
                                                             CredentialRole role) override {
    ++connects;
    logins.push_back(device.login(role).user);
    if (device.host == "unreachable") {
      return SshFailure{SshFailure::Kind::unreachable, "no route to host"};
    }
    return std::unique_ptr<RemoteShell>(new EchoShell(device.login(role).user));
  }
  std::atomic<int> connects{0};
  std::vector<std::string> logins;
};

SshDevice device(std::string name, std::string host = "10.0.0.1") {
  return SshDevice{std::move(name), std::move(host), 22, SshLogin{"reader", "", true},
                   SshLogin{"changer", "", true}};
}

TEST(ConnectionCache, ReusesOneSessionPerDeviceAndRole) {
  // Given three commands on one device with the read role, then one connect serves them all.
  RecordingConnector connector;
  ConnectionCache cache(connector);
  auto leaf = device("leaf1");
  for (int i = 0; i < 3; ++i) {
    auto shell = cache.shell(leaf, CredentialRole::read);
    ASSERT_TRUE(shell);
    EXPECT_TRUE(shell.value()->run("true", Duration{1000}));
  }
  EXPECT_EQ(connector.connects.load(), 1);
}

TEST(ConnectionCache, AReadNeverUsesTheChangeLogin) {
  // Given a device with distinct read and change users, then each role connects with its own.
  RecordingConnector connector;
  ConnectionCache cache(connector);
  auto leaf = device("leaf1");
  auto reader = cache.shell(leaf, CredentialRole::read);
  auto changer = cache.shell(leaf, CredentialRole::change);
  ASSERT_TRUE(reader && changer);
  EXPECT_EQ(reader.value()->run("id", Duration{1000})->stdout_text, "reader:id");
  EXPECT_EQ(changer.value()->run("id", Duration{1000})->stdout_text, "changer:id");
  EXPECT_EQ(connector.logins, (std::vector<std::string>{"reader", "changer"}));
}

TEST(ConnectionCache, ProbesGetASessionOfTheirOwn) {
  // Given a host read by a snapshot and by a probe, then each lane has its own session (a
  // probe running for a second does not hold up the snapshot beside it), each reused, and
  // closing the device closes both.
  RecordingConnector connector;
  ConnectionCache cache(connector);
  auto host = device("host1");
  auto commands = cache.shell(host, CredentialRole::read);
  auto probes = cache.shell(host, CredentialRole::read, SessionLane::probes);
  ASSERT_TRUE(commands && probes);
  EXPECT_NE(commands.value(), probes.value());
  EXPECT_EQ(cache.shell(host, CredentialRole::read, SessionLane::probes).value(), probes.value());
  EXPECT_EQ(cache.shell(host, CredentialRole::read).value(), commands.value());
  EXPECT_EQ(connector.connects.load(), 2);
  EXPECT_EQ(connector.logins, (std::vector<std::string>{"reader", "reader"}));
  cache.close("host1", CredentialRole::read);
  ASSERT_TRUE(cache.shell(host, CredentialRole::read));
  ASSERT_TRUE(cache.shell(host, CredentialRole::read, SessionLane::probes));
  EXPECT_EQ(connector.connects.load(), 4);
}

TEST(ConnectionCache, RemembersAFailedConnectInsteadOfRetryingPerCommand) {
  // Given an unreachable device asked for five times, then it is contacted once and every
  // caller gets the same typed failure.
  RecordingConnector connector;
  ConnectionCache cache(connector);
  auto gone = device("leaf9", "unreachable");
  for (int i = 0; i < 5; ++i) {
    auto shell = cache.shell(gone, CredentialRole::read);
    ASSERT_FALSE(shell);
    EXPECT_EQ(shell.error().kind, SshFailure::Kind::unreachable);
  }
  EXPECT_EQ(connector.connects.load(), 1);
}

}  // namespace
}  // namespace fabgate::ssh
