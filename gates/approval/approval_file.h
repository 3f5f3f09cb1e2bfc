#pragma once

// The approval file `fabgate approve` writes and `apply --approval` reads, and the statement
// inside it that is signed. The statement binds the plan digest to the change, the intent
// commit, the approver and the time, so none of them can be edited without breaking the
// signature.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"

namespace fabgate::approval {

inline constexpr const char* kApprovalFormat = "fabgate.approval/1";

struct SignedApproval {
  std::string approver;     // the signing principal, as listed in allowed_signers
  std::string digest;       // "sha256:<hex>", the plan digest approved
  std::string change;       // change id
  std::string commit;       // intent commit id
  std::string approved_at;  // UTC, ISO 8601
  std::string signature_namespace;
  std::string signature;  // armored SSH signature over statement()
};

// The exact bytes that are signed: one "key: value" line per field, in a fixed order, after a
// version line. Fields cannot hold newlines (read_approval_file refuses them), so two
// different approvals never share a statement.
std::string statement(const SignedApproval& approval);

nlohmann::json to_json(const SignedApproval& approval);

// The largest approval file read: a real one is about 1 KiB.
inline constexpr std::size_t kMaxApprovalFileBytes = std::size_t{1} << 20;

// Reads an approval file the one time it is read: opened once without following a symbolic
// link (O_NOFOLLOW, O_CLOEXEC; O_NONBLOCK so a FIFO cannot hold the run), checked through that
// descriptor to be a regular file of at most kMaxApprovalFileBytes, and read through the same
// descriptor. Whatever is judged and copied into the evidence is these bytes, never the file
// opened again by its path (it may have been swapped in between). A symbolic link, a folder,
// a device, a larger file or an unreadable one is invalid input naming the file and why.
Result<std::string> read_approval_bytes(const std::filesystem::path& file);

// Judges bytes already read: a JSON object in format fabgate.approval/1 with every field a
// non-empty string (no newline but in the signature). `name` names the file in messages;
// anything else is invalid input "approval NAME: not an approval: WHY" (or "malformed" with
// each field's problem as a detail).
Result<SignedApproval> parse_approval(const std::string& name, std::string_view content);

// read_approval_bytes, then parse_approval of those bytes.
Result<SignedApproval> read_approval_file(const std::filesystem::path& file);

// A file name for a principal: "alice@example.net" -> "alice@example.net.json"; characters
// that are unsafe in file names become '_'.
std::string approval_file_name(const std::string& principal);

}  // namespace fabgate::approval
