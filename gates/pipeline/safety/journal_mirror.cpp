#include "gates/pipeline/safety/journal_mirror.h"

#include "gates/coordination/shared_journal.h"

namespace fabgate::pipeline {

EtcdJournalMirror::EtcdJournalMirror(etcd::EtcdClient client, std::string prefix,
                                     std::string run_id, std::int64_t writer_lease)
    : client_(std::move(client)),
      prefix_(std::move(prefix)),
      run_id_(std::move(run_id)),
      writer_lease_(writer_lease) {
  location_ = coordination::SharedJournal(client_, prefix_).location(run_id_);
}

Status EtcdJournalMirror::store(const std::vector<std::pair<std::uint64_t, std::string>>& records) {
  coordination::SharedJournal journal(client_, prefix_);
  auto stored = journal.put_records(records, run_id_, writer_lease_);
  if (!stored) return Error::internal(stored.error().message);
  return Ok{};
}

}  // namespace fabgate::pipeline
