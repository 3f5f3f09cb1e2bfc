#pragma once

#include <string>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

struct ApproveOptions {
  std::string plan;      // plan.json, or the plan's evidence folder holding it
  std::string key;       // private key, or a .pub whose private half ssh-agent holds
  std::string identity;  // signing principal; default $FABGATE_APPROVER, then git user.email
  std::string out;       // approval file; default <plan folder>/approvals/<principal>.json
};

// `fabgate approve PLAN --key KEY`: recomputes the plan's digest from the intent commit it
// names (in --repo), signs that digest with ssh-keygen -Y sign and writes an approval file.
// 0 written; 3 for a plan whose gates refused the change ("ready": false; nothing is signed,
// and no option overrides that); 2 for a bad plan file, a plan whose digest is not the commit's, a
// repository without that commit, a missing key or identity, or a key that cannot sign without a
// prompt nobody can answer.
Result<ExitCode> run_approve(const CommonOptions& common, const ApproveOptions& options,
                             Console& console);

}  // namespace fabgate::app
