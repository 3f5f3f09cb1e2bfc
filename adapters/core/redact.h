#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fabgate {

// Removes secrets before text reaches evidence, logs or the terminal: configured secret values
// and common secret shapes (password/secret/key arguments, private key blocks, SNMP
// communities, bearer tokens, BGP neighbor passwords). Replaced text reads "<redacted>".
class Redactor {
 public:
  Redactor() = default;
  explicit Redactor(std::vector<std::string> secret_values);
  void add_secret(std::string value);  // values shorter than 4 characters are ignored
  std::string redact(std::string_view text) const;

 private:
  std::vector<std::string> secrets_;
};

}  // namespace fabgate
