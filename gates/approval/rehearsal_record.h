#pragma once

// The rehearsal record (rehearsal.json in a `fabgate rehearse` evidence bundle) as `apply`
// checks it when approval.require_rehearsal is set.

#include <string>
#include <string_view>

#include "gates/approval/signature_tool.h"

namespace fabgate::approval {

struct RehearsalProof {
  bool accepted = false;  // counts as the rehearsal the policy requires
  std::string line;       // why, in one line, for the approval gate's details
};

// Who may vouch for a rehearsal bundle: the allowed_signers text the approval policy names
// (the same file that lists the approvers) and its name, for messages.
struct RehearsalSigners {
  std::string_view text;
  std::string name;
};

// `given` is a rehearsal.json or the bundle folder holding it ("" when none was given). It
// counts only when its evidence bundle verifies against its manifest (every file, the whole
// manifest), the bundle is a rehearse run's and carries a signature (`fabgate evidence sign`)
// by a key `signers` lists, and the record, as listed in that manifest, passed, was made for
// `digest` and change `change_id`. Without the signature anyone could write a passing
// rehearsal.json and a manifest that matches it. `evidence_tool` must verify in
// kEvidenceNamespace.
RehearsalProof check_rehearsal(const std::string& given, const std::string& digest,
                               const std::string& change_id, const RehearsalSigners& signers,
                               SignatureTool& evidence_tool);

}  // namespace fabgate::approval
