#include "adapters/gnmi/data_tree.h"

#include <utility>

#include "adapters/core/foreign_json.h"

namespace fabgate::gnmi {

namespace {

using nlohmann::json;

// List keys arrive as strings in paths; in the tree a key leaf may be a number (an AS number,
// an ifindex), so both sides compare as text.
std::string key_text(const json& leaf) {
  if (leaf.is_string()) return leaf.get<std::string>();
  return leaf.dump();
}

bool entry_matches(const json& entry, const std::map<std::string, std::string>& keys) {
  if (!entry.is_object()) return false;
  for (const auto& [key, wanted] : keys) {
    auto found = entry.find(key);
    if (found == entry.end()) return false;
    if (wanted != "*" && key_text(*found) != wanted) return false;
  }
  return true;
}

void descend(const json& node, const GnmiPath& path, std::size_t depth, GnmiPath& concrete,
             std::vector<TreeMatch>& matches, std::string& deepest_miss,
             std::size_t& deepest_depth) {
  if (depth == path.elements.size()) {
    matches.push_back({concrete, &node});
    return;
  }
  const PathElement& element = path.elements[depth];
  auto note_miss = [&](std::string what) {
    if (deepest_miss.empty() || depth > deepest_depth) {
      deepest_depth = depth;
      std::string where = concrete.elements.empty() ? "/" : concrete.to_string();
      deepest_miss = "no " + std::move(what) + " under " + where;
    }
  };
  if (!node.is_object()) {
    note_miss("'" + element.name + "' (a leaf has no children)");
    return;
  }
  auto child = node.find(element.name);
  if (child == node.end()) {
    note_miss("'" + element.name + "'");
    return;
  }
  if (element.keys.empty()) {
    concrete.elements.push_back({element.name, {}});
    descend(*child, path, depth + 1, concrete, matches, deepest_miss, deepest_depth);
    concrete.elements.pop_back();
    return;
  }
  PathElement wanted_text{element.name, element.keys};
  if (!child->is_array()) {
    note_miss(GnmiPath{"", {wanted_text}}.to_string().substr(1) + " ('" + element.name +
              "' is not a list)");
    return;
  }
  bool any = false;
  for (const auto& entry : *child) {
    if (!entry_matches(entry, element.keys)) continue;
    any = true;
    PathElement filled{element.name, {}};
    for (const auto& [key, wanted] : element.keys) filled.keys[key] = key_text(entry.at(key));
    concrete.elements.push_back(std::move(filled));
    descend(entry, path, depth + 1, concrete, matches, deepest_miss, deepest_depth);
    concrete.elements.pop_back();
  }
  if (!any) note_miss("entry " + GnmiPath{"", {wanted_text}}.to_string().substr(1));
}

}  // namespace

Expected<std::vector<TreeMatch>, std::string> find_in_tree(const json& tree, const GnmiPath& path) {
  std::vector<TreeMatch> matches;
  GnmiPath concrete;
  concrete.origin = path.origin;
  std::string miss;
  std::size_t miss_depth = 0;
  descend(tree, path, 0, concrete, matches, miss, miss_depth);
  if (matches.empty()) return miss.empty() ? std::string("nothing matched") : miss;
  return matches;
}

void insert_into_tree(json& tree, const GnmiPath& path, json value) {
  json* node = &tree;
  for (const auto& element : path.elements) {
    if (!node->is_object()) *node = json::object();
    json& child = (*node)[element.name];
    if (element.keys.empty()) {
      node = &child;
      continue;
    }
    if (!child.is_array()) child = json::array();
    json* entry = nullptr;
    for (auto& candidate : child) {
      if (entry_matches(candidate, element.keys)) {
        entry = &candidate;
        break;
      }
    }
    if (entry == nullptr) {
      json fresh = json::object();
      for (const auto& [key, key_value] : element.keys) fresh[key] = key_value;
      child.push_back(std::move(fresh));
      entry = &child.back();
    }
    node = entry;
  }
  if (node->is_object() && value.is_object()) {
    for (auto& [member, member_value] : value.items()) {
      GnmiPath one{"", {{member, {}}}};
      insert_into_tree(*node, one, member_value);
    }
    return;
  }
  *node = std::move(value);
}

std::string strip_module_prefix(const std::string& name) {
  auto colon = name.find(':');
  return colon == std::string::npos ? name : name.substr(colon + 1);
}

void strip_module_prefixes_in_place(json& value) {
  if (value.is_array()) {
    for (auto& item : value) strip_module_prefixes_in_place(item);
    return;
  }
  if (!value.is_object()) return;
  auto& members = value.get_ref<json::object_t&>();
  bool prefixed = false;
  for (auto& [name, member] : members) {
    strip_module_prefixes_in_place(member);
    prefixed = prefixed || name.find(':') != std::string::npos;
  }
  if (!prefixed) return;
  // In key order, like strip_module_prefixes(): of two names that strip alike, the later wins.
  json::object_t stripped;
  for (auto& [name, member] : members) stripped[strip_module_prefix(name)] = std::move(member);
  members = std::move(stripped);
}

Expected<json, std::string> parse_target_value(const GnmiPath& path, std::string_view text) {
  auto parsed = parse_foreign_json(text);
  if (!parsed.ok()) return "value at " + path.to_string() + " is " + parsed.problem;
  return std::move(parsed.document);
}

json strip_module_prefixes(const json& value) {
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [member, member_value] : value.items()) {
      out[strip_module_prefix(member)] = strip_module_prefixes(member_value);
    }
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const auto& item : value) out.push_back(strip_module_prefixes(item));
    return out;
  }
  return value;
}

}  // namespace fabgate::gnmi
