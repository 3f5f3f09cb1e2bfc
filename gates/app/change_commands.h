#pragma once

#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

struct ChangeOptions {
  std::string change;   // change id or its file inside the intent root
  int parallelism = 0;  // devices contacted at once; 0: fabgate.yaml's ssh.parallelism
  bool accept_new_host_keys = false;  // trust-on-first-use, recorded in output and evidence
  std::string operator_name;          // default: $USER
  // --controller (apply, rehearse): the name claims, locks and queue entries carry in the
  // coordination store; default $FABGATE_CONTROLLER, else the host name.
  std::string controller;
  // approval files, or folders of them (apply, rehearse)
  std::vector<std::string> approvals;
  // rehearsal.json or its bundle folder, for approval.require_rehearsal (apply); for plan,
  // the rehearsal whose configuration diffs review.md shows
  std::string rehearsal;
  // take over device locks whose holder died (apply, rehearse); a live holder is never
  // taken over
  bool take_over_locks = false;
  // --wait (apply, rehearse): how long to wait in the fabric's queue when a redundancy budget
  // is taken by other runs; empty: refuse at once
  std::string wait;
};

// `fabgate plan CHANGE`: the read-only gates, review.md and plan.json. 0 ready, 3 refused.
Result<ExitCode> run_plan(const CommonOptions& common, const ChangeOptions& options,
                          Console& console);
// `fabgate apply CHANGE`: every gate; 0 accepted, 3 refused (nothing touched), 4 rolled back
// and verified, 5 not restored.
Result<ExitCode> run_apply(const CommonOptions& common, const ChangeOptions& options,
                           Console& console);
// `fabgate rehearse CHANGE`: apply, then a forced rollback and restore verification, and
// rehearsal.json in the evidence. 0 the change was accepted and its rollback verified
// (rehearsal passed), 3 refused, 4 the change itself failed and was rolled back, 5 not
// restored.
Result<ExitCode> run_rehearse(const CommonOptions& common, const ChangeOptions& options,
                              Console& console);
// `fabgate twin CHANGE`: the read-only gates and approval, then the change tried on a twin only
// (docs/twin.md); exit 0 when it held there, 3 when the twin disproved it or could not judge it.
Result<ExitCode> run_twin(const CommonOptions& common, const ChangeOptions& options,
                          Console& console);

}  // namespace fabgate::app
