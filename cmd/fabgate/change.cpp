#include "cmd/fabgate/change.h"

#include "gates/app/change_commands.h"
#include "gates/app/evidence_command.h"

namespace fabgate::cli {
namespace {

std::shared_ptr<app::ChangeOptions> change_flags(CLI::App& command) {
  auto options = std::make_shared<app::ChangeOptions>();
  command.add_option("change", options->change, "Change id or file")->required();
  command
      .add_option("--parallel", options->parallelism,
                  "Devices contacted at once (default: fabgate.yaml ssh.parallelism)")
      ->check(CLI::Range(1, 4096));
  command.add_flag("--accept-new-host-keys", options->accept_new_host_keys,
                   "Trust unknown host keys on first use (recorded in output and evidence)");
  command.add_option("--operator", options->operator_name, "Who runs this (default: $USER)");
  return options;
}

// apply and rehearse act on devices, so they take the approvals the policy asks for.
void approval_flags(CLI::App& command, app::ChangeOptions& options) {
  command.add_option("--approval", options.approvals,
                     "Approval file from `fabgate approve`, or a folder of them (repeatable)");
  command.add_flag("--take-over-locks", options.take_over_locks,
                   "Take over device locks whose holder is dead (recorded in the evidence)");
  command.add_option("--controller", options.controller,
                     "This controller's name in the fabric's coordination store, shown to other "
                     "runs (default: $FABGATE_CONTROLLER, else the host name)");
  command.add_option("--wait", options.wait,
                     "Wait up to DURATION (30s, 10m) in the fabric's queue when a redundancy "
                     "budget is taken by other runs (default: refuse at once)");
}

}  // namespace

Runner define_plan(CLI::App& command, const app::CommonOptions& common) {
  auto options = change_flags(command);
  command.add_option("--rehearsal", options->rehearsal,
                     "rehearsal.json (or its bundle folder) of this plan's digest: review.md "
                     "shows its configuration diffs");
  return [options, &common](app::Console& console) {
    return app::run_plan(common, *options, console);
  };
}

Runner define_apply(CLI::App& command, const app::CommonOptions& common) {
  auto options = change_flags(command);
  approval_flags(command, *options);
  command.add_option("--rehearsal", options->rehearsal,
                     "rehearsal.json (or its bundle folder) of a passing `fabgate rehearse`, "
                     "when approval.require_rehearsal is set");
  return [options, &common](app::Console& console) {
    return app::run_apply(common, *options, console);
  };
}

Runner define_rehearse(CLI::App& command, const app::CommonOptions& common) {
  auto options = change_flags(command);
  approval_flags(command, *options);
  return [options, &common](app::Console& console) {
    return app::run_rehearse(common, *options, console);
  };
}

// The twin runs the change's steps on this machine, so it takes the approvals apply would.
Runner define_twin(CLI::App& command, const app::CommonOptions& common) {
  auto options = change_flags(command);
  command.add_option("--approval", options->approvals,
                     "Approval file from `fabgate approve`, or a folder of them (repeatable)");
  return [options, &common](app::Console& console) {
    return app::run_twin(common, *options, console);
  };
}

Runner define_evidence(CLI::App& command, const app::CommonOptions& common) {
  auto dir = std::make_shared<std::string>();
  auto html = std::make_shared<bool>(false);
  auto allowed_signers = std::make_shared<std::string>();
  auto key = std::make_shared<std::string>();
  command.require_subcommand(1);
  auto* verify = command.add_subcommand(
      "verify", "Check a bundle against its manifest (and its signature, with --allowed-signers)");
  verify->add_option("dir", *dir, "Evidence bundle folder")->required();
  verify->add_option("--allowed-signers", *allowed_signers,
                     "OpenSSH allowed_signers file: also require manifest.json.sig, signed in "
                     "namespace fabgate-evidence by a key it lists");
  auto* show = command.add_subcommand(
      "show", "Summarise a bundle: gates, verdicts, layers, and where its report.html is");
  show->add_option("dir", *dir, "Evidence bundle folder")->required();
  show->add_flag("--html", *html, "Print only the path of the bundle's report.html");
  auto* sign = command.add_subcommand(
      "sign", "Sign a bundle's manifest digest (ssh-keygen -Y sign -n fabgate-evidence)");
  sign->add_option("dir", *dir, "Evidence bundle folder")->required();
  sign->add_option("--key", *key,
                   "SSH private key to sign with (or a .pub whose key ssh-agent holds)")
      ->required();
  return [dir, html, allowed_signers, key, show, sign, &common](app::Console& console) {
    if (show->parsed())
      return app::run_evidence_show(
          common, *dir, *html ? app::ShowWhat::html_path : app::ShowWhat::summary, console);
    if (sign->parsed()) return app::run_evidence_sign(common, *dir, *key, console);
    return app::run_evidence_verify(common, *dir, *allowed_signers, console);
  };
}

}  // namespace fabgate::cli
