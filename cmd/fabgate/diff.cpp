#include "cmd/fabgate/diff.h"

#include <memory>

#include "gates/app/diff_command.h"

namespace fabgate::cli {

Runner define_diff(CLI::App& command, const app::CommonOptions& common) {
  auto options = std::make_shared<app::DiffOptions>();
  command.add_option("PRE", options->pre_file, "Snapshot before the change")->required();
  command.add_option("POST", options->post_file, "Snapshot after the change")->required();
  command
      .add_option("--rules", options->rule_files,
                  "Compare rule set file (repeatable; default: built-in fabric-default)")
      ->allow_extra_args(false);  // one file per --rules: PRE and POST are never swallowed
  command.add_option("--change", options->change_file,
                     "Change file whose compare.expected differences replace no-change");
  command.add_option("--exceptions", options->exceptions_file, "Exceptions register file");
  command.add_option("--html", options->html_file,
                     "Also write the comparison as a self-contained HTML page to FILE");
  command
      .add_option("--max-age", options->max_age, "Oldest acceptable snapshot age (0s: no check)")
      ->capture_default_str();
  return [options, &common](app::Console& console) {
    return app::run_diff(*options, common, console);
  };
}

}  // namespace fabgate::cli
