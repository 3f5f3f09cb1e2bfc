#include "adapters/core/duration.h"

#include <cctype>
#include <cstdint>
#include <limits>

namespace fabgate {

std::optional<Duration> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    std::int64_t number = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      number = number * 10 + (text[i] - '0');
      if (number > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
      ++i;
    }
    std::size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    std::int64_t scale = 0;
    if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60'000;
    else if (unit == "h")
      scale = 3'600'000;
    else
      return std::nullopt;
    total_ms += number * scale;
  }
  return Duration{total_ms};
}

std::string format_duration(Duration duration) {
  auto ms = duration.count();
  if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace fabgate
