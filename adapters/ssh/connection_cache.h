#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "adapters/ssh/accepted_host_key.h"
#include "adapters/ssh/remote_shell.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::ssh {

// Which of a device's sessions a command goes over. A libssh session runs one command (or
// batch) at a time, so a probe that runs for a second on a host (a flows probe, a responder's
// start) would hold up the snapshot of that host taken beside it, and the other way round: the
// restore's rounds run both at once on the same hosts (docs/ssh.md, "Sessions").
enum class SessionLane { commands, probes };

// "commands" | "probes", as commands.jsonl's shell-startup records name a session.
std::string_view to_string(SessionLane lane);

// Opens a logged-in shell on a device with one of its logins.
//
// The seam exists so that the cache and the gates above it can be tested with fake shells;
// the real implementation is LibsshConnector.
class ShellConnector {
 public:
  virtual ~ShellConnector() = default;
  virtual Expected<std::unique_ptr<RemoteShell>, SshFailure> connect(const SshDevice& device,
                                                                     CredentialRole role) = 0;
  // As connect(), for a session of `lane` (ConnectionCache asks this way; a connector that keeps
  // a record of its sessions keeps the lane too).
  virtual Expected<std::unique_ptr<RemoteShell>, SshFailure> connect_lane(const SshDevice& device,
                                                                          CredentialRole role,
                                                                          SessionLane lane) {
    (void)lane;
    return connect(device, role);
  }
};

// How long a new session's login shell took to run a trivial command (SshOptions).
struct ShellStartup {
  std::string device;
  CredentialRole role = CredentialRole::read;
  SessionLane lane = SessionLane::commands;
  Duration took{0};
  bool slow = false;  // at or above SshOptions::slow_shell_startup
  // "remote shell start-up on leaf1 took 3.2 s; check the login shell's start-up files ..."
  std::string note() const;
};

// Connects with LibsshShell and remembers every host key it accepted on first use and every
// session's shell start-up time.
class LibsshConnector final : public ShellConnector {
 public:
  explicit LibsshConnector(SshOptions options) : options_(std::move(options)) {}

  Expected<std::unique_ptr<RemoteShell>, SshFailure> connect(const SshDevice& device,
                                                             CredentialRole role) override {
    return connect_lane(device, role, SessionLane::commands);
  }
  Expected<std::unique_ptr<RemoteShell>, SshFailure> connect_lane(const SshDevice& device,
                                                                  CredentialRole role,
                                                                  SessionLane lane) override;

  const SshOptions& options() const { return options_; }
  std::vector<AcceptedHostKey> accepted_host_keys() const;
  // Start-up times of the sessions opened so far, in connection order; `from` skips the
  // entries a caller has already seen.
  std::vector<ShellStartup> shell_startups(std::size_t from = 0) const;

 private:
  SshOptions options_;
  mutable std::mutex mutex_;
  std::vector<AcceptedHostKey> accepted_;
  std::vector<ShellStartup> startups_;
};

// One session per (device, credential role, lane) per run: opened lazily on first use, reused
// for every command (a channel per command, or one per batch), closed when the cache is
// destroyed or close_all() runs.
//
// A failed connect is remembered too: later calls for the same pair return the same failure
// without another attempt, so an unreachable device costs one connect timeout per run rather
// than one per command. A session whose connection was lost after it was opened
// (RemoteShell::connection_lost(): a step that restarted the management plane or killed its own
// session) is opened again on the next call, once per loss, so that the device's rollback can
// still reach it; a failure of that new connect is remembered the same way. Different devices may
// be used from different threads at once; one device's shell must be used by one thread at a time
// (libssh sessions are not thread-safe).
class ConnectionCache {
 public:
  explicit ConnectionCache(ShellConnector& connector) : connector_(connector) {}
  ~ConnectionCache() { close_all(); }
  ConnectionCache(const ConnectionCache&) = delete;
  ConnectionCache& operator=(const ConnectionCache&) = delete;

  // The pointer stays valid until close_all() or destruction.
  Expected<RemoteShell*, SshFailure> shell(const SshDevice& device, CredentialRole role,
                                           SessionLane lane = SessionLane::commands);

  // Closes the sessions of one device and role now, in every lane (a snapshot that will not
  // use them again); a later shell() call connects afresh.
  void close(const std::string& device, CredentialRole role);

  void close_all();

 private:
  struct Entry {
    std::mutex mutex;
    bool attempted = false;
    std::unique_ptr<RemoteShell> shell;
    // Sessions replaced after their connection was lost, kept so that the pointers handed out
    // for them stay valid until close_all().
    std::vector<std::unique_ptr<RemoteShell>> lost;
    std::optional<SshFailure> failure;
  };

  ShellConnector& connector_;
  std::mutex mutex_;
  using Key = std::tuple<std::string, CredentialRole, SessionLane>;
  std::map<Key, std::shared_ptr<Entry>> entries_;
};

}  // namespace fabgate::ssh
