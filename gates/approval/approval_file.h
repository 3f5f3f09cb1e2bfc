#pragma once

// The approval file `fabgate approve` writes and `apply --approval` reads, and the statement
// inside it that is signed. The statement binds the plan digest to the change, the intent
// commit, the approver and the time, so none of them can be edited without breaking the
// signature.

#include <filesystem>
#include <string>

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

// Reads and checks an approval file's shape; an unreadable or malformed file is invalid input
// naming the file.
Result<SignedApproval> read_approval_file(const std::filesystem::path& file);

// A file name for a principal: "alice@example.net" -> "alice@example.net.json"; characters
// that are unsafe in file names become '_'.
std::string approval_file_name(const std::string& principal);

}  // namespace fabgate::approval
