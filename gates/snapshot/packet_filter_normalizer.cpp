// nftables' ruleset (`nft -j list ruleset`) as the packet_filter category. iptables-nft writes
// its rules into the same ruleset (tables named filter, nat, mangle...), so it is read here too;
// only legacy iptables (x_tables) is outside it.
//
// The shape (docs/snapshot-format.md) separates what a change configures from what traffic
// moves: `tables`, `chains` and `sets` hold the configuration, each rule as a canonical text of
// its statements, so that a rule deleted and added again the same reads the same; `handles`
// (the kernel's per-table rule numbers, new on every re-add) and `counters` (packets and bytes)
// are kept beside them for the evidence, and no default rule compares them.

#include <algorithm>
#include <optional>

#include "gates/snapshot/normalizers.h"
#include "gates/snapshot/output_json.h"

#include "adapters/core/foreign_json.h"

namespace fabgate::snapshot {

using nlohmann::json;

namespace {

// Deeper than any statement nft prints (a set of concatenations inside a map lookup is about
// 8 levels); the whole document is already refused past 64 levels by parse_output_json.
constexpr int kMaxExpressionDepth = 24;

// Members that are state, not configuration: a counter's or quota's progress and a dynamic
// set element's remaining time. Left out of every canonical text.
bool is_state_member(const std::string& key) {
  return key == "packets" || key == "bytes" || key == "used" || key == "used_unit" ||
         key == "expires";
}

// Renders nft's JSON expressions and statements as one line of text close to nft's own syntax
// for the common forms (`ip daddr 10.1.2.0/24 meta l4proto udp drop`) and a stable generic form
// for the others (`numgen mod 100 mode random offset 0`: members in key order). Every value of
// any type can be rendered, so the only failures are a statement that is not an object of one
// member and nesting past kMaxExpressionDepth, each naming its field.
class Renderer {
 public:
  explicit Renderer(std::string& problem) : problem_(problem) {}

  std::string statement(const json& value, const std::string& where) {
    if (!value.is_object() || value.size() != 1) {
      fail("field '" + where + "' is " + json_kind(value) +
           (value.is_object() ? " with " + std::to_string(value.size()) + " members" : "") +
           ", not a statement (an object of one member)");
      return {};
    }
    const auto first = value.begin();
    const std::string& key = first.key();
    const json& body = first.value();
    const std::string at = where + "." + key;
    if (key == "match") {
      std::string problem;
      Fields match(body, at, problem);
      const json& left = match.required("left");
      const json& right = match.required("right");
      const std::string op = match.required_text("op");
      if (!problem.empty()) {
        fail(problem);
        return {};
      }
      const std::string shown_op = op == "==" || op == "in" ? "" : op + " ";
      return expression(left, at + ".left", 1) + " " + shown_op +
             expression(right, at + ".right", 1);
    }
    if (key == "counter" && body.is_object()) return "counter";  // its values are state
    if ((key == "jump" || key == "goto") && body.is_object() && body.contains("target"))
      return key + " " + expression(body.at("target"), at + ".target", 1);
    return generic(key, body, at, 1);
  }

  // Any value of an expression: a set's type, one of its elements.
  std::string value(const json& value, const std::string& where) {
    return expression(value, where, 1);
  }

 private:
  std::string expression(const json& value, const std::string& where, int depth) {
    if (depth > kMaxExpressionDepth) {
      fail("field '" + where + "' nests deeper than " + std::to_string(kMaxExpressionDepth) +
           " levels");
      return {};
    }
    if (value.is_null()) return "null";
    if (value.is_string()) {
      const auto& text = value.get_ref<const std::string&>();
      bool plain = !text.empty() && text.find_first_of(" \t\",{}") == std::string::npos;
      return plain ? text : json(text).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    if (value.is_array()) return list(value, ",", where, depth);
    if (!value.is_object()) return value.dump();
    if (value.size() != 1) return members(value, where, depth);
    const auto first = value.begin();
    const std::string& key = first.key();
    const json& body = first.value();
    const std::string at = where + "." + key;
    if (key == "payload" && body.is_object() && body.contains("protocol") &&
        body.contains("field"))
      return expression(body.at("protocol"), at + ".protocol", depth + 1) + " " +
             expression(body.at("field"), at + ".field", depth + 1);
    if (key == "meta" && body.is_object() && body.size() == 1 && body.contains("key"))
      return "meta " + expression(body.at("key"), at + ".key", depth + 1);
    if (key == "ct" && body.is_object() && body.contains("key") &&
        body.size() == (body.contains("dir") ? 2u : 1u))
      return "ct " +
             (body.contains("dir") ? expression(body.at("dir"), at + ".dir", depth + 1) + " " : "") +
             expression(body.at("key"), at + ".key", depth + 1);
    if (key == "set" && body.is_array()) return "{ " + list(body, ", ", at, depth + 1) + " }";
    if (key == "prefix" && body.is_object() && body.size() == 2 && body.contains("addr") &&
        body.contains("len"))
      return expression(body.at("addr"), at + ".addr", depth + 1) + "/" +
             expression(body.at("len"), at + ".len", depth + 1);
    if (key == "range" && body.is_array() && body.size() == 2) return list(body, "-", at, depth + 1);
    if (key == "concat" && body.is_array()) return list(body, " . ", at, depth + 1);
    return generic(key, body, at, depth + 1);
  }

  // `key` followed by its body: nothing for null, its members in key order for an object.
  std::string generic(const std::string& key, const json& body, const std::string& where,
                      int depth) {
    if (body.is_null()) return key;
    std::string rest = body.is_object() ? members(body, where, depth) : expression(body, where, depth);
    return rest.empty() ? key : key + " " + rest;
  }

  std::string members(const json& object, const std::string& where, int depth) {
    if (depth > kMaxExpressionDepth) return expression(object, where, depth);
    std::string text;
    for (const auto& [key, value] : object.items()) {  // nlohmann keeps keys sorted
      if (is_state_member(key)) continue;
      std::string rendered = expression(value, where + "." + key, depth + 1);
      text += (text.empty() ? "" : " ") + key + (rendered.empty() ? "" : " " + rendered);
    }
    return text;
  }

  std::string list(const json& array, std::string_view separator, const std::string& where,
                   int depth) {
    std::string text;
    for (std::size_t i = 0; i < array.size(); ++i) {
      if (i > 0) text += separator;
      text += expression(array[i], where + element_path(i), depth + 1);
    }
    return text;
  }

  void fail(std::string why) {
    if (problem_.empty()) problem_ = std::move(why);
  }

  std::string& problem_;
};

// The packets and bytes of a rule's first counter statement, when it has one.
std::optional<json> rule_counter(const json& expr, const std::string& where, std::string& problem) {
  for (std::size_t i = 0; i < expr.size(); ++i) {
    const json& statement = expr[i];
    if (!statement.is_object() || !statement.contains("counter")) continue;
    const json& counter = statement.at("counter");
    if (!counter.is_object()) continue;  // a reference to a named counter object
    const std::string at = where + element_path(i) + ".counter";
    Fields fields(counter, at, problem);
    json values = {{"packets", fields.required_integer("packets")},
                   {"bytes", fields.required_integer("bytes")}};
    if (!problem.empty()) return std::nullopt;
    return values;
  }
  return std::nullopt;
}

std::vector<std::string> string_list(const json& value, const std::string& where,
                                     std::string& problem) {
  std::vector<std::string> items;
  if (value.is_string()) {
    items.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) {
        if (problem.empty())
          problem = "field '" + where + element_path(i) + "' is " + json_kind(value[i]) +
                    ", not a string";
        return {};
      }
      items.push_back(value[i].get<std::string>());
    }
  } else if (problem.empty()) {
    problem = "field '" + where + "' is " + json_kind(value) + ", not a string or a list";
  }
  std::sort(items.begin(), items.end());
  return items;
}

void insert_sorted(json& list, const std::string& name) {
  auto names = list.get<std::vector<std::string>>();
  names.push_back(name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  list = names;
}

}  // namespace

Expected<Ok, std::string> parse_nft_ruleset(std::string_view output, json& packet_filter) {
  auto document = parse_output_json(output);
  if (!document) return document.error();
  if (!document->is_object() || !document->contains("nftables"))
    return wrong_member(*document, "nftables", "an array");
  std::string problem;
  Fields top(*document, "", problem);
  const json& items = top.array("nftables");
  if (!problem.empty()) return problem;

  json tables = json::object(), chains = json::object(), sets = json::object();
  json handles = json::object(), counters = json::object();
  auto table_entry = [&](const std::string& table_key) -> json& {
    json& table = tables[table_key];
    if (!table.is_object()) table = {{"chains", json::array()}, {"sets", json::array()}};
    return table;
  };
  Renderer renderer(problem);
  for (std::size_t i = 0; i < items.size() && problem.empty(); ++i) {
    const json& item = items[i];
    const std::string where = "nftables" + element_path(i);
    if (!item.is_object() || item.size() != 1)
      return "field '" + where + "' is " + json_kind(item) +
             (item.is_object() ? " with " + std::to_string(item.size()) + " members" : "") +
             ", not an object of one member";
    const auto first = item.begin();
    const std::string& kind = first.key();
    const json& body = first.value();
    const std::string at = where + "." + kind;
    if (kind == "table") {
      Fields table(body, at, problem);
      std::string key = table.required_text("family") + " " + table.required_text("name");
      if (problem.empty()) table_entry(key);
    } else if (kind == "chain") {
      Fields chain(body, at, problem);
      const std::string table_key = chain.required_text("family") + " " + chain.required_text("table");
      const std::string name = chain.required_text("name");
      json entry = {{"rules", json::array()}};
      // A base chain (attached to a hook) has these; a regular chain (a jump target) has none.
      if (body.is_object() && body.contains("type")) entry["type"] = chain.text("type");
      if (body.is_object() && body.contains("hook")) entry["hook"] = chain.text("hook");
      if (body.is_object() && body.contains("prio")) entry["priority"] = chain.integer("prio");
      if (body.is_object() && body.contains("policy")) entry["policy"] = chain.text("policy");
      if (body.is_object() && body.contains("dev"))
        entry["devices"] = string_list(body.at("dev"), at + ".dev", problem);
      if (!problem.empty()) break;
      insert_sorted(table_entry(table_key)["chains"], name);
      json& slot = chains[table_key + " " + name];
      if (slot.is_object() && slot.contains("rules")) entry["rules"] = slot["rules"];
      slot = std::move(entry);
    } else if (kind == "rule") {
      Fields rule(body, at, problem);
      const std::string chain_key = rule.required_text("family") + " " +
                                    rule.required_text("table") + " " +
                                    rule.required_text("chain");
      const std::int64_t handle = rule.required_integer("handle");
      if (problem.empty() && !body.contains("expr")) problem = "field '" + at + ".expr' is missing";
      const json& expr = rule.array("expr");
      const std::string comment = rule.text("comment");
      if (!problem.empty()) break;
      std::string text;
      for (std::size_t s = 0; s < expr.size(); ++s) {
        std::string statement = renderer.statement(expr[s], at + ".expr" + element_path(s));
        text += (text.empty() ? "" : " ") + statement;
      }
      if (!comment.empty())
        text += " comment " + json(comment).dump(-1, ' ', false, json::error_handler_t::replace);
      auto counter = rule_counter(expr, at + ".expr", problem);
      if (!problem.empty()) break;
      json& chain = chains[chain_key];
      if (!chain.is_object()) chain = {{"rules", json::array()}};
      chain["rules"].push_back(text);
      handles[chain_key].push_back(handle);
      if (counter) {
        (*counter)["rule"] = text;
        counters[chain_key][std::to_string(handle)] = std::move(*counter);
      }
    } else if (kind == "set" || kind == "map") {
      Fields set(body, at, problem);
      const std::string table_key = set.required_text("family") + " " + set.required_text("table");
      const std::string name = set.required_text("name");
      std::vector<std::string> flags;
      if (body.is_object() && body.contains("flags"))
        flags = string_list(body.at("flags"), at + ".flags", problem);
      if (!problem.empty()) break;
      json entry = {{"kind", kind}, {"flags", flags}};
      if (body.contains("type")) entry["type"] = renderer.value(body.at("type"), at + ".type");
      if (body.contains("map")) entry["map"] = renderer.value(body.at("map"), at + ".map");
      // Elements of a set the packet path fills (a meter, `add @set`) or that time out move with
      // traffic: they are state, so such a set is compared by its definition only.
      const bool dynamic = std::find(flags.begin(), flags.end(), "dynamic") != flags.end() ||
                           std::find(flags.begin(), flags.end(), "timeout") != flags.end() ||
                           body.contains("timeout");
      if (dynamic) {
        entry["elements"] = "dynamic (not compared)";
      } else {
        std::vector<std::string> elements;
        const json& elem = set.array("elem");
        for (std::size_t e = 0; e < elem.size() && problem.empty(); ++e)
          elements.push_back(renderer.value(elem[e], at + ".elem" + element_path(e)));
        std::sort(elements.begin(), elements.end());
        entry["elements"] = elements;
      }
      if (!problem.empty()) break;
      insert_sorted(table_entry(table_key)["sets"], name);
      sets[table_key + " " + name] = std::move(entry);
    }
    // metainfo, flowtables, named counters, quotas, limits, ct helpers: not read.
  }
  if (!problem.empty()) return problem;
  packet_filter["tables"] = std::move(tables);
  packet_filter["chains"] = std::move(chains);
  packet_filter["sets"] = std::move(sets);
  packet_filter["handles"] = std::move(handles);
  packet_filter["counters"] = std::move(counters);
  return Ok{};
}

}  // namespace fabgate::snapshot
