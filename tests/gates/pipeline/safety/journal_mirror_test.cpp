// The journal's copy in the real Debian etcd 3.4 (one member on a reserved 127.0.0.1 port): a
// record that must reach etcd before its action starts fails while etcd does not answer (the
// step would not be sent), records that may wait catch up with the next one that gets through,
// and a journal continued on another controller is never overwritten from here.

#include "gates/pipeline/safety/journal_mirror.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gates/coordination/shared_journal.h"
#include "tests/adapters/etcd/etcd_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using namespace std::chrono_literals;

const char* kPrefix = "/fabgate/fabric-a";

std::vector<std::string> lines_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class JournalMirrorInEtcd : public etcd::testing::OneEtcdMember {
 protected:
  void SetUp() override {
    OneEtcdMember::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // The run shares its journal: its meta record is there before any record is copied.
    auto store = client();
    ASSERT_TRUE(coordination::SharedJournal(store, kPrefix).put_meta("run1", {{"change", "c"}}));
    auto writer = JournalWriter::create(dir_.path() + "/journal.jsonl", Redactor{});
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    writer_ = std::move(writer).value();
  }
  void TearDown() override {
    if (paused_) ::kill(cluster_->member(0).process.pid(), SIGCONT);
  }
  // A mirror with a short deadline, so a paused member fails calls quickly.
  std::unique_ptr<EtcdJournalMirror> mirror() {
    return std::make_unique<EtcdJournalMirror>(client(700ms), kPrefix, "run1");
  }
  std::vector<std::string> stored() {
    auto store = client();
    coordination::SharedJournal journal(store, kPrefix);
    auto read = journal.read("run1");
    return read ? read->records : std::vector<std::string>{};
  }
  void pause(bool on) {
    ASSERT_EQ(::kill(cluster_->member(0).process.pid(), on ? SIGSTOP : SIGCONT), 0);
    paused_ = on;
  }

  fabgate::testing::TempDir dir_{"fabgate-journal-mirror"};
  std::unique_ptr<JournalWriter> writer_;
  bool paused_ = false;
};

TEST_F(JournalMirrorInEtcd, AStepRecordFailsWhileEtcdIsSilentAndEverythingCatchesUpAfter) {
  // Given two records written before the mirror is attached, then attaching copies them. While
  // the etcd member is stopped (SIGSTOP), a record that must reach etcd fails (its step would
  // not be sent), one that may wait is kept on disk. Once etcd answers again, the next record
  // that must reach it takes every missing one along: etcd holds the file's lines exactly.
  ASSERT_TRUE(writer_->append({{"event", "run-start"}}).ok());
  ASSERT_TRUE(writer_->append({{"event", "gate-end"}}).ok());
  auto etcd_copy = mirror();
  ASSERT_TRUE(writer_->attach_mirror(etcd_copy.get(), 0).ok());
  EXPECT_EQ(stored().size(), 2u);

  pause(true);
  auto step = writer_->append({{"event", "step-start"}}, Durability::everywhere);
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.error().message.find("record 3 is on disk but not in etcd " +
                                      std::string(kPrefix) + "/journal/run1/"),
            std::string::npos)
      << step.error().message;
  auto end = writer_->append({{"event", "step-end"}, {"state", "not-sent"}});
  EXPECT_TRUE(end.ok()) << "a record that may wait failed with etcd";
  EXPECT_EQ(writer_->mirror_state().value("records_missing", 0), 2) << writer_->mirror_state();
  pause(false);

  auto next = writer_->append({{"event", "step-start"}}, Durability::everywhere);
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(stored(), lines_of(dir_.path() + "/journal.jsonl"));
  EXPECT_EQ(writer_->mirror_state().value("records_missing", -1), 0) << writer_->mirror_state();
}

TEST_F(JournalMirrorInEtcd, AJournalContinuedOnAnotherControllerIsNotOverwrittenFromHere) {
  // Given etcd holding five records of run1 and this journal only two, then attaching is
  // refused naming both counts, and etcd's records stay as they were.
  {
    auto store = client();
    coordination::SharedJournal journal(store, kPrefix);
    std::vector<std::pair<std::uint64_t, std::string>> five;
    for (std::uint64_t s = 1; s <= 5; ++s)
      five.emplace_back(s, "{\"seq\":" + std::to_string(s) + "}");
    ASSERT_TRUE(journal.put_records(five, "run1"));
  }
  ASSERT_TRUE(writer_->append({{"event", "run-start"}}).ok());
  ASSERT_TRUE(writer_->append({{"event", "gate-end"}}).ok());
  auto etcd_copy = mirror();
  auto attached = writer_->attach_mirror(etcd_copy.get(), 5);
  ASSERT_FALSE(attached.ok());
  EXPECT_NE(attached.error().message.find("holds 5 records of this run"), std::string::npos)
      << attached.error().message;
  EXPECT_NE(attached.error().message.find("only 2"), std::string::npos);
  auto records = stored();
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records.front(), "{\"seq\":1}");
}

}  // namespace
}  // namespace fabgate::pipeline
