#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabgate::compare {

// Paths address elements of a snapshot: `devices.leaf1.bgp.peers."10.0.1.0".state`.
// Segments are separated by dots; a segment holding a dot (peer addresses, prefixes) is
// written in double quotes. List elements are addressed by their index (`addresses.0`).
//
// In a pattern, a segment `*` matches any map key or list index, and a `*` inside a segment
// (`eth*`, `leaf*`) is a glob over the key. A quoted segment is always literal.
struct PathSegment {
  std::string text;
  bool glob = false;  // contains an unquoted '*'

  bool matches(std::string_view key) const;
  bool is_any() const { return glob && text == "*"; }
};

class PathPattern {
 public:
  // Parses a pattern; nullopt with `error` filled when it is malformed (empty segment,
  // unterminated quote).
  static std::optional<PathPattern> parse(std::string_view text, std::string* error);

  const std::vector<PathSegment>& segments() const { return segments_; }
  std::size_t size() const { return segments_.size(); }
  const std::string& text() const { return text_; }

  // True when `path` has as many segments as the pattern and every segment matches.
  bool matches(const std::vector<std::string>& path) const;
  // True when the pattern matches `path` or one of its prefixes (the element lies inside a
  // subtree the pattern names).
  bool matches_prefix_of(const std::vector<std::string>& path) const;

  // A new pattern: this one's segments from `first` on.
  PathPattern suffix(std::size_t first) const;

 private:
  std::vector<PathSegment> segments_;
  std::string text_;
};

// Glob with '*' only: "leaf*" matches "leaf1"; "*" matches everything.
bool glob_match(std::string_view pattern, std::string_view text);

// Renders concrete segments as a path, quoting segments that need it.
std::string format_path(const std::vector<std::string>& segments);
std::string quote_segment(std::string_view segment);

}  // namespace fabgate::compare
