#pragma once

// A "device" that is the test's real sshd on 127.0.0.1, and one controller's SSH sessions to
// it, for tests of pipeline pieces that run commands on devices (confirm timer, device lock).

#include <string>

#include "adapters/ssh/connection_cache.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/remote.h"
#include "tests/support/sshd_fixture.h"

namespace fabgate::pipeline {

inline intent::Device device_on(const testing::SshdFixture& sshd, const std::string& name) {
  intent::Device device;
  device.name = name;
  device.ssh.host = "127.0.0.1";
  device.ssh.port = sshd.port();
  intent::Credential login{sshd.user(), sshd.user_key(), false};
  device.read = login;
  device.change = login;
  return device;
}

// One controller's SSH sessions: destroying it closes every connection it opened.
struct SshSessions {
  explicit SshSessions(const testing::SshdFixture& sshd)
      : connector(sshd.options()), connections(connector), remote(connections) {}
  ssh::LibsshConnector connector;
  ssh::ConnectionCache connections;
  SshRemote remote;
};

}  // namespace fabgate::pipeline
