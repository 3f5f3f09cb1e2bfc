#include "gates/pipeline/reporting/evidence.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <random>
#include <utility>

#include "adapters/core/sha256.h"

namespace fabgate::pipeline {
namespace {

constexpr const char* kManifest = "manifest.json";
constexpr const char* kJournal = "journal.jsonl";

std::string errno_text() {
  return std::strerror(errno);
}

Status fsync_path(const std::filesystem::path& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Error::internal("evidence: open " + path.string() + ": " + errno_text());
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Error::internal("evidence: fsync " + path.string() + ": " + errno_text());
  return Ok{};
}

// Creates `dir` and whichever of its parents are missing, fsyncing the folder that holds each
// new one: a name in a folder is durable only once that folder is fsynced, so without this a
// crash could lose a whole new bundle (or its snapshots/ folder) whose files were fsynced.
Status create_directories_durably(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (auto at = dir; !at.empty() && !std::filesystem::exists(at, ec); at = at.parent_path()) {
    missing.push_back(at);
    if (at == at.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0750) != 0 && errno != EEXIST)
      return Error::internal("evidence: create " + it->string() + ": " + errno_text());
    auto parent = it->parent_path().empty() ? std::filesystem::path(".") : it->parent_path();
    if (auto synced = fsync_path(parent, O_RDONLY | O_DIRECTORY); !synced.ok()) return synced;
  }
  return Ok{};
}

// A manifest path fabgate can read inside the bundle: relative, and every part a plain name.
bool safe_relative(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string::npos) return false;
  std::size_t from = 0;
  while (true) {
    auto slash = path.find('/', from);
    std::string part = path.substr(from, slash == std::string::npos ? slash : slash - from);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) return true;
    from = slash + 1;
  }
}

struct Descriptor {
  int fd = -1;
  Descriptor() = default;
  explicit Descriptor(int opened) : fd(opened) {}
  Descriptor(Descriptor&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
  void reset(int opened) {
    if (fd >= 0) ::close(fd);
    fd = opened;
  }
};

// Opens `relative` under `dir` one part at a time, never following a symbolic link (O_NOFOLLOW
// on every part), and only when it is a regular file. On failure `read` says why.
Descriptor open_inside(const std::filesystem::path& dir, const std::string& relative,
                       InsideRead& read) {
  Descriptor none;
  if (!safe_relative(relative)) {
    read.why = "unsafe: an absolute path or one with an empty, '.' or '..' part";
    return none;
  }
  Descriptor at(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (at.fd < 0) {
    read.missing = true;
    read.why = "missing: " + errno_text();
    return none;
  }
  std::size_t from = 0;
  while (true) {
    auto slash = relative.find('/', from);
    const bool last = slash == std::string::npos;
    const std::string part = relative.substr(from, last ? slash : slash - from);
    const std::string so_far = relative.substr(0, last ? relative.size() : slash);
    int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
    int next = ::openat(at.fd, part.c_str(), flags);
    if (next < 0) {
      // O_NOFOLLOW answers ELOOP for a link, or ENOTDIR when O_DIRECTORY was checked first.
      const int failed = errno;
      struct stat link {};
      if ((failed == ELOOP || failed == ENOTDIR) &&
          ::fstatat(at.fd, part.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(link.st_mode)) {
        read.why = "unsafe: " + so_far + " is a symbolic link";
      } else {
        read.missing = true;
        read.why = std::string("missing: ") + std::strerror(failed);
      }
      return none;
    }
    at.reset(next);
    if (last) break;
    from = slash + 1;
  }
  struct stat info {};
  if (::fstat(at.fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    read.why = "unsafe: not a regular file";
    return none;
  }
  Descriptor file(at.fd);
  at.fd = -1;
  return file;
}

// sha256 of `relative` inside `dir` (open_inside's rules), or why not.
// Reads all of `fd` in chunks into `chunk`; false (with `read` saying why) on an I/O error.
bool read_all(int fd, InsideRead& read, const std::function<void(std::string_view)>& chunk) {
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read.missing = true;
      read.why = "missing: " + errno_text();
      return false;
    }
    if (n == 0) return true;
    chunk(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
}

InsideRead hash_inside(const std::filesystem::path& dir, const std::string& relative) {
  InsideRead read;
  auto file = open_inside(dir, relative, read);
  if (file.fd < 0) return read;
  Sha256 hash;
  if (read_all(file.fd, read, [&](std::string_view chunk) { hash.update(chunk); }))
    read.bytes = hash.hex_digest();
  return read;
}

// Fields fabgate reads from a manifest, each with the type it writes (null reads as absent: a
// run whose reports failed has no layer_recovery); a field that is present with another type
// makes the manifest malformed (`fabgate evidence show` would otherwise print
// a value it could not read, or stop). Unknown fields are only covered by the digest.
void check_field_types(const nlohmann::json& manifest, std::vector<std::string>& malformed) {
  using Json = nlohmann::json;
  auto want = [&](const std::string& where, const Json& object, const char* key,
                  bool (Json::*is)() const noexcept, const char* what) {
    if (object.contains(key) && !object[key].is_null() && !(object[key].*is)())
      malformed.push_back(where + key + ": not " + what);
  };
  for (const char* key :
       {"format", "mode", "run_id", "operator", "intent_commit", "intent_root", "outcome",
        "device_state", "first_disproven", "plan_digest", "finished_at", "bundle_sha256"})
    want("", manifest, key, &Json::is_string, "a string");
  for (const char* key : {"exit_code", "detection_to_restore_ms", "restore_held_after_ms",
                          "restore_dwell_ms", "detection_to_rollback_sent_ms",
                          "rollback_sent_to_verified_ms"})
    want("", manifest, key, &Json::is_number_integer, "an integer");
  for (const char* key : {"tool", "digests", "recovery"})
    want("", manifest, key, &Json::is_object, "an object");
  for (const char* key : {"diagnosis", "exceptions_used", "internal_errors", "evidence_not_written",
                          "host_keys_accepted"})
    want("", manifest, key, &Json::is_array, "an array");
  want("", manifest, "ready", &Json::is_boolean, "true or false");
  if (manifest.contains("change") && !manifest["change"].is_object() &&
      !manifest["change"].is_string() && !manifest["change"].is_null())
    malformed.push_back("change: not an object or a string");
  for (const char* key : {"gates", "layer_recovery", "approvals"}) {
    if (!manifest.contains(key) || manifest[key].is_null()) continue;
    const auto& list = manifest[key];
    if (!list.is_array()) {
      malformed.push_back(std::string(key) + ": not an array");
      continue;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string where = std::string(key) + "[" + std::to_string(i) + "].";
      if (!list[i].is_object()) {
        malformed.push_back(where.substr(0, where.size() - 1) + ": not an object");
        continue;
      }
      if (std::string(key) != "gates") continue;
      for (const char* field : {"name", "verdict", "summary", "started_at"})
        want(where, list[i], field, &Json::is_string, "a string");
      want(where, list[i], "duration_ms", &Json::is_number_integer, "an integer");
    }
  }
  if (!manifest.contains("files") || !manifest["files"].is_object()) {
    malformed.push_back("files: not an object (every fabgate manifest has the files map)");
    return;
  }
  for (const auto& [path, digest] : manifest["files"].items())
    if (!digest.is_string()) malformed.push_back("files[\"" + path + "\"]: not a string");
}

std::vector<std::string> files_in(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) out.push_back(it->path().lexically_relative(dir).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  return write_file_atomically(
      path, [content](const std::function<bool(std::string_view)>& sink) { return sink(content); });
}

Status write_file_atomically(
    const std::filesystem::path& path,
    const std::function<bool(const std::function<bool(std::string_view)>&)>& produce) {
  if (auto created = create_directories_durably(path.parent_path()); !created.ok()) return created;
  auto temporary = path;
  temporary += ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0)
    return Error::internal("evidence: create " + temporary.string() + ": " + errno_text());
  // A write that fails leaves no half file behind: the bundle keeps the old file or none.
  auto abandon = [&](const std::string& what, std::string why) -> Status {
    ::close(fd);
    ::unlink(temporary.c_str());
    return Error::internal("evidence: " + what + " " + temporary.string() + ": " + why);
  };
  std::string write_failure;
  auto sink = [&](std::string_view piece) {
    const char* data = piece.data();
    std::size_t left = piece.size();
    while (left > 0) {
      ssize_t n = ::write(fd, data, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        write_failure = errno_text();
        return false;
      }
      data += n;
      left -= static_cast<std::size_t>(n);
    }
    return true;
  };
  if (!produce(sink))
    return abandon("write", write_failure.empty() ? "the text could not be produced"
                                                  : write_failure);
  if (!write_failure.empty()) return abandon("write", write_failure);
  if (::fsync(fd) != 0) return abandon("fsync", errno_text());
  if (::close(fd) != 0) {
    std::string why = errno_text();
    ::unlink(temporary.c_str());
    return Error::internal("evidence: close " + temporary.string() + ": " + why);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(temporary.c_str());
    return Error::internal("evidence: rename to " + path.string() + ": " + why);
  }
  return fsync_path(path.parent_path(), O_RDONLY | O_DIRECTORY);
}

std::string new_run_id() {
  std::random_device random;
  std::uniform_int_distribution<unsigned> digit(0, 15);
  std::string id;
  for (int i = 0; i < 8; ++i) id += "0123456789abcdef"[digit(random)];
  return id;
}

EvidenceBundle::EvidenceBundle(std::filesystem::path dir, std::string run_id, Redactor redactor,
                               std::unique_ptr<JournalWriter> journal)
    : dir_(std::move(dir)),
      run_id_(std::move(run_id)),
      redactor_(std::move(redactor)),
      journal_(std::move(journal)) {}

Result<std::unique_ptr<EvidenceBundle>> EvidenceBundle::create(const std::filesystem::path& root,
                                                               const std::string& change_id,
                                                               TimePoint started,
                                                               const std::string& run_id,
                                                               Redactor redactor) {
  auto dir = root / change_id / (format_utc_compact(started) + "-" + run_id);
  std::error_code ec;
  if (std::filesystem::exists(dir, ec))
    return Error::internal("evidence: " + dir.string() + " already exists");
  dir = std::filesystem::absolute(dir);
  if (auto created = create_directories_durably(dir); !created.ok())
    return Error::invalid_input(
        created.error().message,
        {"set --evidence or 'evidence' in fabgate.yaml to a writable folder"});
  auto journal = JournalWriter::create(dir / kJournal, redactor);
  if (!journal.ok()) return std::move(journal).error();
  return std::unique_ptr<EvidenceBundle>(
      new EvidenceBundle(dir, run_id, std::move(redactor), std::move(journal.value())));
}

Result<std::unique_ptr<EvidenceBundle>> EvidenceBundle::reopen(const std::filesystem::path& dir,
                                                               const std::string& run_id,
                                                               Redactor redactor) {
  auto absolute = std::filesystem::absolute(dir);
  std::error_code ec;
  if (std::filesystem::exists(absolute / kManifest, ec))
    return Error::invalid_input("evidence: " + absolute.string() +
                                " is sealed (manifest.json exists); nothing may be added");
  auto journal = JournalWriter::resume(absolute / kJournal, redactor);
  if (!journal.ok()) return std::move(journal).error();
  return std::unique_ptr<EvidenceBundle>(
      new EvidenceBundle(absolute, run_id, std::move(redactor), std::move(journal.value())));
}

Result<std::unique_ptr<EvidenceBundle>> EvidenceBundle::reopen_not_restored(
    const std::filesystem::path& dir, const std::string& run_id, Redactor redactor) {
  auto absolute = std::filesystem::absolute(dir);
  std::error_code ec;
  std::string kept = "manifest.not-restored.json";
  for (int n = 2; std::filesystem::exists(absolute / kept, ec); ++n)
    kept = "manifest.not-restored-" + std::to_string(n) + ".json";
  auto signature = absolute / kManifestSignatureFile;
  if (std::filesystem::exists(signature, ec) &&
      ::rename(signature.c_str(), (absolute / (kept + ".sig")).c_str()) != 0)
    return Error::internal("evidence: rename " + signature.string() + ": " + errno_text());
  auto manifest = absolute / kManifest;
  if (std::filesystem::exists(manifest, ec) &&
      ::rename(manifest.c_str(), (absolute / kept).c_str()) != 0)
    return Error::internal("evidence: rename " + manifest.string() + ": " + errno_text());
  if (auto synced = fsync_path(absolute, O_RDONLY | O_DIRECTORY); !synced.ok())
    return synced.error();
  return reopen(absolute, run_id, std::move(redactor));
}

Status EvidenceBundle::noted(const std::string& relative, Status status) {
  if (!status.ok()) {
    std::lock_guard<std::mutex> lock(failures_mutex_);
    failed_writes_.push_back(relative + ": " + status.error().message);
  }
  return status;
}

std::vector<std::string> EvidenceBundle::take_failed_writes() {
  std::lock_guard<std::mutex> lock(failures_mutex_);
  return std::exchange(failed_writes_, {});
}

Status EvidenceBundle::write(const std::string& relative, std::string_view content) {
  return noted(relative, write_file_atomically(dir_ / relative, redactor_.redact(content)));
}

Status EvidenceBundle::write_redacted(const std::string& relative, std::string_view content) {
  return noted(relative, write_file_atomically(dir_ / relative, content));
}

Status EvidenceBundle::write_signed_copy(const std::string& relative, std::string_view content) {
  return noted(relative, write_file_atomically(dir_ / relative, content));
}

Status EvidenceBundle::write_redacted_pieces(
    const std::string& relative, const std::function<bool(const TextSink&)>& produce) {
  return noted(relative, write_file_atomically(dir_ / relative, produce));
}

Status EvidenceBundle::write_json(const std::string& relative, const nlohmann::json& document) {
  return noted(relative,
               write_file_atomically(dir_ / relative, redactor_.dump(document, 2) + "\n"));
}

void EvidenceBundle::append_line(const std::string& relative, const nlohmann::json& record) {
  const std::string line = redactor_.dump(record) + "\n";
  append_pieces(relative, [&line](const TextSink& sink) { return sink(line); });
}

void EvidenceBundle::append_pieces(const std::string& relative,
                                   const std::function<bool(const TextSink&)>& produce) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto path = dir_ / relative;
  auto failed = [&](const std::string& what) {
    std::lock_guard<std::mutex> failures(failures_mutex_);
    failed_writes_.push_back(relative + ": evidence: " + what + " " + path.string() + ": " +
                             errno_text());
  };
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) return failed("open");
  auto write_all = [fd](std::string_view piece) {
    while (!piece.empty()) {
      ssize_t n = ::write(fd, piece.data(), piece.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      piece.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  };
  if (!produce(write_all))
    failed("append to");
  else if (::fsync(fd) != 0)
    failed("fsync");
  ::close(fd);
}

void EvidenceBundle::append_command(const nlohmann::json& record) {
  append_line("commands.jsonl", record);
}

void EvidenceBundle::append_command_with_output(nlohmann::json record, std::string_view output) {
  // The line is serialised with a mark where the output goes, then written around it. It is
  // found as the value of the key: another value may equal the mark (a device can print it on
  // stderr), but `"stdout":` with its quotes unescaped is only ever this record's key.
  static const std::string kMark = "\"fabgate:output-goes-here:5b0f7c2e91d4a36e\"";
  static const std::string kKey = "\"stdout\":";
  record["stdout"] = kMark.substr(1, kMark.size() - 2);
  const std::string line = redactor_.dump(record) + "\n";
  auto at = line.find(kKey + kMark);
  if (at != std::string::npos) at += kKey.size();
  if (at == std::string::npos) {  // a redactor that rewrote the mark: the plain way
    record["stdout"] = std::string(output);
    return append_line("commands.jsonl", record);
  }
  std::string redacted;
  const std::string_view text = redactor_.redact_into(output, redacted) ? redacted : output;
  append_pieces("commands.jsonl", [&](const TextSink& sink) {
    if (!sink(std::string_view(line).substr(0, at + 1))) return false;
    constexpr std::size_t kPiece = std::size_t{1} << 20;
    for (std::size_t from = 0; from < text.size();) {
      std::size_t to = std::min(text.size(), from + kPiece);
      // Never between the bytes of one UTF-8 character: each piece is escaped on its own.
      for (int back = 0; to < text.size() && back < 3 &&
                         (static_cast<unsigned char>(text[to]) & 0xC0) == 0x80;
           ++back)
        --to;
      const std::string escaped =
          nlohmann::json(std::string(text.substr(from, to - from)))
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (!sink(std::string_view(escaped).substr(1, escaped.size() - 2))) return false;
      from = to;
    }
    return sink(std::string_view(line).substr(at + kMark.size() - 1));
  });
}

void EvidenceBundle::append_journal(const nlohmann::json& record) {
  // The action goes ahead whatever happens here (see write_ahead); the failure is noted, so
  // the gate it belongs to is judged without evidence.
  auto appended = journal_->append(record);
  if (!appended.ok()) (void)noted(kJournal, std::move(appended).error());
}

Status EvidenceBundle::write_ahead(const nlohmann::json& record) {
  auto appended = journal_->append(record, Durability::everywhere);
  if (!appended.ok()) return noted(kJournal, std::move(appended).error());
  return Ok{};
}

Status EvidenceBundle::attach_journal_mirror(JournalMirror* mirror, std::uint64_t stored_up_to) {
  return journal_->attach_mirror(mirror, stored_up_to);
}

void EvidenceBundle::detach_journal_mirror() {
  journal_->detach_mirror();
}

nlohmann::json EvidenceBundle::journal_mirror_state() const {
  return journal_->mirror_state();
}

Status EvidenceBundle::finish(nlohmann::json manifest) {
  // Values first: the files map added below is fabgate's own paths and digests.
  redactor_.redact_json(manifest);
  nlohmann::json files = nlohmann::json::object();
  for (const auto& file : files_in(dir_)) {
    if (file == kManifest) continue;
    auto digest = sha256_file_hex(dir_ / file);
    if (!digest) return Error::internal("evidence: cannot read back " + file);
    files[file] = *digest;
  }
  manifest["files"] = files;
  manifest.erase("bundle_sha256");
  // The digest is of the manifest a reader parses: text that is not UTF-8 is written as
  // U+FFFD, so the document is serialised and read back before it is digested.
  auto as_read = nlohmann::json::parse(
      manifest.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), nullptr, false);
  if (as_read.is_discarded()) return Error::internal("evidence: the manifest does not serialise");
  as_read["bundle_sha256"] = manifest_digest(as_read);
  return write_file_atomically(dir_ / kManifest, as_read.dump(2) + "\n");
}

std::string manifest_digest(nlohmann::json manifest) {
  if (manifest.is_object()) manifest.erase("bundle_sha256");
  return sha256_hex(manifest.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

InsideRead read_inside(const std::filesystem::path& dir, const std::string& relative) {
  InsideRead read;
  auto file = open_inside(dir, relative, read);
  if (file.fd < 0) return read;
  std::string bytes;
  if (read_all(file.fd, read, [&](std::string_view chunk) { bytes.append(chunk); }))
    read.bytes = std::move(bytes);
  return read;
}

Result<BundleCheck> verify_bundle(const std::filesystem::path& dir) {
  BundleCheck check;
  auto manifest_read = read_inside(dir, kManifest);
  if (!manifest_read.bytes) {
    if (manifest_read.missing)
      return Error::invalid_input(
          "evidence verify: " + (dir / kManifest).string() + ": cannot read",
          {"is this an evidence bundle folder? (a bundle is sealed when its run ends)"});
    check.unsafe.push_back(std::string(kManifest) + ": " + manifest_read.why);
    return check;
  }
  check.manifest_text = std::move(*manifest_read.bytes);
  check.manifest = nlohmann::json::parse(check.manifest_text, nullptr, false);
  if (check.manifest.is_discarded() || !check.manifest.is_object()) {
    check.manifest = nullptr;
    check.malformed.push_back("manifest.json: not a JSON object");
    check.manifest_consistent = false;
    return check;
  }
  const auto& manifest = check.manifest;
  check_field_types(manifest, check.malformed);
  check.manifest_consistent =
      manifest.contains("bundle_sha256") && manifest["bundle_sha256"].is_string() &&
      manifest["bundle_sha256"].get<std::string>() == manifest_digest(manifest);
  const nlohmann::json no_files = nlohmann::json::object();
  const auto& files =
      manifest.contains("files") && manifest["files"].is_object() ? manifest["files"] : no_files;
  for (const auto& [path, recorded] : files.items()) {
    if (!recorded.is_string()) continue;  // named in malformed
    auto read = hash_inside(dir, path);
    if (read.bytes) {
      if (*read.bytes != recorded.get<std::string>()) check.modified.push_back(path);
    } else if (read.missing) {
      check.missing.push_back(path);
    } else {
      check.unsafe.push_back(path + ": " + read.why);
    }
  }
  const bool plan_bundle = manifest.contains("mode") && manifest["mode"] == "plan";
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    // Links are never followed (a linked folder is not walked, a linked file not read): each
    // one is named, wherever it points.
    const auto status = it->symlink_status(ec);
    const std::string file = it->path().lexically_relative(dir).generic_string();
    if (std::filesystem::is_symlink(status)) {
      check.unsafe.push_back(file + ": a symbolic link in the bundle");
      continue;
    }
    if (std::filesystem::is_directory(status)) continue;
    if (file == kManifest || file == kManifestSignatureFile || files.contains(file)) continue;
    bool approval = std::filesystem::is_regular_file(status) && file.rfind("approvals/", 0) == 0 &&
                    file.find('/', 10) == std::string::npos && file.size() > 15 &&
                    file.compare(file.size() - 5, 5, ".json") == 0;
    if (plan_bundle && approval)
      check.attached.push_back(file);
    else
      check.extra.push_back(file);
  }
  if (ec) check.unsafe.push_back(dir.string() + ": cannot be listed: " + ec.message());
  std::sort(check.extra.begin(), check.extra.end());
  std::sort(check.attached.begin(), check.attached.end());
  std::sort(check.unsafe.begin(), check.unsafe.end());
  return check;
}

}  // namespace fabgate::pipeline
