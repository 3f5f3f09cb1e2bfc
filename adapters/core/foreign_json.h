#pragma once

// Reading JSON that fabgate did not write: answers from Prometheus and Alertmanager, a probe
// host's report, a device's command output. Such data may have any shape, so nothing here
// throws: a field that is missing or of another type is an empty optional the caller turns into
// no-evidence naming the field, and a document nested deeper than fabgate ever reads is refused
// before it is parsed (nlohmann::json copies and dumps recursively, so 300,000 levels would
// overflow the stack long after the parse succeeded).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "adapters/core/time.h"

namespace fabgate {

// Deeper than any answer fabgate reads (Prometheus' matrix is 5 levels, a probe report 6).
inline constexpr int kForeignJsonMaxDepth = 64;

struct ForeignJson {
  nlohmann::json document;  // discarded (is_discarded()) when `problem` is set
  std::string problem;      // empty: parsed; else "nested deeper than 64 levels", "not JSON"
  bool too_deep = false;    // refused for its depth (a caller may word "not JSON" its own way)
  bool ok() const { return problem.empty(); }
};

// How deep `text` nests arrays and objects, counting brackets outside strings; stops counting
// once past `limit` (returns limit + 1), so it is linear and never recursive.
int json_nesting_depth(std::string_view text, int limit = kForeignJsonMaxDepth);

// Parses `text` unless it nests deeper than `max_depth`; never throws.
ForeignJson parse_foreign_json(std::string_view text, int max_depth = kForeignJsonMaxDepth);

// Typed lookups of one member of an object. Empty when `object` is not an object, the member is
// missing, or it holds another type (an integer is not a string; a negative or fractional
// number is not an unsigned integer).
std::optional<std::string> string_member(const nlohmann::json& object, std::string_view key);
std::optional<double> number_member(const nlohmann::json& object, std::string_view key);
std::optional<std::int64_t> integer_member(const nlohmann::json& object, std::string_view key);
std::optional<std::uint64_t> unsigned_member(const nlohmann::json& object, std::string_view key);
std::optional<bool> bool_member(const nlohmann::json& object, std::string_view key);
// The member itself when it is an object (or an array): a pointer into `object`, or null.
const nlohmann::json* object_member(const nlohmann::json& object, std::string_view key);
const nlohmann::json* array_member(const nlohmann::json& object, std::string_view key);

// A time member written as ISO 8601 UTC text ("2026-12-01T02:00:00.800Z"); empty when it is
// missing, not a string or not such a time.
std::optional<TimePoint> time_member(const nlohmann::json& object, std::string_view key);
// The member as one line of text for a report: a string as it is, any other value serialised
// (bytes that are not UTF-8 replaced, so it cannot throw); empty when missing or null.
std::string member_text(const nlohmann::json& object, std::string_view key);

// The member's type in words, for a no-evidence reason: "missing", "a number", "a string"...
std::string member_kind(const nlohmann::json& object, std::string_view key);
// "field 'summary.completed' is a string, not an integer" ("field 'state' is missing" when it
// is): why the member `key` cannot be read as `expected`. `name` is how the field is called
// there, when not by its key (its place in the document).
std::string wrong_member(const nlohmann::json& object, std::string_view key,
                         std::string_view expected, std::string_view name = {});
// The same for a value itself (an element of an array, a whole document): "an array", "null"...
std::string json_kind(const nlohmann::json& value);

}  // namespace fabgate
