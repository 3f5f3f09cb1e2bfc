#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapters/ssh/accepted_host_key.h"
#include "adapters/ssh/remote_shell.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::ssh {

// Opens a logged-in shell on a device with one of its logins.
//
// The seam exists so that the cache and the gates above it can be tested with fake shells;
// the real implementation is LibsshConnector.
class ShellConnector {
 public:
  virtual ~ShellConnector() = default;
  virtual Expected<std::unique_ptr<RemoteShell>, SshFailure> connect(const SshDevice& device,
                                                                     CredentialRole role) = 0;
};

// Connects with LibsshShell and remembers every host key it accepted on first use.
class LibsshConnector final : public ShellConnector {
 public:
  explicit LibsshConnector(SshOptions options) : options_(std::move(options)) {}

  Expected<std::unique_ptr<RemoteShell>, SshFailure> connect(const SshDevice& device,
                                                             CredentialRole role) override;

  const SshOptions& options() const { return options_; }
  std::vector<AcceptedHostKey> accepted_host_keys() const;

 private:
  SshOptions options_;
  mutable std::mutex mutex_;
  std::vector<AcceptedHostKey> accepted_;
};

// One session per (device, credential role) per run: opened lazily on first use, reused for
// every command (one channel each), closed when the cache is destroyed or close_all() runs.
//
// A failed connect is remembered too: later calls for the same pair return the same failure
// without another attempt, so an unreachable device costs one connect timeout per run rather
// than one per command. Different devices may be used from different threads at once; one
// device's shell must be used by one thread at a time (libssh sessions are not thread-safe).
class ConnectionCache {
 public:
  explicit ConnectionCache(ShellConnector& connector) : connector_(connector) {}
  ~ConnectionCache() { close_all(); }
  ConnectionCache(const ConnectionCache&) = delete;
  ConnectionCache& operator=(const ConnectionCache&) = delete;

  // The pointer stays valid until close_all() or destruction.
  Expected<RemoteShell*, SshFailure> shell(const SshDevice& device, CredentialRole role);

  void close_all();

 private:
  struct Entry {
    std::mutex mutex;
    bool attempted = false;
    std::unique_ptr<RemoteShell> shell;
    std::optional<SshFailure> failure;
  };

  ShellConnector& connector_;
  std::mutex mutex_;
  std::map<std::pair<std::string, CredentialRole>, std::shared_ptr<Entry>> entries_;
};

}  // namespace fabgate::ssh
