#include "adapters/core/redact.h"

#include <regex>

namespace fabgate {
namespace {

struct Pattern {
  std::regex regex;
  std::string replacement;
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> list = [] {
    auto icase = std::regex::ECMAScript | std::regex::icase;
    std::vector<Pattern> out;
    // PEM private keys, whole block.
    out.push_back({std::regex("-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z ]*PRIVATE "
                              "KEY-----",
                              icase),
                   "<redacted private key>"});
    // FRR/IOS style: "neighbor X password Y", "password 7 Y", "secret 5 Y", "key-string Y".
    out.push_back(
        {std::regex("\\b(password|secret|key-string|passphrase)(\\s+[0-9]\\b)?(\\s+)\\S+", icase),
         "$1$2$3<redacted>"});
    // key=value and key: value forms.
    out.push_back({std::regex("\\b(password|passwd|secret|token|api[_-]?key|private[_-]?key)(\"?"
                              "\\s*[:=]\\s*\"?)[^\\s\",}]+",
                              icase),
                   "$1$2<redacted>"});
    // SNMP communities.
    out.push_back(
        {std::regex("\\b(snmp-server community|community)(\\s+)\\S+", icase), "$1$2<redacted>"});
    // HTTP bearer tokens.
    out.push_back({std::regex("\\b(Bearer)(\\s+)[A-Za-z0-9._~+/=-]+", icase), "$1$2<redacted>"});
    return out;
  }();
  return list;
}

}  // namespace

Redactor::Redactor(std::vector<std::string> secret_values) {
  for (auto& value : secret_values) add_secret(std::move(value));
}

void Redactor::add_secret(std::string value) {
  if (value.size() >= 4) secrets_.push_back(std::move(value));
}

std::string Redactor::redact(std::string_view text) const {
  std::string out(text);
  for (const auto& secret : secrets_) {
    std::size_t at = 0;
    while ((at = out.find(secret, at)) != std::string::npos) {
      out.replace(at, secret.size(), "<redacted>");
      at += 10;
    }
  }
  for (const auto& pattern : patterns())
    out = std::regex_replace(out, pattern.regex, pattern.replacement);
  return out;
}

}  // namespace fabgate
