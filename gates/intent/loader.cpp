#include "gates/intent/loader.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "adapters/core/text.h"
#include "adapters/core/utf8.h"
#include "adapters/core/yaml_reader.h"

namespace fabgate::intent {
namespace {

constexpr std::string_view kLayers[] = {"link",      "control-plane", "forwarding",
                                        "transport", "workload",      "telemetry"};
// A probe may also say it proves the overlay (forwarding across VXLAN): reports keep it apart,
// so EVPN routes being present is never read as the overlay forwarding.
constexpr std::string_view kProbeLayers[] = {"link",      "control-plane", "forwarding", "overlay",
                                             "transport", "workload",      "telemetry"};
constexpr std::string_view kPlatforms[] = {"frr", "linux",   "rdma-host", "openconfig", "sonic",
                                           "eos", "srlinux", "junos",     "nxos"};

bool is_valid_identifier(const std::string& text) {
  static const std::regex pattern("[A-Za-z0-9][A-Za-z0-9._-]*");
  return std::regex_match(text, pattern);
}

bool is_yaml_file(const std::string& path) {
  auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

std::string yaml_to_json_text(const YAML::Node& node) {
  // Values of gNMI Set operations travel as JSON; YAML scalars that look like numbers or
  // booleans become JSON numbers/booleans, everything else strings.
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    static const std::regex number("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
    if (node.Tag() != "!" && (text == "true" || text == "false" || std::regex_match(text, number)))
      return text;
    std::string out = "\"";
    for (char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  if (node.IsSequence()) {
    std::string out = "[";
    bool first = true;
    for (const auto& item : node) {
      if (!first) out += ",";
      out += yaml_to_json_text(item);
      first = false;
    }
    return out + "]";
  }
  if (node.IsMap()) {
    std::string out = "{";
    bool first = true;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!first) out += ",";
      out += "\"" + it->first.Scalar() + "\":" + yaml_to_json_text(it->second);
      first = false;
    }
    return out + "}";
  }
  return "null";
}

// YAML reads a leading '!' as a tag, so `run: ! grep -q x f` silently becomes
// `grep -q x f`, the opposite test. Commands must say what they mean.
// yaml-cpp gives quoted scalars the same "!" tag, so the source character decides.
bool starts_with_tag(const std::string& text, const YAML::Mark& mark) {
  if (mark.is_null() || mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text.size())
    return false;
  return text[static_cast<std::size_t>(mark.pos)] == '!';
}

void check_command_tag(YamlReader& reader, const std::string& source, const YAML::Node& map,
                       std::string_view key) {
  const YAML::Node value = map[std::string(key)];
  if (value.IsDefined() && value.IsScalar() && starts_with_tag(source, value.Mark())) {
    reader.error(value,
                 "'" + std::string(key) + "' starts with a YAML tag ('" + value.Tag() +
                     "'), which YAML removes from the command",
                 "quote the command: " + std::string(key) + ": \"! ...\"");
  }
}

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
  std::vector<Probe> probes(YamlReader& reader, const YAML::Node& list, const Inventory& inventory);
  void collective_probe(YamlReader& reader, const YAML::Node& node, const std::string& label,
                        const Inventory& inventory, Probe& probe);

  std::map<std::string, std::string> policy_texts_;
  std::string source_;  // text of the file parsed last (a change while its steps are read)

  const git::FileTree& files_;
  std::string display_root_;
  Diagnostics& diagnostics_;
};

// ---- fabgate.yaml ---------------------------------------------------------------------------

Settings Loader::load_settings() {
  Settings settings;
  const std::string path = "fabgate.yaml";
  settings.where = SourceLocation{display(path), 1, 1};
  auto root = parse(path, Need::required);
  if (!root) return settings;
  YamlReader reader(display(path), diagnostics_);
  if (!reader.expect_map(*root, "fabgate.yaml")) return settings;
  reader.check_keys(*root,
                    {"version", "inventory", "changes", "policies", "evidence", "ssh", "approval",
                     "snapshot", "compare", "probes", "secrets", "safeguards", "monitoring"},
                    "fabgate.yaml");
  if (auto version = reader.integer(*root, "version", Need::required, "fabgate.yaml", 1, 1000)) {
    if (*version != 1)
      reader.error((*root)["version"],
                   "unsupported fabgate.yaml version " + std::to_string(*version),
                   "this fabgate understands version 1");
  }
  if (auto v = reader.string(*root, "inventory", Need::optional, "fabgate.yaml"))
    settings.inventory = *v;
  if (auto v = reader.string(*root, "changes", Need::optional, "fabgate.yaml"))
    settings.changes_dir = *v;
  if (auto v = reader.string(*root, "policies", Need::optional, "fabgate.yaml"))
    settings.policies_dir = *v;
  if (auto v = reader.string(*root, "evidence", Need::optional, "fabgate.yaml"))
    settings.evidence_dir = *v;

  if (auto ssh = reader.child(*root, "ssh", Need::optional, "fabgate.yaml")) {
    if (reader.expect_map(*ssh, "ssh")) {
      reader.check_keys(*ssh,
                        {"known_hosts", "config", "connect_timeout", "command_timeout",
                         "parallelism", "shell_startup_timeout", "slow_shell_startup"},
                        "ssh");
      if (auto v = reader.string(*ssh, "known_hosts", Need::optional, "ssh"))
        settings.ssh.known_hosts = *v;
      if (auto v = reader.string(*ssh, "config", Need::optional, "ssh")) settings.ssh.config = *v;
      if (auto v = reader.duration(*ssh, "connect_timeout", Need::optional, "ssh"))
        settings.ssh.connect_timeout = *v;
      if (auto v = reader.duration(*ssh, "command_timeout", Need::optional, "ssh"))
        settings.ssh.command_timeout = *v;
      if (auto v = reader.integer(*ssh, "parallelism", Need::optional, "ssh", 1, 4096))
        settings.ssh.parallelism = static_cast<int>(*v);
      if (auto v = reader.duration(*ssh, "shell_startup_timeout", Need::optional, "ssh"))
        settings.ssh.shell_startup_timeout = *v;
      if (auto v = reader.duration(*ssh, "slow_shell_startup", Need::optional, "ssh"))
        settings.ssh.slow_shell_startup = *v;
    }
  }
  if (auto approval = reader.child(*root, "approval", Need::optional, "fabgate.yaml")) {
    if (reader.expect_map(*approval, "approval")) {
      reader.check_keys(*approval,
                        {"min_approvals", "require_rehearsal", "allowed_signers", "max_age"},
                        "approval");
      if (auto v = reader.integer(*approval, "min_approvals", Need::optional, "approval", 0, 16))
        settings.approval.min_approvals = static_cast<int>(*v);
      if (auto v = reader.boolean(*approval, "require_rehearsal", Need::optional, "approval"))
        settings.approval.require_rehearsal = *v;
      if (auto v = reader.string(*approval, "allowed_signers", Need::optional, "approval"))
        settings.approval.allowed_signers = *v;
      if (auto v = reader.duration(*approval, "max_age", Need::optional, "approval")) {
        if (v->count() <= 0)
          reader.error((*approval)["max_age"], "max_age in approval must be longer than 0",
                       "leave it out for approvals that do not expire, or write e.g. 24h");
        else
          settings.approval.max_age = *v;
      }
    }
  }
  if (auto probes = reader.child(*root, "probes", Need::optional, "fabgate.yaml")) {
    if (reader.expect_map(*probes, "probes")) {
      reader.check_keys(*probes, {"binary", "port"}, "probes");
      if (auto v = reader.string(*probes, "binary", Need::optional, "probes"))
        settings.probes.binary = *v;
      if (auto v = reader.integer(*probes, "port", Need::optional, "probes", 1, 65533))
        settings.probes.port = static_cast<int>(*v);
    }
  }
  if (auto snapshot = reader.child(*root, "snapshot", Need::optional, "fabgate.yaml")) {
    if (reader.expect_map(*snapshot, "snapshot")) {
      reader.check_keys(*snapshot, {"max_age"}, "snapshot");
      if (auto v = reader.duration(*snapshot, "max_age", Need::optional, "snapshot"))
        settings.snapshot_max_age = *v;
    }
  }
  if (auto safeguards = reader.child(*root, "safeguards", Need::optional, "fabgate.yaml")) {
    if (reader.expect_map(*safeguards, "safeguards")) {
      reader.check_keys(*safeguards, {"lock_dir", "timer_dir"}, "safeguards");
      for (auto [key, into] : {std::pair{"lock_dir", &settings.safeguards.lock_dir},
                               std::pair{"timer_dir", &settings.safeguards.timer_dir}}) {
        auto value = reader.string(*safeguards, key, Need::optional, "safeguards");
        if (!value) continue;
        if (value->empty() || value->front() != '/')
          reader.error((*safeguards)[key], std::string(key) + " must be an absolute path",
                       "it is a folder on each device, e.g. /var/tmp/fabgate-locks");
        else
          *into = *value;
      }
    }
  }
  if (auto secrets = reader.child(*root, "secrets", Need::optional, "fabgate.yaml")) {
    if (reader.expect_map(*secrets, "secrets")) {
      reader.check_keys(*secrets, {"env"}, "secrets");
      if (auto names = reader.string_list(*secrets, "env", Need::optional, "secrets")) {
        for (std::size_t i = 0; i < names->size(); ++i) {
          const auto& name = (*names)[i];
          bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
          for (char c : name)
            valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
          if (!valid)
            reader.error((*secrets)["env"][i], "'" + name + "' is not an environment variable name",
                         "letters, digits and '_', not starting with a digit");
        }
        settings.secret_env = *names;
      }
    }
  }
  if (auto monitoring = reader.child(*root, "monitoring", Need::optional, "fabgate.yaml"))
    settings.monitoring = monitoring_settings(reader, *monitoring);
  if (auto compare = reader.child(*root, "compare", Need::optional, "fabgate.yaml")) {
    if (reader.expect_map(*compare, "compare")) {
      reader.check_keys(*compare, {"rule_sets"}, "compare");
      if (auto v = reader.string_list(*compare, "rule_sets", Need::optional, "compare"))
        settings.rule_sets = *v;
    }
  }
  return settings;
}

// `monitoring:` in fabgate.yaml (docs/monitoring.md "Settings").
std::optional<MonitoringEndpoint> Loader::monitoring_endpoint(YamlReader& reader,
                                                              const YAML::Node& node,
                                                              const std::string& what,
                                                              std::vector<std::string_view> keys) {
  for (auto key : {"url", "ca_file", "token_env", "timeout"}) keys.push_back(key);
  reader.check_keys(node, std::span<const std::string_view>(keys.data(), keys.size()), what);
  MonitoringEndpoint endpoint;
  endpoint.where = reader.at(node);
  auto url = reader.string(node, "url", Need::required, what);
  if (!url) return std::nullopt;
  endpoint.url = *url;
  bool https = url->rfind("https://", 0) == 0;
  if (!https && url->rfind("http://", 0) != 0)
    reader.error(node["url"], what + " url '" + *url + "' is not an http:// or https:// URL");
  if (auto v = reader.string(node, "ca_file", Need::optional, what)) endpoint.ca_file = *v;
  if (auto v = reader.string(node, "token_env", Need::optional, what)) endpoint.token_env = *v;
  if (auto v = reader.duration(node, "timeout", Need::optional, what)) {
    if (v->count() <= 0 || *v > Duration{120'000})
      reader.error(node["timeout"], what + " timeout must be between 1ms and 2m");
    else
      endpoint.timeout = *v;
  }
  if (!endpoint.token_env.empty() && !https)
    reader.error(node["token_env"], what + " sends a bearer token over plain http",
                 "use an https:// url with a ca_file, or leave token_env out");
  return endpoint;
}

MonitoringSettings Loader::monitoring_settings(YamlReader& reader, const YAML::Node& node) {
  MonitoringSettings out;
  if (!reader.expect_map(node, "monitoring")) return out;
  reader.check_keys(node, {"prometheus", "alertmanager"}, "monitoring");
  if (auto prometheus = reader.child(node, "prometheus", Need::optional, "monitoring")) {
    const std::string what = "monitoring.prometheus";
    if (reader.expect_map(*prometheus, what)) {
      auto endpoint = monitoring_endpoint(reader, *prometheus, what,
                                          {"series", "max_age", "fresh", "identity"});
      if (endpoint) {
        PrometheusSettings settings;
        settings.endpoint = *endpoint;
        if (auto v = reader.string(*prometheus, "series", Need::optional, what)) {
          settings.series = *v;
          if (v->find("{{") == std::string::npos || v->find('=') == std::string::npos)
            reader.error((*prometheus)["series"],
                         what + " series '" + *v + "' does not name the device",
                         "a label matcher template such as instance=\"{{mgmt}}:9100\" or "
                         "device=\"{{name}}\"");
        }
        if (auto v = reader.duration(*prometheus, "max_age", Need::optional, what)) {
          if (v->count() <= 0)
            reader.error((*prometheus)["max_age"], what + " max_age must be longer than 0");
          else
            settings.max_age = *v;
        }
        if (auto v = reader.string_list(*prometheus, "fresh", Need::optional, what)) {
          static const std::regex metric("[a-zA-Z_:][a-zA-Z0-9_:]*");
          for (std::size_t i = 0; i < v->size(); ++i)
            if (!std::regex_match((*v)[i], metric))
              reader.error((*prometheus)["fresh"][i],
                           "'" + (*v)[i] + "' in " + what + " fresh is not a metric name");
          settings.fresh = *v;
        }
        if (auto identity = reader.child(*prometheus, "identity", Need::optional, what)) {
          if (identity->IsScalar() && identity->Scalar() == "none") {
            settings.identity_metric.clear();
          } else if (reader.expect_map(*identity, what + " identity")) {
            reader.check_keys(*identity, {"metric", "label"}, what + " identity");
            if (auto v = reader.string(*identity, "metric", Need::required, what + " identity"))
              settings.identity_metric = *v;
            if (auto v = reader.string(*identity, "label", Need::required, what + " identity"))
              settings.identity_label = *v;
          }
        }
        out.prometheus = settings;
      }
    }
  }
  if (auto alertmanager = reader.child(node, "alertmanager", Need::optional, "monitoring")) {
    const std::string what = "monitoring.alertmanager";
    if (reader.expect_map(*alertmanager, what)) {
      auto endpoint = monitoring_endpoint(reader, *alertmanager, what,
                                          {"device_label", "failure_domain", "silence"});
      if (endpoint) {
        AlertmanagerSettings settings;
        settings.endpoint = *endpoint;
        if (auto v = reader.string(*alertmanager, "device_label", Need::optional, what))
          settings.device_label = *v;
        if (auto v = reader.string_list(*alertmanager, "failure_domain", Need::optional, what))
          settings.failure_domain = *v;
        if (auto v = reader.boolean(*alertmanager, "silence", Need::optional, what))
          settings.silence = *v;
        out.alertmanager = settings;
      }
    }
  }
  return out;
}

// ---- inventory.yaml -------------------------------------------------------------------------

std::optional<Credential> Loader::credential(YamlReader& reader, const YAML::Node& node,
                                             std::string_view what) {
  if (!reader.expect_map(node, what)) return std::nullopt;
  reader.check_keys(node, {"user", "identity_file", "agent", "password"}, what);
  if (node["password"].IsDefined()) {
    reader.error(node["password"], "passwords are not accepted in " + std::string(what),
                 "use identity_file (a key) or the ssh-agent; fabgate never reads passwords from "
                 "files");
  }
  Credential out;
  auto user = reader.string(node, "user", Need::required, what);
  if (!user) return std::nullopt;
  out.user = *user;
  if (auto v = reader.string(node, "identity_file", Need::optional, what)) out.identity_file = *v;
  if (auto v = reader.boolean(node, "agent", Need::optional, what)) out.use_agent = *v;
  if (!out.use_agent && out.identity_file.empty()) {
    reader.error(node, std::string(what) + " has neither an identity_file nor the agent",
                 "set identity_file or agent: true");
  }
  return out;
}

// `identity: leaf2` (the hostname) or `identity: {hostname, serial, system_mac}`.
std::optional<ExpectedIdentity> Loader::expected_identity(YamlReader& reader,
                                                          const YAML::Node& node,
                                                          const std::string& what) {
  ExpectedIdentity identity;
  identity.where = reader.at(node);
  const std::string label = what + " identity";
  if (node.IsScalar()) {
    identity.hostname = node.Scalar();
  } else if (reader.expect_map(node, label)) {
    reader.check_keys(node, {"hostname", "serial", "system_mac"}, label);
    if (auto v = reader.string(node, "hostname", Need::optional, label)) identity.hostname = *v;
    if (auto v = reader.string(node, "serial", Need::optional, label)) identity.serial = *v;
    if (auto v = reader.string(node, "system_mac", Need::optional, label)) {
      static const std::regex mac("[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}");
      if (!std::regex_match(*v, mac))
        reader.error(node["system_mac"], label + ": '" + *v + "' is not a MAC address",
                     "write six colon-separated hex bytes, e.g. 02:00:00:00:00:01");
      identity.system_mac = *v;
      for (auto& c : identity.system_mac)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  } else {
    return std::nullopt;
  }
  if (identity.hostname.empty() && identity.serial.empty() && identity.system_mac.empty()) {
    reader.error(node, label + " declares nothing to check",
                 "give the hostname (identity: leaf2) or hostname/serial/system_mac");
    return std::nullopt;
  }
  return identity;
}

Inventory Loader::load_inventory(const Settings& settings) {
  Inventory inventory;
  auto root = parse(settings.inventory, Need::required);
  if (!root) return inventory;
  YamlReader reader(display(settings.inventory), diagnostics_);
  if (!reader.expect_map(*root, "inventory")) return inventory;
  reader.check_keys(*root, {"credentials", "devices"}, "inventory");

  std::optional<Credential> default_read, default_change;
  if (auto credentials = reader.child(*root, "credentials", Need::optional, "inventory")) {
    if (reader.expect_map(*credentials, "credentials")) {
      reader.check_keys(*credentials, {"read", "change"}, "credentials");
      if (auto n = reader.child(*credentials, "read", Need::optional, "credentials"))
        default_read = credential(reader, *n, "credentials.read");
      if (auto n = reader.child(*credentials, "change", Need::optional, "credentials"))
        default_change = credential(reader, *n, "credentials.change");
    }
  }

  auto devices = reader.child(*root, "devices", Need::required, "inventory");
  if (!devices || !reader.expect_map(*devices, "devices")) return inventory;
  std::set<std::string> seen;
  for (auto it = devices->begin(); it != devices->end(); ++it) {
    const std::string name = it->first.Scalar();
    const YAML::Node node = it->second;
    const std::string what = "device '" + name + "'";
    if (!seen.insert(name).second) continue;  // duplicate already reported
    if (!is_valid_identifier(name)) {
      reader.error(it->first, "device name '" + name + "' is not a valid name",
                   "use letters, digits, '.', '_' and '-'");
    }
    if (!reader.expect_map(node, what)) continue;
    reader.check_keys(
        node,
        {"platform", "role", "ssh", "gnmi", "credentials", "data_addresses", "labels", "identity"},
        what);
    Device device;
    device.name = name;
    device.where = reader.at(it->first);
    if (auto v = reader.string(node, "platform", Need::required, what)) {
      device.platform = *v;
      if (std::find(std::begin(kPlatforms), std::end(kPlatforms), *v) == std::end(kPlatforms)) {
        std::string hint =
            "known platforms: frr, linux, rdma-host, openconfig, sonic, eos, srlinux, junos, nxos";
        if (auto s = nearest_word(*v, kPlatforms)) hint = "did you mean '" + *s + "'? " + hint;
        reader.error(node["platform"], "unknown platform '" + *v + "' for " + what, hint);
      }
    }
    if (auto v = reader.string(node, "role", Need::required, what)) device.role = *v;

    if (auto ssh = reader.child(node, "ssh", Need::required, what)) {
      if (reader.expect_map(*ssh, what + " ssh")) {
        reader.check_keys(*ssh, {"host", "port"}, what + " ssh");
        if (auto v = reader.string(*ssh, "host", Need::required, what + " ssh"))
          device.ssh.host = *v;
        if (auto v = reader.integer(*ssh, "port", Need::optional, what + " ssh", 1, 65535))
          device.ssh.port = static_cast<int>(*v);
      }
    }
    if (auto gnmi = reader.child(node, "gnmi", Need::optional, what)) {
      if (reader.expect_map(*gnmi, what + " gnmi")) {
        reader.check_keys(
            *gnmi, {"host", "port", "tls", "ca_file", "cert_file", "key_file", "credentials_env"},
            what + " gnmi");
        GnmiEndpoint endpoint;
        if (auto v = reader.string(*gnmi, "host", Need::required, what + " gnmi"))
          endpoint.host = *v;
        if (auto v = reader.integer(*gnmi, "port", Need::optional, what + " gnmi", 1, 65535))
          endpoint.port = static_cast<int>(*v);
        if (auto v = reader.boolean(*gnmi, "tls", Need::optional, what + " gnmi"))
          endpoint.tls = *v;
        if (auto v = reader.string(*gnmi, "ca_file", Need::optional, what + " gnmi"))
          endpoint.ca_file = *v;
        if (auto v = reader.string(*gnmi, "cert_file", Need::optional, what + " gnmi"))
          endpoint.cert_file = *v;
        if (auto v = reader.string(*gnmi, "key_file", Need::optional, what + " gnmi"))
          endpoint.key_file = *v;
        if (auto v = reader.string(*gnmi, "credentials_env", Need::optional, what + " gnmi"))
          endpoint.credentials_env = *v;
        if (endpoint.tls && endpoint.ca_file.empty())
          reader.error(*gnmi, what + " gnmi uses TLS but names no ca_file",
                       "set ca_file, or tls: false for a lab target");
        if (endpoint.cert_file.empty() != endpoint.key_file.empty())
          reader.error(*gnmi, what + " gnmi needs both cert_file and key_file, or neither");
        device.gnmi = endpoint;
      }
    }
    std::optional<Credential> read = default_read, change = default_change;
    if (auto credentials = reader.child(node, "credentials", Need::optional, what)) {
      if (reader.expect_map(*credentials, what + " credentials")) {
        reader.check_keys(*credentials, {"read", "change"}, what + " credentials");
        if (auto n = reader.child(*credentials, "read", Need::optional, what))
          read = credential(reader, *n, what + " credentials.read");
        if (auto n = reader.child(*credentials, "change", Need::optional, what))
          change = credential(reader, *n, what + " credentials.change");
      }
    }
    if (!read || !change) {
      reader.error(it->first,
                   what + " has no " + std::string(!read ? "read" : "change") + " credential",
                   "define credentials.read and credentials.change at the top of the inventory "
                   "or on the device");
    } else {
      device.read = *read;
      device.change = *change;
      if (read->user == change->user && read->identity_file == change->identity_file &&
          !read->identity_file.empty()) {
        reader.error(it->first, what + " uses the same login for reading and changing",
                     "give the read credential its own key so snapshots and probes can never "
                     "change the device");
      }
    }
    if (auto v = reader.string_list(node, "data_addresses", Need::optional, what))
      device.data_addresses = *v;
    if (auto labels = reader.child(node, "labels", Need::optional, what)) {
      if (reader.expect_map(*labels, what + " labels")) {
        for (auto label = labels->begin(); label != labels->end(); ++label) {
          if (label->second.IsScalar())
            device.labels[label->first.Scalar()] = label->second.Scalar();
          else
            reader.error(label->second, "label values of " + what + " must be strings");
        }
      }
    }
    if (auto identity = reader.child(node, "identity", Need::optional, what))
      device.identity = expected_identity(reader, *identity, what);
    inventory.devices.push_back(std::move(device));
  }
  if (inventory.devices.empty() && diagnostics_.empty())
    reader.error(*devices, "the inventory has no devices");
  return inventory;
}

// ---- policies/ ------------------------------------------------------------------------------

std::vector<std::string> Loader::policy_files(const Settings& settings,
                                              std::set<std::string>& rule_set_names) {
  std::vector<std::string> out = files_.list(settings.policies_dir);
  for (const auto& path : out) {
    auto text = files_.read(path);
    if (text) policy_texts_[path] = *text;
    if (!is_yaml_file(path)) {
      // YAML files are checked by parse_yaml; the others (allowed_signers) are intent too.
      if (auto bad = text ? find_invalid_utf8(*text) : std::nullopt)
        diagnostics_.error(SourceLocation{display(path), bad->line, bad->column}, bad->describe(),
                           "intent files must be UTF-8");
      continue;
    }
    auto root = parse(path, Need::required);
    if (!root) continue;
    // Rule sets are named by their `name:`; the compare engine validates their content.
    std::string compare_dir = settings.policies_dir + "/compare/";
    if (path.rfind(compare_dir, 0) == 0 && root->IsMap() && (*root)["name"].IsScalar())
      rule_set_names.insert((*root)["name"].Scalar());
  }
  return out;
}

// ---- changes/*.yaml -------------------------------------------------------------------------

// acceptance.expected_flaps: "DEVICE:INTERFACE" or "DEVICE:bgp ADDRESS", the device in the
// inventory. Each entry is checked where it stands, so a typo names its line and column.
static std::vector<std::string> expected_flaps(YamlReader& reader, const YAML::Node& acceptance,
                                               const Inventory& inventory) {
  std::vector<std::string> out;
  auto list = reader.child(acceptance, "expected_flaps", Need::optional, "acceptance");
  if (!list || !reader.expect_sequence(*list, "acceptance.expected_flaps")) return out;
  for (const auto& item : *list) {
    const std::string text = item.IsScalar() ? item.as<std::string>() : std::string();
    const auto colon = text.find(':');
    const std::string device = colon == std::string::npos ? "" : text.substr(0, colon);
    const std::string subject = colon == std::string::npos ? "" : text.substr(colon + 1);
    if (device.empty() || subject.empty() || subject == "bgp" || subject == "bgp ") {
      reader.error(item,
                   "acceptance.expected_flaps entry '" + text +
                       "' is not DEVICE:INTERFACE or DEVICE:bgp ADDRESS",
                   "e.g. 'leaf1:to-host2' or 'spine1:bgp 10.0.1.1'");
      continue;
    }
    if (!inventory.find(device)) {
      std::vector<std::string> names;
      for (const auto& known : inventory.devices) names.push_back(known.name);
      std::string hint = "add it to the inventory or fix the name";
      if (auto near = nearest_word(device, names)) hint = "did you mean '" + *near + "'?";
      reader.error(
          item,
          "acceptance.expected_flaps names device '" + device + "', which is not in the inventory",
          hint);
      continue;
    }
    out.push_back(text);
  }
  return out;
}

bool Loader::check_device(YamlReader& reader, const YAML::Node& where, const std::string& name,
                          const Inventory& inventory, std::string_view what) {
  if (inventory.find(name)) return true;
  std::vector<std::string> names;
  for (const auto& device : inventory.devices) names.push_back(device.name);
  std::string hint = "add it to the inventory or fix the name";
  if (auto s = nearest_word(name, names)) hint = "did you mean '" + *s + "'?";
  reader.error(where,
               std::string(what) + " names device '" + name + "', which is not in the inventory",
               hint);
  return false;
}

std::vector<std::string> Loader::resolve_targets(YamlReader& reader, const YAML::Node& list,
                                                 const Inventory& inventory) {
  std::vector<std::string> targets;
  auto add = [&](const std::string& name) {
    if (std::find(targets.begin(), targets.end(), name) == targets.end()) targets.push_back(name);
  };
  for (const auto& item : list) {
    if (!item.IsScalar()) {
      reader.error(item, "targets must be device names or role:ROLE");
      continue;
    }
    const std::string& text = item.Scalar();
    if (text.rfind("role:", 0) == 0) {
      std::string role = text.substr(5);
      std::size_t before = targets.size();
      for (const auto& device : inventory.devices)
        if (device.role == role) add(device.name);
      if (targets.size() == before)
        reader.error(item, "target '" + text + "' matches no device in the inventory");
      continue;
    }
    if (check_device(reader, item, text, inventory, "targets")) add(text);
  }
  return targets;
}

std::vector<Step> Loader::steps(YamlReader& reader, const YAML::Node& list, std::string_view what,
                                const std::vector<std::string>& targets,
                                const Inventory& inventory) {
  std::vector<Step> out;
  if (!reader.expect_sequence(list, what)) return out;
  int index = 0;
  for (const auto& node : list) {
    ++index;
    std::string label = std::string(what) + " #" + std::to_string(index);
    if (!reader.expect_map(node, label)) continue;
    reader.check_keys(node, {"device", "run", "gnmi", "description", "timeout"}, label);
    Step step;
    step.where = reader.at(node);
    auto device = reader.string(node, "device", Need::required, label);
    if (device) {
      step.device = *device;
      if (check_device(reader, node["device"], *device, inventory, label) &&
          std::find(targets.begin(), targets.end(), *device) == targets.end()) {
        reader.error(node["device"],
                     label + " acts on '" + *device + "', which is not a target of this change",
                     "add it to targets so bounds and waves cover it");
      }
    }
    if (auto v = reader.string(node, "description", Need::optional, label)) step.description = *v;
    if (auto v = reader.duration(node, "timeout", Need::optional, label)) step.timeout = *v;
    bool has_run = node["run"].IsDefined();
    bool has_gnmi = node["gnmi"].IsDefined();
    if (has_run == has_gnmi) {
      reader.error(node, label +
                             " must have exactly one of 'run' (a command over SSH) or "
                             "'gnmi' (a list of Set operations)");
    } else if (has_run) {
      check_command_tag(reader, source_, node, "run");
      if (auto v = reader.string(node, "run", Need::required, label)) step.run = *v;
    } else {
      const YAML::Node operations = node["gnmi"];
      if (reader.expect_sequence(operations, label + " gnmi")) {
        for (const auto& op_node : operations) {
          if (!reader.expect_map(op_node, label + " gnmi operation")) continue;
          reader.check_keys(op_node, {"op", "path", "value"}, label + " gnmi operation");
          GnmiSetOperation op;
          if (auto v = reader.choice(op_node, "op", Need::required, label + " gnmi operation",
                                     {"update", "replace", "delete"}))
            op.op = *v;
          if (auto v = reader.string(op_node, "path", Need::required, label + " gnmi operation"))
            op.path = *v;
          if (op_node["value"].IsDefined()) op.value = yaml_to_json_text(op_node["value"]);
          if (op.op == "delete" && !op.value.empty())
            reader.error(op_node["value"], "a gNMI delete takes no value");
          if ((op.op == "update" || op.op == "replace") && op.value.empty())
            reader.error(op_node, "a gNMI " + op.op + " needs a value");
          step.gnmi_set.push_back(std::move(op));
        }
      }
      if (device) {
        const Device* target = inventory.find(*device);
        if (target && !target->gnmi)
          reader.error(node["gnmi"], label + " uses gNMI but device '" + *device +
                                         "' has no gnmi endpoint in the inventory");
      }
    }
    out.push_back(std::move(step));
  }
  return out;
}

// Probe keys that only one kind reads (docs/probes.md, docs/monitoring.md).
constexpr const char* kCollectiveOnlyKeys[] = {"hosts",      "role",      "pattern",
                                               "iterations", "transport", "max_tail_ratio",
                                               "max_p99",    "tail_floor"};
constexpr const char* kPromqlOnlyKeys[] = {"query", "expect", "range", "empty_is_zero"};

// kind: collective — N ranks on N hosts (docs/probes.md). Keys of the other kinds are refused
// rather than ignored.
void Loader::collective_probe(YamlReader& reader, const YAML::Node& node, const std::string& label,
                              const Inventory& inventory, Probe& probe) {
  for (const char* key : {"host", "run", "target", "flows", "source"})
    if (node[key])
      reader.error(node[key], label + " (collective) does not take '" + key + "'",
                   "name the ranks with 'hosts' or 'role'");
  for (const char* key : kPromqlOnlyKeys)
    if (node[key])
      reader.error(node[key], label + " (collective) does not take '" + key + "'",
                   "'" + std::string(key) + "' is for promql probes");
  const bool has_hosts = static_cast<bool>(node["hosts"]);
  const bool has_role = static_cast<bool>(node["role"]);
  if (has_hosts == has_role) {
    reader.error(node, label + " (collective) needs exactly one of 'hosts' or 'role'",
                 "hosts: [host1, host2, ...] or role: host");
  } else if (has_hosts) {
    if (auto v = reader.string_list(node, "hosts", Need::required, label)) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < v->size(); ++i) {
        const std::string& host = (*v)[i];
        check_device(reader, node["hosts"][i], host, inventory, label);
        if (!seen.insert(host).second)
          reader.error(node["hosts"][i], label + " names host '" + host + "' twice",
                       "one rank per host");
        probe.hosts.push_back(host);
      }
    }
  } else if (auto role = reader.string(node, "role", Need::required, label)) {
    for (const auto& device : inventory.devices)
      if (device.role == *role) probe.hosts.push_back(device.name);
    if (probe.hosts.empty())
      reader.error(node["role"], label + ": no device in the inventory has role '" + *role + "'");
  }
  if (!probe.hosts.empty() && probe.hosts.size() < 2)
    reader.error(has_hosts ? node["hosts"] : node["role"],
                 label + " (collective) needs at least 2 ranks");
  if (!probe.hosts.empty()) probe.host = probe.hosts.front();
  if (auto v = reader.choice(node, "pattern", Need::optional, label, {"ring", "all-to-all"}))
    probe.pattern = *v;
  if (auto v = reader.integer(node, "size", Need::optional, label, 1, 256LL << 20))
    probe.collective_size = *v;
  if (auto v = reader.integer(node, "iterations", Need::optional, label, 1, 100000))
    probe.iterations = static_cast<int>(*v);
  if (auto v = reader.choice(node, "transport", Need::optional, label, {"tcp", "rdma"}))
    probe.transport = *v;
  if (auto v = reader.number(node, "max_tail_ratio", Need::optional, label)) {
    if (*v < 1.0)
      reader.error(node["max_tail_ratio"], label + ": max_tail_ratio must be at least 1",
                   "the slowest rank's p99 over the median rank's p99; 3 is a usual bound");
    else
      probe.max_tail_ratio = *v;
  }
  if (auto v = reader.duration(node, "max_p99", Need::optional, label)) probe.max_p99 = *v;
  if (auto v = reader.duration(node, "tail_floor", Need::optional, label)) probe.tail_floor = *v;
  if (auto v = reader.duration(node, "timeout", Need::optional, label)) probe.timeout = *v;
  if (!node["layer"]) probe.layer = "workload";
}

std::vector<Probe> Loader::probes(YamlReader& reader, const YAML::Node& list,
                                  const Inventory& inventory) {
  std::vector<Probe> out;
  if (!reader.expect_sequence(list, "acceptance.probes")) return out;
  std::set<std::string> names;
  int index = 0;
  for (const auto& node : list) {
    ++index;
    std::string label = "probe #" + std::to_string(index);
    if (!reader.expect_map(node, label)) continue;
    reader.check_keys(
        node, {"name",    "layer",      "host",      "kind",           "run",     "target",
               "flows",   "size",       "source",    "timeout",        "hosts",   "role",
               "pattern", "iterations", "transport", "max_tail_ratio", "max_p99", "tail_floor",
               "query",   "expect",     "range",     "empty_is_zero"},
        label);
    Probe probe;
    probe.where = reader.at(node);
    if (auto v = reader.string(node, "name", Need::required, label)) {
      probe.name = *v;
      label = "probe '" + *v + "'";
      if (!names.insert(*v).second) reader.error(node["name"], "duplicate probe name '" + *v + "'");
    }
    if (auto v = reader.string(node, "layer", Need::optional, label)) {
      if (std::find(std::begin(kProbeLayers), std::end(kProbeLayers), *v) ==
          std::end(kProbeLayers)) {
        std::string hint =
            "layers: link, control-plane, forwarding, overlay, transport, workload, telemetry";
        if (auto s = nearest_word(*v, kProbeLayers)) hint = "did you mean '" + *s + "'? " + hint;
        reader.error(node["layer"], label + " has unknown layer '" + *v + "'", hint);
      } else {
        probe.layer = *v;
      }
    }
    if (auto v = reader.choice(node, "kind", Need::optional, label,
                               {"command", "flows", "rdma", "collective", "promql"}))
      probe.kind = *v;
    if (probe.kind == "collective") {
      collective_probe(reader, node, label, inventory, probe);
      out.push_back(std::move(probe));
      continue;
    }
    // Keys of the collective kind are refused rather than ignored: a rank list or a tail bound
    // written on a flows probe would otherwise read as checked while nothing uses it.
    for (const char* key : kCollectiveOnlyKeys)
      if (node[key].IsDefined())
        reader.error(node[key], label + " (" + probe.kind + ") does not take '" + key + "'",
                     "'" + std::string(key) + "' is for collective probes");
    if (auto v = reader.string(node, "host", Need::required, label)) {
      probe.host = *v;
      check_device(reader, node["host"], *v, inventory, label);
    }
    if (auto v = reader.string(node, "query", Need::optional, label)) probe.query = *v;
    if (auto v = reader.string(node, "expect", Need::optional, label)) probe.expect = *v;
    if (auto v = reader.boolean(node, "range", Need::optional, label)) probe.range = *v;
    if (auto v = reader.boolean(node, "empty_is_zero", Need::optional, label))
      probe.empty_is_zero = *v;
    if (probe.kind == "promql") {
      static const std::regex comparison(
          "\\s*(<|<=|==|!=|>=|>)\\s*-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?\\s*");
      if (probe.query.empty())
        reader.error(node, label + " is a promql probe without 'query'",
                     "a PromQL expression; {{series}} stands for the host's label matcher");
      if (!std::regex_match(probe.expect, comparison))
        reader.error(node["expect"].IsDefined() ? node["expect"] : node,
                     label + " needs 'expect', a comparison such as '< 5' or '== 0'",
                     "operators: < <= == != >= >, then a number");
      if (!has_prometheus_)
        reader.error(node, label +
                               " is a promql probe but fabgate.yaml has no "
                               "monitoring.prometheus");
    } else {
      for (auto key : kPromqlOnlyKeys)
        if (node[key].IsDefined())
          reader.error(node[key], label + ": '" + std::string(key) + "' is for promql probes");
    }
    check_command_tag(reader, source_, node, "run");
    if (auto v = reader.string(node, "run", Need::optional, label)) probe.run = *v;
    if (auto v = reader.string(node, "target", Need::optional, label)) probe.target = *v;
    if (auto v = reader.integer(node, "flows", Need::optional, label, 1, 1024))
      probe.flows = static_cast<int>(*v);
    if (auto v = reader.integer(node, "size", Need::optional, label, 16, 65507))
      probe.size = static_cast<int>(*v);
    if (auto v = reader.string(node, "source", Need::optional, label)) {
      probe.source = *v;
      const Device* host = inventory.find(probe.host);
      if (host && std::find(host->data_addresses.begin(), host->data_addresses.end(), *v) ==
                      host->data_addresses.end())
        reader.error(node["source"],
                     label + " sends from " + *v + ", which is not a data address of " + probe.host,
                     "list it in the host's data_addresses in the inventory");
    }
    if ((probe.size != 0 || !probe.source.empty()) && probe.kind != "flows")
      reader.error(node, label + ": size and source apply to flows probes only");
    if (auto v = reader.duration(node, "timeout", Need::optional, label)) probe.timeout = *v;
    if (probe.kind == "command" && probe.run.empty())
      reader.error(node, label + " is a command probe without 'run'",
                   "give the command whose exit status is the verdict");
    if (probe.kind != "command" && probe.kind != "promql" && probe.target.empty())
      reader.error(node, label + " (" + probe.kind + ") needs a 'target' to send to");
    if (probe.kind == "flows" && probe.flows == 0) probe.flows = 16;
    out.push_back(std::move(probe));
  }
  return out;
}

std::optional<Change> Loader::change(const std::string& path, const Inventory& inventory,
                                     const Settings& settings,
                                     const std::set<std::string>& rule_set_names) {
  auto root = parse(path, Need::required);
  if (!root) return std::nullopt;
  YamlReader reader(display(path), diagnostics_);
  if (!reader.expect_map(*root, "change")) return std::nullopt;
  reader.check_keys(*root,
                    {"id", "title", "description", "targets", "window", "bounds", "confirm_timeout",
                     "steps", "rollback", "acceptance", "compare"},
                    "change");
  Change change;
  change.file = path;
  change.where = reader.at(*root);
  if (auto v = reader.string(*root, "id", Need::required, "change")) {
    change.id = *v;
    if (!is_valid_identifier(*v))
      reader.error((*root)["id"], "change id '" + *v + "' is not a valid id",
                   "use letters, digits, '.', '_' and '-'; it names the evidence folder");
  }
  if (auto v = reader.string(*root, "title", Need::required, "change")) change.title = *v;
  reader.string(*root, "description", Need::optional, "change");

  if (auto targets = reader.child(*root, "targets", Need::required, "change")) {
    if (reader.expect_sequence(*targets, "targets"))
      change.targets = resolve_targets(reader, *targets, inventory);
  }

  if (auto window = reader.child(*root, "window", Need::optional, "change")) {
    if (reader.expect_map(*window, "window")) {
      reader.check_keys(*window, {"start", "end"}, "window");
      auto start = reader.time(*window, "start", Need::required, "window");
      auto end = reader.time(*window, "end", Need::required, "window");
      if (start && end) {
        if (*end <= *start)
          reader.error((*window)["end"], "window ends before it starts",
                       "end must be later than start");
        else
          change.window = Window{*start, *end};
      }
    }
  }

  bool deadline_known = false;  // checks against the deadline only when it was readable
  const YAML::Node* bounds_node = nullptr;
  YAML::Node bounds_holder;
  if (auto bounds = reader.child(*root, "bounds", Need::required, "change")) {
    bounds_holder = *bounds;
    bounds_node = &bounds_holder;
    if (reader.expect_map(*bounds, "bounds")) {
      reader.check_keys(*bounds,
                        {"max_targets", "step_timeout", "rollback_timeout", "deadline", "waves"},
                        "bounds");
      if (auto v = reader.integer(*bounds, "max_targets", Need::required, "bounds", 1, 100000))
        change.bounds.max_targets = static_cast<int>(*v);
      if (auto v = reader.duration(*bounds, "step_timeout", Need::required, "bounds"))
        change.bounds.step_timeout = *v;
      if (auto v = reader.duration(*bounds, "deadline", Need::required, "bounds")) {
        change.bounds.deadline = *v;
        deadline_known = true;
      }
      if (deadline_known && change.bounds.step_timeout > change.bounds.deadline)
        reader.error((*bounds)["step_timeout"], "step_timeout is longer than the deadline");
      // Not bounded by the deadline: a rollback runs whatever time is left.
      if (auto v = reader.duration(*bounds, "rollback_timeout", Need::optional, "bounds")) {
        change.bounds.rollback_timeout = *v;
        if (*v < change.bounds.step_timeout)
          reader.error((*bounds)["rollback_timeout"],
                       "rollback_timeout (" + format_duration(*v) +
                           ") is shorter than step_timeout (" +
                           format_duration(change.bounds.step_timeout) +
                           "): a rollback step needs at least the patience of a change step",
                       "leave it out for the default, max(3 x step_timeout, 1m)");
      }
      if (auto waves = reader.child(*bounds, "waves", Need::optional, "bounds")) {
        if (reader.expect_sequence(*waves, "waves")) {
          std::map<std::string, int> wave_of;
          int wave_index = 0;
          for (const auto& wave : *waves) {
            ++wave_index;
            std::vector<std::string> members;
            if (!reader.expect_sequence(wave, "wave " + std::to_string(wave_index))) continue;
            for (const auto& member : wave) {
              if (!member.IsScalar()) {
                reader.error(member, "wave members must be device names");
                continue;
              }
              const std::string& name = member.Scalar();
              if (std::find(change.targets.begin(), change.targets.end(), name) ==
                  change.targets.end()) {
                reader.error(member, "wave " + std::to_string(wave_index) + " names '" + name +
                                         "', which is not a target of this change");
                continue;
              }
              if (wave_of.count(name)) {
                reader.error(member,
                             "'" + name + "' is in wave " + std::to_string(wave_of[name]) +
                                 " and wave " + std::to_string(wave_index),
                             "each target belongs to exactly one wave");
                continue;
              }
              wave_of[name] = wave_index;
              members.push_back(name);
            }
            change.bounds.waves.push_back(members);
          }
          for (const auto& target : change.targets)
            if (!wave_of.count(target))
              reader.error(*waves, "target '" + target + "' is in no wave",
                           "add it to a wave, or drop waves to change all targets at once");
        }
      }
    }
  }
  if (static_cast<int>(change.targets.size()) > change.bounds.max_targets) {
    reader.error(bounds_node ? (*bounds_node)["max_targets"] : *root,
                 "the change targets " + std::to_string(change.targets.size()) +
                     " devices but bounds.max_targets is " +
                     std::to_string(change.bounds.max_targets),
                 "narrow the targets or raise max_targets deliberately");
  }

  if (auto v = reader.duration(*root, "confirm_timeout", Need::optional, "change")) {
    change.confirm_timeout = *v;
    if (deadline_known && *v < change.bounds.deadline)
      reader.error((*root)["confirm_timeout"],
                   "confirm_timeout (" + format_duration(*v) + ") is shorter than the deadline (" +
                       format_duration(change.bounds.deadline) + ")",
                   "the device would revert a change that is still being verified");
  }

  if (auto list = reader.child(*root, "steps", Need::required, "change"))
    change.steps = steps(reader, *list, "step", change.targets, inventory);
  if (auto list = reader.child(*root, "rollback", Need::optional, "change"))
    change.rollback = steps(reader, *list, "rollback step", change.targets, inventory);
  // A device with steps but no rollback is not a schema problem: `validate` reports it, and the
  // rollback-plan gate refuses such a change (exit 3) before anything is touched.

  if (auto acceptance = reader.child(*root, "acceptance", Need::optional, "change")) {
    if (reader.expect_map(*acceptance, "acceptance")) {
      reader.check_keys(
          *acceptance,
          {"settle", "probes", "during", "expected_alerts", "expected_flaps", "telemetry_max_gap"},
          "acceptance");
      if (auto v = reader.string_list(*acceptance, "expected_alerts", Need::optional, "acceptance"))
        change.acceptance.expected_alerts = *v;
      if (auto v = reader.duration(*acceptance, "telemetry_max_gap", Need::optional, "acceptance"))
        change.acceptance.telemetry_max_gap = *v;
      change.acceptance.expected_flaps = expected_flaps(reader, *acceptance, inventory);
      if (auto v = reader.duration(*acceptance, "settle", Need::optional, "acceptance"))
        change.acceptance.settle = *v;
      if (auto list = reader.child(*acceptance, "probes", Need::optional, "acceptance"))
        change.acceptance.probes = probes(reader, *list, inventory);
      if (auto during = reader.child(*acceptance, "during", Need::optional, "acceptance")) {
        if (reader.expect_map(*during, "acceptance.during")) {
          reader.check_keys(*during, {"host", "target", "flows", "max_disruption", "interval"},
                            "acceptance.during");
          WatchProbe watch;
          watch.where = reader.at(*during);
          if (auto v = reader.string(*during, "host", Need::required, "acceptance.during")) {
            watch.host = *v;
            check_device(reader, (*during)["host"], *v, inventory, "acceptance.during");
          }
          if (auto v = reader.string(*during, "target", Need::required, "acceptance.during"))
            watch.target = *v;
          if (auto v =
                  reader.integer(*during, "flows", Need::optional, "acceptance.during", 1, 256))
            watch.flows = static_cast<int>(*v);
          if (auto v =
                  reader.duration(*during, "max_disruption", Need::required, "acceptance.during"))
            watch.max_disruption = *v;
          if (auto v = reader.duration(*during, "interval", Need::optional, "acceptance.during")) {
            if (*v < Duration{10} || *v > Duration{100})
              reader.error((*during)["interval"],
                           "interval must be 10ms-100ms (the watch's resolution; default 20ms)");
            else
              watch.interval = *v;
          }
          change.acceptance.during = watch;
        }
      }
    }
  }

  if (auto compare = reader.child(*root, "compare", Need::optional, "change")) {
    if (reader.expect_map(*compare, "compare")) {
      reader.check_keys(*compare, {"rule_sets", "expected"}, "compare");
      if (auto v = reader.string_list(*compare, "rule_sets", Need::optional, "compare")) {
        change.compare.rule_sets = *v;
        for (std::size_t i = 0; i < v->size(); ++i) {
          const std::string& name = (*v)[i];
          if (!rule_set_names.count(name)) {
            std::vector<std::string> known(rule_set_names.begin(), rule_set_names.end());
            std::string hint = "rule sets: " + join(known, ", ");
            if (auto s = nearest_word(name, known)) hint = "did you mean '" + *s + "'?";
            reader.error((*compare)["rule_sets"][i], "unknown rule set '" + name + "'", hint);
          }
        }
      }
      if (auto list = reader.child(*compare, "expected", Need::optional, "compare")) {
        if (reader.expect_sequence(*list, "compare.expected")) {
          for (const auto& node : *list) {
            if (!reader.expect_map(node, "expected difference")) continue;
            reader.check_keys(node, {"device", "path", "values", "absent"}, "expected difference");
            ExpectedDifference expected;
            expected.where = reader.at(node);
            if (auto v = reader.string(node, "device", Need::required, "expected difference")) {
              expected.device = *v;
              // A change on one device legitimately changes its neighbours (a drained
              // spine's peers lose their sessions), so any inventory device may be named.
              if (*v != "*")
                check_device(reader, node["device"], *v, inventory, "expected difference");
            }
            if (auto v = reader.string(node, "path", Need::required, "expected difference")) {
              expected.path = *v;
              if (v->rfind("devices.", 0) == 0)
                reader.error(node["path"], "expected path must be relative to the device",
                             "write 'bgp.peers.*.state', not 'devices.X.bgp...'");
            }
            if (node["values"].IsDefined()) {
              if (auto v = reader.string_list(node, "values", Need::optional, "expected difference",
                                              true))
                expected.values = *v;
            }
            if (auto v = reader.boolean(node, "absent", Need::optional, "expected difference"))
              expected.absent = *v;
            if (expected.absent && !expected.values.empty())
              reader.error(node, "an expected difference is either absent or has values, not both");
            change.compare.expected.push_back(std::move(expected));
          }
        }
      }
    }
  }
  (void)settings;
  return change;
}

std::vector<Change> Loader::load_changes(const Settings& settings, const Inventory& inventory,
                                         const std::set<std::string>& rule_set_names) {
  has_prometheus_ = settings.monitoring.prometheus.has_value();
  std::vector<Change> changes;
  std::map<std::string, std::string> file_of_id;
  for (const auto& path : files_.list(settings.changes_dir)) {
    if (!is_yaml_file(path)) continue;
    auto change = this->change(path, inventory, settings, rule_set_names);
    if (!change) continue;
    if (!change->id.empty()) {
      auto [it, inserted] = file_of_id.emplace(change->id, path);
      if (!inserted) {
        diagnostics_.error(change->where, "duplicate change id '" + change->id + "'",
                           "also used by " + display(it->second) +
                               "; ids name evidence folders "
                               "and must be unique");
      }
    }
    changes.push_back(std::move(*change));
  }
  return changes;
}

}  // namespace

LoadOutcome load_intent_repository(const git::FileTree& files, const CommitInfo& commit,
                                   const std::string& display_root) {
  LoadOutcome outcome;
  Loader loader(files, display_root, outcome.diagnostics);
  IntentRepository repository;
  repository.commit = commit;
  repository.root = display_root;
  if (!files.read("fabgate.yaml")) {
    outcome.diagnostics.error(
        SourceLocation{loader.display("fabgate.yaml"), 0, 0},
        "not an intent repository: fabgate.yaml is not in commit " + commit.id.substr(0, 12),
        "point --repo at the folder holding fabgate.yaml, and commit it");
    return outcome;
  }
  repository.settings = loader.load_settings();
  repository.inventory = loader.load_inventory(repository.settings);
  std::set<std::string> rule_set_names = {"fabric-default", "rdma-default"};
  repository.policy_files = loader.policy_files(repository.settings, rule_set_names);
  repository.policy_texts = loader.take_policy_texts();
  for (const auto& name : repository.settings.rule_sets) {
    if (!rule_set_names.count(name))
      outcome.diagnostics.error(repository.settings.where,
                                "unknown rule set '" + name + "' in compare.rule_sets");
  }
  repository.changes =
      loader.load_changes(repository.settings, repository.inventory, rule_set_names);
  if (outcome.diagnostics.empty()) outcome.repository = std::move(repository);
  return outcome;
}

std::vector<std::string> devices_without_rollback(const Change& change) {
  std::vector<std::string> out;
  for (const auto& step : change.steps) {
    bool undone = std::any_of(change.rollback.begin(), change.rollback.end(),
                              [&](const Step& r) { return r.device == step.device; });
    if (!undone && std::find(out.begin(), out.end(), step.device) == out.end())
      out.push_back(step.device);
  }
  return out;
}

std::vector<std::string> intent_paths(const Settings& settings) {
  return {"fabgate.yaml", settings.inventory, settings.changes_dir, settings.policies_dir};
}

}  // namespace fabgate::intent
