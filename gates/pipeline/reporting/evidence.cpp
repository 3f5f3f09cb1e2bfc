#include "gates/pipeline/reporting/evidence.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
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

std::string bundle_digest(const nlohmann::json& files) {
  Sha256 hash;
  for (auto it = files.begin(); it != files.end(); ++it) {
    hash.update(it.key());
    hash.update(":");
    hash.update(it.value().get<std::string>());
    hash.update("\n");
  }
  return hash.hex_digest();
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
  if (auto created = create_directories_durably(path.parent_path()); !created.ok()) return created;
  auto temporary = path;
  temporary += ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0)
    return Error::internal("evidence: create " + temporary.string() + ": " + errno_text());
  const char* data = content.data();
  std::size_t left = content.size();
  // A write that fails leaves no half file behind: the bundle keeps the old file or none.
  auto abandon = [&](const std::string& what) -> Status {
    std::string why = errno_text();
    ::close(fd);
    ::unlink(temporary.c_str());
    return Error::internal("evidence: " + what + " " + temporary.string() + ": " + why);
  };
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return abandon("write");
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return abandon("fsync");
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
  if (auto synced = fsync_path(absolute, O_RDONLY | O_DIRECTORY); !synced.ok()) return synced.error();
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

Status EvidenceBundle::write_json(const std::string& relative, const nlohmann::json& document) {
  return noted(relative,
               write_file_atomically(dir_ / relative, redactor_.dump(document, 2) + "\n"));
}

void EvidenceBundle::append_line(const std::string& relative, const nlohmann::json& record) {
  std::string line = redactor_.dump(record) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  auto path = dir_ / relative;
  auto failed = [&](const std::string& what) {
    std::lock_guard<std::mutex> failures(failures_mutex_);
    failed_writes_.push_back(relative + ": evidence: " + what + " " + path.string() + ": " +
                             errno_text());
  };
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) return failed("open");
  std::size_t written = 0;
  while (written < line.size()) {
    ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      failed("append to");
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (written == line.size() && ::fsync(fd) != 0) failed("fsync");
  ::close(fd);
}

void EvidenceBundle::append_command(const nlohmann::json& record) {
  append_line("commands.jsonl", record);
}

void EvidenceBundle::append_journal(const nlohmann::json& record) {
  // The action goes ahead whatever happens here (see write_ahead); the failure is noted, so
  // the gate it belongs to is judged without evidence.
  auto appended = journal_->append(record);
  if (!appended.ok()) (void)noted(kJournal, std::move(appended).error());
}

Status EvidenceBundle::write_ahead(const nlohmann::json& record) {
  auto appended = journal_->append(record);
  if (!appended.ok()) return noted(kJournal, std::move(appended).error());
  return Ok{};
}

Status EvidenceBundle::finish(nlohmann::json manifest) {
  // Values first: the files map added below is fabgate's own paths and digests, and the
  // bundle digest must cover them exactly as written.
  redactor_.redact_json(manifest);
  nlohmann::json files = nlohmann::json::object();
  for (const auto& file : files_in(dir_)) {
    if (file == kManifest) continue;
    auto digest = sha256_file_hex(dir_ / file);
    if (!digest) return Error::internal("evidence: cannot read back " + file);
    files[file] = *digest;
  }
  manifest["files"] = files;
  manifest["bundle_sha256"] = bundle_digest(files);
  return write_file_atomically(
      dir_ / kManifest,
      manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

Result<BundleCheck> verify_bundle(const std::filesystem::path& dir) {
  auto manifest_path = dir / kManifest;
  std::ifstream in(manifest_path);
  if (!in)
    return Error::invalid_input("evidence verify: " + manifest_path.string() + ": cannot read",
                                {"is this an evidence bundle folder?"});
  auto manifest = nlohmann::json::parse(in, nullptr, false);
  if (manifest.is_discarded() || !manifest.is_object() || !manifest.contains("files") ||
      !manifest["files"].is_object())
    return Error::invalid_input("evidence verify: " + manifest_path.string() +
                                ": not a fabgate manifest (no 'files' map)");
  BundleCheck check;
  const auto& files = manifest["files"];
  for (auto it = files.begin(); it != files.end(); ++it) {
    if (!it.value().is_string()) {
      check.manifest_consistent = false;
      continue;
    }
    auto digest = sha256_file_hex(dir / it.key());
    if (!digest)
      check.missing.push_back(it.key());
    else if (*digest != it.value().get<std::string>())
      check.modified.push_back(it.key());
  }
  const bool plan_bundle = manifest.value("mode", "") == "plan";
  for (const auto& file : files_in(dir)) {
    if (file == kManifest || file == kManifestSignatureFile || files.contains(file)) continue;
    bool approval = file.rfind("approvals/", 0) == 0 && file.find('/', 10) == std::string::npos &&
                    file.size() > 15 && file.compare(file.size() - 5, 5, ".json") == 0;
    if (plan_bundle && approval)
      check.attached.push_back(file);
    else
      check.extra.push_back(file);
  }
  if (check.manifest_consistent)
    check.manifest_consistent = manifest.value("bundle_sha256", "") == bundle_digest(files);
  return check;
}

}  // namespace fabgate::pipeline
