#include "cmd/fabgate/snapshot.h"

#include "gates/app/snapshot_command.h"

namespace fabgate::cli {

Runner define_snapshot(CLI::App& command, const app::CommonOptions& common) {
  auto options = std::make_shared<app::SnapshotOptions>();
  command.add_option("targets", options->targets,
                     "Device names or role:ROLE (default: every device)");
  command.add_option("--output,-o", options->output,
                     "Write the snapshot JSON to FILE (default: stdout)");
  command
      .add_option("--parallel", options->parallel,
                  "Devices contacted at once (default: fabgate.yaml ssh.parallelism)")
      ->check(CLI::Range(1, 4096));
  command.add_flag(
      "--accept-new-host-keys", options->accept_new_host_keys,
      "Accept and record keys of hosts missing from known_hosts (never a changed key)");
  return [options, &common](app::Console& console) {
    return app::run_snapshot(common, *options, console);
  };
}

}  // namespace fabgate::cli
