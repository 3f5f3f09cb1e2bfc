#include "gates/approval/allowed_signers.h"

#include <algorithm>

#include "adapters/core/text.h"

namespace fabgate::approval {
namespace {

// The principals field of a non-comment line: quoted (may hold spaces) or up to the first
// blank, as OpenSSH reads it. nullopt for blank lines, comments and an unclosed quote.
std::optional<std::string> principals_field(std::string_view line) {
  line = trim(line);
  if (line.empty() || line.front() == '#') return std::nullopt;
  if (line.front() == '"') {
    auto end = line.find('"', 1);
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(line.substr(1, end - 1));
  }
  return std::string(line.substr(0, line.find_first_of(" \t")));
}

std::vector<std::string> split_commas(const std::string& field) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto comma = field.find(',', start);
    parts.push_back(field.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// OpenSSH's match_pattern: `*` is any run of characters, `?` any one; nothing else is special.
bool glob_matches(std::string_view text, std::string_view pattern) {
  if (pattern.empty()) return text.empty();
  if (pattern.front() == '*') {
    for (std::size_t skip = 0; skip <= text.size(); ++skip)
      if (glob_matches(text.substr(skip), pattern.substr(1))) return true;
    return false;
  }
  if (text.empty()) return false;
  if (pattern.front() != '?' && pattern.front() != text.front()) return false;
  return glob_matches(text.substr(1), pattern.substr(1));
}

// OpenSSH's match_pattern_list: a negated pattern that matches vetoes the whole list.
bool list_matches(const std::string& principal, const std::string& field) {
  bool positive = false;
  for (const auto& pattern : split_commas(field)) {
    if (!pattern.empty() && pattern.front() == '!') {
      if (glob_matches(principal, std::string_view(pattern).substr(1))) return false;
    } else if (glob_matches(principal, pattern)) {
      positive = true;
    }
  }
  return positive;
}

}  // namespace

AllowedSigners::AllowedSigners(std::string_view text) {
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto field = principals_field(lines[i]);
    if (field && field->find_first_of("*?!") != std::string::npos) {
      refused_.push_back({static_cast<int>(i) + 1, *field});
      usable_text_ += "\n";
      continue;
    }
    usable_text_ += lines[i] + "\n";
    if (!field) continue;
    for (auto& principal : split_commas(*field))
      if (!principal.empty() &&
          std::find(principals_.begin(), principals_.end(), principal) == principals_.end())
        principals_.push_back(std::move(principal));
  }
}

bool AllowedSigners::lists(const std::string& principal) const {
  return std::find(principals_.begin(), principals_.end(), principal) != principals_.end();
}

std::optional<WildcardLine> AllowedSigners::wildcard_line_for(const std::string& principal) const {
  for (const auto& line : refused_)
    if (list_matches(principal, line.principals)) return line;
  return std::nullopt;
}

}  // namespace fabgate::approval
