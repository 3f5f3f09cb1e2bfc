#include "adapters/ssh/connection_cache.h"

#include "adapters/ssh/libssh_shell.h"

namespace fabgate::ssh {

std::string_view to_string(SessionLane lane) {
  return lane == SessionLane::probes ? "probes" : "commands";
}

Expected<std::unique_ptr<RemoteShell>, SshFailure> LibsshConnector::connect_lane(
    const SshDevice& device, CredentialRole role, SessionLane lane) {
  auto shell = LibsshShell::connect(device, role, options_);
  if (!shell) return shell.error();
  std::lock_guard lock(mutex_);
  if (const auto& accepted = shell.value()->accepted_host_key()) accepted_.push_back(*accepted);
  if (const auto& took = shell.value()->shell_startup()) {
    startups_.push_back(
        ShellStartup{device.name, role, lane, *took, *took >= options_.slow_shell_startup});
  } else {
    // Measured on first use (ShellStartupCheck::on_first_use); the connector outlives the
    // sessions it opened, as every caller keeps it outside its ConnectionCache.
    shell.value()->on_shell_startup_measured([this, name = device.name, role, lane](Duration took) {
      std::lock_guard lock(mutex_);
      startups_.push_back(
          ShellStartup{name, role, lane, took, took >= options_.slow_shell_startup});
    });
  }
  return std::unique_ptr<RemoteShell>(std::move(shell.value()));
}

std::vector<AcceptedHostKey> LibsshConnector::accepted_host_keys() const {
  std::lock_guard lock(mutex_);
  return accepted_;
}

std::vector<ShellStartup> LibsshConnector::shell_startups(std::size_t from) const {
  std::lock_guard lock(mutex_);
  if (from >= startups_.size()) return {};
  return {startups_.begin() + static_cast<std::ptrdiff_t>(from), startups_.end()};
}

std::string ShellStartup::note() const {
  const auto ms = took.count();
  return "remote shell start-up on " + device + " took " + std::to_string(ms / 1000) + "." +
         std::to_string((ms % 1000) / 100) +
         " s; check the login shell's start-up files (~/.bashrc, ~/.profile, /etc/profile.d): "
         "they run before every command fabgate sends";
}

Expected<RemoteShell*, SshFailure> ConnectionCache::shell(const SshDevice& device,
                                                          CredentialRole role, SessionLane lane) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto& slot = entries_[{device.name, role, lane}];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
  }
  // Connecting happens outside the map lock so other devices connect in parallel.
  std::lock_guard lock(entry->mutex);
  if (entry->shell && entry->shell->connection_lost()) {
    entry->lost.push_back(std::move(entry->shell));
    entry->attempted = false;
  }
  if (!entry->attempted) {
    entry->attempted = true;
    auto connected = connector_.connect_lane(device, role, lane);
    if (connected) {
      entry->shell = std::move(connected.value());
    } else {
      entry->failure = connected.error();
    }
  }
  if (entry->failure) return *entry->failure;
  return entry->shell.get();
}

void ConnectionCache::close(const std::string& device, CredentialRole role) {
  std::vector<std::shared_ptr<Entry>> closing;
  {
    std::lock_guard lock(mutex_);
    for (auto lane : {SessionLane::commands, SessionLane::probes}) {
      auto found = entries_.find({device, role, lane});
      if (found == entries_.end()) continue;
      closing.push_back(std::move(found->second));
      entries_.erase(found);
    }
  }
  // Disconnects here, outside the map lock, once no caller holds the entry.
}

void ConnectionCache::close_all() {
  std::map<Key, std::shared_ptr<Entry>> closing;
  {
    std::lock_guard lock(mutex_);
    closing.swap(entries_);
  }
  // Destroying the entries disconnects every session.
}

}  // namespace fabgate::ssh
