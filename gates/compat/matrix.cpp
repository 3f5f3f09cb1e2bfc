#include "gates/compat/matrix.h"

#include <array>

#include "adapters/core/yaml_reader.h"

namespace fabgate::compat {
namespace {

constexpr std::array<Component, 6> kComponents = {Component::os,         Component::kernel,
                                                  Component::frr,        Component::gpu_driver,
                                                  Component::nic_driver, Component::nic_firmware};

std::optional<Component> component_named(std::string_view name) {
  for (auto component : kComponents)
    if (to_string(component) == name) return component;
  return std::nullopt;
}

std::vector<std::string_view> component_names() {
  std::vector<std::string_view> names;
  for (auto component : kComponents) names.push_back(to_string(component));
  return names;
}

// A constraint is one string (">=8.4 <9", "8.4.*") or a list of them, any of which admits.
std::optional<Constraint> read_constraint(YamlReader& reader, const YAML::Node& node,
                                          const std::string& what) {
  Constraint constraint;
  std::vector<YAML::Node> items;
  if (node.IsSequence()) {
    constraint.listed = true;
    for (const auto& item : node) items.push_back(item);
    if (items.empty()) {
      reader.error(node, what + ": an empty list allows nothing",
                   "list the allowed versions, or write \"*\" to allow any version");
      return std::nullopt;
    }
  } else {
    items.push_back(node);
  }
  bool ok = true;
  for (const auto& item : items) {
    if (!item.IsScalar()) {
      reader.error(item, what +
                             " must be a version constraint such as \">=8.4 <9\", \"8.4.*\" "
                             "or a list of them");
      ok = false;
      continue;
    }
    auto alternative = parse_alternative(item.Scalar());
    if (!alternative.ok()) {
      reader.error(item, what + ": " + alternative.error(),
                   "see docs/compat.md for the constraint syntax");
      ok = false;
      continue;
    }
    constraint.alternatives.push_back(std::move(alternative.value()));
  }
  if (!ok) return std::nullopt;
  return constraint;
}

void read_platform(YamlReader& reader, const std::string& platform, const YAML::Node& node,
                   Matrix& matrix) {
  PlatformRequirements entry;
  entry.platform = platform;
  entry.where = reader.at(node);
  std::string what = "platform '" + platform + "'";
  if (node.IsNull()) {  // listed with nothing under it: explicitly nothing required
    matrix.platforms.push_back(std::move(entry));
    return;
  }
  if (!reader.expect_map(node, what)) return;
  auto names = component_names();
  reader.check_keys(node, std::span<const std::string_view>(names.data(), names.size()), what);
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) continue;  // check_keys reported it
    auto component = component_named(it->first.Scalar());
    if (!component) continue;  // check_keys reported it
    std::string component_what = what + " " + std::string(to_string(*component));
    if (!is_per_driver(*component)) {
      if (auto allowed = read_constraint(reader, it->second, component_what))
        entry.requirements.push_back({*component, "", std::move(*allowed), reader.at(it->second)});
      continue;
    }
    if (!it->second.IsMap() || it->second.size() == 0) {
      reader.error(it->second,
                   component_what +
                       " must map NIC driver names to constraints, e.g. "
                       "{mlx5_core: \">=16.35\"}",
                   "the driver is the one `ethtool -i` names; NICs of other drivers are not "
                   "checked");
      continue;
    }
    for (auto driver = it->second.begin(); driver != it->second.end(); ++driver) {
      if (!driver->first.IsScalar() || driver->first.Scalar().empty()) {
        reader.error(driver->first, component_what + ": a driver name must be a plain word");
        continue;
      }
      const std::string& name = driver->first.Scalar();
      if (auto allowed = read_constraint(reader, driver->second, component_what + " " + name))
        entry.requirements.push_back(
            {*component, name, std::move(*allowed), reader.at(driver->second)});
    }
  }
  matrix.platforms.push_back(std::move(entry));
}

}  // namespace

std::string_view to_string(Component component) {
  switch (component) {
    case Component::os:
      return "os";
    case Component::kernel:
      return "kernel";
    case Component::frr:
      return "frr";
    case Component::gpu_driver:
      return "gpu_driver";
    case Component::nic_driver:
      return "nic_driver";
    case Component::nic_firmware:
      return "nic_firmware";
  }
  return "kernel";
}

bool is_per_driver(Component component) {
  return component == Component::nic_driver || component == Component::nic_firmware;
}

std::string_view identity_key(Component component) {
  switch (component) {
    case Component::os:
      return "os";
    case Component::kernel:
      return "kernel";
    case Component::frr:
      return "frr_version";
    case Component::gpu_driver:
      return "gpu_driver";
    case Component::nic_driver:
    case Component::nic_firmware:
      return "nics";
  }
  return "kernel";
}

const PlatformRequirements* Matrix::find(const std::string& platform) const {
  for (const auto& entry : platforms)
    if (entry.platform == platform) return &entry;
  return nullptr;
}

Result<Matrix> load_matrix(std::string_view yaml_text, const std::string& file_name) {
  auto parsed = parse_yaml(yaml_text, file_name);
  if (!parsed) return parsed.error();
  const YAML::Node& root = *parsed;
  Diagnostics diagnostics;
  YamlReader reader(file_name, diagnostics);
  Matrix matrix;
  matrix.file = file_name;
  reader.check_duplicate_keys(root);
  if (root.IsNull()) {
    diagnostics.error(SourceLocation{file_name, 0, 0}, "compatibility matrix is empty",
                      "write 'version: 1' and 'platforms:', or delete the file");
  } else if (reader.expect_map(root, "compatibility matrix")) {
    reader.check_keys(root, {"version", "platforms"}, "compatibility matrix");
    if (auto version =
            reader.integer(root, "version", Need::required, "compatibility matrix", 1, 1000);
        version && *version != 1)
      reader.error(root["version"],
                   "compatibility matrix version " + std::to_string(*version) +
                       " is not supported by this fabgate",
                   "this fabgate reads version 1");
    auto platforms = reader.child(root, "platforms", Need::required, "compatibility matrix");
    if (platforms && reader.expect_map(*platforms, "'platforms'")) {
      for (auto it = platforms->begin(); it != platforms->end(); ++it) {
        if (!it->first.IsScalar() || it->first.Scalar().empty()) {
          reader.error(it->first, "a platform name must be a plain word (frr, rdma-host, ...)");
          continue;
        }
        read_platform(reader, it->first.Scalar(), it->second, matrix);
      }
    }
  }
  if (!diagnostics.empty())
    return Error::invalid_input("compatibility matrix " + file_name + " is invalid",
                                diagnostics.lines());
  return matrix;
}

}  // namespace fabgate::compat
