#include "adapters/core/utf8.h"

#include <cstdio>

namespace fabgate {
namespace {

// Length of the well-formed sequence starting at text[i], or 0 when it is ill-formed. The
// ranges of the second byte are those of RFC 3629's table, which is what excludes overlong
// forms (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and code points past U+10FFFF.
std::size_t sequence_length(std::string_view text, std::size_t i) {
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = at(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;  // 80..C1 and F5..FF never start a sequence
  }
  if (i + length > text.size()) return 0;
  if (at(i + 1) < low || at(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  return length;
}

}  // namespace

std::string Utf8Problem::describe() const {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", byte);
  return "byte " + std::string(hex) + " at offset " + std::to_string(offset) + " (line " +
         std::to_string(line) + ", column " + std::to_string(column) + ") is not UTF-8";
}

std::optional<Utf8Problem> find_invalid_utf8(std::string_view text) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = sequence_length(text, i);
    if (length == 0)
      return Utf8Problem{i, line, static_cast<int>(i - line_start) + 1,
                         static_cast<unsigned char>(text[i])};
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += length;
  }
  return std::nullopt;
}

std::string escape_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = sequence_length(text, i);
    if (length == 0) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(text[i]));
      out += hex;
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace fabgate
