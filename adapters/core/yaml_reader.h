#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/diagnostics.h"
#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/core/time.h"

namespace fabgate {

enum class Need { required, optional };

// Limits on one YAML document, so hostile input is refused in bounded time and memory
// (docs/pipeline.md "Input limits"). yaml-cpp shares an aliased node instead of copying it, so
// parsing "billion laughs" is cheap, but every reader that walks the tree visits each alias
// once per use: node counts are taken with every alias expanded.
inline constexpr std::size_t kMaxYamlBytes = 16u << 20;    // 16 MiB of text
inline constexpr std::uint64_t kMaxYamlNodes = 1'000'000;  // nodes, aliases expanded

// Parses YAML text; a syntax error becomes an invalid-input Error naming file:line:column.
// Also refused as invalid input, naming the file and where: text that is not UTF-8, text over
// kMaxYamlBytes, a document with aliases of more than kMaxYamlNodes nodes once they are
// expanded, and an alias inside the node it refers to (a cycle that no reader could walk to
// its end). A document without aliases is bounded by its size alone.
Result<YAML::Node> parse_yaml(std::string_view text, const std::string& file);
// The same, with the failure as a Diagnostic whose location holds the file, line and column
// (0 where there is none), so a caller collecting Diagnostics keeps them as fields.
Expected<YAML::Node, Diagnostic> parse_yaml_located(std::string_view text, const std::string& file);

// Reads typed fields out of one YAML file and records every problem in Diagnostics with the
// file:line:column of the offending node, so a schema check reports all problems in one pass.
// Readers return nullopt when a field is missing or wrong; the problem is already recorded.
class YamlReader {
 public:
  YamlReader(std::string file, Diagnostics& diagnostics);

  const std::string& file() const { return file_; }
  Diagnostics& diagnostics() { return diagnostics_; }
  SourceLocation at(const YAML::Node& node) const;
  // Location of `key` itself inside `map` (better than the map's location for key errors).
  SourceLocation key_at(const YAML::Node& map, std::string_view key) const;

  void error(const YAML::Node& where, std::string message, std::string hint = {});

  bool expect_map(const YAML::Node& node, std::string_view what);
  bool expect_sequence(const YAML::Node& node, std::string_view what);
  // Reports keys of `map` not in `allowed`, suggesting the nearest allowed key.
  void check_keys(const YAML::Node& map, std::span<const std::string_view> allowed,
                  std::string_view what);
  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                  std::string_view what) {
    check_keys(map, std::span<const std::string_view>(allowed.begin(), allowed.size()), what);
  }

  // Reports keys that appear twice in one mapping, anywhere in the document. YAML parsers
  // silently keep one of them, which hides a user's mistake (two devices named leaf1).
  void check_duplicate_keys(const YAML::Node& node);

  // `what` names the enclosing object in messages ("change", "device 'leaf1'").
  std::optional<std::string> string(const YAML::Node& map, std::string_view key, Need need,
                                    std::string_view what);
  std::optional<std::int64_t> integer(const YAML::Node& map, std::string_view key, Need need,
                                      std::string_view what, std::int64_t min, std::int64_t max);
  std::optional<double> number(const YAML::Node& map, std::string_view key, Need need,
                               std::string_view what);
  std::optional<bool> boolean(const YAML::Node& map, std::string_view key, Need need,
                              std::string_view what);
  std::optional<Duration> duration(const YAML::Node& map, std::string_view key, Need need,
                                   std::string_view what);
  std::optional<TimePoint> time(const YAML::Node& map, std::string_view key, Need need,
                                std::string_view what);
  // Accepts a list of strings (or, when `allow_scalar`, a single string).
  std::optional<std::vector<std::string>> string_list(const YAML::Node& map, std::string_view key,
                                                      Need need, std::string_view what,
                                                      bool allow_scalar = false);
  // The value must be one of `choices`.
  std::optional<std::string> choice(const YAML::Node& map, std::string_view key, Need need,
                                    std::string_view what,
                                    std::initializer_list<std::string_view> choices);

  // Returns the child node if present (any type); records an error when required and absent.
  std::optional<YAML::Node> child(const YAML::Node& map, std::string_view key, Need need,
                                  std::string_view what);

 private:
  std::optional<std::string> scalar_text(const YAML::Node& map, std::string_view key, Need need,
                                         std::string_view what, std::string_view expected);

  std::string file_;
  Diagnostics& diagnostics_;
};

}  // namespace fabgate
