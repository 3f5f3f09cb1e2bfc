#pragma once

#include <string>

#include "adapters/core/result.h"
#include "gates/app/console.h"

namespace fabgate::app {

// `fabgate inventory import --from containerlab|ansible SOURCE [--out FILE] [--force]`: writes
// a fabgate inventory.yaml from another tool's inventory (gates/inventory).
struct InventoryImportOptions {
  std::string from;         // "containerlab" or "ansible" (the CLI accepts nothing else)
  std::string source_file;  // TOPO.clab.yml, or an Ansible inventory (INI or YAML)
  std::string out_file = "inventory.yaml";
  bool force = false;  // overwrite an existing out_file
};

// Exit codes: accepted (0) when the file was written; invalid input (2) for a source that
// cannot be read or imported (every problem with file:line[:column]) and for an existing
// out_file without force; internal error (1) when out_file cannot be written. The file is
// written atomically: a failed import leaves an existing one as it was.
Result<ExitCode> run_inventory_import(const InventoryImportOptions& options, Console& console);

}  // namespace fabgate::app
