#include "gates/snapshot/snapshot.h"

#include "adapters/core/time.h"
#include "adapters/ssh/fan_out.h"

namespace fabgate::snapshot {

bool Snapshot::complete() const {
  for (const auto& device : devices) {
    if (!device.missing.empty()) return false;
  }
  return true;
}

Snapshot take_snapshot(const std::vector<SnapshotTarget>& targets, ssh::ConnectionCache& cache,
                       int parallelism, const std::string& intent_commit, GnmiFetcher* gnmi,
                       SessionsAfter after, ProgressSink* progress) {
  Snapshot snapshot;
  const TimePoint taken_at = now_utc();
  snapshot.devices.resize(targets.size());
  ProgressCounter devices_done(progress, targets.size(), "devices");
  ssh::for_each_bounded(targets.size(), parallelism, [&](std::size_t index) {
    snapshot.devices[index] =
        collect_device(targets[index].device, *targets[index].profile, cache, gnmi);
    if (after == SessionsAfter::close)
      cache.close(targets[index].device.name, ssh::CredentialRole::read);
    devices_done.one_done();
  });
  nlohmann::json devices = nlohmann::json::object();
  for (auto& device : snapshot.devices) devices[device.device] = device.document;
  snapshot.document = {{"format", "fabgate.snapshot/1"},
                       {"taken_at", format_utc(taken_at)},
                       {"intent_commit", intent_commit},
                       {"devices", std::move(devices)}};
  return snapshot;
}

}  // namespace fabgate::snapshot
