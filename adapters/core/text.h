#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fabgate {

// Edit distance, for "did you mean" suggestions on misspelt keys and names.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> nearest_word(std::string_view word,
                                        std::span<const std::string_view> candidates);
std::optional<std::string> nearest_word(std::string_view word,
                                        const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::string_view trim(std::string_view text);
std::vector<std::string> split_lines(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);

// "~/x" -> "$HOME/x"; other paths unchanged. Inventory and settings paths are written the way
// users write them in a shell.
std::string expand_home(const std::string& path);

// Quotes a string for a POSIX shell: abc -> 'abc', it's -> 'it'\''s'.
std::string shell_quote(std::string_view text);

}  // namespace fabgate
