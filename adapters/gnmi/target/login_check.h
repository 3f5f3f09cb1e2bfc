#pragma once

// The username and password fabgate-gnmid requires of every call (--credentials-env PREFIX):
// read once from the environment, refused when either is unset or empty, and checked against
// the metadata of each call in time that does not depend on what either side holds.

#include <array>
#include <optional>
#include <string_view>

#include "adapters/gnmi/client.h"

namespace fabgate::gnmi::target {

// The login in $PREFIX_USERNAME and $PREFIX_PASSWORD. Both must be set and non-empty: an empty
// password would admit a call that sends no password metadata at all (a missing key reads as
// the empty value). The failure (kind auth) names the variable and the flag.
GnmiResult<GnmiLogin> expected_login_from_environment(std::string_view prefix);

// SHA-256 of a secret: two of them compare in the same time whatever the secrets hold.
// nullopt when OpenSSL fails; such a digest equals nothing.
using SecretDigest = std::array<unsigned char, 32>;
std::optional<SecretDigest> digest_of(std::string_view secret);

// Whether `a` and `b` hold the same bytes, in time that depends on neither's content: both are
// hashed and the digests compared over all their bytes (CRYPTO_memcmp), so neither the first
// differing byte nor a difference in length ends the comparison early.
bool equal_in_constant_time(std::string_view a, std::string_view b);

// The expected login, kept as digests (computed once, so a check costs no time that depends on
// the expected values; the constructor throws std::runtime_error when OpenSSL cannot compute
// them, at startup). admits() always compares both the username and the password.
class LoginCheck {
 public:
  explicit LoginCheck(const GnmiLogin& expected);
  bool admits(std::string_view username, std::string_view password) const;

 private:
  SecretDigest username_;
  SecretDigest password_;
};

}  // namespace fabgate::gnmi::target
