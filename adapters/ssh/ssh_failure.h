#pragma once

#include <string>
#include <string_view>

namespace fabgate::ssh {

// Why talking to a device failed. Callers branch on `kind` (a host-key refusal is a security
// event, a timeout is not) and, for commands that change a device, on `delivery` (whether the
// command may have run). `message` states the cause ("timed out after 10 s"); callers put the
// gate, the device and the operation in front of it.
struct SshFailure {
  enum class Kind {
    unreachable,       // no TCP connection or SSH handshake within the connect deadline, or the
                       // connection was lost (`delivery` says whether the command was sent)
    auth,              // every credential was refused, or none was usable
    host_key,          // the host key changed, is unknown, or could not be checked
    timeout,           // the command ran past its deadline and was stopped
    rejected,          // the server refused a channel or the exec request, or the link broke
    output_too_large,  // the command kept writing past the hard output limit and was stopped
    incomplete,        // batched: the shell ended, or was stopped, before this command's frames
                       // completed (it ran only in part, or not at all); never a result
  };
  // Whether the command may have reached the device when the failure happened.
  enum class Delivery {
    // Proven not sent: the failure came before the exec request was issued (connect, host key,
    // authentication, the shell start-up check, a channel the server would not open, a
    // connection already lost by an earlier command). Nothing of the command ran.
    not_sent,
    // The exec request was issued (or it cannot be told that it was not): the command's fate
    // is unknown, so the device may have applied it, whatever the kind of the failure (a
    // session dropped by the command itself, as an ifreload or a daemon restart does, included).
    sent,
  };
  Kind kind = Kind::unreachable;
  std::string message;
  // `sent` unless the code that failed proved otherwise: a failure nobody classified must never
  // let a change be treated as not applied.
  Delivery delivery = Delivery::sent;

  bool may_have_run() const { return delivery == Delivery::sent; }
};

// "unreachable", "auth", "host-key", ... as written in evidence and reports.
std::string_view to_string(SshFailure::Kind kind);
// "not-sent", "sent".
std::string_view to_string(SshFailure::Delivery delivery);

// `failure` marked as failing before its command was sent (SshFailure::Delivery::not_sent).
SshFailure before_sending(SshFailure failure);

}  // namespace fabgate::ssh
