#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "adapters/core/duration.h"

namespace fabgate::ssh {

// Which of a device's two logins a caller acts with. Snapshots and probes read; steps and
// rollback change. The role is part of every API that opens a session so that a read can
// never borrow the change credential.
enum class CredentialRole { read, change };

std::string_view to_string(CredentialRole role);

// A login: a user and how to prove it. Keys and the agent only; passwords are never read.
struct SshLogin {
  std::string user;           // empty: from the SSH config, else the local user
  std::string identity_file;  // empty: the agent and the config's IdentityFile entries
  bool use_agent = true;
};

// A device as the SSH adapter sees it: where to connect and its two logins.
struct SshDevice {
  std::string name;  // the inventory name, used in every message
  std::string host;  // address or a Host alias from the SSH config
  int port = 0;      // 0: from the SSH config, else 22
  SshLogin read;
  SshLogin change;

  const SshLogin& login(CredentialRole role) const {
    return role == CredentialRole::change ? change : read;
  }
};

// What to do when a host is not in known_hosts at all. Never applies to a changed key.
enum class UnknownHostKeys { refuse, accept_and_record };

// When a new session's login-shell start-up is timed (SshOptions::shell_startup_timeout).
enum class ShellStartupCheck {
  // Right after login, with the trivial command `true` on its own channel.
  at_connect,
  // On the session's first use: a batch (RemoteShell::run_batch) times it as the wait for its
  // first frame, so a device that gets one batch costs one exec, not two; any other first call
  // runs `true` first, as at_connect does.
  on_first_use,
};

// Session settings shared by every connection of a run.
struct SshOptions {
  std::string config_file;       // empty: ~/.ssh/config and /etc/ssh/ssh_config; "none": no file
  std::string known_hosts_file;  // empty: ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts
  Duration connect_timeout{5'000};
  // Every new session first runs a trivial command (`true`) to time the remote login shell's
  // start-up (shell start-up files such as ~/.bashrc run for every command): a shell slower
  // than `slow_shell_startup` is reported, and one that does not finish within
  // `shell_startup_timeout` fails the connection with that cause instead of leaving the first
  // real command to time out unexplained. Zero timeout: not measured.
  Duration shell_startup_timeout{10'000};
  Duration slow_shell_startup{1'000};
  ShellStartupCheck shell_startup_check = ShellStartupCheck::at_connect;
  UnknownHostKeys unknown_host_keys = UnknownHostKeys::refuse;
  // Output kept per stream; more is read and discarded and the result says it was truncated.
  std::size_t output_cap = 4u << 20;
  // A command still writing after this many bytes on one stream is stopped (output_too_large)
  // so a runaway command cannot hold a worker until its deadline.
  std::size_t output_limit = 64u << 20;
};

}  // namespace fabgate::ssh
