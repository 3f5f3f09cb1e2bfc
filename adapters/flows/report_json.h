#pragma once

#include <nlohmann/json.hpp>

#include "adapters/flows/collective.h"
#include "adapters/flows/flow_probe.h"
#include "adapters/flows/responder.h"
#include "adapters/flows/watch.h"

namespace fabgate::flows {

// The JSON documents fabgate-probe prints and fabgate stores under probes/ in the evidence
// bundle. docs/lab.md lists every field; field names never change meaning.
nlohmann::ordered_json to_json(const FlowProbeReport& report);
nlohmann::ordered_json to_json(const WatchReport& report);
nlohmann::ordered_json to_json(const ResponderStats& stats, const std::string& endpoint);
// One rank's timings; the verdict over all ranks is fabgate's (docs/probes.md).
nlohmann::ordered_json to_json(const CollectiveReport& report);

// The document printed when the probe could not even start (no socket): verdict no-evidence.
nlohmann::ordered_json no_evidence_json(const char* probe, const std::string& reason);

}  // namespace fabgate::flows
