#pragma once

// gNMI paths in their usual string form: /interfaces/interface[name=eth1]/state/oper-status,
// with an optional origin ("openconfig:/system/state"). Users write them in intent files and
// collector profiles; the adapter and fabgate-gnmid turn them into gnmi.Path messages.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/result.h"

namespace fabgate::gnmi {

// A node name and, for a list entry, its keys. A key value of "*" is a wildcard in Get and
// Subscribe paths.
struct PathElement {
  std::string name;
  std::map<std::string, std::string> keys;

  bool operator==(const PathElement&) const = default;
};

struct GnmiPath {
  std::string origin;
  std::vector<PathElement> elements;

  bool operator==(const GnmiPath&) const = default;
  bool has_wildcard() const;
  // Canonical text: keys in name order, ']' and '\' in key values escaped with '\'.
  std::string to_string() const;
};

// Why a path string is not a path. `position` is the 1-based character where the problem was
// found, so a message can point at it.
struct PathParseError {
  std::size_t position = 0;
  std::string reason;

  // "invalid gNMI path '/a[b': at character 3: '[' opens a key that is never closed"
  std::string describe(std::string_view text) const;
};

// Grammar: [origin ":"] "/" [element ("/" element)*], element = name ("[" key "=" value "]")*.
// Inside a key value '\' escapes the next character (so "\]" is a ']'); '/' needs no escape
// there. A key name may escape '=' and ']' the same way.
Expected<GnmiPath, PathParseError> parse_path(std::string_view text);

// "a" + "b" -> "a/b": `prefix`'s origin wins unless it is empty.
GnmiPath join_paths(const GnmiPath& prefix, const GnmiPath& path);

}  // namespace fabgate::gnmi
