#pragma once

// What the gate families and the run controller share: the clock helpers, the comparison's rule
// sets and exception register as the commit declares them, and the one-line forms their
// details use.

#include <chrono>
#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "gates/compare/exception_register.h"
#include "gates/compare/report.h"
#include "gates/compare/rule_set.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/probes.h"
#include "gates/pipeline/families/telemetry_layer.h"

namespace fabgate::pipeline {

using Clock = std::chrono::steady_clock;

inline Duration since(Clock::time_point start) {
  return std::chrono::duration_cast<Duration>(Clock::now() - start);
}

inline std::string count_of(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// Rule sets named by fabgate.yaml and the change, read from the commit's policies/compare/;
// "fabric-default" and "rdma-default" fall back to the copies compiled into fabgate.
Result<std::vector<compare::RuleSet>> rule_sets_for(const intent::IntentRepository& repository,
                                                    const intent::Change& change);

Result<compare::ExceptionRegister> exceptions_for(const intent::IntentRepository& repository);

// The register entry that waives a probe which did not pass (scope naming its host, rule
// `probe:<name>`, not expired); null when none does.
const compare::ExceptionEntry* waiver_of(const Result<compare::ExceptionRegister>& exceptions,
                                         const ProbeOutcome& outcome);

// "round 2 at +1.1s (snapshot 0.9s, probes 0.4s): WHY" for settle-restored's details.
template <typename Round>
std::string round_line(std::size_t number, const Round& round) {
  return "round " + std::to_string(number) + " at +" + format_duration(round.started_after) +
         " (snapshot " + format_duration(round.snapshot_took) + ", probes " +
         format_duration(round.probes_took) + "): " + round.not_held;
}

// The telemetry layer's rules as the change declares them (telemetry_gates.cpp).
TelemetryRules telemetry_rules(const intent::Change& change);

// "[layer] path: pre -> post: reason (waived by id)" for a comparison's details.
std::string check_line(const compare::CheckResult& result);

}  // namespace fabgate::pipeline
