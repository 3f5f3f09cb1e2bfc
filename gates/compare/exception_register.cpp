#include "gates/compare/exception_register.h"

#include <set>

#include "adapters/core/yaml_reader.h"

namespace fabgate::compare {

bool ExceptionEntry::covers(const std::string& device_name, const std::string& rule_name,
                            const std::vector<std::string>& relative_path) const {
  if (!glob_match(device, device_name) || !glob_match(rule, rule_name)) return false;
  return !path || path->matches_prefix_of(relative_path);
}

namespace {

std::optional<ExceptionEntry> read_entry(YamlReader& reader, const YAML::Node& node,
                                         std::size_t index, std::set<std::string>& ids) {
  std::string what = "exception " + std::to_string(index + 1);
  if (!reader.expect_map(node, what)) return std::nullopt;
  reader.check_keys(node, {"id", "scope", "reason", "owner", "expiry"}, what);
  ExceptionEntry entry;
  entry.where = reader.at(node);
  auto id = reader.string(node, "id", Need::required, what);
  if (id) {
    what = "exception '" + *id + "'";
    entry.id = *id;
    if (!ids.insert(*id).second)
      reader.error(node["id"], "exception id '" + *id + "' is used twice");
  }
  auto reason = reader.string(node, "reason", Need::required, what);
  auto owner = reader.string(node, "owner", Need::required, what);
  auto expiry = reader.time(node, "expiry", Need::required, what);
  bool ok = id && reason && owner && expiry;
  if (reason) entry.reason = *reason;
  if (owner) entry.owner = *owner;
  if (expiry) entry.expiry = *expiry;

  auto scope = reader.child(node, "scope", Need::required, what);
  if (!scope || !reader.expect_map(*scope, "scope of " + what)) return std::nullopt;
  reader.check_keys(*scope, {"device", "rule", "path"}, "scope of " + what);
  if (auto device = reader.string(*scope, "device", Need::optional, "scope"))
    entry.device = *device;
  if (auto rule = reader.string(*scope, "rule", Need::optional, "scope")) entry.rule = *rule;
  if (auto path = reader.string(*scope, "path", Need::optional, "scope")) {
    std::string problem;
    entry.path = PathPattern::parse(*path, &problem);
    if (!entry.path) {
      reader.error((*scope)["path"], problem, "a path relative to the device: bgp.peers.*.state");
      ok = false;
    } else if (entry.path->segments()[0].text == "devices") {
      reader.error((*scope)["path"],
                   "scope path is relative to the device; drop 'devices.<device>.'");
      ok = false;
    }
  }
  if (!(*scope)["rule"] && !(*scope)["path"]) {
    reader.error(*scope, "scope of " + what + " must name a rule or a path",
                 "a device-wide waiver would hide every future failure on it");
    ok = false;
  }
  if (!ok) return std::nullopt;
  return entry;
}

}  // namespace

Result<ExceptionRegister> load_exception_register(std::string_view yaml_text,
                                                  const std::string& file_name) {
  auto parsed = parse_yaml(yaml_text, file_name);
  if (!parsed) return parsed.error();
  const YAML::Node& root = *parsed;
  Diagnostics diagnostics;
  YamlReader reader(file_name, diagnostics);
  ExceptionRegister result;
  result.file = file_name;
  if (root.IsNull()) return result;  // an empty register waives nothing
  if (reader.expect_map(root, "exceptions register")) {
    reader.check_keys(root, {"exceptions"}, "exceptions register");
    auto list = reader.child(root, "exceptions", Need::optional, "exceptions register");
    if (list && reader.expect_sequence(*list, "'exceptions'")) {
      std::set<std::string> ids;
      for (std::size_t i = 0; i < list->size(); ++i)
        if (auto entry = read_entry(reader, (*list)[i], i, ids))
          result.entries.push_back(std::move(*entry));
    }
  }
  if (!diagnostics.empty())
    return Error::invalid_input("exceptions register " + file_name + " is invalid",
                                diagnostics.lines());
  return result;
}

}  // namespace fabgate::compare
