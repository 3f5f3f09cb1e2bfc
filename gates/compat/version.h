#pragma once

// Version strings as devices report them, and the constraints the compatibility matrix puts
// on them. docs/compat.md is the user-facing statement of these rules; the tests in
// tests/gates/compat/version_test.cpp pin every edge case named there.

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/result.h"

namespace fabgate::compat {

// A pre-release marker right after the numbers: "9.0-rc1", "8.5.0beta2", "10.0-dev".
struct PreRelease {
  std::string label;   // dev | alpha | beta | pre | rc (lower case)
  std::string number;  // digits without leading zeros; empty when none ("10.0-dev")
  bool operator==(const PreRelease&) const = default;
};

// A version read from a string such as "8.4.4", "5.15.0-91-generic", "16.35.2000 (MT_123)",
// "535.129.03", "8.4.4-1.1~deb12u2", "SONiC.202305.1" or "1:2.3".
//   - Text before the first digit is a label and is ignored ("SONiC.", "v").
//   - An optional epoch "N:" comes first and orders before everything else.
//   - Numbers are digit runs joined by '.', '-', '_' or '+': "5.15.0-91" is 5.15.0.91. Each
//     compares as a number ("03" == 3, 9 < 10).
//   - Whatever follows the numbers is the suffix ("-generic", "~deb12u2", " (MT_123)"); it
//     never takes part in ordering or equality, except that a pre-release marker at its start
//     is remembered (see PreRelease and Constraint).
// Missing trailing numbers count as zero: 8.4 == 8.4.0 == 8.4.0.0.
struct Version {
  std::string text;                  // as written, trimmed
  std::string epoch = "0";           // digits without leading zeros
  std::vector<std::string> numbers;  // each without leading zeros ("0" for zero)
  std::optional<PreRelease> pre_release;
  std::string suffix;  // after the numbers, pre-release marker included
};

// nullopt when the text holds no digit at all ("", "N/A", "unknown").
std::optional<Version> parse_version(std::string_view text);

// Orders by epoch, then the numbers (shorter lists padded with zeros). Labels, suffixes and
// pre-release markers are not looked at.
std::strong_ordering compare_numbers(const Version& a, const Version& b);

enum class Operator { equal, not_equal, less, less_or_equal, greater, greater_or_equal };
std::string_view to_string(Operator op);

// One condition of an alternative: a comparison (">=8.4", "!=8.4.3", "8.4.4") or a wildcard
// prefix ("8.4.*": the first numbers are 8 and 4; "*": any version).
struct Condition {
  enum class Kind { compare, prefix };
  Kind kind = Kind::compare;
  Operator op = Operator::equal;
  Version bound;                    // kind == compare
  std::vector<std::string> prefix;  // kind == prefix: the numbers before ".*"
  std::string prefix_epoch = "0";   // kind == prefix
};

// Conditions that must all hold: ">=8.4 <9" is two conditions.
struct Alternative {
  std::string text;  // as written in the matrix
  std::vector<Condition> conditions;
};

// Parses one alternative. Bounds must be plain numbers ("5.15.0-91" is fine, "5.15.0-generic"
// is not: a suffix would be silently ignored); only an exact entry ("9.0-rc1" or "=9.0-rc1")
// may name a pre-release. An alternative that no version can satisfy (">=9 <8") is an
// error too. The error is one sentence naming the offending token.
Expected<Alternative, std::string> parse_alternative(std::string_view text);

// What the matrix allows for one component: a version is admitted when any alternative
// admits it. A pre-release version ("9.0-rc1") is admitted only by an exact entry naming the
// same pre-release: ranges and wildcards never admit one, so "<9" does not let 9.0-rc1 in
// and ">=8.5" does not let 8.5.0-rc1 in.
struct Constraint {
  std::vector<Alternative> alternatives;
  bool listed = false;           // written as a YAML list; shapes describe()
  std::string describe() const;  // ">=8.4 <9", or "[8.4.4, 8.5.1]" for a list
};

struct Admission {
  bool admitted = false;
  std::string why_not;  // empty when admitted, or a fuller reason than "not in" when useful
};
Admission admits(const Constraint& constraint, const Version& version);

}  // namespace fabgate::compat
