#pragma once

// Private to the intent loader: loader.cpp (fabgate.yaml, inventory.yaml, policies/ and the
// public entry points of loader.h) and change_loader.cpp (changes/*.yaml) share the Loader class
// and these helpers. Nothing outside gates/intent includes this header.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/diagnostics.h"
#include "adapters/core/yaml_reader.h"
#include "adapters/git/file_tree.h"
#include "gates/intent/model.h"

namespace fabgate::intent::loading {

bool is_valid_identifier(const std::string& text);
bool is_yaml_file(const std::string& path);

// Loads one intent root. Each method validates one file kind and records every problem in the
// shared Diagnostics; later stages still run on partial results so the user sees everything.
class Loader {
 public:
  Loader(const git::FileTree& files, std::string display_root, Diagnostics& diagnostics)
      : files_(files), display_root_(std::move(display_root)), diagnostics_(diagnostics) {}

  std::optional<YAML::Node> parse(const std::string& path, Need need) {
    auto text = files_.read(path);
    if (!text) {
      if (need == Need::required)
        diagnostics_.error(SourceLocation{display(path), 0, 0}, "file is missing from the commit",
                           "create it and commit it; fabgate reads intent only from git");
      return std::nullopt;
    }
    source_ = *text;
    auto parsed = parse_yaml_located(*text, display(path));
    if (!parsed.ok()) {
      diagnostics_.add(parsed.error());
      return std::nullopt;
    }
    YamlReader reader(display(path), diagnostics_);
    reader.check_duplicate_keys(parsed.value());
    return parsed.value();
  }

  std::string display(const std::string& path) const {
    return display_root_.empty() ? path : display_root_ + "/" + path;
  }

  Settings load_settings();
  Inventory load_inventory(const Settings& settings);
  std::vector<Change> load_changes(const Settings& settings, const Inventory& inventory,
                                   const std::set<std::string>& rule_set_names);
  std::vector<std::string> policy_files(const Settings& settings,
                                        std::set<std::string>& rule_set_names);
  std::map<std::string, std::string> take_policy_texts() { return std::move(policy_texts_); }

 private:
  bool has_prometheus_ = false;  // promql probes need monitoring.prometheus
  MonitoringSettings monitoring_settings(YamlReader& reader, const YAML::Node& node);
  std::optional<CoordinationSettings> coordination_settings(YamlReader& reader,
                                                            const YAML::Node& node);
  std::optional<MonitoringEndpoint> monitoring_endpoint(YamlReader& reader, const YAML::Node& node,
                                                        const std::string& what,
                                                        std::vector<std::string_view> keys);
  std::optional<ExpectedIdentity> expected_identity(YamlReader& reader, const YAML::Node& node,
                                                    const std::string& what);
  std::optional<Credential> credential(YamlReader& reader, const YAML::Node& node,
                                       std::string_view what);
  std::optional<Change> change(const std::string& path, const Inventory& inventory,
                               const Settings& settings,
                               const std::set<std::string>& rule_set_names);
  std::vector<std::string> resolve_targets(YamlReader& reader, const YAML::Node& list,
                                           const Inventory& inventory);
  bool check_device(YamlReader& reader, const YAML::Node& where, const std::string& name,
                    const Inventory& inventory, std::string_view what);
  std::vector<Step> steps(YamlReader& reader, const YAML::Node& list, std::string_view what,
                          const std::vector<std::string>& targets, const Inventory& inventory);
  std::vector<std::string> service_devices(YamlReader& reader, const YAML::Node& list,
                                           std::string_view what, const Change& change,
                                           const Inventory& inventory);
  std::vector<Probe> probes(YamlReader& reader, const YAML::Node& list, const Inventory& inventory);
  void collective_probe(YamlReader& reader, const YAML::Node& node, const std::string& label,
                        const Inventory& inventory, Probe& probe);

  std::map<std::string, std::string> policy_texts_;
  std::string source_;  // text of the file parsed last (a change while its steps are read)

  const git::FileTree& files_;
  std::string display_root_;
  Diagnostics& diagnostics_;
};

}  // namespace fabgate::intent::loading
