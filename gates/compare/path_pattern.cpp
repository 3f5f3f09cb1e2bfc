#include "gates/compare/path_pattern.h"

namespace fabgate::compare {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with single-star backtracking: linear for the short keys we see.
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool PathSegment::matches(std::string_view key) const {
  if (!glob) return text == key;
  if (text == "*") return true;
  return glob_match(text, key);
}

std::optional<PathPattern> PathPattern::parse(std::string_view text, std::string* error) {
  PathPattern pattern;
  pattern.text_ = std::string(text);
  auto fail = [&](std::string message) -> std::optional<PathPattern> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  if (text.empty()) return fail("path is empty");
  std::size_t i = 0;
  while (true) {
    PathSegment segment;
    if (i < text.size() && text[i] == '"') {
      std::size_t close = text.find('"', i + 1);
      if (close == std::string_view::npos)
        return fail("unterminated quote in path '" + std::string(text) + "'");
      segment.text = std::string(text.substr(i + 1, close - i - 1));
      i = close + 1;
      if (i < text.size() && text[i] != '.')
        return fail("a quoted segment must be followed by '.' in path '" + std::string(text) + "'");
    } else {
      std::size_t dot = text.find('.', i);
      if (dot == std::string_view::npos) dot = text.size();
      segment.text = std::string(text.substr(i, dot - i));
      if (segment.text.find('"') != std::string::npos)
        return fail("a quote may only open a segment in path '" + std::string(text) + "'");
      segment.glob = segment.text.find('*') != std::string::npos;
      i = dot;
    }
    if (segment.text.empty()) return fail("empty segment in path '" + std::string(text) + "'");
    pattern.segments_.push_back(std::move(segment));
    if (i >= text.size()) break;
    ++i;  // the dot
    if (i >= text.size()) return fail("path '" + std::string(text) + "' ends with '.'");
  }
  return pattern;
}

bool PathPattern::matches(const std::vector<std::string>& path) const {
  if (path.size() != segments_.size()) return false;
  for (std::size_t i = 0; i < path.size(); ++i)
    if (!segments_[i].matches(path[i])) return false;
  return true;
}

bool PathPattern::matches_prefix_of(const std::vector<std::string>& path) const {
  if (path.size() < segments_.size()) return false;
  for (std::size_t i = 0; i < segments_.size(); ++i)
    if (!segments_[i].matches(path[i])) return false;
  return true;
}

PathPattern PathPattern::suffix(std::size_t first) const {
  PathPattern out;
  for (std::size_t i = first; i < segments_.size(); ++i) out.segments_.push_back(segments_[i]);
  std::string text;
  for (const auto& segment : out.segments_) {
    if (!text.empty()) text += '.';
    text += segment.glob ? segment.text : quote_segment(segment.text);
  }
  out.text_ = text;
  return out;
}

std::string quote_segment(std::string_view segment) {
  bool needs = segment.empty() || segment.find_first_of(".*\"") != std::string_view::npos;
  if (!needs) return std::string(segment);
  return "\"" + std::string(segment) + "\"";
}

std::string format_path(const std::vector<std::string>& segments) {
  std::string out;
  for (const auto& segment : segments) {
    if (!out.empty()) out += '.';
    out += quote_segment(segment);
  }
  return out;
}

}  // namespace fabgate::compare
