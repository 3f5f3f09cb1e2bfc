#pragma once

// The approval gate's judge as `apply` and `rehearse` run it: the real judge, with each
// approval record carrying the bytes that judge read and judged (ApprovalRecord::content), so
// that the pipeline copies exactly those into the evidence bundle and never opens the file a
// second time; and every entry of an approvals folder that is not an approval file listed by
// name with why (it is not judged, and not copied).

#include <string>
#include <vector>

#include "gates/pipeline/families/approval_gate.h"

namespace fabgate::approval {

class JudgeWithCopies final : public pipeline::ApprovalJudge {
 public:
  // `judge` reads approval files through read_approval_file (SignedApprovalJudge does);
  // `given` is what --approval named (files, or folders of *.json files).
  JudgeWithCopies(pipeline::ApprovalJudge& judge, std::vector<std::string> given);
  pipeline::ApprovalJudgement judge(const intent::IntentRepository& repository,
                                    const intent::Change& change, const std::string& plan_digest,
                                    pipeline::RehearsalCheck rehearsal) override;

 private:
  pipeline::ApprovalJudge& judge_;
  std::vector<std::string> given_;
};

// "DIR/notes.txt: not an approval (not a .json file), not copied" for every entry of a folder
// in `given` that is not taken as an approval file: a file without the .json extension, a
// symbolic link that leads nowhere or to a folder, a folder. A .json file (or a link to one)
// is taken, and judged.
std::vector<std::string> non_approvals_in_folders(const std::vector<std::string>& given);

}  // namespace fabgate::approval
