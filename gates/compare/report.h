#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/diagnostics.h"
#include "adapters/core/duration.h"
#include "adapters/core/time.h"
#include "gates/compare/rule_set.h"

namespace fabgate::compare {

// waived: a fail or no-evidence that a matching, unexpired exception accepts. It counts as
// passing for the exit code and is still listed everywhere with the exception id.
enum class Verdict { pass, fail, no_evidence, waived };
std::string_view to_string(Verdict verdict);

// One checked element.
struct CheckResult {
  std::string rule;
  std::string rule_set;
  Layer layer = Layer::telemetry;
  std::string device;
  std::string path;                // full concrete path: devices.leaf1.bgp.peers."10.0.1.0".state
  std::optional<std::string> pre;  // JSON text; nullopt when the element is missing
  std::optional<std::string> post;
  Verdict verdict = Verdict::pass;
  std::string reason;                     // one line
  std::string exception_id;               // set when waived
  std::optional<Verdict> waived_verdict;  // what the exception waived (fail or no-evidence)
  std::vector<std::string> details;       // e.g. example routes added / removed / changed
  bool expected_difference = false;       // judged by the change's expected differences
  // A route table compared route by route: the exact counts (details name only the first
  // CompareOptions::route_examples of each).
  struct RouteCounts {
    std::size_t added = 0, removed = 0, changed = 0;
  };
  std::optional<RouteCounts> route_counts;
};

struct IgnoredPattern {
  std::string pattern;
  std::string rule_set;
  std::size_t elements = 0;  // elements a wildcard reached and the pattern kept out of checks
};

struct ExpiredException {
  std::string id;
  std::string owner;
  std::string reason;
  TimePoint expiry;
  SourceLocation where;
  std::size_t would_match = 0;  // results it would have waived had it not expired
};

// A snapshot older than the comparison's max age (StaleSnapshots::stated_once).
struct StaleSnapshot {
  std::string side;  // "pre" or "post"
  TimePoint taken_at;
  Duration age{0};
};

struct Report {
  std::string pre_file;
  std::string post_file;
  TimePoint pre_taken_at;
  TimePoint post_taken_at;
  std::vector<CheckResult> results;  // in collection order (docs/compare.md)
  std::size_t passed = 0, failed = 0, no_evidence = 0, waived = 0;
  std::optional<std::size_t> first_disproven;  // index of the first fail in `results`
  std::vector<IgnoredPattern> ignored;
  std::vector<ExpiredException> expired_exceptions;
  std::vector<std::string> exceptions_used;
  // Snapshots older than max_age, said once instead of on every element: the results are what
  // the snapshots hold, but nothing proves the devices still look like that, so the verdict is
  // no-evidence unless a check failed.
  std::vector<StaleSnapshot> stale;
  Duration max_age{0};

  // fail when any check failed; pass when at least one check passed by itself and every other
  // one passed or was waived; no_evidence otherwise, including when no check was evaluated at
  // all (no rule reached an element) or every one was waived: a comparison that checked
  // nothing proved nothing; and when a snapshot is stale.
  Verdict verdict() const;
  bool accepted() const { return verdict() == Verdict::pass; }
  void recount();
};

nlohmann::json to_json(const Report& report);

// Human output: grouped by layer, then device; within a device failures first (fail,
// no-evidence, waived), passes as one count line; then ignored patterns, expired exceptions
// and a summary line. `paint` may colour a verdict word (identity when empty).
using Painter = std::function<std::string(Verdict, std::string_view)>;
std::vector<std::string> render_human(const Report& report, const Painter& paint = {});
// "PASS: 12 checks: ...", "FAIL: ...", "NO-EVIDENCE: ..."; says so when no check was evaluated.
std::string summary_line(const Report& report);

// An age in the units --max-age takes, whole minutes: "45s", "12m", "76h12m".
std::string format_age(Duration age);

}  // namespace fabgate::compare
