#include "gates/hostfacts/facts_failure.h"

#include <charconv>

#include "adapters/core/text.h"

namespace fabgate::hostfacts {

const char* to_string(FactsFailureKind kind) {
  switch (kind) {
    case FactsFailureKind::unavailable:
      return "unavailable";
    case FactsFailureKind::unparsable:
      return "unparsable";
    case FactsFailureKind::unsupported:
      return "unsupported";
  }
  return "unparsable";
}

std::optional<std::uint64_t> parse_counter(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace fabgate::hostfacts
