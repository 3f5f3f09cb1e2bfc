#pragma once

// The journal's copy in the fabric's etcd (journal.h JournalMirror over
// gates/coordination/shared_journal.h): what a coordinated run attaches to its journal once it
// holds its budget claim, so that `fabgate recover RUN` works from another controller.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "gates/pipeline/safety/journal.h"

namespace fabgate::pipeline {

// Owns its client: journal appends come from any of the run's threads (under the journal's
// lock), and a client is not shared with the run's other etcd calls.
class EtcdJournalMirror final : public JournalMirror {
 public:
  // `writer_lease`: the lease the writer key was claimed on (SharedJournal::claim_writer);
  // every store is conditional on it, so a run woken after its lease lapsed writes nothing.
  EtcdJournalMirror(etcd::EtcdClient client, std::string prefix, std::string run_id,
                    std::int64_t writer_lease = 0);

  Status store(const std::vector<std::pair<std::uint64_t, std::string>>& records) override;
  // "etcd <prefix>/journal/<run>/"
  std::string where() const override { return "etcd " + location_; }
  // "<prefix>/journal/<run>/"
  const std::string& location() const { return location_; }

 private:
  etcd::EtcdClient client_;
  std::string prefix_;
  std::string run_id_;
  std::string location_;
  std::int64_t writer_lease_ = 0;
};

}  // namespace fabgate::pipeline
