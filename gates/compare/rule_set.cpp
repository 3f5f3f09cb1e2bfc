#include "gates/compare/rule_set.h"

#include <cmath>
#include <set>

#include "adapters/core/yaml_reader.h"

namespace fabgate::compare {

std::string_view to_string(Layer layer) {
  switch (layer) {
    case Layer::link:
      return "link";
    case Layer::control_plane:
      return "control-plane";
    case Layer::forwarding:
      return "forwarding";
    case Layer::transport:
      return "transport";
    case Layer::workload:
      return "workload";
    case Layer::telemetry:
      return "telemetry";
  }
  return "telemetry";
}

std::optional<Layer> parse_layer(std::string_view text) {
  for (auto layer : kLayers)
    if (to_string(layer) == text) return layer;
  return std::nullopt;
}

Layer layer_of_category(std::string_view category) {
  if (category == "interfaces" || category == "lldp") return Layer::link;
  if (category == "bgp" || category == "bfd" || category == "evpn") return Layer::control_plane;
  if (category == "routes") return Layer::forwarding;
  if (category == "rdma" || category == "congestion") return Layer::transport;
  if (category == "gpu") return Layer::workload;
  return Layer::telemetry;
}

std::string_view to_string(Operator op) {
  switch (op) {
    case Operator::no_change:
      return "no-change";
    case Operator::equal:
      return "equal";
    case Operator::in:
      return "in";
    case Operator::range:
      return "range";
    case Operator::delta:
      return "delta";
    case Operator::increase:
      return "increase";
    case Operator::count:
      return "count";
    case Operator::exists:
      return "exists";
    case Operator::absent:
      return "absent";
  }
  return "no-change";
}

std::string_view to_string(Comparison comparison) {
  switch (comparison) {
    case Comparison::eq:
      return "==";
    case Comparison::ne:
      return "!=";
    case Comparison::lt:
      return "<";
    case Comparison::le:
      return "<=";
    case Comparison::gt:
      return ">";
    case Comparison::ge:
      return ">=";
  }
  return "==";
}

bool holds(Comparison comparison, long double left, long double right) {
  switch (comparison) {
    case Comparison::eq:
      return left == right;
    case Comparison::ne:
      return left != right;
    case Comparison::lt:
      return left < right;
    case Comparison::le:
      return left <= right;
    case Comparison::gt:
      return left > right;
    case Comparison::ge:
      return left >= right;
  }
  return false;
}

std::optional<std::string> path_problem(const PathPattern& pattern) {
  const auto& segments = pattern.segments();
  if (segments.size() < 3 || segments[0].glob || segments[0].text != "devices")
    return "path '" + pattern.text() + "' must start with devices.<device>.<category>";
  if (segments[2].glob)
    return "the category in path '" + pattern.text() + "' must be named, not a wildcard";
  if (segments[2].text == "routes") {
    if (segments.size() != 4)
      return "route tables are addressed as devices.<device>.routes.<ipv4|ipv6|*>, not '" +
             pattern.text() + "'";
    const auto& family = segments[3];
    if (!family.matches("ipv4") && !family.matches("ipv6"))
      return "route family in '" + pattern.text() + "' must be ipv4, ipv6 or *";
  }
  return std::nullopt;
}

namespace {

constexpr std::string_view kCommonKeys[] = {"name", "layer", "path", "operator", "description"};

std::vector<std::string_view> keys_for(Operator op) {
  std::vector<std::string_view> keys(std::begin(kCommonKeys), std::end(kCommonKeys));
  switch (op) {
    case Operator::equal:
      keys.push_back("value");
      break;
    case Operator::in:
      keys.push_back("values");
      break;
    case Operator::range:
      keys.insert(keys.end(), {"min", "max"});
      break;
    case Operator::delta:
      keys.push_back("max");
      break;
    case Operator::increase:
      keys.insert(keys.end(), {"min", "max"});
      break;
    case Operator::count:
      keys.insert(keys.end(), {"compare", "value"});
      break;
    default:
      break;
  }
  return keys;
}

std::optional<Operator> parse_operator(std::string_view text) {
  for (auto op :
       {Operator::no_change, Operator::equal, Operator::in, Operator::range, Operator::delta,
        Operator::increase, Operator::count, Operator::exists, Operator::absent})
    if (to_string(op) == text) return op;
  return std::nullopt;
}

std::optional<long double> number_at(YamlReader& reader, const YAML::Node& map,
                                     std::string_view key, Need need, std::string_view what) {
  auto number = reader.number(map, key, need, what);
  if (!number) return std::nullopt;
  return static_cast<long double>(*number);
}

// delta's max: "5" (absolute) or "10%" (relative to the pre value).
void read_delta_max(YamlReader& reader, const YAML::Node& map, Rule& rule, std::string_view what) {
  auto node = reader.child(map, "max", Need::required, what);
  if (!node) return;
  std::string text = node->IsScalar() ? node->Scalar() : std::string();
  bool percent = !text.empty() && text.back() == '%';
  if (percent) text.pop_back();
  try {
    std::size_t used = 0;
    double value = text.empty() ? -1 : std::stod(text, &used);
    if (!text.empty() && used == text.size() && value >= 0 && std::isfinite(value)) {
      rule.max = value;
      rule.percent = percent;
      return;
    }
  } catch (const std::exception&) {
  }
  reader.error(*node, "'max' in " + std::string(what) +
                          " must be a non-negative number, or a percentage such as 10%");
}

std::optional<Rule> read_rule(YamlReader& reader, const YAML::Node& node, std::size_t index,
                              const std::string& set_name, std::set<std::string>& names) {
  std::string what = "rule " + std::to_string(index + 1);
  if (!reader.expect_map(node, what)) return std::nullopt;
  Rule rule;
  rule.rule_set = set_name;
  rule.where = reader.at(node);
  auto name = reader.string(node, "name", Need::required, what);
  if (name) {
    what = "rule '" + *name + "'";
    rule.name = *name;
    if (!names.insert(*name).second)
      reader.error(node["name"], "rule name '" + *name + "' is used twice in this rule set");
  }
  bool ok = name.has_value();

  auto layer_text =
      reader.choice(node, "layer", Need::required, what,
                    {"link", "control-plane", "forwarding", "transport", "workload", "telemetry"});
  if (layer_text) rule.layer = *parse_layer(*layer_text);
  ok = ok && layer_text;

  auto op_text = reader.choice(
      node, "operator", Need::required, what,
      {"no-change", "equal", "in", "range", "delta", "increase", "count", "exists", "absent"});
  if (op_text) rule.op = *parse_operator(*op_text);
  ok = ok && op_text;

  auto path_text = reader.string(node, "path", Need::required, what);
  if (path_text) {
    std::string problem;
    auto pattern = PathPattern::parse(*path_text, &problem);
    if (pattern && !path_problem(*pattern)) {
      rule.path = *pattern;
    } else {
      reader.error(node["path"], pattern ? *path_problem(*pattern) : problem,
                   "example: devices.*.bgp.peers.*.state");
      ok = false;
    }
  } else {
    ok = false;
  }
  if (!op_text) return std::nullopt;  // arguments depend on the operator

  auto keys = keys_for(rule.op);
  reader.check_keys(node, std::span<const std::string_view>(keys.data(), keys.size()), what);

  switch (rule.op) {
    case Operator::equal: {
      auto value = reader.child(node, "value", Need::required, what);
      if (value && value->IsScalar())
        rule.value = value->Scalar();
      else if (value)
        reader.error(*value, "'value' in " + what + " must be a single value");
      ok = ok && value && value->IsScalar();
      break;
    }
    case Operator::in: {
      auto values = reader.string_list(node, "values", Need::required, what);
      if (values && values->empty())
        reader.error(node["values"], "'values' in " + what + " is empty");
      if (values) rule.values = *values;
      ok = ok && values && !values->empty();
      break;
    }
    case Operator::range: {
      rule.min = number_at(reader, node, "min", Need::optional, what);
      rule.max = number_at(reader, node, "max", Need::optional, what);
      if (!node["min"] && !node["max"]) {
        reader.error(node, what + " (range) needs 'min', 'max' or both");
        ok = false;
      }
      if (rule.min && rule.max && *rule.min > *rule.max) {
        reader.error(node["min"], "'min' in " + what + " is larger than 'max'");
        ok = false;
      }
      break;
    }
    case Operator::delta:
      read_delta_max(reader, node, rule, what);
      ok = ok && rule.max;
      break;
    case Operator::increase:
      rule.min = number_at(reader, node, "min", Need::optional, what).value_or(0);
      rule.max = number_at(reader, node, "max", Need::required, what);
      ok = ok && rule.max;
      if (rule.max && *rule.min > *rule.max) {
        reader.error(node["min"], "'min' in " + what + " is larger than 'max'");
        ok = false;
      }
      break;
    case Operator::count: {
      auto comparison =
          reader.choice(node, "compare", Need::required, what, {"==", "!=", "<", "<=", ">", ">="});
      if (comparison) {
        for (auto c : {Comparison::eq, Comparison::ne, Comparison::lt, Comparison::le,
                       Comparison::gt, Comparison::ge})
          if (to_string(c) == *comparison) rule.comparison = c;
      }
      auto count = reader.integer(node, "value", Need::required, what, 0, 1'000'000'000);
      if (count) rule.count = *count;
      ok = ok && comparison && count;
      break;
    }
    default:
      break;
  }

  if (rule.path.size() >= 3 && rule.category() == "routes") {
    bool supported = rule.op == Operator::no_change || rule.op == Operator::count ||
                     rule.op == Operator::exists || rule.op == Operator::absent;
    if (!supported) {
      reader.error(node["operator"],
                   "operator '" + std::string(to_string(rule.op)) + "' cannot check a route table",
                   "route tables take no-change, count, exists or absent");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return rule;
}

}  // namespace

Result<RuleSet> load_rule_set(std::string_view yaml_text, const std::string& file_name) {
  auto parsed = parse_yaml(yaml_text, file_name);
  if (!parsed) return parsed.error();
  const YAML::Node& root = *parsed;

  Diagnostics diagnostics;
  YamlReader reader(file_name, diagnostics);
  RuleSet set;
  set.file = file_name;
  if (reader.expect_map(root, "rule set")) {
    reader.check_keys(root, {"name", "description", "ignore", "rules"}, "rule set");
    if (auto name = reader.string(root, "name", Need::required, "rule set")) set.name = *name;

    if (auto ignore = reader.child(root, "ignore", Need::optional, "rule set");
        ignore && reader.expect_sequence(*ignore, "'ignore'")) {
      for (const auto& item : *ignore) {
        if (!item.IsScalar()) {
          reader.error(item, "items of 'ignore' must be paths");
          continue;
        }
        std::string problem;
        auto pattern = PathPattern::parse(item.Scalar(), &problem);
        if (pattern && (pattern->size() < 2 || pattern->segments()[0].text != "devices"))
          problem = "ignored path '" + item.Scalar() + "' must start with devices.<device>";
        if (!pattern || !problem.empty())
          reader.error(item, problem);
        else
          set.ignore.push_back(*pattern);
      }
    }

    if (auto rules = reader.child(root, "rules", Need::required, "rule set");
        rules && reader.expect_sequence(*rules, "'rules'")) {
      std::set<std::string> names;
      for (std::size_t i = 0; i < rules->size(); ++i) {
        if (auto rule = read_rule(reader, (*rules)[i], i, set.name, names))
          set.rules.push_back(std::move(*rule));
      }
    }
  }
  if (!diagnostics.empty())
    return Error::invalid_input("rule set " + file_name + " is invalid", diagnostics.lines());
  return set;
}

}  // namespace fabgate::compare
