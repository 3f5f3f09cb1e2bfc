// The shared journal against the real Debian etcd 3.4 (one member on a reserved 127.0.0.1 port,
// data in a temp folder): records and the pre-change snapshot round-trip byte for byte, a gap
// or a tampered part is reported rather than acted on, and erase leaves nothing behind.

#include "gates/coordination/shared_journal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/adapters/etcd/etcd_fixture.h"

namespace fabgate::coordination {
namespace {

using namespace std::chrono_literals;
using etcd::testing::open_client;
using Kind = JournalStoreFailure::Kind;

const char* kPrefix = "/fabgate/fabric-a";

std::string line(std::uint64_t sequence) {
  return "{\"event\":\"step-start\",\"seq\":" + std::to_string(sequence) + ",\"sha256\":\"x\"}";
}

std::vector<std::pair<std::uint64_t, std::string>> records(std::uint64_t from, std::uint64_t to) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (auto sequence = from; sequence <= to; ++sequence) out.emplace_back(sequence, line(sequence));
  return out;
}

class SharedJournalStore : public etcd::testing::OneEtcdMember {
 protected:
  void SetUp() override {
    OneEtcdMember::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    client_ = std::make_unique<etcd::EtcdClient>(client());
  }
  std::unique_ptr<etcd::EtcdClient> client_;
};

TEST_F(SharedJournalStore, OneWriterAtATimeAndAWriterWhoseLeaseLapsedWritesNothing) {
  // Given run1's journal written by ctl-a on lease A, then ctl-b (lease B) cannot become its
  // writer and its records are refused as `taken`; once A is revoked (ctl-a frozen past its
  // lease), ctl-b becomes the writer and ctl-a's next records are refused, naming why, and the
  // store keeps ctl-b's record 2, not ctl-a's.
  SharedJournal journal(*client_, kPrefix);
  auto a = client_->grant(30);
  auto b = client_->grant(30);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(journal.put_meta("run1", {{"run", "run1"}}));
  ASSERT_TRUE(journal.claim_writer("run1", a->id, "ctl-a"));
  ASSERT_TRUE(journal.claim_writer("run1", a->id, "ctl-a")) << "claiming again is harmless";
  ASSERT_TRUE(journal.put_records(records(1, 1), "run1", a->id));
  auto refused = journal.claim_writer("run1", b->id, "ctl-b");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Kind::taken);
  EXPECT_NE(refused.error().message.find("written by controller ctl-a"), std::string::npos)
      << refused.error().message;
  auto b_write = journal.put_records(records(2, 2), "run1", b->id);
  ASSERT_FALSE(b_write);
  EXPECT_EQ(b_write.error().kind, Kind::taken);

  ASSERT_TRUE(client_->revoke(a->id));
  ASSERT_TRUE(journal.claim_writer("run1", b->id, "ctl-b"));
  std::vector<std::pair<std::uint64_t, std::string>> from_b = {{2, line(2) + " "}};
  ASSERT_TRUE(journal.put_records(from_b, "run1", b->id));
  auto stale = journal.put_records(records(2, 3), "run1", a->id);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().kind, Kind::taken);
  EXPECT_NE(stale.error().message.find("no longer this controller's to write"), std::string::npos)
      << stale.error().message;
  auto stored = journal.read("run1");
  ASSERT_TRUE(stored) << stored.error().message;
  ASSERT_EQ(stored->records.size(), 2u);
  EXPECT_EQ(stored->records[1], line(2) + " ");
}

TEST_F(SharedJournalStore, RecordsComeBackInSequenceOrderAcrossTransactions) {
  // Given 150 records written in two calls (more than one transaction holds), then reading
  // gives them all, in order, byte for byte, and the last sequence is 150.
  SharedJournal journal(*client_, kPrefix);
  ASSERT_TRUE(journal.put_meta("run1", {{"change", "c"}, {"evidence", "/var/e/c/t-run1"}}));
  ASSERT_TRUE(journal.put_records(records(1, 100), "run1"));
  ASSERT_TRUE(journal.put_records(records(101, 150), "run1"));
  auto read = journal.read("run1");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->records.size(), 150u);
  for (std::size_t i = 0; i < read->records.size(); ++i) EXPECT_EQ(read->records[i], line(i + 1));
  EXPECT_EQ(read->meta.value("evidence", ""), "/var/e/c/t-run1");
  EXPECT_FALSE(read->baseline);
  EXPECT_NE(read->no_baseline.find("did not copy"), std::string::npos) << read->no_baseline;
  auto last = journal.last_sequence("run1");
  ASSERT_TRUE(last);
  EXPECT_EQ(*last, 150u);
  EXPECT_EQ(journal.location("run1"), std::string(kPrefix) + "/journal/run1/");
}

TEST_F(SharedJournalStore, AMissingRecordIsDamageNotAShorterJournal) {
  // Given records 1-5 with record 3 deleted in the store, then reading refuses, naming record 3:
  // recover must not act on a journal with a hole in it.
  SharedJournal journal(*client_, kPrefix);
  ASSERT_TRUE(journal.put_meta("run1", {{"change", "c"}}));
  ASSERT_TRUE(journal.put_records(records(1, 5), "run1"));
  ASSERT_TRUE(client_->del(std::string(kPrefix) + "/journal/run1/records/0000000003"));
  auto read = journal.read("run1");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().kind, Kind::damaged);
  EXPECT_NE(read.error().message.find("record 3 of run run1 is missing"), std::string::npos)
      << read.error().message;
}

TEST_F(SharedJournalStore, TheBaselineRoundTripsInPartsAndATamperedPartIsNotUsed) {
  // Given a 1.3 MiB snapshot with every byte value (three parts), then it reads back identical;
  // after one part is changed in the store it is reported damaged, not returned.
  std::string snapshot;
  for (std::size_t i = 0; i < 1'300'000; ++i) snapshot.push_back(static_cast<char>(i * 7 % 256));
  SharedJournal journal(*client_, kPrefix);
  ASSERT_TRUE(journal.put_meta("run1", {{"change", "c"}}));
  ASSERT_TRUE(journal.put_records(records(1, 1), "run1"));
  ASSERT_TRUE(journal.put_baseline("run1", snapshot));
  auto read = journal.read("run1");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read->baseline) << read->no_baseline;
  EXPECT_EQ(*read->baseline, snapshot);

  ASSERT_TRUE(client_->put(std::string(kPrefix) + "/journal/run1/baseline/000001", "tampered"));
  read = journal.read("run1");
  ASSERT_TRUE(read);
  EXPECT_FALSE(read->baseline);
  EXPECT_NE(read->no_baseline.find("does not match its sha256"), std::string::npos)
      << read->no_baseline;
}

TEST_F(SharedJournalStore, ASnapshotTooLargeForEtcdIsRefusedWithNothingWritten) {
  SharedJournal journal(*client_, kPrefix);
  auto put = journal.put_baseline("run1", std::string(SharedJournal::kMaxBaselineBytes + 1, 'x'));
  ASSERT_FALSE(put);
  EXPECT_EQ(put.error().kind, Kind::invalid);
  auto range = client_->get_prefix(std::string(kPrefix) + "/journal/");
  ASSERT_TRUE(range);
  EXPECT_TRUE(range->kvs.empty());
}

TEST_F(SharedJournalStore, EraseLeavesNothingAndThenTheRunIsAbsent) {
  // Given a run's meta, records and baseline, and another run's records, when the first is
  // erased, then none of its keys remain, reading it says absent, and the other is untouched.
  SharedJournal journal(*client_, kPrefix);
  ASSERT_TRUE(journal.put_meta("run1", {{"change", "c"}}));
  ASSERT_TRUE(journal.put_records(records(1, 3), "run1"));
  ASSERT_TRUE(journal.put_baseline("run1", "{}"));
  ASSERT_TRUE(journal.put_meta("run10", {{"change", "c"}}));
  ASSERT_TRUE(journal.put_records(records(1, 2), "run10"));
  auto erased = journal.erase("run1");
  ASSERT_TRUE(erased) << erased.error().message;
  EXPECT_EQ(*erased, 6);  // meta, three records, one part, the marker
  auto read = journal.read("run1");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().kind, Kind::absent);
  auto other = journal.read("run10");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->records.size(), 2u);

  // A run that wakes up after its journal was erased (recovered from another controller)
  // cannot write records back: the store says the journal is gone, and nothing is written.
  auto late = journal.put_records(records(4, 5), "run1");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().kind, Kind::absent);
  EXPECT_NE(late.error().message.find("is no longer in the store"), std::string::npos)
      << late.error().message;
  auto range = client_->get_prefix(std::string(kPrefix) + "/journal/run1/");
  ASSERT_TRUE(range);
  EXPECT_TRUE(range->kvs.empty());
}

TEST_F(SharedJournalStore, AnUnreachableStoreIsAStoreFailureNamingEtcd) {
  auto closed = open_client({"http://127.0.0.1:" + std::to_string(etcd::testing::free_port())},
                            500ms);
  SharedJournal journal(closed, kPrefix);
  auto put = journal.put_records(records(1, 1), "run1");
  ASSERT_FALSE(put);
  EXPECT_EQ(put.error().kind, Kind::store);
  EXPECT_NE(put.error().message.find("etcd unreachable"), std::string::npos)
      << put.error().message;
}

}  // namespace
}  // namespace fabgate::coordination
