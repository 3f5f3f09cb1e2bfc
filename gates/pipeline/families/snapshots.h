#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/progress.h"
#include "gates/intent/model.h"
#include "gates/snapshot/route_output.h"

namespace fabgate::pipeline {

// Each device's route tables kept apart from a snapshot's document (device -> "ipv4"/"ipv6" ->
// table): a million routes cost about 28 bytes each instead of a JSON tree's ~700. Shared, so
// a snapshot made of another's parts (the post snapshot with parts re-read) copies no table.
using DeviceRouteTables = std::map<std::string, std::shared_ptr<const snapshot::RouteTables>>;

// A snapshot as the pipeline needs it: the document (docs/snapshot-format.md), every part that
// could not be collected ("leaf1: bgp: vtysh: command not found") and the route tables held
// apart. A device with tables here has no `routes` lists in `document`; one without (a
// snapshotter that puts them in the document, a snapshot read back from a file) has them there.
struct TakenSnapshot {
  nlohmann::json document;
  std::vector<std::string> missing;
  DeviceRouteTables routes;
};

// A recorded snapshot as a run keeps it: its document and route tables (as in TakenSnapshot).
struct HeldSnapshot {
  nlohmann::json document;
  DeviceRouteTables routes;

  bool has_devices() const { return document.is_object() && document.contains("devices"); }
};

// Takes a snapshot of some devices with the read credential. The seam exists so the pipeline
// can be tested without collectors; the real implementation runs the collector profiles of
// gates/snapshot over the run's SSH sessions. `progress` (may be null) hears "N/M devices".
class Snapshotter {
 public:
  virtual ~Snapshotter() = default;
  virtual TakenSnapshot take(const std::vector<const intent::Device*>& devices,
                             const std::string& intent_commit, ProgressSink* progress) = 0;
  // Only the sources of `categories` ("routes", "bgp"), for a cheap look at part of the state
  // (settle-restored's watch). The default takes everything, which is correct, only slower.
  virtual TakenSnapshot take_categories(const std::vector<const intent::Device*>& devices,
                                        const std::set<std::string>& categories,
                                        const std::string& intent_commit) {
    (void)categories;
    return take(devices, intent_commit, nullptr);
  }
  // The counters of `categories` re-read once a rollback ended (take_categories), as the
  // reference compare-restored counts `increase` rules from; nullopt where this snapshotter
  // cannot re-read a part alone, and compare-restored then counts from the post snapshot.
  virtual std::optional<TakenSnapshot> take_counters(
      const std::vector<const intent::Device*>& devices, const std::set<std::string>& categories,
      const std::string& intent_commit) {
    (void)devices, (void)categories, (void)intent_commit;
    return std::nullopt;
  }
};

}  // namespace fabgate::pipeline
