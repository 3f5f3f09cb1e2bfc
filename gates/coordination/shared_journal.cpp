#include "gates/coordination/shared_journal.h"

#include <cstdio>

#include "adapters/core/foreign_json.h"
#include "adapters/core/sha256.h"
#include "gates/coordination/budgets.h"

namespace fabgate::coordination {

namespace {

using Kind = JournalStoreFailure::Kind;

constexpr std::size_t kMaxTxnBytes = 1024 * 1024;

JournalStoreFailure failure(Kind kind, std::string message) {
  return JournalStoreFailure{kind, std::move(message)};
}

JournalStoreFailure store_failure(const std::string& what, const etcd::EtcdFailure& error) {
  return failure(Kind::store, "shared journal: " + what + ": etcd " +
                                  std::string(etcd::to_string(error.kind)) + ": " + error.message);
}

std::string numbered(std::uint64_t number, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%0*llu", digits, static_cast<unsigned long long>(number));
  return text;
}

// The sequence number a stored line claims: read with typed lookups (another controller wrote
// it), nullopt when it has none.
std::optional<std::uint64_t> sequence_of(const std::string& line) {
  auto parsed = parse_foreign_json(line);
  if (!parsed.ok() || !parsed.document.is_object()) return std::nullopt;
  return unsigned_member(parsed.document, "seq");
}

}  // namespace

std::string run_end_key(const std::string& prefix, const std::string& run_id) {
  return prefix + "/journal/" + run_id + "/end";
}

std::optional<int> run_end_exit_code(const std::string& value) {
  auto parsed = parse_foreign_json(value);
  if (!parsed.ok() || !parsed.document.is_object()) return std::nullopt;
  auto code = unsigned_member(parsed.document, "exit_code");
  if (!code || *code > 255) return std::nullopt;
  return static_cast<int>(*code);
}

std::string describe_run_end(const std::string& value) {
  auto parsed = parse_foreign_json(value);
  auto code = run_end_exit_code(value);
  if (!parsed.ok() || !code) return "an end marker this version cannot read";
  std::string text = "exit " + std::to_string(*code);
  auto fate = string_member(parsed.document, "fate").value_or("");
  if (fate == "kept") text += ", change kept";
  auto controller = string_member(parsed.document, "controller").value_or("");
  if (!controller.empty()) text += ", by controller " + controller;
  auto at = string_member(parsed.document, "at").value_or("");
  if (!at.empty()) text += " at " + at;
  return text;
}

SharedJournal::SharedJournal(etcd::EtcdClient& client, std::string prefix)
    : client_(client), prefix_(std::move(prefix)) {}

std::string SharedJournal::run_prefix(const std::string& run_id) const {
  return prefix_ + "/journal/" + run_id + "/";
}

std::string SharedJournal::location(const std::string& run_id) const {
  return run_prefix(run_id);
}

JournalStoreResult<Ok> SharedJournal::put_meta(const std::string& run_id,
                                               const nlohmann::json& meta) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "shared journal: run id '" + run_id + "' cannot be a key segment");
  auto written = client_.put(run_prefix(run_id) + "meta",
                             meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!written) return store_failure("write the meta record of run " + run_id, written.error());
  return Ok{};
}

JournalStoreResult<Ok> SharedJournal::claim_writer(const std::string& run_id,
                                                   std::int64_t lease,
                                                   const std::string& controller) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "shared journal: run id '" + run_id + "' cannot be a key segment");
  const std::string key = run_prefix(run_id) + "writer";
  auto taken = client_.txn({etcd::Compare::absent(key)}, {etcd::TxnOp::put(key, controller, lease)},
                           {etcd::TxnOp::get(key)});
  if (!taken) return store_failure("become the writer of run " + run_id + "'s journal", taken.error());
  if (taken->succeeded) return Ok{};
  if (!taken->reads.empty() && !taken->reads.front().kvs.empty()) {
    const auto& writer = taken->reads.front().kvs.front();
    if (writer.lease == lease) return Ok{};
    return failure(Kind::taken, "shared journal: run " + run_id + "'s journal is written by " +
                                    "controller " + writer.value +
                                    " (on a lease that still holds); one writer at a time");
  }
  // Gone between the compare and the read (its lease just lapsed): try once more.
  auto again = client_.txn({etcd::Compare::absent(key)}, {etcd::TxnOp::put(key, controller, lease)});
  if (!again) return store_failure("become the writer of run " + run_id + "'s journal", again.error());
  if (!again->succeeded)
    return failure(Kind::taken, "shared journal: another controller became the writer of run " +
                                    run_id + "'s journal at the same instant");
  return Ok{};
}

JournalStoreResult<Ok> SharedJournal::put_records(
    const std::vector<std::pair<std::uint64_t, std::string>>& records, const std::string& run_id,
    std::int64_t writer_lease) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "shared journal: run id '" + run_id + "' cannot be a key segment");
  std::vector<etcd::TxnOp> batch;
  std::size_t batch_bytes = 0;
  std::uint64_t first = 0;
  auto send = [&]() -> JournalStoreResult<Ok> {
    if (batch.empty()) return Ok{};
    // Only while the run's journal is there: once `fabgate recover` (from any controller) or
    // the run's own end erased it, a run that wakes up late must not write records back.
    std::vector<etcd::Compare> guards = {etcd::Compare::present(run_prefix(run_id) + "meta")};
    if (writer_lease != 0)
      guards.push_back(etcd::Compare::lease_is(run_prefix(run_id) + "writer", writer_lease));
    auto written = client_.txn(guards, batch);
    if (!written)
      return store_failure("write records " + std::to_string(first) + "-" +
                               std::to_string(first + batch.size() - 1) + " of run " + run_id,
                           written.error());
    if (!written->succeeded && writer_lease != 0) {
      auto meta = client_.get(run_prefix(run_id) + "meta");
      if (meta && !meta->kvs.empty())
        return failure(Kind::taken,
                       "shared journal: run " + run_id + "'s journal is no longer this "
                       "controller's to write (its writer lease lapsed; another controller may "
                       "have taken the run over); records " + std::to_string(first) + "-" +
                           std::to_string(first + batch.size() - 1) + " were not written");
    }
    if (!written->succeeded)
      return failure(Kind::absent,
                     "shared journal: run " + run_id + "'s journal is no longer in the store (" +
                         location(run_id) +
                         " has no meta): it was erased when the run was recovered or ended; "
                         "records " +
                         std::to_string(first) + "-" + std::to_string(first + batch.size() - 1) +
                         " were not written");
    batch.clear();
    batch_bytes = 0;
    return Ok{};
  };
  for (const auto& [sequence, line] : records) {
    if (line.size() > kMaxTxnBytes)
      return failure(Kind::invalid, "shared journal: record " + std::to_string(sequence) +
                                        " of run " + run_id + " is " +
                                        std::to_string(line.size()) +
                                        " bytes, more than one etcd request may carry");
    if (batch.size() == kRecordsPerTxn || batch_bytes + line.size() > kMaxTxnBytes) {
      if (auto sent = send(); !sent) return sent;
    }
    if (batch.empty()) first = sequence;
    batch.push_back(etcd::TxnOp::put(run_prefix(run_id) + "records/" + numbered(sequence, 10), line));
    batch_bytes += line.size();
  }
  return send();
}

JournalStoreResult<Ok> SharedJournal::put_baseline(const std::string& run_id,
                                                   const std::string& bytes) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "shared journal: run id '" + run_id + "' cannot be a key segment");
  if (bytes.size() > kMaxBaselineBytes)
    return failure(Kind::invalid, "the pre-change snapshot is " + std::to_string(bytes.size()) +
                                      " bytes, more than the " +
                                      std::to_string(kMaxBaselineBytes / (1024 * 1024)) +
                                      " MiB fabgate copies into etcd");
  std::size_t chunks = 0;
  for (std::size_t offset = 0; offset < bytes.size() || chunks == 0; offset += kChunkBytes) {
    auto written = client_.put(run_prefix(run_id) + "baseline/" + numbered(chunks, 6),
                               bytes.substr(offset, kChunkBytes));
    if (!written)
      return store_failure("write part " + std::to_string(chunks) + " of the pre-change snapshot",
                           written.error());
    ++chunks;
    if (bytes.empty()) break;
  }
  nlohmann::json marker = {
      {"bytes", bytes.size()}, {"chunks", chunks}, {"sha256", sha256_hex(bytes)}};
  auto written = client_.put(run_prefix(run_id) + "baseline", marker.dump());
  if (!written) return store_failure("write the pre-change snapshot's marker", written.error());
  return Ok{};
}

JournalStoreResult<std::uint64_t> SharedJournal::last_sequence(const std::string& run_id) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "shared journal: run id '" + run_id + "' cannot be a key segment");
  auto records = client_.get_prefix(run_prefix(run_id) + "records/");
  if (!records) return store_failure("read the records of run " + run_id, records.error());
  if (records->kvs.empty()) return std::uint64_t{0};
  auto last = sequence_of(records->kvs.back().value);
  if (!last)
    return failure(Kind::damaged, "shared journal: the last record of run " + run_id + " (" +
                                      records->kvs.back().key + ") has no sequence number");
  return *last;
}

JournalStoreResult<SharedRun> SharedJournal::read(const std::string& run_id) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "shared journal: run id '" + run_id + "' cannot be a key segment");
  const std::string where = run_prefix(run_id);
  SharedRun run;
  run.run_id = run_id;
  auto records = client_.get_prefix(where + "records/");
  if (!records) return store_failure("read the records of run " + run_id, records.error());
  if (records->kvs.empty())
    return failure(Kind::absent, "the coordination store holds no journal for run " + run_id +
                                     " (" + where + ")");
  // Written in order from 1 with no gap: anything else is not a journal to act on.
  std::uint64_t expected = 1;
  for (const auto& kv : records->kvs) {
    auto sequence = sequence_of(kv.value);
    if (!sequence || kv.key != where + "records/" + numbered(*sequence, 10))
      return failure(Kind::damaged, "shared journal: " + kv.key +
                                        " does not hold the record its key names");
    if (*sequence != expected)
      return failure(Kind::damaged, "shared journal: record " + std::to_string(expected) +
                                        " of run " + run_id + " is missing (next is " +
                                        std::to_string(*sequence) + ")");
    run.records.push_back(kv.value);
    ++expected;
  }
  auto meta = client_.get(where + "meta");
  if (!meta) return store_failure("read the meta record of run " + run_id, meta.error());
  if (!meta->kvs.empty()) {
    auto parsed = parse_foreign_json(meta->kvs.front().value);
    if (parsed.ok() && parsed.document.is_object()) run.meta = parsed.document;
  }
  auto end = client_.get(where + "end");
  if (!end) return store_failure("read the end marker of run " + run_id, end.error());
  if (!end->kvs.empty()) run.end = end->kvs.front().value;
  auto marker = client_.get(where + "baseline");
  if (!marker) return store_failure("read the pre-change snapshot's marker", marker.error());
  if (marker->kvs.empty()) {
    run.no_baseline = "the run did not copy its pre-change snapshot into etcd";
    return run;
  }
  // The marker is foreign data (another controller wrote it): typed lookups, bounds checked.
  std::uint64_t chunks = 0;
  std::uint64_t bytes = 0;
  std::string digest;
  auto parsed = parse_foreign_json(marker->kvs.front().value);
  if (parsed.ok()) {
    chunks = unsigned_member(parsed.document, "chunks").value_or(0);
    bytes = unsigned_member(parsed.document, "bytes").value_or(kMaxBaselineBytes + 1);
    digest = string_member(parsed.document, "sha256").value_or("");
  }
  if (chunks == 0 || digest.empty() || bytes > kMaxBaselineBytes ||
      chunks > kMaxBaselineBytes / kChunkBytes + 1) {
    run.no_baseline = "damaged: the pre-change snapshot's marker is unreadable";
    return run;
  }
  std::string baseline;
  for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
    auto part = client_.get(where + "baseline/" + numbered(chunk, 6));
    if (!part) return store_failure("read part " + std::to_string(chunk) + " of the pre-change snapshot", part.error());
    if (part->kvs.empty()) {
      run.no_baseline = "damaged: part " + std::to_string(chunk) + " of the pre-change snapshot is missing";
      return run;
    }
    baseline += part->kvs.front().value;
  }
  if (baseline.size() != bytes || sha256_hex(baseline) != digest) {
    run.no_baseline = "damaged: the pre-change snapshot does not match its sha256";
    return run;
  }
  run.baseline = std::move(baseline);
  return run;
}

JournalStoreResult<std::int64_t> SharedJournal::erase(const std::string& run_id) {
  if (!plain_key_segment(run_id))
    return failure(Kind::invalid, "shared journal: run id '" + run_id + "' cannot be a key segment");
  auto deleted = client_.del_prefix(run_prefix(run_id));
  if (!deleted) return store_failure("erase the journal of run " + run_id, deleted.error());
  return deleted->deleted;
}

}  // namespace fabgate::coordination
