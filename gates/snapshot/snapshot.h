#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

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
  nlohmann::json document;              // fabgate.snapshot/1
  std::vector<DeviceSnapshot> devices;  // in target order, with their command records

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
                       ProgressSink* progress = nullptr);

}  // namespace fabgate::snapshot
