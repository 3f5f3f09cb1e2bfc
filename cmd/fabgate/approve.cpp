#include "cmd/fabgate/approve.h"

#include "gates/app/approve_command.h"

namespace fabgate::cli {

Runner define_approve(CLI::App& command, const app::CommonOptions& common) {
  auto options = std::make_shared<app::ApproveOptions>();
  command.add_option("plan", options->plan, "plan.json, or the plan's evidence folder")->required();
  command
      .add_option("--key", options->key,
                  "SSH private key to sign with (or a .pub whose key ssh-agent holds)")
      ->required();
  command.add_option("--identity", options->identity,
                     "Signing principal as listed in allowed_signers (default: "
                     "$FABGATE_APPROVER, then git config user.email)");
  command.add_option("--out", options->out,
                     "Approval file to write (default: <plan folder>/approvals/<principal>.json)");
  return [options, &common](app::Console& console) {
    return app::run_approve(common, *options, console);
  };
}

}  // namespace fabgate::cli
