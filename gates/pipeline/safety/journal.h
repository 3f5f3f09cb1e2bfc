#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/redact.h"
#include "adapters/core/result.h"
#include "gates/pipeline/families/execute.h"

namespace fabgate::pipeline {

// The write-ahead journal of a run (journal.jsonl in its evidence bundle): what `fabgate
// recover` reads to learn what a dead controller may have done to the devices.
//
// Format: one JSON object per line. Every record carries
//   "seq"    its sequence number, 1, 2, 3... with no gap (the line number, too), and
//   "sha256" the lower-case hex sha256 of the record's canonical JSON without the "sha256"
//            field: nlohmann::json::dump() with no indentation, keys sorted, UTF-8 unescaped,
//            invalid UTF-8 replaced by U+FFFD. The reader re-serialises the parsed record the
//            same way, so any edited byte of a field changes the digest.
// String values are redacted one by one before the digest is taken, so a secret never reaches
// the file and redaction can never break the JSON around it.

// The test-only fault hook: when FABGATE_FAULT_KILL_AFTER_JOURNAL=N is set in the environment
// (read once per process), the process raises SIGKILL on itself right after the record with
// sequence number N is fsynced. It makes every crash point of a run reachable from a test.
inline constexpr const char* kFaultKillAfterJournal = "FABGATE_FAULT_KILL_AFTER_JOURNAL";

// Where a copy of every record goes besides journal.jsonl: the shared journal in the fabric's
// etcd (gates/coordination/shared_journal.h), so that recover works from another controller.
class JournalMirror {
 public:
  virtual ~JournalMirror() = default;
  // Stores these records (sequence number, line without its newline), in order.
  virtual Status store(const std::vector<std::pair<std::uint64_t, std::string>>& records) = 0;
  // "etcd /fabgate/lab/journal/<run>/", for messages.
  virtual std::string where() const = 0;
};

// Whether an append must also have reached the mirror (when one is attached) to count.
enum class Durability {
  local,       // on disk; the mirror catches up on a later append when it fails now
  everywhere,  // on disk and in the mirror: the record of an action that must not start
               // unless any controller could learn of it (a step)
};

// Appends checksummed records; each append is written and fsynced before it returns, so the
// record is on disk before the action it announces starts. Thread-safe: sequence numbers
// follow the order of the lines in the file. With a mirror attached, every record is copied
// there in order after it is on disk; records the mirror could not take wait for the next
// append, which sends them first.
class JournalWriter {
 public:
  // Creates an empty journal at `path` (which must not exist) by writing a temporary file,
  // fsyncing it, renaming it into place and fsyncing the folder.
  static Result<std::unique_ptr<JournalWriter>> create(const std::filesystem::path& path,
                                                       Redactor redactor);
  // Continues an existing journal after its last intact record (recover). A torn last record
  // (see read_journal) is cut off first, so the next record starts on a line of its own.
  static Result<std::unique_ptr<JournalWriter>> resume(const std::filesystem::path& path,
                                                       Redactor redactor);

  // Adds "seq" and "sha256" to `record`, redacts its strings, appends the line and fsyncs,
  // then copies what the mirror lacks. Returns the sequence number given to the record; with
  // Durability::everywhere, an error when the mirror did not take it (the line is on disk
  // then, and the caller must not start the action it announces).
  Result<std::uint64_t> append(nlohmann::json record, Durability durability = Durability::local);

  // Copies every record after `stored_up_to` (what the mirror already holds) to `mirror` and
  // keeps it for later appends; an error when that first copy fails (the mirror stays
  // attached and catches up later). Refused when the mirror holds more than this journal: it
  // was continued elsewhere, and writing here would overwrite records there.
  Status attach_mirror(JournalMirror* mirror, std::uint64_t stored_up_to);
  void detach_mirror();
  // What the mirror holds and lacks, for the evidence (null without a mirror).
  nlohmann::json mirror_state() const;

  const std::filesystem::path& path() const { return path_; }
  std::uint64_t last_sequence() const;

 private:
  JournalWriter(std::filesystem::path path, Redactor redactor, std::uint64_t last_sequence);

  // Sends pending_ to the mirror; the caller holds mutex_.
  Status flush_mirror_locked();

  std::filesystem::path path_;
  Redactor redactor_;
  mutable std::mutex mutex_;
  std::uint64_t last_sequence_;
  // Lines the attached mirror has not taken yet, in order.
  std::vector<std::pair<std::uint64_t, std::string>> pending_;
  JournalMirror* mirror_ = nullptr;
  std::uint64_t mirrored_up_to_ = 0;
  std::string mirror_problem_;  // the last failure to copy, "" after a success
  int mirror_failures_ = 0;
  static constexpr std::chrono::seconds kMirrorRetry{3};
  std::chrono::steady_clock::time_point mirror_retry_at_{};
};

// One intact record as read back.
struct JournalRecord {
  std::uint64_t sequence = 0;
  std::size_t line = 0;  // 1-based line in journal.jsonl
  nlohmann::json body;   // the whole record, "seq" and "sha256" included

  std::string event() const { return body.value("event", ""); }
};

// The last line of a journal that a crash cut short: it lacks its newline (whatever else is
// wrong with it). The action it announced never started (the writer returns only after the
// fsync), so it is reported and ignored. A last line that has its newline was written whole,
// so damage to it is corruption, not a torn record.
struct TornRecord {
  std::size_t line = 0;
  std::uintmax_t offset = 0;  // where the torn bytes start; the intact journal ends here
  std::uintmax_t bytes = 0;
  std::string why;  // "no newline", "no newline, not JSON", "no newline, checksum mismatch"...

  // "journal.jsonl:17: torn last record (crash while writing: no newline); ignored"
  std::string describe(const std::string& file_name) const;
};

struct Journal {
  std::filesystem::path path;
  std::vector<JournalRecord> records;  // intact records, in order
  std::optional<TornRecord> torn;

  // The first/last record with this event, or null.
  const JournalRecord* first(const std::string& event) const;
  const JournalRecord* last(const std::string& event) const;
};

// Reads a journal and proves every record: the digest matches, the sequence has no gap, every
// line but a torn last one is whole. Any other damage, the last line included when it has its
// newline, is invalid input (naming file:line and what is wrong): recover refuses to guess what
// ran from a journal that was altered or corrupted.
Result<Journal> read_journal(const std::filesystem::path& path);

// The canonical form a record's digest is taken over (the record without "sha256").
std::string canonical_record(const nlohmann::json& record);

// ---- what a run's journal says ---------------------------------------------------------------

// The run-start record: everything `fabgate recover` needs to rebuild the run without the
// command line that started it. Host-key trust-on-first-use is deliberately absent: recover
// always checks host keys strictly.
struct RunStart {
  std::string repo;           // absolute path of --repo (a folder inside the work tree)
  std::string ref;            // --ref as given
  std::string commit;         // the intent commit --ref resolved to
  std::string intent_root;    // the intent folder inside the work tree ("" at its top)
  std::string change;         // change id
  std::string mode;           // "apply", "rehearse", "plan"
  std::string operator_name;  // who ran it
  std::string evidence_root;  // absolute evidence root the bundle was created under
  std::string run_id;
  int parallelism = 1;

  nlohmann::json to_json() const;  // the record's fields, "event": "run-start" included
};

// A dead run as its journal tells it: what may have been applied, and where it stopped.
struct CrashedRun {
  RunStart start;
  std::uint64_t last_sequence = 0;   // the last intact record
  std::string last_event;            // its event
  std::optional<TornRecord> torn;    // a torn last record, reported and ignored
  std::optional<int> ended_with;     // run-end's exit code: the run finished its work
  bool recovered_before = false;     // a recover-start exists: an earlier recover died
  bool shared_in_store = false;      // it locked or claimed in etcd: its journal was shared there
  // Its end released what it held in etcd (a budget-release record): nothing of it is left
  // there. A run that ended (run-end) without it could not reach the store at its end.
  bool released_in_store = false;
  std::vector<std::string> touched;  // devices with a step or rollback step started, first first
  std::vector<StepRun> steps;        // every step that was started, as far as the journal says
  // Alertmanager silences the run created and did not expire (silence-created without
  // silence-expired): recover expires them (docs/monitoring.md "Silence lifecycle").
  std::vector<std::string> open_silences;
  // Commands journaled as started and never as ended (the controller died, or was frozen or
  // cut off, while they ran): each may still be running on its device until its own deadline,
  // which recover waits out before it sends anything (docs/coordination.md "Take-over").
  struct OpenCommand {
    std::string device;
    std::string phase;  // "step" or "rollback"
    int index = 0;
    TimePoint started{};  // the controller's wall clock when it journaled the start
    Duration deadline{0};  // its timeout as journaled; 0: not journaled (an older fabgate)
  };
  std::vector<OpenCommand> open_commands;
};

// Reads what recover needs from an intact journal; a journal without a valid first run-start
// record is invalid input.
Result<CrashedRun> read_crashed_run(const Journal& journal);

}  // namespace fabgate::pipeline
