#pragma once

#include <libssh/libssh.h>

#include <optional>
#include <string>

#include "adapters/core/result.h"
#include "adapters/ssh/accepted_host_key.h"
#include "adapters/ssh/ssh_failure.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::ssh {

// Checks the server's host key on a connected session that has not authenticated yet, using
// ssh_session_is_known_server() and acting on every result:
//   OK                 -> continue (nullopt)
//   CHANGED, OTHER     -> host_key failure naming the offered key and the known_hosts file
//   UNKNOWN, NOT_FOUND -> host_key failure, unless `policy` is accept_and_record: then the key
//                         is appended to known_hosts and returned so the caller records it
//   ERROR              -> host_key failure (an unchecked key is never trusted)
// The caller must not authenticate or send anything when this fails.
// `known_hosts_file`, when not empty, is the file the session's known_hosts options stand for
// (they may point at a KnownHostsFilter extract of it): messages name it and an accepted key
// is appended to it.
Expected<std::optional<AcceptedHostKey>, SshFailure> verify_host_key(
    ssh_session session, const std::string& device, UnknownHostKeys policy,
    const std::string& known_hosts_file = "");

// The name known_hosts uses for the session's server: "host" on port 22, "[host]:port" otherwise.
std::string known_hosts_name(ssh_session session);

}  // namespace fabgate::ssh
