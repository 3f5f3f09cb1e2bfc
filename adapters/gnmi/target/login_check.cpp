#include "adapters/gnmi/target/login_check.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace fabgate::gnmi::target {

namespace {

// Equal digests; a digest OpenSSL failed to compute equals nothing.
bool same_digest(const std::optional<SecretDigest>& a, const std::optional<SecretDigest>& b) {
  return a && b && CRYPTO_memcmp(a->data(), b->data(), a->size()) == 0;
}

SecretDigest expected_digest(std::string_view secret) {
  auto digest = digest_of(secret);
  if (!digest) throw std::runtime_error("sha256 of the expected login failed (OpenSSL)");
  return *digest;
}

}  // namespace

GnmiResult<GnmiLogin> expected_login_from_environment(std::string_view prefix) {
  GnmiLogin login;
  for (auto [suffix, value] :
       {std::pair{"_USERNAME", &login.username}, std::pair{"_PASSWORD", &login.password}}) {
    std::string variable = std::string(prefix) + suffix;
    const char* set = std::getenv(variable.c_str());
    if (set == nullptr || *set == '\0') {
      return GnmiFailure{GnmiFailure::Kind::auth,
                         "--credentials-env " + std::string(prefix) + ": " + variable + " is " +
                             (set == nullptr ? "not set" : "empty") +
                             ": both $PREFIX_USERNAME and $PREFIX_PASSWORD must be set and "
                             "non-empty (an empty one would admit calls that send none)"};
    }
    *value = set;
  }
  return login;
}

std::optional<SecretDigest> digest_of(std::string_view secret) {
  SecretDigest digest{};
  unsigned int length = 0;
  if (EVP_Digest(secret.data(), secret.size(), digest.data(), &length, EVP_sha256(), nullptr) !=
          1 ||
      length != digest.size()) {
    return std::nullopt;
  }
  return digest;
}

bool equal_in_constant_time(std::string_view a, std::string_view b) {
  return same_digest(digest_of(a), digest_of(b));
}

LoginCheck::LoginCheck(const GnmiLogin& expected)
    : username_(expected_digest(expected.username)),
      password_(expected_digest(expected.password)) {}

bool LoginCheck::admits(std::string_view username, std::string_view password) const {
  // Both compared, whatever the first gives (& rather than &&): the time does not say which
  // of the two was wrong.
  bool username_matches = same_digest(digest_of(username), username_);
  bool password_matches = same_digest(digest_of(password), password_);
  return username_matches & password_matches;
}

}  // namespace fabgate::gnmi::target
