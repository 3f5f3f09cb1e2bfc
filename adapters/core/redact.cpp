#include "adapters/core/redact.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace fabgate {
namespace {

constexpr std::string_view kRedacted = "<redacted>";
constexpr std::string_view kRedactedKey = "<redacted private key>";
constexpr std::string_view kRedactedUserinfo = "[redacted]";
constexpr std::size_t kMinimumSecret = 4;
// How far back a rule looks for the command a "key" or an algorithm name belongs to
// (tacacs-server, snmp-server...): device configuration lines are short, and a bound keeps a
// long line without newlines linear.
constexpr std::size_t kLineLookBack = 512;

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
// Whitespace and control characters end a bare value: a secret holds neither, and a terminal
// colour code after a secret must survive its redaction.
bool is_space(char c) {
  auto byte = static_cast<unsigned char>(c);
  return byte == ' ' || byte < 0x20 || byte == 0x7f;
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
// Punctuation that closes the context a secret sits in (a quoted shell argument, a JSON or YAML
// value, a list, a Markdown code span) rather than belonging to the secret.
bool is_closer(char c) {
  switch (c) {
    case '\'':
    case '"':
    case ',':
    case '}':
    case ']':
    case ')':
    case ';':
    case '`':
      return true;
    default:
      return false;
  }
}

// Case-insensitive: does `text` hold `word` (lower case) at `at`?
bool has_word_at(std::string_view text, std::size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (lower(text[at + i]) != word[i]) return false;
  return true;
}

// Case-insensitive: does the line holding `at` mention one of `words` before `at`?
bool line_mentions(std::string_view text, std::size_t at,
                   std::initializer_list<std::string_view> words) {
  std::size_t begin = at > kLineLookBack ? at - kLineLookBack : 0;
  std::size_t newline = text.rfind('\n', at);
  if (newline != std::string_view::npos && newline + 1 > begin) begin = newline + 1;
  for (std::size_t i = begin; i < at; ++i)
    for (auto word : words)
      if (has_word_at(text, i, word)) return true;
  return false;
}

std::size_t skip_blanks(std::string_view text, std::size_t at) {
  while (at < text.size() && is_blank(text[at])) ++at;
  return at;
}

// A span of `text` to replace.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string_view replacement = kRedacted;
};

// The secret value that starts at `at`: inside quotes when it is quoted (to the closing quote,
// or the end of the line when there is none), otherwise up to the next whitespace less any
// closing punctuation. Nothing when there is no value or it is already redacted.
std::optional<Span> value_at(std::string_view text, std::size_t at) {
  if (at >= text.size() || is_space(text[at])) return std::nullopt;
  std::size_t begin = at, end = at;
  if (text[at] == '"' || text[at] == '\'') {
    const char quote = text[at];
    begin = end = at + 1;
    while (end < text.size() && text[end] != quote && text[end] != '\n') {
      if (quote == '"' && text[end] == '\\' && end + 1 < text.size()) ++end;
      ++end;
    }
    end = std::min(end, text.size());
  } else {
    while (end < text.size() && !is_space(text[end])) ++end;
    while (end > begin && is_closer(text[end - 1])) --end;
  }
  if (end == begin || text.substr(begin, end - begin) == kRedacted) return std::nullopt;
  return Span{begin, end};
}

// "password X", "secret 5 X", "key 7 X": blanks, an optional one-digit type, blanks, the value.
std::optional<Span> spaced_value(std::string_view text, std::size_t after_word) {
  std::size_t at = skip_blanks(text, after_word);
  if (at == after_word) return std::nullopt;
  if (at + 1 < text.size() && is_digit(text[at]) && is_blank(text[at + 1])) {
    std::size_t value = skip_blanks(text, at + 1);
    if (value < text.size() && !is_space(text[value])) return value_at(text, value);
  }
  return value_at(text, at);
}

// Where the value of "password=X", "password: X" or "\"password\": \"X\"" starts: after a
// closing quote of the name, blanks, ':' or '=', and blanks.
std::optional<std::size_t> assignment_value(std::string_view text, std::size_t after_word) {
  std::size_t at = after_word;
  if (at < text.size() && (text[at] == '"' || text[at] == '\'')) ++at;
  at = skip_blanks(text, at);
  if (at >= text.size() || (text[at] != ':' && text[at] != '=')) return std::nullopt;
  return skip_blanks(text, at + 1);
}

std::optional<Span> assigned_value(std::string_view text, std::size_t after_word) {
  auto at = assignment_value(text, after_word);
  return at ? value_at(text, *at) : std::nullopt;
}

// The end of a scheme word ("Basic", "Bearer") followed by blanks at `at`, or `at` if none.
std::size_t scheme_end(std::string_view text, std::size_t at, std::size_t limit) {
  std::size_t end = at;
  while (end < limit &&
         ((text[end] >= 'a' && text[end] <= 'z') || (text[end] >= 'A' && text[end] <= 'Z')))
    ++end;
  return end > at && end < limit && is_blank(text[end]) ? end : at;
}

// "Authorization: Basic X", "Authorization: \"Bearer X\"", "Authorization: X": the scheme
// stays, the credentials go.
std::optional<Span> authorization_value(std::string_view text, std::size_t after_word) {
  auto at = assignment_value(text, after_word);
  if (!at) return std::nullopt;
  auto value = value_at(text, *at);
  if (!value) return std::nullopt;
  if (value->begin != *at) {  // quoted: everything after the scheme up to the closing quote
    std::size_t scheme = scheme_end(text, value->begin, value->end);
    std::size_t credentials = skip_blanks(text, scheme);
    return credentials < value->end ? Span{credentials, value->end} : value;
  }
  std::size_t scheme = scheme_end(text, *at, text.size());
  if (scheme == *at) return value;
  std::size_t credentials = skip_blanks(text, scheme);
  if (credentials >= text.size() || is_space(text[credentials])) return value;
  return value_at(text, credentials);
}

// PEM private keys, whole block; a block cut off before its END line (truncated output) is
// redacted to the end of the text.
std::optional<Span> private_key_block(std::string_view text, std::size_t at) {
  auto is_header = [&](std::size_t from, std::string_view kind) -> std::optional<std::size_t> {
    if (!has_word_at(text, from, kind)) return std::nullopt;
    std::size_t dashes = text.find("-----", from + kind.size());
    if (dashes == std::string_view::npos || dashes - from > 80) return std::nullopt;
    for (std::size_t i = from + kind.size(); i < dashes; ++i)
      if (!(text[i] == ' ' || (lower(text[i]) >= 'a' && lower(text[i]) <= 'z')))
        return std::nullopt;
    constexpr std::string_view kTail = "private key";
    if (dashes - from < kind.size() + kTail.size() ||
        !has_word_at(text, dashes - kTail.size(), kTail))
      return std::nullopt;
    return dashes + 5;
  };
  if (!is_header(at, "-----begin ")) return std::nullopt;
  for (std::size_t end = text.find("-----", at + 11); end != std::string_view::npos;
       end = text.find("-----", end + 5)) {
    if (auto after = is_header(end, "-----end ")) return Span{at, *after, kRedactedKey};
  }
  return Span{at, text.size(), kRedactedKey};
}

// "scheme://user:pass@host": the user information between "://" (at `at`) and the '@' that
// ends it, when a scheme precedes it; "scheme://[redacted]@host" is left alone. The user
// information holds no '/', '?', '#', '[', ']', whitespace, quote or '\\' (RFC 3986).
std::optional<Span> url_userinfo(std::string_view text, std::size_t at) {
  constexpr std::string_view kSeparator = "://";
  if (text.substr(at, kSeparator.size()) != kSeparator || at == 0) return std::nullopt;
  const char before = lower(text[at - 1]);
  if (!((before >= 'a' && before <= 'z') || is_digit(before) || before == '+' || before == '-' ||
        before == '.'))
    return std::nullopt;
  const std::size_t begin = at + kSeparator.size();
  for (std::size_t end = begin; end < text.size(); ++end) {
    const char c = text[end];
    if (c == '@')
      return end == begin ? std::nullopt : std::optional(Span{begin, end, kRedactedUserinfo});
    if (is_space(c) || c == '/' || c == '?' || c == '#' || c == '[' || c == ']' || c == '"' ||
        c == '\'' || c == '`' || c == '<' || c == '>' || c == '\\')
      return std::nullopt;
  }
  return std::nullopt;
}

enum class Rule {
  spaced_or_assigned,  // password X, password=X
  assigned,            // token=X (a bare "token X" is ordinary text)
  spaced,              // community X
  bearer,              // Bearer X
  authorization,       // Authorization: Basic X
  server_key,          // tacacs-server ... key X, radius-server key 7 X
  snmp_algorithm,      // snmp-server user ... auth sha X priv aes 128 X
};

struct Keyword {
  std::string_view word;  // lower case
  Rule rule;
};

// Longer words before their prefixes ("key-string" before "key", "sha256" before "sha").
constexpr std::array kKeywords = {
    Keyword{"password", Rule::spaced_or_assigned},
    Keyword{"passphrase", Rule::spaced_or_assigned},
    Keyword{"passkey", Rule::spaced_or_assigned},
    Keyword{"passwd", Rule::assigned},
    Keyword{"secret", Rule::spaced_or_assigned},
    Keyword{"key-string", Rule::spaced_or_assigned},
    Keyword{"key", Rule::server_key},
    Keyword{"token", Rule::assigned},
    Keyword{"api_key", Rule::assigned},
    Keyword{"api-key", Rule::assigned},
    Keyword{"apikey", Rule::assigned},
    Keyword{"private_key", Rule::assigned},
    Keyword{"private-key", Rule::assigned},
    Keyword{"privatekey", Rule::assigned},
    Keyword{"community", Rule::spaced},
    Keyword{"bearer", Rule::bearer},
    Keyword{"authorization", Rule::authorization},
    Keyword{"sha-224", Rule::snmp_algorithm},
    Keyword{"sha-256", Rule::snmp_algorithm},
    Keyword{"sha-384", Rule::snmp_algorithm},
    Keyword{"sha-512", Rule::snmp_algorithm},
    Keyword{"sha224", Rule::snmp_algorithm},
    Keyword{"sha256", Rule::snmp_algorithm},
    Keyword{"sha384", Rule::snmp_algorithm},
    Keyword{"sha512", Rule::snmp_algorithm},
    Keyword{"sha1", Rule::snmp_algorithm},
    Keyword{"sha", Rule::snmp_algorithm},
    Keyword{"md5", Rule::snmp_algorithm},
    Keyword{"3des", Rule::snmp_algorithm},
    Keyword{"des", Rule::snmp_algorithm},
    Keyword{"aes-128", Rule::snmp_algorithm},
    Keyword{"aes-192", Rule::snmp_algorithm},
    Keyword{"aes-256", Rule::snmp_algorithm},
    Keyword{"aes128", Rule::snmp_algorithm},
    Keyword{"aes192", Rule::snmp_algorithm},
    Keyword{"aes256", Rule::snmp_algorithm},
    Keyword{"aes", Rule::snmp_algorithm},
};

// Which pairs of characters can start a keyword, either case: most positions of a text cost one
// table lookup, which is what keeps value-by-value redaction of a large snapshot cheap.
class Openings {
 public:
  constexpr Openings() {
    for (const auto& keyword : kKeywords) add(keyword.word[0], keyword.word[1]);
    add('-', '-');  // -----BEGIN ... PRIVATE KEY-----
    add(':', '/');  // scheme://user:pass@host
  }
  bool at(std::string_view text, std::size_t i) const {
    if (i + 1 >= text.size()) return false;
    auto first = static_cast<unsigned char>(lower(text[i]));
    auto second = static_cast<unsigned char>(lower(text[i + 1]));
    return (bits_[first][second / 32] >> (second % 32)) & 1u;
  }

 private:
  constexpr void add(char first, char second) {
    auto a = static_cast<unsigned char>(first), b = static_cast<unsigned char>(second);
    bits_[a][b / 32] |= 1u << (b % 32);
  }
  std::array<std::array<std::uint32_t, 8>, 256> bits_{};
};
constexpr Openings kOpenings;

// Whether a terminal colour code ("\033[31m") ends just before `at`: its 'm' is no letter of
// the word that follows.
bool after_colour_code(std::string_view text, std::size_t at) {
  if (at < 3 || text[at - 1] != 'm') return false;
  std::size_t i = at - 1;
  while (i > 0 && (is_digit(text[i - 1]) || text[i - 1] == ';')) --i;
  return i >= 2 && text[i - 1] == '[' && text[i - 2] == '\033';
}

std::optional<Span> keyword_value(std::string_view text, std::size_t at, const Keyword& keyword) {
  const std::size_t after = at + keyword.word.size();
  // Names of assignments may end an identifier (DB_PASSWORD=X); other shapes are whole words.
  const bool starts_word = at == 0 || !is_word(text[at - 1]) || after_colour_code(text, at);
  switch (keyword.rule) {
    case Rule::spaced_or_assigned:
      if (auto value = assigned_value(text, after)) return value;
      return starts_word ? spaced_value(text, after) : std::nullopt;
    case Rule::assigned:
      return assigned_value(text, after);
    case Rule::spaced: {
      if (!starts_word) return std::nullopt;
      std::size_t value = skip_blanks(text, after);
      return value == after ? std::nullopt : value_at(text, value);
    }
    case Rule::bearer: {
      if (!starts_word) return std::nullopt;
      std::size_t begin = skip_blanks(text, after), end = begin;
      if (begin == after) return std::nullopt;
      auto token_char = [](char c) {
        return is_word(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
      };
      while (end < text.size() && token_char(text[end])) ++end;
      if (end == begin) return std::nullopt;
      return Span{begin, end};
    }
    case Rule::authorization:
      return starts_word ? authorization_value(text, after) : std::nullopt;
    case Rule::server_key:
      if (!starts_word || after >= text.size() || !is_blank(text[after]) ||
          !line_mentions(text, at, {"tacacs", "radius"}))
        return std::nullopt;
      return spaced_value(text, after);
    case Rule::snmp_algorithm: {
      if (!starts_word || after >= text.size() || !is_blank(text[after]) ||
          !line_mentions(text, at, {"snmp", "createuser", "ntp"}))
        return std::nullopt;
      std::size_t value = skip_blanks(text, after);
      // "priv aes 128 KEY": the key length is not the key.
      for (std::string_view bits : {"128", "192", "256"}) {
        if (has_word_at(text, value, bits) && value + 3 < text.size() &&
            is_blank(text[value + 3])) {
          value = skip_blanks(text, value + 3);
          break;
        }
      }
      return value_at(text, value);
    }
  }
  return std::nullopt;
}

// The first secret shape that starts at `at`.
std::optional<Span> shape_at(std::string_view text, std::size_t at) {
  if (text[at] == '-') return private_key_block(text, at);
  if (text[at] == ':') return url_userinfo(text, at);
  const char first = lower(text[at]);
  for (const auto& keyword : kKeywords) {
    if (keyword.word[0] != first || !has_word_at(text, at, keyword.word)) continue;
    if (auto span = keyword_value(text, at, keyword)) return span;
  }
  return std::nullopt;
}

// Replaces every configured value; false when none occurs.
bool replace_secrets(std::string_view text, const std::vector<std::string>& secrets,
                     std::string& out) {
  auto first = std::find_if(secrets.begin(), secrets.end(), [&](const std::string& secret) {
    return text.find(secret) != std::string_view::npos;
  });
  if (first == secrets.end()) return false;
  std::string work(text);
  for (auto secret = first; secret != secrets.end(); ++secret) {
    std::string next;
    std::size_t from = 0;
    for (std::size_t at = work.find(*secret); at != std::string::npos;
         at = work.find(*secret, from)) {
      next.append(work, from, at - from);
      next += kRedacted;
      from = at + secret->size();
    }
    if (from == 0) continue;
    next.append(work, from);
    work = std::move(next);
  }
  out = std::move(work);
  return true;
}

// Replaces every secret shape; false when there is none.
bool replace_shapes(std::string_view text, std::string& out) {
  std::string built;
  std::size_t copied = 0;
  bool changed = false;
  for (std::size_t at = 0; at < text.size();) {
    if (!kOpenings.at(text, at)) {
      ++at;
      continue;
    }
    auto span = shape_at(text, at);
    if (!span) {
      ++at;
      continue;
    }
    if (!changed) built.reserve(text.size());
    changed = true;
    built.append(text.substr(copied, span->begin - copied));
    built.append(span->replacement);
    copied = at = span->end;
  }
  if (!changed) return false;
  built.append(text.substr(copied));
  out = std::move(built);
  return true;
}

// A key whose value is a secret whatever it looks like.
bool is_secret_name(std::string_view key) {
  static constexpr std::array<std::string_view, 17> kSuffixes = {
      "password",    "passwd",     "passphrase", "passkey",
      "secret",      "secret-key", "secret_key", "token",
      "api-key",     "api_key",    "apikey",     "private-key",
      "private_key", "auth-key",   "priv-key",   "authentication-key",
      "privacy-key"};
  for (auto suffix : kSuffixes) {
    if (key.size() >= suffix.size() && has_word_at(key, key.size() - suffix.size(), suffix))
      return true;
  }
  return false;
}

// Whether a value under a secret-named key still needs replacing.
bool needs_scrub(const nlohmann::json& value) {
  if (value.is_number()) return true;
  if (!value.is_string()) return false;
  const auto& text = value.get_ref<const std::string&>();
  return !text.empty() && text != kRedacted;
}

}  // namespace

Redactor::Redactor(std::vector<std::string> secret_values) {
  for (auto& value : secret_values) add_secret(std::move(value));
}

void Redactor::add_secret(std::string value) {
  if (value.size() < kMinimumSecret) return;
  // Its JSON-escaped form too: an error text may quote a serialised value ("got \"a\\\"b\"").
  std::string escaped =
      nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  escaped = escaped.substr(1, escaped.size() - 2);
  for (auto& form : {std::move(value), std::move(escaped)}) {
    if (std::find(secrets_.begin(), secrets_.end(), form) != secrets_.end()) continue;
    // Longest first: a secret that contains another is replaced whole.
    auto at = std::find_if(secrets_.begin(), secrets_.end(),
                           [&](const std::string& known) { return known.size() < form.size(); });
    secrets_.insert(at, form);
  }
}

bool Redactor::redact_into(std::string_view text, std::string& out) const {
  std::string without_secrets;
  const bool had_secrets = replace_secrets(text, secrets_, without_secrets);
  std::string_view rest = had_secrets ? std::string_view(without_secrets) : text;
  if (replace_shapes(rest, out)) return true;
  if (had_secrets) out = std::move(without_secrets);
  return had_secrets;
}

std::string Redactor::redact(std::string_view text) const {
  std::string out;
  if (!redact_into(text, out)) out.assign(text);
  return out;
}

void Redactor::redact_json(nlohmann::json& document) const {
  if (document.is_string()) {
    std::string out;
    if (redact_into(document.get_ref<const std::string&>(), out)) document = std::move(out);
    return;
  }
  if (document.is_array()) {
    for (auto& item : document) redact_json(item);
    return;
  }
  if (!document.is_object()) return;
  auto redact_member = [&](const std::string& key, nlohmann::json& value) {
    if (is_secret_name(key) && needs_scrub(value))
      value = kRedacted;
    else
      redact_json(value);
  };
  bool keys_change = false;
  std::string ignored;
  for (auto it = document.begin(); it != document.end() && !keys_change; ++it)
    keys_change = redact_into(it.key(), ignored);
  if (!keys_change) {
    for (auto it = document.begin(); it != document.end(); ++it) redact_member(it.key(), *it);
    return;
  }
  // Keys cannot be renamed in place: rebuild the object.
  nlohmann::json rebuilt = nlohmann::json::object();
  for (auto it = document.begin(); it != document.end(); ++it) {
    redact_member(it.key(), *it);
    rebuilt[redact(it.key())] = std::move(*it);
  }
  document = std::move(rebuilt);
}

bool Redactor::changes(const nlohmann::json& document) const {
  std::string ignored;
  if (document.is_string()) return redact_into(document.get_ref<const std::string&>(), ignored);
  if (document.is_array()) {
    for (const auto& item : document)
      if (changes(item)) return true;
    return false;
  }
  if (!document.is_object()) return false;
  for (auto it = document.begin(); it != document.end(); ++it) {
    if (redact_into(it.key(), ignored)) return true;
    if (is_secret_name(it.key()) ? needs_scrub(*it) || changes(*it) : changes(*it)) return true;
  }
  return false;
}

std::string Redactor::dump(const nlohmann::json& document, int indent) const {
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  if (!changes(document)) return document.dump(indent, ' ', false, kReplace);
  nlohmann::json copy = document;
  redact_json(copy);
  return copy.dump(indent, ' ', false, kReplace);
}

}  // namespace fabgate
