#pragma once

// Who a record in the store names (claims, locks, devices out of service), read from JSON that
// another controller, perhaps another fabgate version, wrote: typed lookups, never a throw.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "adapters/core/foreign_json.h"
#include "gates/coordination/claims.h"

namespace fabgate::coordination {

// The run, operator, change and controller a record names, and its `since` (empty when
// missing); nullopt when it names no run (a record this version cannot read). Lease left 0.
struct RecordedRun {
  RunIdentity run;
  std::string since;
};
inline std::optional<RecordedRun> recorded_run(const nlohmann::json& record) {
  auto run = string_member(record, "run");
  if (!run) return std::nullopt;
  RecordedRun out;
  out.run.run_id = *run;
  out.run.operator_name = string_member(record, "operator").value_or("");
  out.run.change = string_member(record, "change").value_or("");
  out.run.controller = string_member(record, "controller").value_or("");
  out.since = string_member(record, "since").value_or("");
  return out;
}

}  // namespace fabgate::coordination
