#include "gates/pipeline/families/collector_snapshotter.h"

#include <optional>
#include <string>

#include "adapters/core/text.h"
#include "gates/pipeline/families/gnmi_steps.h"
#include "gates/pipeline/families/remote.h"
#include "gates/snapshot/command_record.h"
#include "gates/snapshot/snapshot.h"

namespace fabgate::pipeline {

EndpointGnmiFetcher::EndpointGnmiFetcher(const std::vector<const intent::Device*>& devices) {
  for (const auto* device : devices) devices_[device->name] = device;
}

gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> EndpointGnmiFetcher::get(
    const std::string& device, const std::vector<std::string>& paths, gnmi::Encoding encoding,
    Duration deadline) {
  return get_typed(device, paths, encoding, gnmi::DataType::all, deadline);
}

gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> EndpointGnmiFetcher::get_typed(
    const std::string& device, const std::vector<std::string>& paths, gnmi::Encoding encoding,
    gnmi::DataType type, Duration deadline) {
  // Failures before the RPC name the Get the way the client's own failures do.
  const std::string operation = "gnmi: " + device + ": Get " + join(paths, " ") + ": ";
  auto found = devices_.find(device);
  if (found == devices_.end())
    return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                             operation + device + " is not among the devices being collected"};
  if (!found->second->gnmi)
    return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                             operation + device + " has no gnmi endpoint in the inventory"};
  auto options = client_options_for(*found->second);
  if (!options.ok()) {
    auto failure = options.error();
    failure.message = operation + failure.message;
    return failure;
  }
  auto client = gnmi::connect(options.value());
  if (!client.ok()) {
    auto failure = client.error();
    failure.message = operation + failure.message;
    return failure;
  }
  return client.value()->get(paths, encoding, type, deadline);
}

TakenSnapshot CollectorSnapshotter::take(const std::vector<const intent::Device*>& devices,
                                         const std::string& intent_commit, ProgressSink* progress) {
  return take_with(profiles_, devices, intent_commit, progress);
}

TakenSnapshot CollectorSnapshotter::take_categories(
    const std::vector<const intent::Device*>& devices, const std::set<std::string>& categories,
    const std::string& intent_commit) {
  snapshot::ProfileSet only = profiles_;
  for (auto& [platform, profile] : only)
    std::erase_if(profile.sources, [&](const snapshot::CollectorSource& source) {
      return !categories.contains(source.category);
    });
  return take_with(only, devices, intent_commit, nullptr);
}

TakenSnapshot CollectorSnapshotter::take_with(const snapshot::ProfileSet& profiles,
                                              const std::vector<const intent::Device*>& devices,
                                              const std::string& intent_commit,
                                              ProgressSink* progress) {
  TakenSnapshot taken;
  std::vector<snapshot::SnapshotTarget> targets;
  for (const auto* device : devices) {
    auto profile = profiles.find(device->platform);
    if (profile == profiles.end()) {
      taken.missing.push_back(device->name + ": no collector profile for platform '" +
                              device->platform + "'");
      continue;
    }
    targets.push_back({to_ssh_device(*device), &profile->second});
  }
  EndpointGnmiFetcher endpoints(devices);
  // Route tables stay apart from the document (a million routes: 28 bytes each, not a JSON
  // tree's ~700); the gNMI replies are kept for commands.jsonl.
  auto snapshot = snapshot::take_snapshot(targets, connections_, parallelism_, intent_commit,
                                          gnmi_ ? gnmi_ : &endpoints,
                                          snapshot::SessionsAfter::keep, progress,
                                          snapshot::RouteLists::apart_keeping_replies);
  for (auto& device : snapshot.devices) {
    if (!device.route_tables.empty())
      taken.routes[device.device] =
          std::make_shared<const snapshot::RouteTables>(std::move(device.route_tables));
    for (const auto& missing : device.missing)
      taken.missing.push_back(device.device + ": " + missing.category + ": " + missing.reason);
    if (evidence_) {
      for (const auto& record : device.records) {
        auto entry = snapshot::evidence_entry(record, snapshot::Output::omitted);
        entry["purpose"] = "snapshot";
        evidence_->append_command_with_output(std::move(entry), record.stdout_text);
      }
      // The raw Get replies, so a gNMI-collected category can be checked like a command's output.
      for (const auto& record : device.gnmi_records) {
        auto entry = snapshot::evidence_entry(record);
        entry["purpose"] = "snapshot";
        evidence_->append_command(entry);
      }
    }
  }
  taken.document = std::move(snapshot.document);
  return taken;
}

Result<snapshot::ProfileSet> profiles_for(const intent::IntentRepository& repository) {
  return profiles_from(repository.policy_texts, repository.settings.policies_dir + "/collectors");
}

namespace {

// A collector profile is a file `NAME.yaml` directly in the collectors folder; anything else
// there (a subfolder, a README, an editor's backup) is not one.
std::optional<std::string> profile_name(const std::string& path,
                                        const std::string& collectors_dir) {
  const std::string prefix = collectors_dir + "/";
  const std::string suffix = ".yaml";
  if (!path.starts_with(prefix) || !path.ends_with(suffix)) return std::nullopt;
  std::string name = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
  if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
  return name;
}

}  // namespace

Result<snapshot::ProfileSet> profiles_from(const std::map<std::string, std::string>& texts,
                                           const std::string& collectors_dir) {
  std::map<std::string, std::string> overrides;
  for (const auto& [path, text] : texts)
    if (auto name = profile_name(path, collectors_dir)) overrides[*name] = text;
  return snapshot::load_profiles(overrides);
}

// The change's author is not trusted with the controller even once the change is approved
// for the devices: its steps there are at least confined to the twin's namespaces, while a
// collector command runs as written (docs/security.md).
Result<snapshot::ProfileSet> trusted_profiles_for(const intent::IntentRepository& repository,
                                                  std::vector<std::string>& notes) {
  static const std::map<std::string, std::string> kNone;
  const auto* trusted = repository.trusted_policy ? &*repository.trusted_policy : nullptr;
  const auto& texts = trusted ? trusted->collector_profiles : kNone;
  const std::string from = trusted ? trusted->source : "the shipped profiles";
  const std::string own_dir = repository.settings.policies_dir + "/collectors";
  const std::string trusted_dir = trusted ? trusted->collectors_dir : own_dir;
  for (const auto& [path, text] : repository.policy_texts) {
    auto name = profile_name(path, own_dir);
    if (!name) continue;
    auto there = texts.find(trusted_dir + "/" + *name + ".yaml");
    if (there == texts.end() || there->second != text)
      notes.push_back("the change's commit has its own " + path +
                      "; the twin collects with the profiles of " + from +
                      " (collectors run on the controller there)");
  }
  return profiles_from(texts, trusted_dir);
}

}  // namespace fabgate::pipeline
