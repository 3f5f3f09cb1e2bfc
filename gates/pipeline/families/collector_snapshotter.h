#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "adapters/ssh/connection_cache.h"
#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/families/snapshots.h"
#include "gates/snapshot/collector_profile.h"
#include "gates/snapshot/gnmi_source.h"

namespace fabgate::pipeline {

// The real GnmiFetcher: one Get per call to the device's inventory `gnmi` endpoint
// (client_options_for(): address, TLS, login from the environment), on a fresh channel. A
// device it was not built with, or one without an endpoint, is a `rejected` failure.
class EndpointGnmiFetcher final : public snapshot::GnmiFetcher {
 public:
  explicit EndpointGnmiFetcher(const std::vector<const intent::Device*>& devices);
  gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> get(const std::string& device,
                                                            const std::vector<std::string>& paths,
                                                            gnmi::Encoding encoding,
                                                            Duration deadline) override;
  gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> get_typed(
      const std::string& device, const std::vector<std::string>& paths, gnmi::Encoding encoding,
      gnmi::DataType type, Duration deadline) override;

 private:
  std::map<std::string, const intent::Device*> devices_;
};

// The real Snapshotter: runs each device's platform collector profile (shipped, or the intent
// repository's policies/collectors/<platform>.yaml at the commit) over the run's SSH sessions
// and, for gNMI sources, through `gnmi` (nullptr: an EndpointGnmiFetcher over the devices
// being collected), and records every command and Get in the evidence's commands.jsonl.
class CollectorSnapshotter final : public Snapshotter {
 public:
  CollectorSnapshotter(snapshot::ProfileSet profiles, ssh::ConnectionCache& connections,
                       EvidenceBundle* evidence, int parallelism,
                       snapshot::GnmiFetcher* gnmi = nullptr)
      : profiles_(std::move(profiles)),
        connections_(connections),
        evidence_(evidence),
        parallelism_(parallelism),
        gnmi_(gnmi) {}

  TakenSnapshot take(const std::vector<const intent::Device*>& devices,
                     const std::string& intent_commit, ProgressSink* progress = nullptr) override;
  TakenSnapshot take_categories(const std::vector<const intent::Device*>& devices,
                                const std::set<std::string>& categories,
                                const std::string& intent_commit) override;
  std::optional<TakenSnapshot> take_counters(const std::vector<const intent::Device*>& devices,
                                             const std::set<std::string>& categories,
                                             const std::string& intent_commit) override {
    return take_categories(devices, categories, intent_commit);
  }

 private:
  TakenSnapshot take_with(const snapshot::ProfileSet& profiles,
                          const std::vector<const intent::Device*>& devices,
                          const std::string& intent_commit, ProgressSink* progress);

  snapshot::ProfileSet profiles_;
  ssh::ConnectionCache& connections_;
  EvidenceBundle* evidence_;
  int parallelism_;
  snapshot::GnmiFetcher* gnmi_;
};

// Collector profiles for an intent repository: shipped ones, overridden by
// <policies>/collectors/<platform>.yaml files committed in the repository.
Result<snapshot::ProfileSet> profiles_for(const intent::IntentRepository& repository);

// Collector profiles for commands run on the controller itself (the twin's namespaces): the
// shipped ones overridden by the trusted ref's (IntentRepository::trusted_policy), never by
// the change's commit; only the shipped ones without a trusted policy. Each profile the
// change's commit has otherwise is named in `notes`.
Result<snapshot::ProfileSet> trusted_profiles_for(const intent::IntentRepository& repository,
                                                  std::vector<std::string>& notes);

// The shipped profiles, overridden by the files directly in `collectors_dir` among `texts`
// (file text by path relative to the intent root).
Result<snapshot::ProfileSet> profiles_from(const std::map<std::string, std::string>& texts,
                                           const std::string& collectors_dir);

}  // namespace fabgate::pipeline
