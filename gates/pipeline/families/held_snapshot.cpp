#include "gates/pipeline/families/held_snapshot.h"

#include <fstream>
#include <utility>

#include "adapters/core/foreign_json.h"
#include "gates/snapshot/snapshot.h"

namespace fabgate::pipeline {

namespace {

// `device`'s document in a snapshot document, or null (typed lookups: never a throw).
const nlohmann::json* device_in(const nlohmann::json& document, const std::string& device) {
  const auto* devices = object_member(document, "devices");
  return devices ? object_member(*devices, device) : nullptr;
}

nlohmann::json* device_in(nlohmann::json& document, const std::string& device) {
  return const_cast<nlohmann::json*>(device_in(std::as_const(document), device));
}

}  // namespace

HeldSnapshot hold(TakenSnapshot&& taken) {
  return HeldSnapshot{std::move(taken.document), std::move(taken.routes)};
}

HeldSnapshot read_baseline(const std::filesystem::path& path) {
  HeldSnapshot held;
  std::error_code absent;
  if (!std::filesystem::exists(path, absent)) return held;
  if (auto parts = compare::load_snapshot_parts(path.string()); parts && parts->root.is_object()) {
    held.document = std::move(parts->root);
    for (auto& [device, tables] : parts->route_tables) {
      // The reader leaves `routes: {}` where it took the lists out.
      if (auto* tree = device_in(held.document, device)) tree->erase("routes");
      held.routes[device] = std::make_shared<const snapshot::RouteTables>(std::move(tables));
    }
    return held;
  }
  std::ifstream in(path);
  auto document = nlohmann::json::parse(in, nullptr, false);
  if (!document.is_discarded() && document.is_object()) held.document = std::move(document);
  return held;
}

Result<compare::Snapshot> comparable_snapshot(const nlohmann::json& document,
                                              const DeviceRouteTables& routes,
                                              const std::string& file) {
  // Without its route lists the document is small; the tables go in as copies.
  auto parsed = compare::parse_snapshot(
      document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), file);
  if (!parsed.ok()) return parsed;
  for (const auto& [device, tables] : routes) {
    auto found = parsed->devices.find(device);
    if (found == parsed->devices.end())
      return Error::invalid_input("snapshot " + file + ": routes for unknown device " + device);
    if (!tables) continue;
    if (found->second.has_routes)
      return Error::invalid_input("snapshot " + file + ": devices." + device +
                                  ".routes is both in the document and kept apart");
    found->second.has_routes = true;
    for (const auto& [family, table] : *tables)
      found->second.routes.insert_or_assign(family, table.clone());
  }
  return parsed;
}

Status write_snapshot_evidence(EvidenceBundle& evidence, const std::string& relative,
                               const nlohmann::json& document, const DeviceRouteTables& routes) {
  std::map<std::string, const snapshot::RouteTables*> tables;
  for (const auto& [device, held] : routes)
    if (held) tables[device] = held.get();
  return evidence.write_redacted_pieces(relative, [&](const EvidenceBundle::TextSink& sink) {
    return snapshot::write_snapshot_document(document, tables, evidence.redactor(), sink) &&
           sink("\n");
  });
}

bool holds_category(const nlohmann::json& document, const DeviceRouteTables& routes,
                    const std::string& device, const std::string& category) {
  if (category == "routes") {
    auto found = routes.find(device);
    if (found != routes.end() && found->second) return true;
  }
  const auto* tree = device_in(document, device);
  return tree && tree->contains(category);
}

void replace_category(HeldSnapshot& into, const std::string& device, const std::string& category,
                      const nlohmann::json& document, const DeviceRouteTables& routes,
                      bool with_source) {
  auto* held = device_in(into.document, device);
  if (!held) return;
  auto& target = *held;
  const auto* from = device_in(document, device);
  if (category == "routes") {
    auto found = routes.find(device);
    if (found != routes.end() && found->second)
      into.routes[device] = found->second;
    else
      into.routes.erase(device);
  }
  if (from && from->contains(category))
    target[category] = (*from)[category];
  else
    target.erase(category);
  const auto* sources = from ? object_member(*from, "sources") : nullptr;
  const auto* source = sources ? object_member(*sources, category) : nullptr;
  if (with_source && source) {
    if (!object_member(target, "sources")) target["sources"] = nlohmann::json::object();
    target["sources"][category] = *source;
  }
}

}  // namespace fabgate::pipeline
