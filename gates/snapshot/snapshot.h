#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/redact.h"

#include "adapters/core/progress.h"
#include "adapters/ssh/connection_cache.h"
#include "gates/snapshot/collector_profile.h"
#include "gates/snapshot/device_collector.h"

namespace fabgate::snapshot {

struct SnapshotTarget {
  ssh::SshDevice device;
  const CollectorProfile* profile = nullptr;  // the device's platform profile
};

struct Snapshot {
  // fabgate.snapshot/1; with RouteLists::apart, without the routes held in devices' route_tables
  nlohmann::json document;
  // In target order, with their command records and route tables; their documents are in
  // `document`, moved there.
  std::vector<DeviceSnapshot> devices;

  bool complete() const;  // every source of every device is ok
};

// Whether a device's read session stays in the cache after its snapshot (a gated run reuses it
// for later gates) or is closed as soon as the device is done (`fabgate snapshot`: at scale,
// hundreds of idle sessions would hold the devices' sshd processes and the controller's memory).
enum class SessionsAfter { keep, close };

// Collects every target through `cache`, at most `parallelism` devices at a time; a device's
// commands run at once on its one session (collect_device), its gNMI sources through `gnmi`
// (nullptr: gNMI sources are no-evidence). The document follows docs/snapshot-format.md.
// `progress` (may be null) hears "N/M devices" as each device is done.
Snapshot take_snapshot(const std::vector<SnapshotTarget>& targets, ssh::ConnectionCache& cache,
                       int parallelism, const std::string& intent_commit,
                       GnmiFetcher* gnmi = nullptr, SessionsAfter after = SessionsAfter::keep,
                       ProgressSink* progress = nullptr,
                       RouteLists routes = RouteLists::in_document);

// Writes `snapshot` as the text of its whole document (docs/snapshot-format.md, indented by two),
// the lists of route tables kept apart (RouteLists::apart) written from the tables as they go,
// through `write` in pieces of about a megabyte: the text of a million routes is never held
// whole. Every value and key passes through `redactor`. False as soon as `write` returns false.
bool write_snapshot(const Snapshot& snapshot, const Redactor& redactor,
                    const std::function<bool(std::string_view)>& write);
// The same for a document and the route tables kept apart from it, per device (a gated run holds
// its snapshots this way). A device without tables is written as its document has it.
bool write_snapshot_document(const nlohmann::json& document,
                             const std::map<std::string, const RouteTables*>& tables,
                             const Redactor& redactor,
                             const std::function<bool(std::string_view)>& write);

}  // namespace fabgate::snapshot
