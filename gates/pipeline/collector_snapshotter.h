#pragma once

#include "adapters/ssh/connection_cache.h"
#include "gates/pipeline/evidence.h"
#include "gates/pipeline/snapshots.h"
#include "gates/snapshot/collector_profile.h"

namespace fabgate::pipeline {

// The real Snapshotter: runs each device's platform collector profile (shipped, or the intent
// repository's policies/collectors/<platform>.yaml at the commit) over the run's SSH sessions,
// and records every command in the evidence's commands.jsonl.
class CollectorSnapshotter final : public Snapshotter {
 public:
  CollectorSnapshotter(snapshot::ProfileSet profiles, ssh::ConnectionCache& connections,
                       EvidenceBundle* evidence, int parallelism)
      : profiles_(std::move(profiles)),
        connections_(connections),
        evidence_(evidence),
        parallelism_(parallelism) {}

  TakenSnapshot take(const std::vector<const intent::Device*>& devices,
                     const std::string& intent_commit) override;

 private:
  snapshot::ProfileSet profiles_;
  ssh::ConnectionCache& connections_;
  EvidenceBundle* evidence_;
  int parallelism_;
};

// Collector profiles for an intent repository: shipped ones, overridden by
// <policies>/collectors/<platform>.yaml files committed in the repository.
Result<snapshot::ProfileSet> profiles_for(const intent::IntentRepository& repository);

}  // namespace fabgate::pipeline
