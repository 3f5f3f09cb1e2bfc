#pragma once

// The identity check every snapshot gate runs (docs/monitoring.md "Identity"): a device whose
// inventory entry declares an identity must have answered as that device. An address that now
// reaches another box (a swapped cable, a reused management IP, a wrong DNS record) would
// otherwise yield a baseline, and a verdict, about the wrong device.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/intent/model.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

struct IdentityFinding {
  std::string device;
  std::string field;     // hostname | serial | system_mac
  std::string expected;  // as the inventory declares it
  std::string found;     // as collected; empty when not collected
  Verdict verdict = Verdict::no_evidence;
  // "leaf2: 10.255.0.22 answered as leaf1, inventory says leaf2 (inventory.yaml:9:15)"
  std::string line;
};

nlohmann::json to_json(const IdentityFinding& finding);

// One finding per declared field of every device in `devices` that declares an identity, against
// the snapshot document's devices.<name>.identity. Identity counts only when an identity source
// collected it (sources.identity ok); otherwise each declared field is no-evidence. Hostnames
// compare without case, and a declared short name matches a collected FQDN's first label; MACs
// compare without case; serials exactly.
std::vector<IdentityFinding> check_identities(const std::vector<const intent::Device*>& devices,
                                              const nlohmann::json& snapshot);

}  // namespace fabgate::pipeline
