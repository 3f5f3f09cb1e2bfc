#include "adapters/core/byte_size.h"

#include <regex>
#include <string>

namespace fabgate {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  static const std::regex size(R"(\s*([0-9]{1,13})\s*(B|KiB|MiB|GiB)?\s*)");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_match(text.begin(), text.end(), match, size)) return std::nullopt;
  const std::string unit = match[2].str();
  const int shift = unit == "KiB" ? 10 : unit == "MiB" ? 20 : unit == "GiB" ? 30 : 0;
  const std::uint64_t number = std::stoull(match[1].str());
  if (number > (UINT64_MAX >> shift)) return UINT64_MAX;
  return number << shift;
}

}  // namespace fabgate
