#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fabgate {

// A byte size as settings write it: digits (at most 13), then optionally B, KiB, MiB or GiB,
// blanks around ("256MiB", "1 GiB", "4096"). nullopt when it is not one; a size past 2^64 reads
// as the largest value, so every caller's upper bound refuses it.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace fabgate
