#include "adapters/ssh/connection_cache.h"

#include "adapters/ssh/libssh_shell.h"

namespace fabgate::ssh {

Expected<std::unique_ptr<RemoteShell>, SshFailure> LibsshConnector::connect(const SshDevice& device,
                                                                            CredentialRole role) {
  auto shell = LibsshShell::connect(device, role, options_);
  if (!shell) return shell.error();
  if (const auto& accepted = shell.value()->accepted_host_key()) {
    std::lock_guard lock(mutex_);
    accepted_.push_back(*accepted);
  }
  return std::unique_ptr<RemoteShell>(std::move(shell.value()));
}

std::vector<AcceptedHostKey> LibsshConnector::accepted_host_keys() const {
  std::lock_guard lock(mutex_);
  return accepted_;
}

Expected<RemoteShell*, SshFailure> ConnectionCache::shell(const SshDevice& device,
                                                          CredentialRole role) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto& slot = entries_[{device.name, role}];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
  }
  // Connecting happens outside the map lock so other devices connect in parallel.
  std::lock_guard lock(entry->mutex);
  if (!entry->attempted) {
    entry->attempted = true;
    auto connected = connector_.connect(device, role);
    if (connected) {
      entry->shell = std::move(connected.value());
    } else {
      entry->failure = connected.error();
    }
  }
  if (entry->failure) return *entry->failure;
  return entry->shell.get();
}

void ConnectionCache::close_all() {
  std::map<std::pair<std::string, CredentialRole>, std::shared_ptr<Entry>> closing;
  {
    std::lock_guard lock(mutex_);
    closing.swap(entries_);
  }
  // Destroying the entries disconnects every session.
}

}  // namespace fabgate::ssh
