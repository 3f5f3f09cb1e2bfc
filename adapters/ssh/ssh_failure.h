#pragma once

#include <string>
#include <string_view>

namespace fabgate::ssh {

// Why talking to a device failed. Callers branch on `kind` (a host-key refusal is a security
// event, a timeout is not). `message` states the cause ("timed out after 10 s"); callers put
// the gate, the device and the operation in front of it.
struct SshFailure {
  enum class Kind {
    unreachable,       // no TCP connection or SSH handshake within the connect deadline
    auth,              // every credential was refused, or none was usable
    host_key,          // the host key changed, is unknown, or could not be checked
    timeout,           // the command ran past its deadline and was stopped
    rejected,          // the server refused a channel or the exec request, or the link broke
    output_too_large,  // the command kept writing past the hard output limit and was stopped
    incomplete,        // batched: the shell ended, or was stopped, before this command's frames
                       // completed (it ran only in part, or not at all); never a result
  };
  Kind kind = Kind::unreachable;
  std::string message;
};

// "unreachable", "auth", "host-key", ... as written in evidence and reports.
std::string_view to_string(SshFailure::Kind kind);

}  // namespace fabgate::ssh
