#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"

namespace fabgate::hostfacts {

// Why a host fact category could not be produced. Every kind ends as `no-evidence` in the
// snapshot (sources.<category>.status) with `reason`; the category itself is then absent,
// never an empty healthy value (docs/snapshot-format.md).
enum class FactsFailureKind {
  unavailable,  // the source does not exist here: no /sys/class/infiniband, nvidia-smi failed
  unparsable,   // the text is not in the documented format
  unsupported,  // well-formed, but lacks what the category needs (e.g. no mlx5 PFC counters)
};

struct FactsFailure {
  FactsFailureKind kind = FactsFailureKind::unparsable;
  std::string reason;
};

const char* to_string(FactsFailureKind kind);

using Facts = Expected<nlohmann::json, FactsFailure>;

inline FactsFailure unavailable(std::string reason) {
  return {FactsFailureKind::unavailable, std::move(reason)};
}
inline FactsFailure unparsable(std::string reason) {
  return {FactsFailureKind::unparsable, std::move(reason)};
}
inline FactsFailure unsupported(std::string reason) {
  return {FactsFailureKind::unsupported, std::move(reason)};
}

// Parses a decimal counter ("12345", surrounding blanks allowed); nullopt for anything else.
std::optional<std::uint64_t> parse_counter(std::string_view text);

}  // namespace fabgate::hostfacts
