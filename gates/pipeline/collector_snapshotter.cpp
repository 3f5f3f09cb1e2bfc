#include "gates/pipeline/collector_snapshotter.h"

#include "gates/pipeline/remote.h"
#include "gates/snapshot/command_record.h"
#include "gates/snapshot/snapshot.h"

namespace fabgate::pipeline {

TakenSnapshot CollectorSnapshotter::take(const std::vector<const intent::Device*>& devices,
                                         const std::string& intent_commit) {
  TakenSnapshot taken;
  std::vector<snapshot::SnapshotTarget> targets;
  for (const auto* device : devices) {
    auto profile = profiles_.find(device->platform);
    if (profile == profiles_.end()) {
      taken.missing.push_back(device->name + ": no collector profile for platform '" +
                              device->platform + "'");
      continue;
    }
    targets.push_back({to_ssh_device(*device), &profile->second});
  }
  auto snapshot = snapshot::take_snapshot(targets, connections_, parallelism_, intent_commit);
  for (const auto& device : snapshot.devices) {
    for (const auto& missing : device.missing)
      taken.missing.push_back(device.device + ": " + missing.category + ": " + missing.reason);
    if (evidence_)
      for (const auto& record : device.records) {
        auto entry = snapshot::evidence_entry(record);
        entry["purpose"] = "snapshot";
        evidence_->append_command(entry);
      }
  }
  taken.document = std::move(snapshot.document);
  return taken;
}

Result<snapshot::ProfileSet> profiles_for(const intent::IntentRepository& repository) {
  std::map<std::string, std::string> overrides;
  const std::string prefix = repository.settings.policies_dir + "/collectors/";
  for (const auto& [path, text] : repository.policy_texts) {
    if (path.rfind(prefix, 0) != 0) continue;
    std::string name = path.substr(prefix.size());
    auto dot = name.rfind(".yaml");
    if (dot == std::string::npos || name.find('/') != std::string::npos) continue;
    overrides[name.substr(0, dot)] = text;
  }
  return snapshot::load_profiles(overrides);
}

}  // namespace fabgate::pipeline
