#include "adapters/gnmi/path.h"

#include <utility>

namespace fabgate::gnmi {

namespace {

// A small cursor over the text so that every error can name the character it stopped at.
class PathScanner {
 public:
  explicit PathScanner(std::string_view text) : text_(text) {}

  bool at_end() const { return index_ >= text_.size(); }
  char peek() const { return text_[index_]; }
  std::size_t position() const { return index_ + 1; }  // 1-based, as users count
  void advance() { ++index_; }

  PathParseError error(std::string reason) const { return {position(), std::move(reason)}; }
  PathParseError error_at(std::size_t position, std::string reason) const {
    return {position, std::move(reason)};
  }

 private:
  std::string_view text_;
  std::size_t index_ = 0;
};

// Reads up to (not including) one of `stops`, resolving '\' escapes when `escapes` is set.
// Returns nullopt-like failure through `failure` when a '\' ends the text.
bool read_until(PathScanner& scanner, std::string_view stops, bool escapes, std::string& out,
                PathParseError& failure) {
  while (!scanner.at_end()) {
    char c = scanner.peek();
    if (escapes && c == '\\') {
      scanner.advance();
      if (scanner.at_end()) {
        failure = scanner.error("'\\' at the end escapes nothing");
        return false;
      }
      out.push_back(scanner.peek());
      scanner.advance();
      continue;
    }
    if (stops.find(c) != std::string_view::npos) return true;
    out.push_back(c);
    scanner.advance();
  }
  return true;
}

Expected<PathElement, PathParseError> parse_element(PathScanner& scanner) {
  PathElement element;
  std::size_t name_start = scanner.position();
  PathParseError failure;
  if (!read_until(scanner, "/[]", false, element.name, failure)) return failure;
  if (element.name.empty()) {
    if (!scanner.at_end() && scanner.peek() == '[') {
      return scanner.error("a key '[...]' needs an element name before it");
    }
    if (!scanner.at_end() && scanner.peek() == ']') {
      return scanner.error("']' without a matching '['");
    }
    return scanner.error_at(name_start, "empty element name (two '/' in a row or a trailing '/')");
  }
  while (!scanner.at_end() && scanner.peek() == '[') {
    std::size_t open = scanner.position();
    scanner.advance();
    std::string key;
    std::size_t key_start = scanner.position();
    if (!read_until(scanner, "=]", true, key, failure)) return failure;
    if (scanner.at_end()) return scanner.error_at(open, "'[' opens a key that is never closed");
    if (scanner.peek() == ']') return scanner.error("key '" + key + "' has no '=value'");
    if (key.empty()) return scanner.error_at(key_start, "empty key name before '='");
    scanner.advance();  // '='
    std::string value;
    if (!read_until(scanner, "]", true, value, failure)) return failure;
    if (scanner.at_end()) return scanner.error_at(open, "'[' opens a key that is never closed");
    scanner.advance();  // ']'
    if (value.empty()) {
      return scanner.error_at(open, "key '" + key + "' has an empty value (use '*' for any)");
    }
    if (!element.keys.emplace(key, std::move(value)).second) {
      return scanner.error_at(open, "key '" + key + "' appears twice in '" + element.name + "'");
    }
  }
  if (!scanner.at_end() && scanner.peek() != '/') {
    return scanner.error(std::string("unexpected '") + scanner.peek() +
                         "' after a key; expected '/', '[' or the end");
  }
  return element;
}

void append_escaped(std::string& out, std::string_view text, std::string_view special) {
  for (char c : text) {
    if (c == '\\' || special.find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
}

}  // namespace

std::string PathParseError::describe(std::string_view text) const {
  return "invalid gNMI path '" + std::string(text) + "': at character " + std::to_string(position) +
         ": " + reason;
}

Expected<GnmiPath, PathParseError> parse_path(std::string_view text) {
  GnmiPath path;
  if (text.empty()) return PathParseError{1, "empty path; a path starts with '/'"};
  std::size_t start = 0;
  if (text.front() != '/') {
    std::size_t colon = text.find(':');
    std::size_t slash = text.find('/');
    if (colon == std::string_view::npos || (slash != std::string_view::npos && slash < colon)) {
      return PathParseError{1, "a path starts with '/' or with an origin such as 'openconfig:/'"};
    }
    if (colon + 1 >= text.size() || text[colon + 1] != '/') {
      return PathParseError{
          colon + 2, "expected '/' after the origin '" + std::string(text.substr(0, colon)) + ":'"};
    }
    path.origin = std::string(text.substr(0, colon));
    start = colon + 1;
  }
  std::string_view rest = text.substr(start);
  if (rest == "/") return path;  // the root

  PathScanner scanner(text);
  for (std::size_t i = 0; i < start; ++i) scanner.advance();
  while (!scanner.at_end()) {
    scanner.advance();  // the '/' before every element
    auto element = parse_element(scanner);
    if (!element) return element.error();
    path.elements.push_back(std::move(element.value()));
  }
  return path;
}

bool GnmiPath::has_wildcard() const {
  for (const auto& element : elements) {
    if (element.name == "*" || element.name == "...") return true;
    for (const auto& [key, value] : element.keys) {
      if (value == "*") return true;
    }
  }
  return false;
}

std::string GnmiPath::to_string() const {
  std::string out;
  if (!origin.empty()) out += origin + ":";
  if (elements.empty()) return out + "/";
  for (const auto& element : elements) {
    out.push_back('/');
    out += element.name;
    for (const auto& [key, value] : element.keys) {
      out.push_back('[');
      append_escaped(out, key, "=]");
      out.push_back('=');
      append_escaped(out, value, "]");
      out.push_back(']');
    }
  }
  return out;
}

GnmiPath join_paths(const GnmiPath& prefix, const GnmiPath& path) {
  GnmiPath joined = prefix;
  if (joined.origin.empty()) joined.origin = path.origin;
  joined.elements.insert(joined.elements.end(), path.elements.begin(), path.elements.end());
  return joined;
}

}  // namespace fabgate::gnmi
