#include "cmd/fabgate/status.h"

#include "gates/app/status_command.h"

namespace fabgate::cli {

Runner define_status(CLI::App& command, const app::CommonOptions& common) {
  // The common exit codes speak of changes; what they mean for a command that only reads the
  // fleet is said here too (gates/app/status_command.h).
  command.footer(command.get_footer() +
                 "\n\nExit codes of status:\n"
                 "  0  the view was read\n"
                 "  2  no coordination: block in fabgate.yaml, or an invalid setting, budgets "
                 "file or inventory\n"
                 "  3  the coordination store could not be read: no evidence of what is in change");
  return [&common](app::Console& console) { return app::run_status(common, console); };
}

}  // namespace fabgate::cli
