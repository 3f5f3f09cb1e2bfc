#pragma once

// OpenConfig data held as one JSON document in the shape gNMI's JSON encodings use:
// containers are objects, lists are arrays of objects that carry their key leaves. The target
// resolves Get paths in such a tree; the client merges received updates into one to read facts.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"
#include "adapters/gnmi/path.h"

namespace fabgate::gnmi {

// One node that a (possibly wildcard) path matched: its concrete path, with list keys filled in.
struct TreeMatch {
  GnmiPath path;
  const nlohmann::json* value = nullptr;
};

// Every node `path` addresses in `tree`. Keys with value "*" match every entry. When nothing
// matches, the error says which element was missing below which concrete path, e.g.
// "no 'foo' under /interfaces/interface[name=eth1]".
Expected<std::vector<TreeMatch>, std::string> find_in_tree(const nlohmann::json& tree,
                                                           const GnmiPath& path);

// Places `value` at `path` (no wildcards), creating containers and list entries on the way;
// objects already there are merged member by member, anything else is replaced.
void insert_into_tree(nlohmann::json& tree, const GnmiPath& path, nlohmann::json value);

// A value a target sent as JSON text (a gNMI update's, at `path`), parsed depth-limited
// (adapters/core/foreign_json.h): "value at PATH is not JSON" or "value at PATH is nested
// deeper than 64 levels" rather than a document that overflows the stack once it is copied,
// dumped or stripped of its module prefixes (each recursive).
Expected<nlohmann::json, std::string> parse_target_value(const GnmiPath& path,
                                                         std::string_view text);

// JSON_IETF names members "module:name"; facts only need the local names.
nlohmann::json strip_module_prefixes(const nlohmann::json& value);
// The same in place: values are moved, never copied, so a document as large as a whole route
// table is not held twice. `value` must be depth-limited (parse_target_value()).
void strip_module_prefixes_in_place(nlohmann::json& value);
std::string strip_module_prefix(const std::string& name);

}  // namespace fabgate::gnmi
