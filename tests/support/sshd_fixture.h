#pragma once

#include <memory>
#include <optional>
#include <string>

#include <unistd.h>

#include "adapters/ssh/ssh_target.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fabgate::testing {

// A real OpenSSH server for integration tests: listens on 127.0.0.1 only, on a free port,
// runs as the current user, and lives in its own temporary directory with
//   - a generated ed25519 host key, and a second one to fake a changed host key,
//   - an authorized user key and a second user key the server does not know,
//   - known_hosts files (matching, changed, empty) and an SSH config with a Host alias.
// The server is stopped and the directory removed when the object dies, even on failure.
//
// Typical use:
//   if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
//   auto sshd = SshdFixture::start();
//   ASSERT_TRUE(sshd) << SshdFixture::last_error();
//   ssh::SshDevice device = sshd->device("leaf1");
class SshdFixture {
 public:
  struct Options {
    int max_startups = 10;  // sshd's MaxStartups start value (unauthenticated connections)
    int max_sessions = 10;  // channels per connection
    // Log in as an unprivileged user instead of the current one. OpenSSH runs root sessions in
    // its monitor process, which ignores "signal" channel requests, so tests of remote process
    // control need a non-root login. Needs root: sshd runs in a private mount namespace where a
    // copy of /etc/passwd with one extra user is bind-mounted; the host's files are untouched.
    bool unprivileged_login = false;
    // Seconds the login shell sleeps before it runs each command, to imitate slow shell
    // start-up files (pyenv, conda, motd scripts). Needs root, like every login-shell setting.
    int slow_shell_seconds = 0;
  };

  // Hermetic logins. As root, sshd runs in a private mount namespace over a copy of
  // /etc/passwd in which the login account's home is the fixture's empty `home()` and its shell
  // is /bin/sh (or the slow wrapper above): no test depends on the invoking account's dotfiles,
  // home folder, PATH or login shell. Without root that is impossible, so unavailable() says
  // why and the tests skip.
  static bool hermetic_logins() { return ::geteuid() == 0; }

  // The name and uid of the unprivileged test user (only inside the fixture's namespace).
  static constexpr const char* kUnprivilegedUser = "fabgate-test";
  static constexpr int kUnprivilegedUid = 64999;

  // Why the fixture cannot run here (not root, sshd or ssh-keygen missing), or nullopt.
  static std::optional<std::string> unavailable();
  // Starts a server; nullptr on failure with the reason in last_error().
  static std::unique_ptr<SshdFixture> start(Options options);
  static std::unique_ptr<SshdFixture> start() { return start(Options{}); }
  static const std::string& last_error();

  ~SshdFixture() = default;
  SshdFixture(const SshdFixture&) = delete;
  SshdFixture& operator=(const SshdFixture&) = delete;

  int port() const { return port_; }
  const std::string& user() const { return user_; }
  std::string dir() const { return dir_.path(); }
  // A directory the login user can write to (its home).
  std::string home() const { return dir_.file("home"); }
  std::string file(const std::string& name) const { return dir_.file(name); }

  std::string user_key() const { return dir_.file("user_ed25519"); }          // authorized
  std::string stranger_key() const { return dir_.file("stranger_ed25519"); }  // not authorized
  std::string known_hosts() const { return dir_.file("known_hosts"); }        // the real key
  std::string changed_known_hosts() const { return dir_.file("known_hosts_changed"); }
  std::string empty_known_hosts() const { return dir_.file("known_hosts_empty"); }
  // An SSH config in which Host `alias()` points at this server with the user key.
  std::string ssh_config() const { return dir_.file("ssh_config"); }
  static std::string alias() { return "fabgate-test-target"; }

  // A device that reaches this server with the authorized key for both logins.
  ssh::SshDevice device(const std::string& name) const;
  // Options for LibsshConnector: this server's known_hosts, the fixture's SSH config.
  ssh::SshOptions options() const;

  std::string log() const;  // sshd's log, for failure messages
  void stop() { server_.stop(); }

 private:
  SshdFixture() : dir_("fabgate-sshd") {}
  bool launch(const Options& options, std::string& error);

  TempDir dir_;
  ChildProcess server_;
  int port_ = 0;
  std::string user_;
};

}  // namespace fabgate::testing
