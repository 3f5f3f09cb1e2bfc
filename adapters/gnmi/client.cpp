#include "adapters/gnmi/client.h"

#include <cstdlib>

namespace fabgate::gnmi {

std::string_view to_string(GnmiFailure::Kind kind) {
  switch (kind) {
    case GnmiFailure::Kind::unreachable:
      return "unreachable";
    case GnmiFailure::Kind::timeout:
      return "timeout";
    case GnmiFailure::Kind::rejected:
      return "rejected";
    case GnmiFailure::Kind::auth:
      return "auth";
    case GnmiFailure::Kind::tls:
      return "tls";
    case GnmiFailure::Kind::internal:
      return "internal";
  }
  return "internal";
}

std::optional<SetOperation::Kind> set_kind_from_name(std::string_view name) {
  if (name == "update") return SetOperation::Kind::update;
  if (name == "replace") return SetOperation::Kind::replace;
  if (name == "delete") return SetOperation::Kind::remove;
  return std::nullopt;
}

std::string_view to_string(SetOperation::Kind kind) {
  switch (kind) {
    case SetOperation::Kind::update:
      return "update";
    case SetOperation::Kind::replace:
      return "replace";
    case SetOperation::Kind::remove:
      return "delete";
  }
  return "update";
}

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::all:
      return "ALL";
    case DataType::config:
      return "CONFIG";
    case DataType::state:
      return "STATE";
    case DataType::operational:
      return "OPERATIONAL";
  }
  return "ALL";
}

GnmiResult<std::optional<GnmiLogin>> login_from_environment(std::string_view prefix) {
  if (prefix.empty()) return std::optional<GnmiLogin>{};
  std::string user_var = std::string(prefix) + "_USERNAME";
  std::string password_var = std::string(prefix) + "_PASSWORD";
  const char* user = std::getenv(user_var.c_str());
  const char* password = std::getenv(password_var.c_str());
  // An empty value is as good as none: a target that compares it would let in a caller that
  // sends no password at all.
  if (user == nullptr || password == nullptr || *user == '\0' || *password == '\0') {
    return GnmiFailure{GnmiFailure::Kind::auth, "gnmi: credentials: " + user_var + " and " +
                                                    password_var +
                                                    " must both be set, and not empty, in the "
                                                    "environment"};
  }
  return std::optional<GnmiLogin>{GnmiLogin{user, password}};
}

}  // namespace fabgate::gnmi
