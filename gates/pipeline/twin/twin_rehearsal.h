#pragma once

// A change tried on a twin before production (docs/twin.md): plan the twin from the pre
// snapshot, build it, wait until it has converged to what production had, take its own
// baseline (probes and a snapshot), apply the change's steps there as written, settle, probe
// again, snapshot again and compare twin-after with twin-before under the change's rules.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/intent/model.h"
#include "gates/pipeline/families/snapshots.h"
#include "gates/pipeline/twin/twin_fabric.h"
#include "gates/pipeline/twin/twin_plan.h"
#include "gates/pipeline/verdict.h"
#include "gates/snapshot/collector_profile.h"

namespace fabgate::pipeline::twin {

struct TwinOptions {
  int radius = 1;
  Duration converge_timeout{60'000};
  int parallelism = 8;
  FabricSettings fabric;
};

// What the twin-after vs twin-before comparison found, as the pipeline's compare gate words it.
struct TwinComparison {
  Verdict verdict = Verdict::no_evidence;
  std::vector<std::string> lines;  // the checks that failed or had no evidence, first disproven first
};
using TwinCompare = std::function<TwinComparison(const HeldSnapshot& before, const HeldSnapshot& after)>;

struct TwinInputs {
  const intent::Inventory& inventory;
  const intent::Change& change;
  const HeldSnapshot& pre;  // production's
  const snapshot::ProfileSet& profiles;
  const intent::ProbeSettings& probe_settings;
  std::string intent_commit;
  TwinCompare compare;
  // fabgate.yaml's secrets.env: the twin is given no secret, so a step that refers to one
  // cannot be tried there as written.
  std::vector<std::string> secret_names;
};

struct TwinOutcome {
  // pass: the change held on the twin; fail: the twin disproved it; no_evidence: no twin could
  // be built, it did not converge, or nothing on it could be judged.
  Verdict verdict = Verdict::no_evidence;
  std::string summary;
  std::vector<std::string> details;
  nlohmann::json report;  // twin/report.json: plan, phases with their cost, outcomes, gaps
};

// Never throws for what devices or the twin do; a failure to build is a no_evidence outcome.
// Everything it made is torn down before it returns.
TwinOutcome rehearse_on_twin(const TwinInputs& inputs, const TwinOptions& options);

// The BGP and EVPN sessions production had Established between devices that are both in the
// twin, which the twin must have Established too before it counts as converged; a line for each
// one that is not ("leaf1: bgp peer 10.0.1.0 is Active (production: Established)").
std::vector<std::string> unconverged(const TwinPlan& plan, const nlohmann::json& production,
                                     const nlohmann::json& twin);

// The BGP and EVPN sessions Established in both twin snapshots that aged less between them
// than `elapsed` (a lower bound of the time between their readings) less a second of slack:
// they went down and came back in between. A "DEVICE:bgp ADDRESS" in `expected_flaps` is left
// out. One line each.
std::vector<std::string> sessions_reset(const nlohmann::json& before, const nlohmann::json& after,
                                        Duration elapsed,
                                        const std::vector<std::string>& expected_flaps);

// What a twin started cold cannot have learned, set from production's pre snapshot in
// twin-before (never twin-after) before the two are compared, one line each for the report:
// - a BGP peer that has not come up on the twin reads remote_as 0 (a `remote-as external` or
//   `internal` peer learns it from the OPEN): production's learned value is the twin's baseline,
//   so a session that comes up with another AS still shows;
// - a BFD session bgpd registered before its BGP session ever came up is bound to no interface,
//   and is made again (one down event) when the session comes up: where production's is bound
//   and the twin's is not, twin-before takes twin-after's up and down event counts (not judged
//   there; the session's status and timers still are).
std::vector<std::string> align_cold_start(HeldSnapshot& before, const HeldSnapshot& after,
                                          const nlohmann::json& production);

}  // namespace fabgate::pipeline::twin
