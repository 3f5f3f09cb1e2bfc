#pragma once

// The rehearsal record (rehearsal.json in a `fabgate rehearse` evidence bundle) as `apply`
// checks it when approval.require_rehearsal is set.

#include <string>

namespace fabgate::approval {

struct RehearsalProof {
  bool accepted = false;  // counts as the rehearsal the policy requires
  std::string line;       // why, in one line, for the approval gate's details
};

// `given` is a rehearsal.json or the bundle folder holding it ("" when none was given). It
// counts only when it passed, was made for `digest` and change `change_id`, and its evidence
// bundle verifies against its manifest (so the record was written by the run it describes and
// not edited since).
RehearsalProof check_rehearsal(const std::string& given, const std::string& digest,
                               const std::string& change_id);

}  // namespace fabgate::approval
