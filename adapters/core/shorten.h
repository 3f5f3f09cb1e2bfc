#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fabgate {

// `text` cut to at most `max_bytes` bytes plus an ellipsis ("…") when it is longer, never in the
// middle of a phrase: after the last phrase end (". ", "; ", ", ", ": ", " - ") inside the limit
// when that keeps at least half of it, else after the last whole word, else (one word longer
// than the limit) at a UTF-8 character boundary. Text within the limit comes back unchanged.
std::string shorten(std::string_view text, std::size_t max_bytes);

}  // namespace fabgate
