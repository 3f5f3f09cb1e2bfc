#include "adapters/ssh/libssh_handles.h"

#include <mutex>

namespace fabgate::ssh {

void disconnect_and_free(ssh_session session) {
  ssh_disconnect(session);
  ssh_free(session);
}

void ensure_libssh_initialised() {
  static std::once_flag once;
  std::call_once(once, [] { ssh_init(); });
}

std::string session_option(ssh_session session, ssh_options_e option) {
  char* raw = nullptr;
  if (ssh_options_get(session, option, &raw) != SSH_OK || raw == nullptr) return {};
  SshCString value{raw};
  return value.get();
}

}  // namespace fabgate::ssh
