#include "cmd/fabgate/recover.h"

#include "gates/app/recover_command.h"

namespace fabgate::cli {

Runner define_recover(CLI::App& command, const app::CommonOptions& common) {
  auto options = std::make_shared<app::RecoverOptions>();
  command.add_option("run_dir", options->run_dir,
                     "Evidence folder of the run that died, or its run id (its journal is then "
                     "read from the shared journal in the fabric's etcd)")
      ->required();
  command.add_option("--operator", options->operator_name, "Who recovers (default: $USER)");
  command.add_option("--controller", options->controller,
                     "This controller's name in the fabric's coordination store (default: "
                     "$FABGATE_CONTROLLER, else the host name)");
  command.add_flag("--take-over-locks", options->take_over_locks,
                   "Take over device locks that another, dead run holds (recorded)");
  // --repo is a common option with a default; only an explicit one overrides the journal's.
  const CLI::App* top = &command;
  while (top->get_parent()) top = top->get_parent();
  return [options, &common, top](app::Console& console) {
    if (top->get_option("--repo")->count() > 0) options->repo = common.repo;
    return app::run_recover(common, *options, console);
  };
}

}  // namespace fabgate::cli
