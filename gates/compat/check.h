#pragma once

// Judges one device's collected identity against the compatibility matrix.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/diagnostics.h"
#include "gates/compat/matrix.h"

namespace fabgate::compat {

// Three outcomes, like every check (DESIGN.md rule 1): a component the matrix requires but the
// identity lacks, or holds in a form that is not a version, is no_evidence, never pass.
enum class FindingVerdict { pass, fail, no_evidence };
std::string_view to_string(FindingVerdict verdict);  // pass | fail | no-evidence

// One component of one device against one line of the matrix.
struct Finding {
  std::string device;
  std::string component;  // the matrix key: "frr", "nic_firmware"
  std::string subject;    // NIC components: "eth1 (mlx5_core)"; otherwise empty
  std::string found;      // as collected; empty when absent
  std::string allowed;    // the constraint as written: ">=8.4 <9"
  FindingVerdict verdict = FindingVerdict::no_evidence;
  std::string reason;    // why it failed or had no evidence; empty on pass
  SourceLocation where;  // the constraint in the matrix

  // "leaf1: frr 7.5.1 not in >=8.4 <9 (policies/compat.yaml:5:10)"
  std::string to_line() const;
};

nlohmann::json to_json(const Finding& finding);

// Whether a snapshot's device entry (docs/snapshot-format.md) holds an identity that a source
// returned: `sources.identity` says ok and `identity` has fields. An identity object alone
// proves nothing: the collector records sources, and a profile without an identity source
// collects none.
bool identity_collected(const nlohmann::json& device_entry);

// Checks every requirement the matrix lists for `platform` against `identity` (the device's
// snapshot identity object). Returns one finding per requirement, and per NIC for NIC
// components; none when the matrix does not list the platform (nothing is required of it).
// For a NIC component, the NICs whose driver is named are checked; when no NIC uses any driver
// the platform names for that component, the component is no_evidence.
std::vector<Finding> check_identity(const Matrix& matrix, const std::string& device_name,
                                    const std::string& platform, const nlohmann::json& identity);

}  // namespace fabgate::compat
