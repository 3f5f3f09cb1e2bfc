#include "gates/app/inventory_command.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "adapters/core/text.h"
#include "gates/inventory/ansible_import.h"
#include "gates/inventory/containerlab_import.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::app {

Result<ExitCode> run_inventory_import(const InventoryImportOptions& options, Console& console) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(options.source_file, error))
    return Error::invalid_input("inventory import: " + options.source_file +
                                ": no such file (or not a regular file)");
  std::ifstream in(options.source_file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof())
    return Error::invalid_input("inventory import: " + options.source_file + ": cannot be read");

  auto imported = options.from == "ansible"
                      ? inventory::import_ansible(text.str(), options.source_file)
                      : inventory::import_containerlab(text.str(), options.source_file);
  if (!imported) return imported.error();
  imported->command = "fabgate inventory import --from " + options.from + " " + options.source_file;

  if (!options.force && std::filesystem::exists(options.out_file, error))
    return Error::invalid_input(options.out_file +
                                    " exists; fabgate inventory import does not "
                                    "overwrite it",
                                {"give --force to replace it, or --out FILE to write elsewhere"});
  // Absolute: the atomic write syncs the parent folder, which a bare file name does not name.
  // A new folder is made as needed (--out net/intent/inventory.yaml).
  auto out_path = std::filesystem::absolute(options.out_file, error);
  if (error)
    return Error::internal("inventory import: " + options.out_file + ": " + error.message());
  auto written =
      pipeline::write_file_atomically(out_path, inventory::render_inventory_yaml(*imported));
  if (!written.ok())
    return Error::internal("inventory import: " + options.out_file + ": " +
                           written.error().message);

  std::map<std::string, int> platforms;
  for (const auto& device : imported->devices) ++platforms[device.platform];
  std::vector<std::string> counts;
  for (const auto& [platform, count] : platforms)
    counts.push_back(std::to_string(count) + " " + platform);
  if (console.json_mode()) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& device : imported->devices) {
      nlohmann::json entry = {{"name", device.name},
                              {"platform", device.platform},
                              {"role", device.role},
                              {"host", device.host},
                              {"from", device.where.to_string()}};
      if (device.port) entry["port"] = *device.port;
      devices.push_back(std::move(entry));
    }
    console.json({{"written", options.out_file},
                  {"devices", std::move(devices)},
                  {"skipped", imported->skipped}});
    return ExitCode::accepted;
  }
  std::size_t n = imported->devices.size();
  console.line("wrote " + options.out_file + ": " + std::to_string(n) + " device" +
               (n == 1 ? "" : "s") + " (" + join(counts, ", ") + ") from " + options.source_file);
  for (const auto& skipped : imported->skipped) console.line("  not imported: " + skipped);
  console.line(
      "  next: check platforms and roles, set credentials.read and credentials.change "
      "(now fabgate-ro and fabgate-rw through the ssh agent), then `fabgate validate`");
  return ExitCode::accepted;
}

}  // namespace fabgate::app
