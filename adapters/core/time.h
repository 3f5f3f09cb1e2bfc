#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace fabgate {

using TimePoint = std::chrono::sys_time<std::chrono::milliseconds>;

// ISO 8601 date-times as written in change windows: "2026-12-01T02:00:00Z",
// "2026-12-01T04:00:00+01:00", optional fractional seconds. A zone (Z or an offset) is
// required: a maintenance window in an unstated zone is a classic outage cause.
std::optional<TimePoint> parse_iso8601(std::string_view text);

// "2026-12-01T02:00:00.123Z" (UTC, millisecond precision).
std::string format_utc(TimePoint when);
// "20261201T020000Z": sortable and safe in file names.
std::string format_utc_compact(TimePoint when);

TimePoint now_utc();

}  // namespace fabgate
