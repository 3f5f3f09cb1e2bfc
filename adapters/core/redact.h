#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fabgate {

// Removes secrets before text reaches evidence, logs or the terminal: configured secret values
// (matched literally, whatever characters they hold) and common secret shapes: password /
// secret / passphrase / key-string arguments and assignments, private key blocks, SNMP
// communities, SNMPv3 auth/priv and NTP keys, TACACS+/RADIUS keys, bearer tokens,
// Authorization headers and the user information of URLs (docs/pipeline.md lists them).
// Replaced text reads "<redacted>" (a private key block "<redacted private key>", a URL's
// "scheme://user:pass@host" "scheme://[redacted]@host").
//
// Redact values before they are escaped or serialised, never the escaped text: a pattern that
// runs over JSON or XML can swallow the punctuation after a secret, insert a '<' into markup, or
// miss a secret whose characters were escaped. dump() is the way a JSON document leaves the
// process; markup writers redact each value before escaping it.
//
// The shapes are found by a hand-written single-pass scanner rather than std::regex, which was
// too slow for value-by-value redaction of large snapshots (docs/benchmarks.md).
class Redactor {
 public:
  Redactor() = default;
  explicit Redactor(std::vector<std::string> secret_values);
  // Values shorter than 4 characters are ignored: they would erase ordinary text.
  void add_secret(std::string value);
  std::string redact(std::string_view text) const;

  // Redacts every string value and object key in place. A value under a secret-named key
  // ("password", "secret-key", "api_token"...) is replaced whole, since nothing in the value
  // itself says it is secret.
  void redact_json(nlohmann::json& document) const;
  // Serialises `document` with its values redacted (redact_json on a copy, made only when
  // something needs redacting) and invalid UTF-8 replaced by U+FFFD, so the text always parses
  // whatever the devices answered. `indent` as nlohmann::json::dump (-1: one line).
  std::string dump(const nlohmann::json& document, int indent = -1) const;
  // Writes the redacted text to `out` and returns true when anything was redacted; leaves `out`
  // alone and returns false otherwise, so unchanged values cost no copy (a whole route table's
  // output is 150 MB).
  bool redact_into(std::string_view text, std::string& out) const;

 private:
  bool changes(const nlohmann::json& document) const;

  std::vector<std::string> secrets_;  // longest first, each with its JSON-escaped form
};

}  // namespace fabgate
