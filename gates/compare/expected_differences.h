#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/result.h"
#include "gates/intent/model.h"

namespace fabgate::compare {

// Reads `compare.expected` from a change file (device, path, values, absent) for
// `fabgate diff --change`. Only that list is validated here; the intent loader owns the rest
// of the change schema. Problems carry file:line:column.
Result<std::vector<intent::ExpectedDifference>> load_expected_differences(
    std::string_view change_yaml, const std::string& file_name);

}  // namespace fabgate::compare
