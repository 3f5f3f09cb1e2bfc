#include "gates/snapshot/snapshot.h"

#include "adapters/core/time.h"
#include "adapters/ssh/fan_out.h"

namespace fabgate::snapshot {

namespace {

DeviceSnapshot collection_failed(const std::string& device, const CollectorProfile& profile,
                                 const std::string& reason) {
  DeviceSnapshot snapshot;
  snapshot.device = device;
  nlohmann::json sources = nlohmann::json::object();
  for (const auto& source : profile.sources) {
    if (sources.contains(source.category)) continue;
    sources[source.category] = {
        {"status", "no-evidence"}, {"reason", reason}, {"commands", nlohmann::json::array()}};
    snapshot.missing.push_back({source.category, reason});
  }
  if (snapshot.missing.empty()) snapshot.missing.push_back({"snapshot", reason});
  snapshot.document = {{"identity", nlohmann::json::object()}, {"sources", std::move(sources)}};
  return snapshot;
}

}  // namespace

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
  auto failed = ssh::for_each_bounded(targets.size(), parallelism, [&](std::size_t index) {
    snapshot.devices[index] =
        collect_device(targets[index].device, *targets[index].profile, cache, gnmi);
    if (after == SessionsAfter::close)
      cache.close(targets[index].device.name, ssh::CredentialRole::read);
    devices_done.one_done();
  });
  // A device whose collection threw has no evidence at all (every source of its profile), and
  // the other devices keep theirs.
  for (const auto& failure : failed)
    snapshot.devices[failure.index] =
        collection_failed(targets[failure.index].device.name, *targets[failure.index].profile,
                          "internal error while collecting: " + failure.what);
  nlohmann::json devices = nlohmann::json::object();
  for (auto& device : snapshot.devices) devices[device.device] = device.document;
  snapshot.document = {{"format", "fabgate.snapshot/1"},
                       {"taken_at", format_utc(taken_at)},
                       {"intent_commit", intent_commit},
                       {"devices", std::move(devices)}};
  return snapshot;
}

}  // namespace fabgate::snapshot
