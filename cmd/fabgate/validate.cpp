#include "cmd/fabgate/validate.h"

#include "gates/app/validate_command.h"

namespace fabgate::cli {

Runner define_validate(CLI::App& command, const app::CommonOptions& common) {
  auto options = std::make_shared<app::ValidateOptions>();
  command.add_option("change", options->change, "Change id or file to validate as well");
  return [options, &common](app::Console& console) {
    return app::run_validate(common, *options, console);
  };
}

}  // namespace fabgate::cli
