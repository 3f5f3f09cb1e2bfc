#pragma once

#include <string>
#include <string_view>

#include "gates/compare/snapshot.h"

namespace fabgate::compare::testing {

// fabgate's former snapshot reader (nlohmann::json SAX), the reference the simdjson reader is
// checked against. Same contract as parse_snapshot.
Result<Snapshot> parse_snapshot_reference(std::string_view text, const std::string& file_name);

}  // namespace fabgate::compare::testing
