// The write-ahead journal: what is written is read back exactly, a crash that cut the last
// record is reported and ignored, and damage anywhere else is refused rather than misread.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "adapters/core/sha256.h"
#include "adapters/core/time.h"
#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/safety/journal.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

class JournalTest : public ::testing::Test {
 protected:
  std::filesystem::path path() const { return dir_.file("journal.jsonl"); }

  // A journal of `n` records written by the real writer: a run-start and steps.
  void write_records(int n) {
    auto writer = JournalWriter::create(path(), Redactor{});
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    for (int i = 1; i <= n; ++i) {
      nlohmann::json record =
          i == 1 ? run_start().to_json()
                 : nlohmann::json{{"event", "gate-start"}, {"gate", "g" + std::to_string(i)}};
      auto appended = (*writer)->append(record);
      ASSERT_TRUE(appended.ok()) << appended.error().message;
      EXPECT_EQ(*appended, static_cast<std::uint64_t>(i));
    }
  }
  static RunStart run_start() {
    RunStart start;
    start.repo = "/srv/intent";
    start.ref = "HEAD";
    start.commit = std::string(40, 'a');
    start.change = "c";
    start.mode = "apply";
    start.run_id = "0123abcd";
    return start;
  }

  std::string content() const { return testing::read_file(path().string()); }
  void set_content(const std::string& text) { testing::write_file(path().string(), text); }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::istringstream in(content());
    std::string line;
    while (std::getline(in, line)) out.push_back(line);
    return out;
  }
  void set_lines(const std::vector<std::string>& list, bool final_newline = true) {
    std::string text;
    for (std::size_t i = 0; i < list.size(); ++i)
      text += list[i] + (i + 1 < list.size() || final_newline ? "\n" : "");
    set_content(text);
  }

  testing::TempDir dir_{"fabgate-journal"};
};

TEST_F(JournalTest, RecordsReadBackInOrderWithSequenceAndChecksum) {
  // Given four appended records, then they read back in order, numbered 1..4, each line
  // carrying the sha256 of its canonical JSON without the digest field, and nothing is torn.
  write_records(4);
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  ASSERT_EQ(journal->records.size(), 4u);
  EXPECT_FALSE(journal->torn);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(journal->records[i].sequence, i + 1);
    EXPECT_EQ(journal->records[i].line, i + 1);
  }
  EXPECT_EQ(journal->records[0].event(), "run-start");
  EXPECT_EQ(journal->records[3].body["gate"], "g4");
  auto first = nlohmann::json::parse(lines()[0]);
  auto digest = first["sha256"].get<std::string>();
  first.erase("sha256");
  EXPECT_EQ(digest, sha256_hex(first.dump()));
}

TEST_F(JournalTest, SecretsAreRedactedValueByValueAndTheRecordStaysValid) {
  // Given a step whose command ends in a BGP password (the redactor's pattern would swallow the
  // JSON after it if applied to the whole line), then the file holds no secret and the record
  // still reads back intact with its other fields.
  auto writer = JournalWriter::create(path(), Redactor{});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)
                  ->append({{"event", "step-start"},
                            {"command", "vtysh -c 'neighbor 10.0.0.1 password CanaryPw9'"},
                            {"device", "leaf1"}})
                  .ok());
  EXPECT_EQ(content().find("CanaryPw9"), std::string::npos) << content();
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  ASSERT_EQ(journal->records.size(), 1u);
  EXPECT_EQ(journal->records[0].body["device"], "leaf1");
}

TEST_F(JournalTest, TruncatedLastLineIsATornRecordAndIgnored) {
  // Given a crash that cut the third record in half, then two records are read and the third
  // is reported as torn with its line, never parsed into something else.
  write_records(3);
  std::string text = content();
  auto third = text.find('\n', text.find('\n') + 1) + 1;
  set_content(text.substr(0, third + (text.size() - third) / 2));
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  EXPECT_EQ(journal->records.size(), 2u);
  ASSERT_TRUE(journal->torn);
  EXPECT_EQ(journal->torn->line, 3u);
  EXPECT_EQ(journal->torn->offset, third);
  EXPECT_EQ(journal->torn->describe("journal.jsonl"),
            "journal.jsonl:3: torn last record (crash while writing: no newline, not JSON); "
            "ignored");
}

TEST_F(JournalTest, WholeLastRecordWithoutItsNewlineIsTorn) {
  // Given a last record whose bytes are complete but whose newline never reached the disk,
  // then it is torn: its append never returned, so the action it announced never started.
  write_records(3);
  std::string text = content();
  set_content(text.substr(0, text.size() - 1));
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  EXPECT_EQ(journal->records.size(), 2u);
  ASSERT_TRUE(journal->torn);
  EXPECT_EQ(journal->torn->why, "no newline");
}

TEST_F(JournalTest, BadChecksumOnACompleteLastRecordIsCorruptionAndRefused) {
  // Given a last record that has its newline (so it was written whole) but one character of
  // a field changed, then it is not a torn write: reading refuses, naming the file, the line and
  // the checksum, rather than silently dropping a record whose action may have run.
  write_records(3);
  auto list = lines();
  auto at = list[2].find("g3");
  ASSERT_NE(at, std::string::npos);
  list[2][at + 1] = '9';
  set_lines(list);
  auto journal = read_journal(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(journal.error().message.find("journal.jsonl:3: checksum mismatch in the last record"),
            std::string::npos)
      << journal.error().message;
  // And a writer cannot resume after it (recover refuses too).
  EXPECT_FALSE(JournalWriter::resume(path(), Redactor{}).ok());
}

TEST_F(JournalTest, CompleteLastLineThatIsNotJsonIsCorruption) {
  // Given a whole last line of garbage, newline included, then it is refused like any other
  // damage: a crash leaves a line without its newline, never a whole wrong one.
  write_records(2);
  auto list = lines();
  list.push_back("\x01\x02 not a record");
  set_lines(list);
  auto journal = read_journal(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_NE(journal.error().message.find("journal.jsonl:3: not JSON in the last record"),
            std::string::npos)
      << journal.error().message;
}

TEST_F(JournalTest, BadChecksumOnALastLineWithoutItsNewlineIsStillTorn) {
  // Given a last record cut before its newline whose surviving bytes also fail the checksum,
  // then it is torn (ignored), with both reasons named.
  write_records(3);
  auto list = lines();
  list[2][list[2].find("g3") + 1] = '9';
  set_lines(list, /*final_newline=*/false);
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  EXPECT_EQ(journal->records.size(), 2u);
  ASSERT_TRUE(journal->torn);
  EXPECT_EQ(journal->torn->why, "no newline, checksum mismatch");
}

TEST_F(JournalTest, CorruptRecordInTheMiddleIsRefused) {
  // Given record 2 of 4 altered, then reading refuses with invalid input naming line 2: a
  // crash cannot damage a record that others follow, so the journal cannot be trusted.
  write_records(4);
  auto list = lines();
  auto at = list[1].find("g2");
  list[1][at + 1] = '7';
  set_lines(list);
  auto journal = read_journal(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(journal.error().message.find(
                "journal.jsonl:2: checksum mismatch in the middle of the journal"),
            std::string::npos)
      << journal.error().message;
}

TEST_F(JournalTest, UnparsableLineInTheMiddleIsRefused) {
  write_records(3);
  auto list = lines();
  list[1] = list[1].substr(0, list[1].size() / 2);
  set_lines(list);
  auto journal = read_journal(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_NE(journal.error().message.find("journal.jsonl:2: not JSON"), std::string::npos)
      << journal.error().message;
}

TEST_F(JournalTest, SequenceGapIsRefusedEvenAtTheEnd) {
  // Given a record removed from the middle (every remaining line intact), then the gap is
  // found at the line where it shows; and a well-formed last record with the wrong number is
  // no crash either.
  write_records(4);
  auto list = lines();
  list.erase(list.begin() + 1);
  set_lines(list);
  auto journal = read_journal(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_NE(journal.error().message.find("journal.jsonl:2: sequence number 3 where 2 was due"),
            std::string::npos)
      << journal.error().message;

  std::filesystem::remove(path());
  write_records(4);
  list = lines();
  list.erase(list.begin() + 2);  // drop record 3: record 4 is now last, out of sequence
  set_lines(list);
  journal = read_journal(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_NE(journal.error().message.find("journal.jsonl:3: sequence number 4 where 3 was due"),
            std::string::npos)
      << journal.error().message;
}

TEST_F(JournalTest, ResumeCutsTheTornTailAndContinuesTheSequence) {
  // Given a torn last record, then a resumed writer removes it and its next record is number 3
  // on a line of its own; the journal then reads back whole.
  write_records(3);
  std::string text = content();
  set_content(text.substr(0, text.size() - 10));
  auto writer = JournalWriter::resume(path(), Redactor{});
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  auto appended = (*writer)->append({{"event", "recover-start"}});
  ASSERT_TRUE(appended.ok());
  EXPECT_EQ(*appended, 3u);
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  EXPECT_FALSE(journal->torn);
  ASSERT_EQ(journal->records.size(), 3u);
  EXPECT_EQ(journal->records[2].event(), "recover-start");
}

TEST_F(JournalTest, JournalFileIsCreatedOnceAndNeverOverwritten) {
  write_records(2);
  auto again = JournalWriter::create(path(), Redactor{});
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(lines().size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(path().string() + ".tmp"));
}

// The child side of the fault-hook test: the hook's variable is read once per process, so it
// runs in a fresh process (this test binary, re-executed) and does nothing otherwise.
constexpr const char* kChildJournal = "FABGATE_JOURNAL_TEST_CHILD_JOURNAL";

TEST(JournalFaultChild, AppendsFiveRecords) {
  const char* target = std::getenv(kChildJournal);
  if (!target)
    GTEST_SKIP() << "runs only as the child of FaultHookKillsTheProcessRightAfterRecordN";
  auto writer = JournalWriter::create(target, Redactor{});
  ASSERT_TRUE(writer.ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*writer)->append({{"event", "e"}, {"i", i}}).ok());
}

TEST_F(JournalTest, FaultHookKillsTheProcessRightAfterRecordN) {
  // Given FABGATE_FAULT_KILL_AFTER_JOURNAL=2 in a process about to append five records, then
  // it dies of SIGKILL and the journal holds exactly records 1 and 2, both whole.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv(kFaultKillAfterJournal, "2", 1);
    ::setenv(kChildJournal, path().c_str(), 1);
    ::execl("/proc/self/exe", "journal_test", "--gtest_filter=JournalFaultChild.AppendsFiveRecords",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  EXPECT_EQ(journal->records.size(), 2u);
  EXPECT_FALSE(journal->torn);
}

TEST_F(JournalTest, CrashedRunListsWhatMayHaveBeenAppliedAndWhere) {
  // Given a run that finished a step on d1, found d2 unreachable (not sent), and died while a
  // step on d3 was in flight, then recover undoes d1 and d3 (first touched first), not d2, and
  // knows where the run came from.
  auto writer = JournalWriter::create(path(), Redactor{});
  ASSERT_TRUE(writer.ok());
  auto& w = **writer;
  ASSERT_TRUE(w.append(run_start().to_json()).ok());
  ASSERT_TRUE(w.append({{"event", "step-start"}, {"device", "d1"}, {"index", 1}}).ok());
  ASSERT_TRUE(
      w.append({{"event", "step-end"}, {"device", "d1"}, {"index", 1}, {"state", "succeeded"}})
          .ok());
  ASSERT_TRUE(w.append({{"event", "step-start"}, {"device", "d2"}, {"index", 1}}).ok());
  ASSERT_TRUE(
      w.append({{"event", "step-end"}, {"device", "d2"}, {"index", 1}, {"state", "not-sent"}})
          .ok());
  ASSERT_TRUE(w.append({{"event", "step-start"}, {"device", "d3"}, {"index", 1}}).ok());
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok());
  auto crashed = read_crashed_run(journal.value());
  ASSERT_TRUE(crashed.ok()) << crashed.error().message;
  EXPECT_EQ(crashed->touched, (std::vector<std::string>{"d1", "d3"}));
  EXPECT_EQ(crashed->start.repo, "/srv/intent");
  EXPECT_EQ(crashed->start.commit, std::string(40, 'a'));
  EXPECT_EQ(crashed->last_sequence, 6u);
  EXPECT_EQ(crashed->last_event, "step-start");
  EXPECT_FALSE(crashed->ended_with);
  ASSERT_EQ(crashed->steps.size(), 3u);
  EXPECT_EQ(crashed->steps[0].state, StepState::succeeded);
  EXPECT_EQ(crashed->steps[1].state, StepState::not_sent);
  EXPECT_EQ(crashed->steps[2].state, StepState::in_flight);
}

TEST_F(JournalTest, CommandsStillOpenKeepTheirJournaledDeadlinesForRecoverToWaitOut) {
  // Given a run that finished a step on d1, died while a 60 s step on d2 and a 180 s rollback
  // step on d3 had started and not ended, then recover sees exactly those two commands open,
  // each with its own deadline and start, so it can wait until they can no longer be running.
  auto writer = JournalWriter::create(path(), Redactor{});
  ASSERT_TRUE(writer.ok());
  auto& w = **writer;
  ASSERT_TRUE(w.append(run_start().to_json()).ok());
  ASSERT_TRUE(w.append({{"event", "step-start"}, {"device", "d1"}, {"index", 0},
                        {"timeout_ms", 30000}, {"at", "2026-12-06T09:00:00.000Z"}})
                  .ok());
  ASSERT_TRUE(
      w.append({{"event", "step-end"}, {"device", "d1"}, {"index", 0}, {"state", "succeeded"}})
          .ok());
  ASSERT_TRUE(w.append({{"event", "step-start"}, {"device", "d2"}, {"index", 1},
                        {"timeout_ms", 60000}, {"at", "2026-12-06T09:00:01.000Z"}})
                  .ok());
  ASSERT_TRUE(w.append({{"event", "rollback-start"}, {"device", "d3"}, {"index", 0},
                        {"timeout_ms", 180000}, {"at", "2026-12-06T09:00:02.000Z"}})
                  .ok());
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok());
  auto crashed = read_crashed_run(journal.value());
  ASSERT_TRUE(crashed.ok()) << crashed.error().message;
  ASSERT_EQ(crashed->open_commands.size(), 2u);
  std::map<std::string, CrashedRun::OpenCommand> by_device;
  for (const auto& command : crashed->open_commands) by_device[command.device] = command;
  EXPECT_EQ(by_device["d2"].phase, "step");
  EXPECT_EQ(by_device["d2"].deadline, Duration{60000});
  EXPECT_EQ(format_utc(by_device["d2"].started), "2026-12-06T09:00:01.000Z");
  EXPECT_EQ(by_device["d3"].phase, "rollback");
  EXPECT_EQ(by_device["d3"].deadline, Duration{180000});
}

TEST_F(JournalTest, AStepWhoseOutcomeIsUnknownIsUndoneByRecoverAndKeepsItsReason) {
  // Given a run whose step on d1 was sent and then lost its session (step-end outcome-unknown),
  // then recover undoes d1 as applied and its execution.json can say why.
  auto writer = JournalWriter::create(path(), Redactor{});
  ASSERT_TRUE(writer.ok());
  auto& w = **writer;
  ASSERT_TRUE(w.append(run_start().to_json()).ok());
  ASSERT_TRUE(w.append({{"event", "step-start"}, {"device", "d1"}, {"index", 1}}).ok());
  const std::string why =
      "d1: ifreload -a: unreachable: connection lost; the session dropped after the command was "
      "sent; treated as applied";
  ASSERT_TRUE(w.append({{"event", "step-end"},
                        {"device", "d1"},
                        {"index", 1},
                        {"state", "outcome-unknown"},
                        {"reason", why}})
                  .ok());
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok());
  auto crashed = read_crashed_run(journal.value());
  ASSERT_TRUE(crashed.ok()) << crashed.error().message;
  EXPECT_EQ(crashed->touched, (std::vector<std::string>{"d1"}));
  ASSERT_EQ(crashed->steps.size(), 1u);
  EXPECT_EQ(crashed->steps[0].state, StepState::outcome_unknown);
  EXPECT_EQ(crashed->steps[0].reason, why);
}

TEST_F(JournalTest, JournalWithoutRunStartIsInvalidInput) {
  auto writer = JournalWriter::create(path(), Redactor{});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->append({{"event", "gate-start"}}).ok());
  auto journal = read_journal(path());
  ASSERT_TRUE(journal.ok());
  auto crashed = read_crashed_run(journal.value());
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error().exit_code, ExitCode::invalid_input);
}

TEST_F(JournalTest, EvidenceBundleCreatesItsJournalAndRefusesToReopenASealedBundle) {
  // Given a bundle, then journal.jsonl exists from the start and its records are checksummed;
  // once finished (manifest written), reopening it for recover is refused.
  auto bundle = EvidenceBundle::create(dir_.path(), "c", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  auto& evidence = *bundle.value();
  EXPECT_TRUE(std::filesystem::exists(evidence.dir() / "journal.jsonl"));
  ASSERT_TRUE(evidence.write_ahead({{"event", "run-start"}}).ok());
  evidence.append_journal({{"event", "run-end"}});
  auto journal = read_journal(evidence.dir() / "journal.jsonl");
  ASSERT_TRUE(journal.ok());
  EXPECT_EQ(journal->records.size(), 2u);
  auto reopened = EvidenceBundle::reopen(evidence.dir(), "run1", Redactor{});
  EXPECT_TRUE(reopened.ok());
  ASSERT_TRUE(evidence.finish(nlohmann::json::object()).ok());
  auto sealed = EvidenceBundle::reopen(evidence.dir(), "run1", Redactor{});
  ASSERT_FALSE(sealed.ok());
  EXPECT_NE(sealed.error().message.find("sealed"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::pipeline
