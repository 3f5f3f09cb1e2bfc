#pragma once

// RAII owners for libssh handles. Internal to adapters/ssh: nothing outside the adapter sees a
// libssh type.

#include <libssh/libssh.h>

#include <memory>
#include <string>

namespace fabgate::ssh {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* handle) const {
    Free(handle);
  }
};

// A session is disconnected before it is freed so the server sees an orderly close.
void disconnect_and_free(ssh_session session);

using SshSession = std::unique_ptr<ssh_session_struct, Deleter<disconnect_and_free>>;
using SshChannel = std::unique_ptr<ssh_channel_struct, Deleter<ssh_channel_free>>;
using SshKey = std::unique_ptr<ssh_key_struct, Deleter<ssh_key_free>>;
using SshCString = std::unique_ptr<char, Deleter<ssh_string_free_char>>;

// ssh_init() exactly once per process, before the first session; safe from any thread.
void ensure_libssh_initialised();

// A string option of a session ("" when unset), e.g. SSH_OPTIONS_KNOWNHOSTS.
std::string session_option(ssh_session session, ssh_options_e option);

}  // namespace fabgate::ssh
