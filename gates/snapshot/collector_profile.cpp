#include "gates/snapshot/collector_profile.h"

#include <algorithm>

#include "adapters/core/byte_size.h"
#include "adapters/core/diagnostics.h"
#include "adapters/core/text.h"
#include "adapters/core/yaml_reader.h"
#include "adapters/gnmi/path.h"
#include "gates/snapshot/normalizers.h"

namespace fabgate::snapshot {

namespace {

// `max_output: 256MiB`: bytes, or a number with B, KiB, MiB or GiB, at most kMaxSourceOutput.
std::optional<std::size_t> max_output(YamlReader& reader, const YAML::Node& node,
                                      const std::string& what) {
  auto text = reader.string(node, "max_output", Need::optional, what);
  if (!text) return std::nullopt;
  const auto bytes = parse_byte_size(*text);
  if (!bytes) {
    reader.error(node["max_output"], what + ": max_output '" + *text + "' is not a size",
                 "write bytes, or a number with B, KiB, MiB or GiB: 256MiB");
    return std::nullopt;
  }
  if (*bytes > kMaxSourceOutput) {
    reader.error(node["max_output"], what + ": max_output " + *text + " is more than 1GiB",
                 "a source's output is held in memory while it is read: at most 1GiB");
    return std::nullopt;
  }
  return static_cast<std::size_t>(*bytes);
}

// Reads `gnmi: {paths: [...], encoding: ...}` of one source. Paths are parsed here, with the
// adapter's parser, so a typo is reported at its line and column when the profile is loaded,
// not as a rejected Get in the middle of a change.
void read_gnmi_source(YamlReader& reader, const YAML::Node& source_node, const std::string& what,
                      CollectorSource& source) {
  const auto& allowed = gnmi_categories();
  if (!source.category.empty() &&
      std::find(allowed.begin(), allowed.end(), source.category) == allowed.end()) {
    reader.error(source_node["category"],
                 "category '" + source.category + "' cannot be collected over gNMI",
                 "gNMI sources fill " + join(allowed, ", ") + "; use commands for the others");
  }
  const YAML::Node node = source_node["gnmi"];
  if (!reader.expect_map(node, "gnmi")) return;
  reader.check_keys(node, {"paths", "encoding", "type"}, "gnmi");
  CollectorGnmiGet get;
  if (auto encoding =
          reader.choice(node, "encoding", Need::optional, "gnmi", {"json_ietf", "json"})) {
    get.encoding = *encoding == "json" ? gnmi::Encoding::json : gnmi::Encoding::json_ietf;
  }
  if (source.category == "config") get.type = gnmi::DataType::config;
  if (auto type = reader.choice(node, "type", Need::optional, "gnmi",
                                {"all", "config", "state", "operational"})) {
    get.type = *type == "config"        ? gnmi::DataType::config
               : *type == "state"       ? gnmi::DataType::state
               : *type == "operational" ? gnmi::DataType::operational
                                        : gnmi::DataType::all;
  }
  auto paths = reader.child(node, "paths", Need::required, what + " gnmi");
  if (paths && reader.expect_sequence(*paths, "paths")) {
    if (paths->size() == 0) reader.error(*paths, what + " has no gNMI paths");
    for (const auto& entry : *paths) {
      if (!entry.IsScalar()) {
        reader.error(entry, "a gNMI path must be a string");
        continue;
      }
      const std::string text = entry.as<std::string>();
      auto parsed = gnmi::parse_path(text);
      if (!parsed) {
        reader.error(entry, parsed.error().describe(text));
        continue;
      }
      get.paths.push_back(text);
    }
  }
  source.gnmi = std::move(get);
}

}  // namespace

const std::vector<std::string>& gnmi_categories() {
  static const std::vector<std::string> categories = {"identity", "interfaces", "bgp", "lldp",
                                                      "routes", "config"};
  return categories;
}

Result<CollectorProfile> parse_collector_profile(std::string_view text, const std::string& file) {
  auto root = parse_yaml(text, file);
  if (!root) return root.error();
  Diagnostics diagnostics;
  YamlReader reader(file, diagnostics);
  CollectorProfile profile;
  profile.file = file;
  const YAML::Node& document = root.value();
  if (reader.expect_map(document, "collector profile")) {
    reader.check_keys(document, {"platform", "ssh_commands", "vtysh_commands", "sources"},
                      "collector profile");
    profile.platform =
        reader.string(document, "platform", Need::required, "collector profile").value_or("");
    if (auto mode = reader.string(document, "ssh_commands", Need::optional, "collector profile")) {
      if (*mode == "one-exec") {
        profile.ssh_commands = SshCommands::one_exec;
      } else if (*mode == "channel-each") {
        profile.ssh_commands = SshCommands::channel_each;
      } else {
        reader.error(document["ssh_commands"], "ssh_commands must be one-exec or channel-each",
                     "one-exec (default): one framed POSIX sh script per device; channel-each: "
                     "every command on its own concurrent channel (docs/ssh.md)");
      }
    }
    if (auto mode =
            reader.string(document, "vtysh_commands", Need::optional, "collector profile")) {
      if (*mode == "separate") {
        profile.vtysh_commands = VtyshCommands::separate;
      } else if (*mode == "together") {
        profile.vtysh_commands = VtyshCommands::together;
      } else {
        reader.error(document["vtysh_commands"], "vtysh_commands must be separate or together",
                     "separate (default): each vtysh -c '...' command is its own vtysh; "
                     "together: all of a device's in one vtysh invocation (docs/ssh.md)");
      }
    }
    auto sources = reader.child(document, "sources", Need::required, "collector profile");
    if (sources && reader.expect_sequence(*sources, "sources")) {
      std::vector<std::string> categories;
      for (const auto& node : *sources) {
        if (!reader.expect_map(node, "source")) continue;
        reader.check_keys(node, {"category", "timeout", "max_output", "commands", "gnmi"},
                          "source");
        CollectorSource source;
        source.category = reader.string(node, "category", Need::required, "source").value_or("");
        if (auto timeout = reader.duration(node, "timeout", Need::optional, "source")) {
          if (timeout->count() <= 0) reader.error(node["timeout"], "timeout must be positive");
          source.timeout = *timeout;
        }
        for (const auto& seen : categories) {
          if (!source.category.empty() && seen == source.category) {
            reader.error(node["category"], "category '" + source.category + "' appears twice");
          }
        }
        categories.push_back(source.category);
        const std::string what = "source '" + source.category + "'";
        const bool has_commands = node["commands"].IsDefined();
        const bool has_gnmi = node["gnmi"].IsDefined();
        if (has_commands && has_gnmi) {
          reader.diagnostics().error(reader.key_at(node, "gnmi"),
                                     what + " has both 'commands' and 'gnmi'",
                                     "a source is collected one way: keep one of them");
        } else if (!has_commands && !has_gnmi) {
          reader.error(node, what + " needs 'commands' or 'gnmi'");
        }
        if (auto bytes = max_output(reader, node, what)) {
          if (has_gnmi)
            reader.error(node["max_output"], what + ": max_output is for commands' output",
                         "a gNMI Get's reply is bounded by the device's max_receive_message_size");
          source.max_output = *bytes;
        }
        if (has_gnmi) {
          read_gnmi_source(reader, node, what, source);
          profile.sources.push_back(std::move(source));
          continue;
        }
        auto commands = reader.child(node, "commands", Need::optional, what);
        if (commands && reader.expect_sequence(*commands, "commands")) {
          if (commands->size() == 0) reader.error(*commands, what + " has no commands");
          for (const auto& entry : *commands) {
            if (!reader.expect_map(entry, "command")) continue;
            reader.check_keys(entry, {"run", "parse"}, "command");
            CollectorCommand command;
            command.run = reader.string(entry, "run", Need::required, "command").value_or("");
            command.parse = reader.string(entry, "parse", Need::required, "command").value_or("");
            const Normalizer* normalizer = find_normalizer(command.parse);
            if (!command.parse.empty() && normalizer == nullptr) {
              auto nearest = nearest_word(command.parse, normalizer_names());
              reader.error(entry["parse"], "unknown normalizer '" + command.parse + "'",
                           nearest ? "did you mean '" + *nearest + "'?"
                                   : "known: " + join(normalizer_names(), ", "));
            } else if (normalizer != nullptr && normalizer->target != source.category) {
              reader.error(entry["parse"], "normalizer '" + command.parse + "' fills '" +
                                               std::string(normalizer->target) + "', not '" +
                                               source.category + "'");
            }
            source.commands.push_back(std::move(command));
          }
        }
        profile.sources.push_back(std::move(source));
      }
    }
  }
  if (!diagnostics.empty()) {
    return Error::invalid_input("collector profile " + file + " is invalid", diagnostics.lines());
  }
  return profile;
}

Result<ProfileSet> load_profiles(const std::map<std::string, std::string>& overrides) {
  ProfileSet profiles;
  std::vector<std::string> problems;
  auto add = [&](const std::string& platform, std::string_view text, const std::string& file) {
    auto profile = parse_collector_profile(text, file);
    if (!profile) {
      problems.push_back(profile.error().message);
      for (const auto& detail : profile.error().details) problems.push_back("  " + detail);
      return;
    }
    if (profile->platform != platform) {
      problems.push_back(file + ": platform '" + profile->platform +
                         "' does not match the file name ('" + platform + "')");
      return;
    }
    profiles[platform] = std::move(profile.value());
  };
  for (const auto& [platform, text] : shipped_profile_texts()) {
    if (overrides.count(platform) == 0) {
      add(platform, text, "policies/collectors/" + platform + ".yaml (shipped)");
    }
  }
  for (const auto& [platform, text] : overrides) {
    add(platform, text, "policies/collectors/" + platform + ".yaml");
  }
  if (!problems.empty()) return Error::invalid_input("collector profiles are invalid", problems);
  return profiles;
}

}  // namespace fabgate::snapshot
