#pragma once

#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/time.h"
#include "gates/compare/exception_register.h"
#include "gates/compare/report.h"
#include "gates/compare/rule_set.h"
#include "gates/compare/snapshot.h"
#include "gates/intent/model.h"

namespace fabgate::compare {

// What a snapshot older than max_age does to a comparison. Either way it cannot pass.
enum class StaleSnapshots {
  every_element,  // each element is no-evidence naming the age (a change run's gates)
  stated_once,    // the elements are compared and Report::stale says once why none can pass
                  // (`fabgate diff` of archived snapshots: the real differences stay visible)
};

struct CompareOptions {
  // A snapshot whose taken_at is older than this (relative to `now`) is stale. Zero turns the
  // check off (forensic diffs of archived snapshots).
  Duration max_age{600'000};
  TimePoint now = now_utc();
  // Routes named per route table and direction (added, removed, changed) in a result's details;
  // the counts in its reason are always exact. The pipeline asks for more, so the evidence
  // lists every route that changed (docs/report.md).
  std::size_t route_examples = 5;
  StaleSnapshots stale = StaleSnapshots::every_element;
  // Where `increase` rules count from, when set: this snapshot's value of the same element
  // where it has one, else pre's. The restored comparison counts from the post snapshot: a
  // counter (BFD session-down events, drops) never returns to its baseline, so after a rollback
  // it can only prove that nothing more happened since the fault was captured.
  const Snapshot* counters_since = nullptr;
  // What counters_since is, for the reason text ("since the end of the rollback (FILE)").
  std::string counters_since_what = "the post snapshot";
};

// Compares post against pre under the rule sets (in order), with the change's expected
// differences replacing no-change for the elements they name, then applies the exceptions
// register. Results come in collection order: rule sets in the order given, rules in file
// order, devices by name, elements by key (map keys sorted, list indices ascending).
Report compare_snapshots(const Snapshot& pre, const Snapshot& post,
                         const std::vector<RuleSet>& rule_sets,
                         const std::vector<intent::ExpectedDifference>& expected,
                         const ExceptionRegister& exceptions, const CompareOptions& options);

}  // namespace fabgate::compare
