#pragma once

// The shared journal (issue 32, docs/coordination.md "The shared journal"): a copy, in the
// fabric's etcd, of every coordinated run's write-ahead journal and of its pre-change snapshot,
// so that `fabgate recover RUN` can finish a dead run from any controller that reaches the same
// etcd and intent repository, not only from the machine whose disk holds its evidence.
//
// Keys, under the fabric's prefix P; none carries a lease, because a dead run's journal must
// outlive its lease (its devices may still be changed):
//   P/journal/<run>/meta               JSON: run, change, controller, evidence (the bundle's
//                                      folder on that controller), shared_at
//   P/journal/<run>/records/<seq>      one journal line, byte for byte as in journal.jsonl
//                                      (seq: 10 digits, so key order is sequence order)
//   P/journal/<run>/baseline/<n>       the pre-change snapshot (snapshots/pre.json) in chunks
//                                      of 512 KiB (n: 6 digits)
//   P/journal/<run>/baseline           JSON: bytes, chunks, sha256; written after the chunks,
//                                      so a reader never takes a half-written snapshot
//   P/journal/<run>/writer             the controller that writes the records, on its lease
//                                      (claim_writer): one writer at a time
//   P/journal/<run>/end                JSON: exit_code, fate, controller, at: the run's end,
//                                      written ahead of its release in a transaction
//                                      conditional on its lease (run_end_key): from then on its
//                                      devices are in a known state, and a take-over refuses
// Records are written in order and each at most once per sequence number; the writer's side
// (journal.h JournalMirror) only ever sends records that are already durable on disk.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"
#include "adapters/etcd/etcd_client.h"

namespace fabgate::coordination {

// "P/journal/<run>/end": where a run records its end before it releases what it holds.
std::string run_end_key(const std::string& prefix, const std::string& run_id);
// What an end marker says, in words ("exit 0, change kept, by controller ci-7 at ..."), read
// as foreign data: an unreadable one says so.
std::string describe_run_end(const std::string& value);
// The exit code an end marker records; nullopt when it cannot be read.
std::optional<int> run_end_exit_code(const std::string& value);

struct JournalStoreFailure {
  enum class Kind {
    store,    // etcd failed or answered something unreadable
    absent,   // the store holds no journal for this run
    damaged,  // it holds one that cannot be trusted (a gap, a record of the wrong run...)
    invalid,  // a run id that cannot be a key segment, a record too large for one etcd request
    taken,    // another controller is the journal's writer (claim_writer, put_records)
  };
  Kind kind = Kind::store;
  std::string message;
};

template <class T>
using JournalStoreResult = Expected<T, JournalStoreFailure>;

// What the store holds of one run.
struct SharedRun {
  std::string run_id;
  nlohmann::json meta = nlohmann::json::object();  // as the run wrote it; {} when unreadable
  std::vector<std::string> records;  // journal lines (no newline), sequence 1..N with no gap
  std::optional<std::string> baseline;  // snapshots/pre.json as the run wrote it
  std::string no_baseline;              // why there is none: "not shared (...)", "damaged: ..."
  std::optional<std::string> end;       // its end marker (run_end_key), when it recorded one
};

class SharedJournal {
 public:
  static constexpr std::size_t kChunkBytes = 512 * 1024;
  // A pre-change snapshot larger than this is not copied into etcd (a store for coordination,
  // not for bulk data): recover on another controller then cannot verify the baseline and
  // says so (exit 5); recover on the run's own controller can.
  static constexpr std::size_t kMaxBaselineBytes = 32 * 1024 * 1024;
  // Records per transaction: below etcd's default --max-txn-ops (128).
  static constexpr std::size_t kRecordsPerTxn = 64;

  SharedJournal(etcd::EtcdClient& client, std::string prefix);

  // "P/journal/<run>/": where the run's journal lives, for the evidence and messages.
  std::string location(const std::string& run_id) const;

  JournalStoreResult<Ok> put_meta(const std::string& run_id, const nlohmann::json& meta);
  // Makes `lease` the journal's only writer: P/journal/<run>/writer (the controller's name) is
  // put on that lease when absent, or kept when already on it. Refused (`taken`, naming the
  // controller) while another writer's lease holds it: a run and the recover that took it over
  // never both write records (the run's writer key lapses with its lease).
  JournalStoreResult<Ok> claim_writer(const std::string& run_id, std::int64_t lease,
                                      const std::string& controller);
  // Writes records (sequence number, line) in transactions of at most kRecordsPerTxn records
  // and 1 MiB; writing a record again is harmless (the same line under the same key). With
  // `writer_lease`, each transaction is also conditional on the writer key being on it (the
  // single-writer guard: a run woken after its lease lapsed writes nothing any more).
  JournalStoreResult<Ok> put_records(
      const std::vector<std::pair<std::uint64_t, std::string>>& records, const std::string& run_id,
      std::int64_t writer_lease = 0);
  // Copies the pre-change snapshot: the chunks, then the marker. `invalid` when it is larger
  // than kMaxBaselineBytes (nothing is written).
  JournalStoreResult<Ok> put_baseline(const std::string& run_id, const std::string& bytes);
  // The highest sequence number stored for the run; 0 when none.
  JournalStoreResult<std::uint64_t> last_sequence(const std::string& run_id);
  // Everything stored for the run; `absent` when there is no record.
  JournalStoreResult<SharedRun> read(const std::string& run_id);
  // Removes every key of the run's journal; how many.
  JournalStoreResult<std::int64_t> erase(const std::string& run_id);

 private:
  std::string run_prefix(const std::string& run_id) const;

  etcd::EtcdClient& client_;
  std::string prefix_;
};

}  // namespace fabgate::coordination
