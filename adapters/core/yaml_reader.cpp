#include "adapters/core/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <charconv>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "adapters/core/text.h"
#include "adapters/core/utf8.h"

namespace fabgate {
namespace {

// Thrown out of the event pass to stop it at the first node past a limit.
struct ExpansionRefused {
  YAML::Mark mark;
  std::string message;
};

// Counts the nodes of the first document the way a reader walking the loaded tree meets them:
// an alias counts as the whole node it refers to. It stops (throws) as soon as the count
// passes the limit, so a hostile document costs one pass over its text, never its expansion.
class ExpansionCounter final : public YAML::EventHandler {
 public:
  explicit ExpansionCounter(std::uint64_t limit) : limit_(limit) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto size = sizes_.find(anchor);
    if (size == sizes_.end())
      throw ExpansionRefused{mark,
                             "YAML alias refers to a node that contains it (a cycle); write the "
                             "value out instead"};
    add(mark, size->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    std::uint64_t count_before;
  };

  void add(const YAML::Mark& mark, std::uint64_t nodes) {
    count_ += nodes;
    if (count_ > limit_)
      throw ExpansionRefused{mark, "the document has more than " + std::to_string(limit_) +
                                       " nodes with its aliases expanded (refused here)"};
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    add(mark, 1);
    if (anchor != YAML::NullAnchor) sizes_[anchor] = 1;
  }
  // An anchored collection has no size until it closes: an alias to it before then is a cycle.
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    open_.push_back(Open{anchor, count_});
    add(mark, 1);
  }
  void close() {
    if (open_.empty()) return;
    Open done = open_.back();
    open_.pop_back();
    if (done.anchor != YAML::NullAnchor) sizes_[done.anchor] = count_ - done.count_before;
  }

  std::uint64_t limit_;
  std::uint64_t count_ = 0;
  std::vector<Open> open_;
  std::unordered_map<YAML::anchor_t, std::uint64_t> sizes_;
};

}  // namespace

Expected<YAML::Node, Diagnostic> parse_yaml_located(std::string_view text,
                                                    const std::string& file) {
  if (text.size() > kMaxYamlBytes)
    return Diagnostic{SourceLocation{file, 0, 0},
                      std::to_string(text.size()) + " bytes, more than the " +
                          std::to_string(kMaxYamlBytes >> 20) + " MiB a YAML file may have",
                      {}};
  if (auto bad = find_invalid_utf8(text))
    return Diagnostic{SourceLocation{file, bad->line, bad->column},
                      bad->describe() + "; YAML files must be UTF-8",
                      {}};
  try {
    // The event pass runs first: YAML::Load builds the (shared) tree cheaply, but what comes
    // after it walks the tree, and that walk is what a hostile document makes exponential. An
    // alias is written '*name', so a text without '*' has none and needs no pass: its node
    // count is bounded by its size (the pass costs about as much as the parse).
    if (text.find('*') != std::string_view::npos) {
      std::istringstream stream{std::string(text)};
      YAML::Parser events(stream);
      ExpansionCounter counter(kMaxYamlNodes);
      events.HandleNextDocument(counter);
    }
    return YAML::Load(std::string(text));
  } catch (const ExpansionRefused& e) {
    return Diagnostic{SourceLocation{file, e.mark.line + 1, e.mark.column + 1}, e.message, {}};
  } catch (const YAML::ParserException& e) {
    return Diagnostic{
        SourceLocation{file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax: " + e.msg, {}};
  } catch (const YAML::Exception& e) {
    return Diagnostic{SourceLocation{file, 0, 0}, std::string("YAML: ") + e.what(), {}};
  }
}

Result<YAML::Node> parse_yaml(std::string_view text, const std::string& file) {
  auto parsed = parse_yaml_located(text, file);
  if (!parsed.ok()) return Error::invalid_input(parsed.error().to_string());
  return std::move(parsed).value();
}

YamlReader::YamlReader(std::string file, Diagnostics& diagnostics)
    : file_(std::move(file)), diagnostics_(diagnostics) {}

SourceLocation YamlReader::at(const YAML::Node& node) const {
  if (!node.IsDefined()) return SourceLocation{file_, 0, 0};
  auto mark = node.Mark();
  if (mark.is_null()) return SourceLocation{file_, 0, 0};
  return SourceLocation{file_, mark.line + 1, mark.column + 1};
}

SourceLocation YamlReader::key_at(const YAML::Node& map, std::string_view key) const {
  if (map.IsMap()) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) return at(it->first);
    }
  }
  return at(map);
}

void YamlReader::error(const YAML::Node& where, std::string message, std::string hint) {
  diagnostics_.error(at(where), std::move(message), std::move(hint));
}

bool YamlReader::expect_map(const YAML::Node& node, std::string_view what) {
  if (node.IsMap()) return true;
  error(node, std::string(what) + " must be a mapping (key: value)");
  return false;
}

bool YamlReader::expect_sequence(const YAML::Node& node, std::string_view what) {
  if (node.IsSequence()) return true;
  error(node, std::string(what) + " must be a list");
  return false;
}

void YamlReader::check_keys(const YAML::Node& map, std::span<const std::string_view> allowed,
                            std::string_view what) {
  if (!map.IsMap()) return;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) {
      error(it->first, "keys of " + std::string(what) + " must be plain words");
      continue;
    }
    const std::string& key = it->first.Scalar();
    bool known = false;
    for (auto candidate : allowed) known = known || candidate == key;
    if (known) continue;
    std::string hint;
    if (auto suggestion = nearest_word(key, allowed)) {
      hint = "did you mean '" + *suggestion + "'?";
    } else {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      hint = "valid keys: " + join(names, ", ");
    }
    error(it->first, "unknown key '" + key + "' in " + std::string(what), hint);
  }
}

void YamlReader::check_duplicate_keys(const YAML::Node& node) {
  if (node.IsSequence()) {
    for (const auto& item : node) check_duplicate_keys(item);
    return;
  }
  if (!node.IsMap()) return;
  std::vector<std::pair<std::string, YAML::Node>> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar()) {
      const std::string& key = it->first.Scalar();
      for (const auto& [previous, previous_node] : seen) {
        if (previous == key) {
          error(it->first,
                "duplicate key '" + key + "' (first defined at line " +
                    std::to_string(at(previous_node).line) + ")",
                "each key may appear once; merge or rename one of them");
          break;
        }
      }
      seen.emplace_back(key, it->first);
    }
    check_duplicate_keys(it->second);
  }
}

std::optional<YAML::Node> YamlReader::child(const YAML::Node& map, std::string_view key, Need need,
                                            std::string_view what) {
  if (!map.IsMap()) return std::nullopt;
  YAML::Node value = map[std::string(key)];
  if (!value.IsDefined() || value.IsNull()) {
    if (need == Need::required)
      error(map, std::string(what) + " is missing required key '" + std::string(key) + "'");
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> YamlReader::scalar_text(const YAML::Node& map, std::string_view key,
                                                   Need need, std::string_view what,
                                                   std::string_view expected) {
  auto value = child(map, key, need, what);
  if (!value) return std::nullopt;
  if (!value->IsScalar()) {
    error(*value, "'" + std::string(key) + "' in " + std::string(what) + " must be " +
                      std::string(expected));
    return std::nullopt;
  }
  return value->Scalar();
}

std::optional<std::string> YamlReader::string(const YAML::Node& map, std::string_view key,
                                              Need need, std::string_view what) {
  auto text = scalar_text(map, key, need, what, "a string");
  if (text && text->empty() && need == Need::required) {
    error(map[std::string(key)],
          "'" + std::string(key) + "' in " + std::string(what) + " must not be empty");
    return std::nullopt;
  }
  return text;
}

std::optional<std::int64_t> YamlReader::integer(const YAML::Node& map, std::string_view key,
                                                Need need, std::string_view what, std::int64_t min,
                                                std::int64_t max) {
  auto text = scalar_text(map, key, need, what, "an integer");
  if (!text) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) {
    error(map[std::string(key)], "'" + std::string(key) + "' in " + std::string(what) +
                                     " must be an integer, not '" + *text + "'");
    return std::nullopt;
  }
  if (value < min || value > max) {
    error(map[std::string(key)], "'" + std::string(key) + "' in " + std::string(what) +
                                     " must be between " + std::to_string(min) + " and " +
                                     std::to_string(max) + ", not " + *text);
    return std::nullopt;
  }
  return value;
}

std::optional<double> YamlReader::number(const YAML::Node& map, std::string_view key, Need need,
                                         std::string_view what) {
  auto text = scalar_text(map, key, need, what, "a number");
  if (!text) return std::nullopt;
  try {
    std::size_t used = 0;
    double value = std::stod(*text, &used);
    if (used == text->size()) return value;
  } catch (const std::exception&) {
  }
  error(map[std::string(key)], "'" + std::string(key) + "' in " + std::string(what) +
                                   " must be a number, not '" + *text + "'");
  return std::nullopt;
}

std::optional<bool> YamlReader::boolean(const YAML::Node& map, std::string_view key, Need need,
                                        std::string_view what) {
  auto text = scalar_text(map, key, need, what, "true or false");
  if (!text) return std::nullopt;
  if (*text == "true") return true;
  if (*text == "false") return false;
  error(map[std::string(key)], "'" + std::string(key) + "' in " + std::string(what) +
                                   " must be true or false, not '" + *text + "'");
  return std::nullopt;
}

std::optional<Duration> YamlReader::duration(const YAML::Node& map, std::string_view key, Need need,
                                             std::string_view what) {
  auto text = scalar_text(map, key, need, what, "a duration");
  if (!text) return std::nullopt;
  if (auto parsed = parse_duration(*text)) return parsed;
  error(
      map[std::string(key)],
      "'" + std::string(key) + "' in " + std::string(what) + " is not a duration: '" + *text + "'",
      "write a number with a unit: 500ms, 30s, 5m, 1h or 1m30s");
  return std::nullopt;
}

std::optional<TimePoint> YamlReader::time(const YAML::Node& map, std::string_view key, Need need,
                                          std::string_view what) {
  auto text = scalar_text(map, key, need, what, "an ISO 8601 time");
  if (!text) return std::nullopt;
  if (auto parsed = parse_iso8601(*text)) return parsed;
  error(map[std::string(key)],
        "'" + std::string(key) + "' in " + std::string(what) + " is not an ISO 8601 time: '" +
            *text + "'",
        "write e.g. 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00; the zone is required");
  return std::nullopt;
}

std::optional<std::vector<std::string>> YamlReader::string_list(const YAML::Node& map,
                                                                std::string_view key, Need need,
                                                                std::string_view what,
                                                                bool allow_scalar) {
  auto value = child(map, key, need, what);
  if (!value) return std::nullopt;
  std::vector<std::string> out;
  if (allow_scalar && value->IsScalar()) {
    out.push_back(value->Scalar());
    return out;
  }
  if (!value->IsSequence()) {
    error(*value, "'" + std::string(key) + "' in " + std::string(what) + " must be a list");
    return std::nullopt;
  }
  bool ok = true;
  for (const auto& item : *value) {
    if (!item.IsScalar()) {
      error(item,
            "items of '" + std::string(key) + "' in " + std::string(what) + " must be strings");
      ok = false;
      continue;
    }
    out.push_back(item.Scalar());
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> YamlReader::choice(const YAML::Node& map, std::string_view key,
                                              Need need, std::string_view what,
                                              std::initializer_list<std::string_view> choices) {
  auto text = scalar_text(map, key, need, what, "a string");
  if (!text) return std::nullopt;
  for (auto option : choices)
    if (option == *text) return text;
  std::vector<std::string> names(choices.begin(), choices.end());
  std::string hint = "one of: " + join(names, ", ");
  if (auto suggestion =
          nearest_word(*text, std::span<const std::string_view>(choices.begin(), choices.size())))
    hint = "did you mean '" + *suggestion + "'? " + hint;
  error(map[std::string(key)],
        "'" + std::string(key) + "' in " + std::string(what) + " has invalid value '" + *text + "'",
        hint);
  return std::nullopt;
}

}  // namespace fabgate
