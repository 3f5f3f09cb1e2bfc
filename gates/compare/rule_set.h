#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/diagnostics.h"
#include "adapters/core/result.h"
#include "gates/compare/path_pattern.h"

namespace fabgate::compare {

// The layer a check proves (DESIGN.md rule 2): recovery is reported at the layer it was seen.
enum class Layer { link, control_plane, forwarding, transport, workload, telemetry };
inline constexpr Layer kLayers[] = {Layer::link,      Layer::control_plane, Layer::forwarding,
                                    Layer::transport, Layer::workload,      Layer::telemetry};
std::string_view to_string(Layer layer);
std::optional<Layer> parse_layer(std::string_view text);
// The layer a fact category belongs to, for checks that no rule names (expected differences).
Layer layer_of_category(std::string_view category);

enum class Operator { no_change, equal, in, range, delta, increase, count, exists, absent };
std::string_view to_string(Operator op);

enum class Comparison { eq, ne, lt, le, gt, ge };
std::string_view to_string(Comparison comparison);
bool holds(Comparison comparison, long double left, long double right);

// One compare rule. `path` always starts `devices.<device>.<category>`; the arguments that
// apply depend on the operator (docs/compare.md).
struct Rule {
  std::string name;
  Layer layer = Layer::telemetry;
  PathPattern path;
  Operator op = Operator::no_change;

  std::string value;                       // equal: the expected post value (YAML scalar text)
  std::vector<std::string> values;         // in: the allowed post values
  std::optional<long double> min;          // range: lower bound; increase: least growth (default 0)
  std::optional<long double> max;          // range: upper bound; increase/delta: largest change
  bool percent = false;                    // delta: max is a percentage of the pre value
  Comparison comparison = Comparison::eq;  // count
  long long count = 0;                     // count: compared against the number of elements

  std::string rule_set;  // name of the set it came from
  SourceLocation where;

  const std::string& category() const { return path.segments()[2].text; }
};

struct RuleSet {
  std::string name;
  std::string file;
  std::vector<Rule> rules;
  // Volatile fields (uptimes, timestamps, raw counters) no rule should compare by accident;
  // see docs/compare.md for when a rule still addresses them.
  std::vector<PathPattern> ignore;
};

// Parses a rule-set file. Every problem is reported with file:line:column (invalid input with
// one detail line per problem), not only the first.
Result<RuleSet> load_rule_set(std::string_view yaml_text, const std::string& file_name);

// Checks a pattern is a compare path: `devices.<device>.<category>...`, the category named
// literally, and route tables addressed as `devices.<d>.routes.<family>`.
std::optional<std::string> path_problem(const PathPattern& pattern);

}  // namespace fabgate::compare
