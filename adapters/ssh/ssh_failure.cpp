#include "adapters/ssh/ssh_failure.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::ssh {

std::string_view to_string(SshFailure::Kind kind) {
  switch (kind) {
    case SshFailure::Kind::unreachable:
      return "unreachable";
    case SshFailure::Kind::auth:
      return "auth";
    case SshFailure::Kind::host_key:
      return "host-key";
    case SshFailure::Kind::timeout:
      return "timeout";
    case SshFailure::Kind::rejected:
      return "rejected";
    case SshFailure::Kind::output_too_large:
      return "output-too-large";
    case SshFailure::Kind::incomplete:
      return "incomplete";
  }
  return "unknown";
}

std::string_view to_string(SshFailure::Delivery delivery) {
  return delivery == SshFailure::Delivery::not_sent ? "not-sent" : "sent";
}

SshFailure before_sending(SshFailure failure) {
  failure.delivery = SshFailure::Delivery::not_sent;
  return failure;
}

std::string_view to_string(CredentialRole role) {
  return role == CredentialRole::change ? "change" : "read";
}

}  // namespace fabgate::ssh
