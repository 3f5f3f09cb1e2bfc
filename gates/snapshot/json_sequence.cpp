#include "gates/snapshot/json_sequence.h"

#include <algorithm>

#include "adapters/core/shorten.h"

namespace fabgate::snapshot {

using nlohmann::json;

std::string text_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const auto last_newline = before.rfind('\n');
  const std::size_t column =
      last_newline == std::string_view::npos ? offset + 1 : offset - last_newline;
  return "byte " + std::to_string(offset + 1) + " (line " + std::to_string(line) + ", column " +
         std::to_string(column) + ")";
}

namespace {

bool is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The first line of what starts at `offset`, short enough to quote in a reason.
std::string quoted_from(std::string_view text, std::size_t offset) {
  std::string_view rest = text.substr(offset);
  rest = rest.substr(0, rest.find('\n'));
  return "'" + shorten(rest, 30) + "'";
}

// Where the object opening at `start` ends (one past its closing `}`), found by matching
// brackets outside strings; or why it does not end. The walk is linear and keeps at most
// `max_depth` open brackets, so no depth of input can make it (or the parse after it) recurse.
Expected<std::size_t, std::string> object_end(std::string_view text, std::size_t start,
                                              int max_depth) {
  std::string open;  // the closers still expected, innermost last
  bool in_string = false, escaped = false;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c == '{' ? '}' : ']');
      if (open.size() > static_cast<std::size_t>(max_depth))
        return "the object at " + text_position(text, start) + " nests deeper than " +
               std::to_string(max_depth) + " levels (at " + text_position(text, i) + ")";
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != c)
        return "unexpected '" + std::string(1, c) + "' at " + text_position(text, i) +
               " in the object at " + text_position(text, start);
      open.pop_back();
      if (open.empty()) return i + 1;
    }
  }
  return "the object at " + text_position(text, start) +
         " is not closed before the end of the output";
}

}  // namespace

Expected<std::vector<SequencedObject>, std::string> parse_json_object_sequence(
    std::string_view text, const JsonSequenceLimits& limits) {
  if (text.size() > limits.max_bytes)
    return "the output is " + std::to_string(text.size()) + " bytes, more than the " +
           std::to_string(limits.max_bytes) + " read as JSON objects back to back";
  std::vector<SequencedObject> objects;
  std::size_t terminator = std::string_view::npos;  // where the empty `{}` was
  std::size_t at = 0;
  for (;;) {
    while (at < text.size() && is_json_space(text[at])) ++at;
    if (at == text.size()) break;
    if (terminator != std::string_view::npos)
      return "the empty {} at " + text_position(text, terminator) +
             " that closes the objects is followed by more output at " + text_position(text, at) +
             ": " + quoted_from(text, at);
    if (text[at] != '{')
      return "expected '{' at " + text_position(text, at) + ", found " + quoted_from(text, at);
    auto end = object_end(text, at, limits.max_depth);
    if (!end) return end.error();
    json value;
    try {
      const std::string_view chunk = text.substr(at, *end - at);
      value = json::parse(chunk.begin(), chunk.end());
    } catch (const json::parse_error& e) {
      const std::size_t where = at + (e.byte > 0 ? e.byte - 1 : 0);
      return "the object at " + text_position(text, at) + " is not JSON: it breaks at " +
             text_position(text, where);
    }
    if (value.empty()) {
      terminator = at;
    } else {
      if (objects.size() == limits.max_objects)
        return "more than " + std::to_string(limits.max_objects) +
               " JSON objects back to back (the next at " + text_position(text, at) + ")";
      objects.push_back({std::move(value), at + 1});
    }
    at = *end;
  }
  if (terminator == std::string_view::npos) {
    if (objects.empty()) return std::string("not JSON (empty output)");
    return "ends without the empty {} that closes JSON objects printed back to back (output cut "
           "short?) after " +
           std::to_string(objects.size()) + " object" + (objects.size() == 1 ? "" : "s");
  }
  return objects;
}

}  // namespace fabgate::snapshot
