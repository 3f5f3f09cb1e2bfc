#include "adapters/ssh/host_key_check.h"

#include <mutex>

#include "adapters/ssh/known_hosts_filter.h"
#include "adapters/ssh/libssh_handles.h"

namespace fabgate::ssh {

namespace {

struct OfferedKey {
  std::string type;
  std::string fingerprint;
};

OfferedKey describe_server_key(ssh_session session) {
  ssh_key raw_key = nullptr;
  if (ssh_get_server_publickey(session, &raw_key) != SSH_OK) return {"unknown", "unavailable"};
  SshKey key{raw_key};
  OfferedKey offered{ssh_key_type_to_char(ssh_key_type(key.get())), "unavailable"};
  unsigned char* hash = nullptr;
  size_t hash_length = 0;
  if (ssh_get_publickey_hash(key.get(), SSH_PUBLICKEY_HASH_SHA256, &hash, &hash_length) == 0) {
    SshCString text{ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hash_length)};
    if (text) offered.fingerprint = text.get();
    ssh_clean_pubkey_hash(&hash);
  }
  return offered;
}

// Appending to known_hosts from several connecting threads at once could interleave lines.
std::mutex known_hosts_write_mutex;

}  // namespace

std::string known_hosts_name(ssh_session session) {
  std::string host = session_option(session, SSH_OPTIONS_HOST);
  unsigned int port = 22;
  ssh_options_get_port(session, &port);
  if (port == 22) return host;
  return "[" + host + "]:" + std::to_string(port);
}

Expected<std::optional<AcceptedHostKey>, SshFailure> verify_host_key(
    ssh_session session, const std::string& device, UnknownHostKeys policy,
    const std::string& known_hosts_file) {
  const std::string file = known_hosts_file.empty()
                               ? session_option(session, SSH_OPTIONS_KNOWNHOSTS)
                               : known_hosts_file;
  const std::string name = known_hosts_name(session);
  const enum ssh_known_hosts_e state = ssh_session_is_known_server(session);
  auto offered = [&] { return describe_server_key(session); };
  auto refuse = [](std::string message) -> Expected<std::optional<AcceptedHostKey>, SshFailure> {
    return SshFailure{SshFailure::Kind::host_key, std::move(message)};
  };

  switch (state) {
    case SSH_KNOWN_HOSTS_OK:
      return std::optional<AcceptedHostKey>{};
    case SSH_KNOWN_HOSTS_CHANGED: {
      OfferedKey key = offered();
      return refuse("host key for " + name + " CHANGED: the server offers " + key.type + " " +
                    key.fingerprint + " but " + file +
                    " holds a different key for it; nothing was sent. If the change is "
                    "legitimate, remove the old entry (ssh-keygen -R '" +
                    name + "' -f " + file + ") and verify the new fingerprint out of band");
    }
    case SSH_KNOWN_HOSTS_OTHER: {
      OfferedKey key = offered();
      return refuse("host key for " + name + " does not match: the server offers " + key.type +
                    " " + key.fingerprint + " but " + file +
                    " holds a key of another type for it (possible attack); nothing was sent");
    }
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND: {
      OfferedKey key = offered();
      if (policy == UnknownHostKeys::refuse) {
        return refuse("host " + name + " is not in " + file + " (server key " + key.type + " " +
                      key.fingerprint +
                      "); nothing was sent. Add its key after checking the fingerprint, or run "
                      "with --accept-new-host-keys to accept and record it");
      }
      AcceptedHostKey accepted{device, name, key.type, key.fingerprint, file, false};
      if (!known_hosts_file.empty()) {
        // The session reads an extract (KnownHostsFilter): the key goes to the file itself.
        char* raw_entry = nullptr;
        if (ssh_session_export_known_hosts_entry(session, &raw_entry) == SSH_OK &&
            raw_entry != nullptr) {
          const std::string entry = raw_entry;
          accepted.saved = KnownHostsFilter::shared().append(known_hosts_file, entry, nullptr);
        }
        ssh_string_free_char(raw_entry);
        return std::optional<AcceptedHostKey>{std::move(accepted)};
      }
      std::lock_guard lock(known_hosts_write_mutex);
      accepted.saved = ssh_session_update_known_hosts(session) == SSH_OK;
      return std::optional<AcceptedHostKey>{std::move(accepted)};
    }
    case SSH_KNOWN_HOSTS_ERROR:
      return refuse("cannot check the host key of " + name + " against " + file + ": " +
                    ssh_get_error(session) + "; nothing was sent");
  }
  return refuse("unexpected host-key state " + std::to_string(static_cast<int>(state)) + " for " +
                name + "; nothing was sent");
}

}  // namespace fabgate::ssh
