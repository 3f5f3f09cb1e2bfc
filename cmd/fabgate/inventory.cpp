#include "cmd/fabgate/inventory.h"

#include <memory>

#include "gates/app/inventory_command.h"

namespace fabgate::cli {

Runner define_inventory(CLI::App& command, const app::CommonOptions& /*common*/) {
  auto options = std::make_shared<app::InventoryImportOptions>();
  command.require_subcommand(1);
  auto* import = command.add_subcommand(
      "import", "Write an inventory.yaml from a containerlab topology or an Ansible inventory");
  import->add_option("--from", options->from, "What SOURCE is: containerlab or ansible")
      ->required()
      ->check(CLI::IsMember({"containerlab", "ansible"}));
  import
      ->add_option("SOURCE", options->source_file,
                   "TOPO.clab.yml, or an Ansible inventory (INI, or YAML by .yml/.yaml)")
      ->required();
  import->add_option("--out", options->out_file, "Where to write it")->capture_default_str();
  import->add_flag("--force", options->force, "Overwrite --out if it exists");
  return [options](app::Console& console) { return app::run_inventory_import(*options, console); };
}

}  // namespace fabgate::cli
