#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/redact.h"
#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "gates/pipeline/safety/journal.h"

namespace fabgate::pipeline {

// One run's evidence folder: <root>/<change-id>/<utc-time>-<run-id>/ (DESIGN.md). Every file
// goes through the redactor and is written atomically (temporary file, fsync, rename, fsync of
// the folder), so a crash leaves either the old file or the new one, never half of one. JSON is
// redacted value by value before it is serialised (Redactor::dump), so every JSON file parses
// whatever the devices answered; text files are redacted whole.
// finish() writes manifest.json last, with the sha256 of every other file. journal.jsonl is the
// run's write-ahead journal (journal.h): created empty with the bundle, appended record by record.
class EvidenceBundle {
 public:
  static Result<std::unique_ptr<EvidenceBundle>> create(const std::filesystem::path& root,
                                                        const std::string& change_id,
                                                        TimePoint started,
                                                        const std::string& run_id,
                                                        Redactor redactor);
  // Reopens the bundle of a run that died, for `fabgate recover`: its journal continues after
  // the last intact record (a torn last record is cut off). A bundle that already has its
  // manifest is sealed and is refused (invalid input).
  static Result<std::unique_ptr<EvidenceBundle>> reopen(const std::filesystem::path& dir,
                                                        const std::string& run_id,
                                                        Redactor redactor);
  // Reopens a bundle sealed by a run that ended NOT RESTORED (exit 5), for the `fabgate
  // recover` that run named: its manifest (and signature) are kept under a new name
  // (manifest.not-restored.json, then -2, -3...), covered by the manifest recover seals.
  static Result<std::unique_ptr<EvidenceBundle>> reopen_not_restored(
      const std::filesystem::path& dir, const std::string& run_id, Redactor redactor);

  const std::filesystem::path& dir() const { return dir_; }
  const std::string& run_id() const { return run_id_; }
  const Redactor& redactor() const { return redactor_; }

  // Writes a text file (relative path inside the bundle), redacted as a whole: for plain text
  // and Markdown, whose only escaping (reports.cpp md_cell) redacts before it escapes.
  Status write(const std::string& relative, std::string_view content);
  // Writes markup whose every value the caller redacted with redactor() before escaping it
  // (junit.xml): redacting escaped text could miss an escaped secret and would put a raw
  // '<redacted>' into the markup.
  Status write_redacted(const std::string& relative, std::string_view content);
  // Copies a signed document byte for byte (an approval file): redacting it as text would
  // replace any configured secret that happens to be a substring of its base64 signature and
  // break the signature. Such a document is written by `fabgate approve` from the plan's own
  // fields (digest, change, commit, approver, time), never from device output.
  Status write_signed_copy(const std::string& relative, std::string_view content);
  // Writes a JSON document, its string values and keys redacted before it is serialised.
  Status write_json(const std::string& relative, const nlohmann::json& document);
  // Writes a file whose text `produce` hands to its sink in pieces, every value already redacted
  // with redactor() (a snapshot whose route lists are written from tables: its text is never
  // held whole). Atomic like the others; `produce` returning false (or the sink failing) leaves
  // no file.
  using TextSink = std::function<bool(std::string_view)>;
  Status write_redacted_pieces(const std::string& relative,
                               const std::function<bool(const TextSink&)>& produce);
  // Appends one JSON line, redacted value by value, to commands.jsonl / journal.jsonl; thread-safe,
  // flushed and fsynced before returning so the record survives a crash of the controller right
  // after. append_journal is for records whose action goes ahead even if journaling fails (gates, a
  // rollback: undoing a change matters more than recording it); write_ahead is for actions that
  // must not start unless their record is durable (a step is never sent unjournaled).
  // With a journal mirror attached (the shared journal in etcd), write_ahead also requires the
  // record to be there: a step no other controller could learn of is not sent.
  void append_command(const nlohmann::json& record);
  // The same for a record whose `stdout` is `output`, which goes into the line redacted and
  // escaped a megabyte at a time instead of as a copy in `record`: a device's whole route table
  // is 150 MB of output, which a JSON value and its serialisation would hold twice more. The
  // line is the one append_command would write with `record["stdout"] = output`.
  void append_command_with_output(nlohmann::json record, std::string_view output);
  void append_journal(const nlohmann::json& record);
  Status write_ahead(const nlohmann::json& record);
  // The journal's mirror (journal.h): attached by the coordinated run once it holds its claim,
  // detached before the mirror goes away.
  Status attach_journal_mirror(JournalMirror* mirror, std::uint64_t stored_up_to);
  void detach_journal_mirror();
  nlohmann::json journal_mirror_state() const;

  // Adds "files": {path: sha256} for every file and "bundle_sha256", the digest of the whole
  // manifest (manifest_digest), then writes manifest.json. Nothing may be written after
  // finish().
  Status finish(nlohmann::json manifest);

  // Every write that failed since the last call ("probes/acceptance.json: evidence: write ...:
  // No space left on device"), journal and commands.jsonl appends included. The run controller
  // takes them after each gate: a gate whose evidence could not be kept has no evidence.
  std::vector<std::string> take_failed_writes();

 private:
  EvidenceBundle(std::filesystem::path dir, std::string run_id, Redactor redactor,
                 std::unique_ptr<JournalWriter> journal);
  void append_line(const std::string& relative, const nlohmann::json& record);
  // Appends the text `produce` hands over to `relative`, then fsyncs it; a failure is noted.
  void append_pieces(const std::string& relative, const std::function<bool(const TextSink&)>& produce);
  Status noted(const std::string& relative, Status status);

  std::mutex failures_mutex_;
  std::vector<std::string> failed_writes_;

  std::filesystem::path dir_;
  std::string run_id_;
  Redactor redactor_;
  std::unique_ptr<JournalWriter> journal_;
  std::mutex mutex_;
};

// `fabgate evidence sign` writes the bundle's signature next to its manifest, after the bundle
// was sealed: it signs the manifest's sha256, so it cannot be listed in the manifest itself.
inline constexpr const char* kManifestSignatureFile = "manifest.json.sig";

// Result of checking a bundle against its manifest. manifest.json is read once per check and
// the bytes and document read are kept here, so whatever is shown or signature-checked after
// it is the manifest that was checked, not a file that may have been swapped since.
struct BundleCheck {
  std::vector<std::string> modified;  // content differs from the recorded sha256
  std::vector<std::string> missing;   // recorded but absent
  std::vector<std::string> extra;     // present but not recorded
  // A plan bundle's approvals/<principal>.json, written by `fabgate approve` after the plan
  // was sealed: not covered by the manifest, each one is proven by its own signature at apply.
  std::vector<std::string> attached;
  // Paths that would reach outside the bundle or through a link: a manifest path that is
  // absolute, empty, or has a "", "." or ".." part, a recorded file that is reached through a
  // symbolic link or is no regular file, and every symbolic link in the bundle folder. None of
  // them is read.
  std::vector<std::string> unsafe;
  // Manifest fields of the wrong type ("exit_code: not an integer"), or a manifest that is no
  // JSON object: fabgate prints nothing from such a manifest as if it were true.
  std::vector<std::string> malformed;
  bool manifest_consistent = true;  // bundle_sha256 is the digest of the manifest's content
  std::string manifest_text;        // manifest.json, byte for byte, as this check read it
  nlohmann::json manifest;          // parsed from manifest_text; an object unless malformed
  bool intact() const {
    return modified.empty() && missing.empty() && extra.empty() && unsafe.empty() &&
           malformed.empty() && manifest_consistent;
  }
};

// The bundle digest (docs/pipeline.md, "The bundle digest"): the lower-case hex sha256 of the
// manifest serialised canonically without its "bundle_sha256" member: no whitespace, object
// members sorted by name (bytewise), strings in UTF-8 with only '"', '\\' and control
// characters escaped (\b \f \n \r \t, others as \u00xx), numbers as integers. It covers every
// headline field (exit_code, device_state, gates...) and the files map with each file's sha256.
std::string manifest_digest(nlohmann::json manifest);

// `fabgate evidence verify DIR`. Invalid input only when DIR has no manifest.json to read (not
// a bundle, or one never sealed); a manifest that is not JSON, has a field of the wrong type,
// names unsafe paths or does not match its digest is a check that is not intact (TAMPERED).
Result<BundleCheck> verify_bundle(const std::filesystem::path& dir);

// Reads `relative` inside `dir` without following any symbolic link and only when it is a
// regular file: the bytes, or why not ("missing", "unsafe: ..."). For files a check already
// proved against the manifest (rehearsal.json, plan.json): compare the sha256 of what is
// returned with the manifest's entry, so the bytes used are the bytes checked.
struct InsideRead {
  std::optional<std::string> bytes;
  bool missing = false;
  std::string why;  // when no bytes
};
InsideRead read_inside(const std::filesystem::path& dir, const std::string& relative);

// Writes a file atomically: temporary file, fsync, rename, fsync of the folder.
Status write_file_atomically(const std::filesystem::path& path, std::string_view content);
// The same with the text handed over in pieces by `produce` (false: abandoned, no file).
Status write_file_atomically(const std::filesystem::path& path,
                             const std::function<bool(const std::function<bool(std::string_view)>&)>& produce);

// A short random id for runs ("a1b2c3d4").
std::string new_run_id();

}  // namespace fabgate::pipeline
