#include "gates/compare/expected_differences.h"

#include "adapters/core/yaml_reader.h"
#include "gates/compare/path_pattern.h"

namespace fabgate::compare {

Result<std::vector<intent::ExpectedDifference>> load_expected_differences(
    std::string_view change_yaml, const std::string& file_name) {
  auto parsed = parse_yaml(change_yaml, file_name);
  if (!parsed) return parsed.error();
  const YAML::Node& root = *parsed;
  Diagnostics diagnostics;
  YamlReader reader(file_name, diagnostics);
  std::vector<intent::ExpectedDifference> out;
  if (!reader.expect_map(root, "change")) {
    return Error::invalid_input("change " + file_name + " is invalid", diagnostics.lines());
  }
  auto compare = reader.child(root, "compare", Need::optional, "change");
  if (!compare) return out;
  if (!reader.expect_map(*compare, "'compare'"))
    return Error::invalid_input("change " + file_name + " is invalid", diagnostics.lines());
  auto list = reader.child(*compare, "expected", Need::optional, "'compare'");
  if (list && reader.expect_sequence(*list, "'compare.expected'")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const YAML::Node item = (*list)[i];
      std::string what = "expected difference " + std::to_string(i + 1);
      if (!reader.expect_map(item, what)) continue;
      reader.check_keys(item, {"device", "path", "values", "absent"}, what);
      intent::ExpectedDifference difference;
      difference.where = reader.at(item);
      auto device = reader.string(item, "device", Need::required, what);
      auto path = reader.string(item, "path", Need::required, what);
      auto values = reader.string_list(item, "values", Need::optional, what, true);
      auto absent = reader.boolean(item, "absent", Need::optional, what);
      if (path) {
        std::string problem;
        auto pattern = PathPattern::parse(*path, &problem);
        if (!pattern)
          reader.error(item["path"], problem);
        else if (pattern->segments()[0].text == "devices")
          reader.error(item["path"], "the path is relative to the device",
                       "write bgp.peers.*.state, not devices.leaf1.bgp.peers.*.state");
      }
      if (absent.value_or(false) && values && !values->empty())
        reader.error(item, what + " cannot both be absent and list values");
      if (!device || !path) continue;
      difference.device = *device;
      difference.path = *path;
      if (values) difference.values = *values;
      difference.absent = absent.value_or(false);
      out.push_back(std::move(difference));
    }
  }
  if (!diagnostics.empty())
    return Error::invalid_input("change " + file_name + " is invalid", diagnostics.lines());
  return out;
}

}  // namespace fabgate::compare
