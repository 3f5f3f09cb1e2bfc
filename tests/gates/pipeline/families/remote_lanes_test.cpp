// SshRemote's sessions: a probe's commands go over a session of their own on each device, so a
// probe and a snapshot of the same host running at once (the restore's rounds) do not wait for
// each other; every other purpose shares the device's one session per role.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "adapters/ssh/connection_cache.h"
#include "gates/pipeline/families/remote.h"

namespace fabgate::pipeline {
namespace {

// Each session answers with its own number, so a test sees which session ran a command.
class NumberedShell final : public ssh::RemoteShell {
 public:
  explicit NumberedShell(int number) : number_(number) {}
  Expected<ssh::CommandResult, ssh::SshFailure> run(const std::string&, Duration) override {
    ssh::CommandResult result;
    result.exit_status = 0;
    result.stdout_text = std::to_string(number_);
    return result;
  }

 private:
  int number_;
};

class CountingConnector final : public ssh::ShellConnector {
 public:
  Expected<std::unique_ptr<ssh::RemoteShell>, ssh::SshFailure> connect(
      const ssh::SshDevice&, ssh::CredentialRole) override {
    return std::unique_ptr<ssh::RemoteShell>(new NumberedShell(++connects));
  }
  int connects = 0;
};

std::string session_of(Remote& remote, const intent::Device& device, std::string_view purpose) {
  auto result = remote.run(device, ssh::CredentialRole::read, "true", Duration{1000}, purpose);
  return result ? result->stdout_text : "failed: " + result.error().message;
}

TEST(SshRemoteLanes, ProbesHaveTheirOwnSessionAndEverythingElseSharesOne) {
  // Given a host read for a snapshot, a probe, a device lock and another probe, then the probes
  // share the second session and the rest the first: two connects in all.
  CountingConnector connector;
  ssh::ConnectionCache cache(connector);
  SshRemote remote(cache);
  intent::Device host;
  host.name = "host1";
  host.ssh.host = "10.0.0.11";
  EXPECT_EQ(session_of(remote, host, "snapshot"), "1");
  EXPECT_EQ(session_of(remote, host, "probe"), "2");
  EXPECT_EQ(session_of(remote, host, "device-lock"), "1");
  EXPECT_EQ(session_of(remote, host, "probe"), "2");
  EXPECT_EQ(connector.connects, 2);
}

}  // namespace
}  // namespace fabgate::pipeline
