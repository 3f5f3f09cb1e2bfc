#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace fabgate {

using Duration = std::chrono::milliseconds;

// Parses the durations users write in intent files: "500ms", "30s", "5m", "1h", and sums such
// as "1m30s". Bare numbers are rejected because their unit would be a guess.
std::optional<Duration> parse_duration(std::string_view text);

// Shortest exact spelling: 1500ms -> "1500ms", 90000ms -> "90s", 300000ms -> "5m".
std::string format_duration(Duration duration);

}  // namespace fabgate
