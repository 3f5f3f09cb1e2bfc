#include "gates/pipeline/safety/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <tuple>

#include "adapters/core/sha256.h"
#include "adapters/core/time.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::pipeline {
namespace {

constexpr const char* kDigestField = "sha256";
constexpr const char* kSequenceField = "seq";

std::string errno_text() {
  return std::strerror(errno);
}

// The test-only fault hook, read once: the process dies right after this record is durable.
std::optional<std::uint64_t> kill_after_record() {
  static const std::optional<std::uint64_t> value = []() -> std::optional<std::uint64_t> {
    const char* text = std::getenv(kFaultKillAfterJournal);
    if (!text || !*text) return std::nullopt;
    char* end = nullptr;
    unsigned long long n = std::strtoull(text, &end, 10);
    if (*end != '\0' || n == 0) return std::nullopt;
    return static_cast<std::uint64_t>(n);
  }();
  return value;
}

// Redacts every string value (never the keys, which fabgate chooses), so a secret in a command
// or a reason cannot reach the file and the JSON around it stays intact.
void redact_strings(nlohmann::json& value, const Redactor& redactor) {
  if (value.is_string()) {
    value = redactor.redact(value.get_ref<const std::string&>());
  } else if (value.is_structured()) {
    for (auto& item : value) redact_strings(item, redactor);
  }
}

Status write_all(int fd, const std::string& data, const std::filesystem::path& path) {
  std::size_t written = 0;
  while (written < data.size()) {
    ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::internal("journal: write " + path.string() + ": " + errno_text());
    }
    written += static_cast<std::size_t>(n);
  }
  return Ok{};
}

// Why one line is not an intact record with the expected sequence number; empty when it is.
struct LineProblem {
  std::string why;
};

std::optional<LineProblem> check_line(const std::string& text, std::uint64_t expected_sequence,
                                      nlohmann::json& parsed) {
  parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) return LineProblem{"not JSON"};
  if (!parsed.is_object()) return LineProblem{"not a JSON object"};
  if (!parsed.contains(kDigestField) || !parsed[kDigestField].is_string())
    return LineProblem{"no sha256 field"};
  if (sha256_hex(canonical_record(parsed)) != parsed[kDigestField].get<std::string>())
    return LineProblem{"checksum mismatch"};
  if (!parsed.contains(kSequenceField) || !parsed[kSequenceField].is_number_unsigned())
    return LineProblem{"no sequence number"};
  auto sequence = parsed[kSequenceField].get<std::uint64_t>();
  if (sequence != expected_sequence)
    return LineProblem{"sequence number " + std::to_string(sequence) + " where " +
                       std::to_string(expected_sequence) +
                       " was due (records missing or "
                       "reordered)"};
  return std::nullopt;
}

}  // namespace

std::string canonical_record(const nlohmann::json& record) {
  nlohmann::json copy = record;
  if (copy.is_object()) copy.erase(kDigestField);
  return copy.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string TornRecord::describe(const std::string& file_name) const {
  return file_name + ":" + std::to_string(line) +
         ": torn last record (crash while writing: " + why + "); ignored";
}

const JournalRecord* Journal::first(const std::string& event) const {
  for (const auto& record : records)
    if (record.event() == event) return &record;
  return nullptr;
}

const JournalRecord* Journal::last(const std::string& event) const {
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->event() == event) return &*it;
  return nullptr;
}

JournalWriter::JournalWriter(std::filesystem::path path, Redactor redactor,
                             std::uint64_t last_sequence)
    : path_(std::move(path)), redactor_(std::move(redactor)), last_sequence_(last_sequence) {}

Result<std::unique_ptr<JournalWriter>> JournalWriter::create(const std::filesystem::path& path,
                                                             Redactor redactor) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec))
    return Error::internal("journal: " + path.string() + " already exists");
  auto created = write_file_atomically(path, "");
  if (!created.ok()) return std::move(created).error();
  return std::unique_ptr<JournalWriter>(new JournalWriter(path, std::move(redactor), 0));
}

Result<std::unique_ptr<JournalWriter>> JournalWriter::resume(const std::filesystem::path& path,
                                                             Redactor redactor) {
  auto journal = read_journal(path);
  if (!journal.ok()) return std::move(journal).error();
  if (journal->torn) {
    // Cut the torn bytes so the next record starts on its own line; the reader reported them.
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Error::internal("journal: open " + path.string() + ": " + errno_text());
    bool cut = ::ftruncate(fd, static_cast<off_t>(journal->torn->offset)) == 0 && ::fsync(fd) == 0;
    std::string why = cut ? "" : errno_text();
    ::close(fd);
    if (!cut)
      return Error::internal("journal: cut the torn last record of " + path.string() + ": " + why);
  }
  std::uint64_t last = journal->records.empty() ? 0 : journal->records.back().sequence;
  return std::unique_ptr<JournalWriter>(new JournalWriter(path, std::move(redactor), last));
}

std::uint64_t JournalWriter::last_sequence() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_sequence_;
}

Result<std::uint64_t> JournalWriter::append(nlohmann::json record, Durability durability) {
  if (!record.is_object()) return Error::internal("journal: a record must be a JSON object");
  redact_strings(record, redactor_);
  std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t sequence = last_sequence_ + 1;
  record.erase(kDigestField);
  record[kSequenceField] = sequence;
  std::string canonical = canonical_record(record);
  std::string line = canonical;
  line.insert(line.size() - 1,
              std::string(",\"") + kDigestField + "\":\"" + sha256_hex(canonical) + "\"");
  line += '\n';

  int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return Error::internal("journal: open " + path_.string() + ": " + errno_text());
  struct stat before {};
  if (::fstat(fd, &before) != 0) {
    ::close(fd);
    return Error::internal("journal: stat " + path_.string() + ": " + errno_text());
  }
  auto written = write_all(fd, line, path_);
  if (written.ok() && ::fsync(fd) != 0)
    written = Error::internal("journal: fsync " + path_.string() + ": " + errno_text());
  if (!written.ok()) {
    // Leave no half line behind for the next record to be glued to.
    (void)::ftruncate(fd, before.st_size);
    ::close(fd);
    return std::move(written).error();
  }
  ::close(fd);
  last_sequence_ = sequence;
  Status mirrored = Ok{};
  if (mirror_) {
    line.pop_back();  // the newline is the file's, not the record's
    pending_.emplace_back(sequence, std::move(line));
    // After a failure, records that may wait do not each pay the store's timeout again: they
    // are sent with the next record that must reach it, or once kMirrorRetry has passed.
    if (durability == Durability::everywhere || mirror_problem_.empty() ||
        std::chrono::steady_clock::now() >= mirror_retry_at_)
      mirrored = flush_mirror_locked();
    else
      mirrored = Error::internal(mirror_problem_);
  }
  // After the mirror, so a test's kill leaves the record wherever a real crash right after
  // the append would have left it.
  if (auto kill_at = kill_after_record(); kill_at && *kill_at == sequence) ::raise(SIGKILL);
  if (!mirrored.ok() && durability == Durability::everywhere)
    return Error::internal("journal: record " + std::to_string(sequence) +
                           " is on disk but not in " + mirror_->where() + ": " +
                           mirrored.error().message);
  return sequence;
}

Status JournalWriter::flush_mirror_locked() {
  if (!mirror_ || pending_.empty()) return Ok{};
  auto stored = mirror_->store(pending_);
  if (!stored.ok()) {
    mirror_retry_at_ = std::chrono::steady_clock::now() + kMirrorRetry;
    ++mirror_failures_;
    mirror_problem_ = stored.error().message;
    return stored;
  }
  mirrored_up_to_ = pending_.back().first;
  pending_.clear();
  mirror_problem_.clear();
  return Ok{};
}

Status JournalWriter::attach_mirror(JournalMirror* mirror, std::uint64_t stored_up_to) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stored_up_to > last_sequence_)
    return Error::invalid_input(
        "journal: " + mirror->where() + " holds " + std::to_string(stored_up_to) +
        " records of this run, " + path_.string() + " only " + std::to_string(last_sequence_) +
        ": the run was continued on another controller; recover it from the store there");
  // The lines the mirror lacks are read back from the file: this process wrote them, whole
  // (a torn last line was cut when the journal was resumed).
  std::ifstream in(path_, std::ios::binary);
  if (!in) return Error::internal("journal: cannot read back " + path_.string());
  pending_.clear();
  std::string line;
  std::uint64_t sequence = 0;
  while (std::getline(in, line)) {
    if (++sequence > stored_up_to) pending_.emplace_back(sequence, line);
  }
  if (sequence != last_sequence_)
    return Error::internal("journal: " + path_.string() + " has " + std::to_string(sequence) +
                           " lines where " + std::to_string(last_sequence_) + " were written");
  mirror_ = mirror;
  mirrored_up_to_ = stored_up_to;
  return flush_mirror_locked();
}

void JournalWriter::detach_mirror() {
  std::lock_guard<std::mutex> lock(mutex_);
  mirror_ = nullptr;
  pending_.clear();
}

nlohmann::json JournalWriter::mirror_state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!mirror_ && mirrored_up_to_ == 0 && mirror_failures_ == 0) return nullptr;
  nlohmann::json state = {{"where", mirror_ ? mirror_->where() : ""},
                          {"records_stored", mirrored_up_to_},
                          {"records_missing", last_sequence_ - mirrored_up_to_},
                          {"failures", mirror_failures_}};
  if (!mirror_problem_.empty()) state["last_problem"] = mirror_problem_;
  return state;
}

Result<Journal> read_journal(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error::invalid_input("journal: cannot read " + path.string(),
                                {"is this the evidence folder of a fabgate run?"});
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string name = path.filename().string();

  Journal journal;
  journal.path = path;
  std::size_t offset = 0;
  std::size_t line_number = 0;
  while (offset < content.size()) {
    ++line_number;
    auto newline = content.find('\n', offset);
    bool has_newline = newline != std::string::npos;
    std::size_t end = has_newline ? newline : content.size();
    bool last_line = !has_newline || newline + 1 == content.size();
    std::string text = content.substr(offset, end - offset);

    nlohmann::json parsed;
    auto problem = check_line(text, journal.records.size() + 1, parsed);
    // A line without its newline was cut short, whatever else is wrong with it: the writer
    // returns (and the announced action starts) only after the whole line is durable. The
    // newline is the last byte of the one write() that carries the record, so a line that has
    // it was written whole: damage to such a line is corruption, never a crash, even last.
    if (!has_newline) problem = LineProblem{problem ? "no newline, " + problem->why : "no newline"};
    if (problem) {
      if (last_line && !has_newline) {
        journal.torn = TornRecord{line_number, offset, content.size() - offset, problem->why};
        break;
      }
      return Error::invalid_input(
          "journal: " + name + ":" + std::to_string(line_number) + ": " + problem->why +
              (last_line ? " in the last record" : " in the middle of the journal") +
              "; refusing to guess what the run did",
          {"journal: " + path.string(),
           "only a torn last record can come from a crash; this journal was altered or its "
           "storage is failing: check the devices by hand"});
    }
    journal.records.push_back(
        JournalRecord{parsed[kSequenceField].get<std::uint64_t>(), line_number, std::move(parsed)});
    offset = end + 1;
  }
  return journal;
}

nlohmann::json RunStart::to_json() const {
  return {{"event", "run-start"},
          {"repo", repo},
          {"ref", ref},
          {"commit", commit},
          {"intent_root", intent_root},
          {"change", change},
          {"mode", mode},
          {"operator", operator_name},
          {"evidence_root", evidence_root},
          {"run_id", run_id},
          {"parallelism", parallelism}};
}

Result<CrashedRun> read_crashed_run(const Journal& journal) {
  const std::string name = journal.path.filename().string();
  if (journal.records.empty() || journal.records.front().event() != "run-start")
    return Error::invalid_input("journal: " + name + ": no run-start record on line 1",
                                {"journal: " + journal.path.string()});
  const auto& first = journal.records.front().body;
  CrashedRun run;
  auto text = [&](const char* key, std::string& into) {
    if (first.contains(key) && first[key].is_string()) into = first[key].get<std::string>();
  };
  text("repo", run.start.repo);
  text("ref", run.start.ref);
  text("commit", run.start.commit);
  text("intent_root", run.start.intent_root);
  text("change", run.start.change);
  text("mode", run.start.mode);
  text("operator", run.start.operator_name);
  text("evidence_root", run.start.evidence_root);
  text("run_id", run.start.run_id);
  if (first.contains("parallelism") && first["parallelism"].is_number_integer())
    run.start.parallelism = std::max(1, first["parallelism"].get<int>());
  std::vector<std::string> missing;
  for (const auto* field : {&run.start.repo, &run.start.commit, &run.start.change})
    if (field->empty())
      missing.push_back(field == &run.start.repo     ? "repo"
                        : field == &run.start.commit ? "commit"
                                                     : "change");
  if (!missing.empty())
    return Error::invalid_input("journal: " + name + ":1: run-start lacks " + missing.front() +
                                    " (written by a fabgate without recover support?)",
                                {"journal: " + journal.path.string()});

  run.last_sequence = journal.records.back().sequence;
  run.last_event = journal.records.back().event();
  run.torn = journal.torn;
  // Steps by (phase, device, index), in the order they started.
  std::map<std::tuple<std::string, std::string, int>, std::size_t> open_steps;
  std::map<std::tuple<std::string, std::string, int>, CrashedRun::OpenCommand> open_commands;
  std::vector<std::string> started;  // devices in the order of their first start
  std::vector<std::string> rollback_started;
  auto note = [](std::vector<std::string>& list, const std::string& device) {
    if (std::find(list.begin(), list.end(), device) == list.end()) list.push_back(device);
  };
  for (const auto& record : journal.records) {
    const auto& body = record.body;
    std::string event = record.event();
    if (event == "run-end" && body.contains("exit_code") && body["exit_code"].is_number_integer())
      run.ended_with = body["exit_code"].get<int>();
    if (event == "recover-start") run.recovered_before = true;
    // Only a coordinated run locks in etcd or claims there, and from then on it shares its
    // journal: every step it sent was in etcd before it was sent.
    if (event == "fleet-lock" || event == "budget-claim") run.shared_in_store = true;
    if (event == "budget-release") run.released_in_store = true;
    if ((event == "silence-created" || event == "silence-expired") && body.contains("silence") &&
        body["silence"].is_string()) {
      auto id = body["silence"].get<std::string>();
      auto& open = run.open_silences;
      if (event == "silence-created")
        open.push_back(id);
      else
        open.erase(std::remove(open.begin(), open.end(), id), open.end());
    }
    bool start = event == "step-start" || event == "rollback-start";
    bool end = event == "step-end" || event == "rollback-end";
    if (!start && !end) continue;
    std::string phase = event.substr(0, event.find('-'));
    std::string device = body.value("device", "");
    int index =
        body.contains("index") && body["index"].is_number_integer() ? body["index"].get<int>() : 0;
    if (device.empty()) continue;
    auto key = std::make_tuple(phase, device, index);
    if (start) {
      CrashedRun::OpenCommand command{device, phase, index, {}, Duration{0}};
      if (auto at = parse_iso8601(body.value("at", ""))) command.started = *at;
      if (body.contains("timeout_ms") && body["timeout_ms"].is_number_integer())
        command.deadline = Duration{std::max<std::int64_t>(0, body["timeout_ms"].get<std::int64_t>())};
      open_commands[key] = command;
    } else {
      open_commands.erase(key);
    }
    if (start) {
      note(started, device);
      if (phase != "step") {
        note(rollback_started, device);
        continue;  // recover runs its own rollback; the run's is context only
      }
      StepRun step;
      step.device = device;
      step.index = index;
      step.phase = phase;
      step.command = body.value("command", "");
      step.state = StepState::in_flight;
      step.reason = "journaled as started, never as ended: the controller died";
      if (auto at = parse_iso8601(body.value("at", ""))) step.started = *at;
      open_steps[key] = run.steps.size();
      run.steps.push_back(std::move(step));
    } else if (auto it = open_steps.find(key); it != open_steps.end()) {
      auto& step = run.steps[it->second];
      std::string state = body.value("state", "");
      // A state this reader does not know stays in-flight: may have applied.
      for (auto candidate : {StepState::not_sent, StepState::succeeded, StepState::failed,
                             StepState::timed_out, StepState::outcome_unknown})
        if (state == to_string(candidate)) step.state = candidate;
      if (body.contains("exit_status") && body["exit_status"].is_number_integer())
        step.exit_status = body["exit_status"].get<int>();
      if (auto at = parse_iso8601(body.value("at", ""))) step.duration = *at - step.started;
      step.reason = step.state == StepState::in_flight ? step.reason : "";
      if (step.state == StepState::outcome_unknown && body.contains("reason") &&
          body["reason"].is_string())
        step.reason = body["reason"].get<std::string>();
      open_steps.erase(it);
    }
  }
  for (auto& [key, command] : open_commands) run.open_commands.push_back(std::move(command));
  // A device is undone when a step there may have applied (anything but a proven not-sent) or
  // when its rollback had begun (a half-finished rollback is finished).
  for (const auto& device : started) {
    bool applied = std::any_of(run.steps.begin(), run.steps.end(), [&](const StepRun& step) {
      return step.device == device && step.may_have_applied();
    });
    bool rolling_back = std::find(rollback_started.begin(), rollback_started.end(), device) !=
                        rollback_started.end();
    if (applied || rolling_back) run.touched.push_back(device);
  }
  return run;
}

}  // namespace fabgate::pipeline
