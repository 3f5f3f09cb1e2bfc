#include "gates/intent/loader.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "adapters/core/byte_size.h"
#include "adapters/core/text.h"
#include "adapters/core/utf8.h"
#include "adapters/core/yaml_reader.h"
#include "gates/intent/loader_internal.h"

namespace fabgate::intent {
namespace loading {
namespace {

constexpr std::string_view kPlatforms[] = {"frr", "linux",   "rdma-host", "openconfig", "sonic",
                                           "eos", "srlinux", "junos",     "nxos"};

// gnmi.max_receive_message_size: bytes, as an integer or with a binary unit ("512MiB",
// "1 GiB"). At least 1 MiB; at most 2147483647 bytes, the most gRPC takes (an int).
constexpr std::int64_t kMinReceiveLimit = std::int64_t{1} << 20;
constexpr std::int64_t kMaxReceiveLimit = 2'147'483'647;

std::optional<std::int64_t> receive_limit(YamlReader& reader, const YAML::Node& gnmi,
                                          const std::string& what) {
  auto text = reader.string(gnmi, "max_receive_message_size", Need::optional, what);
  if (!text) return std::nullopt;
  const YAML::Node node = gnmi["max_receive_message_size"];
  const auto bytes = parse_byte_size(*text);
  if (!bytes) {
    reader.error(node, what + ": max_receive_message_size '" + *text + "' is not a size",
                 "write bytes, or a number with B, KiB, MiB or GiB: 256MiB, 1GiB");
    return std::nullopt;
  }
  if (*bytes > static_cast<std::uint64_t>(kMaxReceiveLimit)) {
    reader.error(node, what + ": max_receive_message_size " + *text + " is more than gRPC accepts",
                 "at most 2147483647 bytes (2047MiB)");
    return std::nullopt;
  }
  if (static_cast<std::int64_t>(*bytes) < kMinReceiveLimit) {
    reader.error(node, what + ": max_receive_message_size " + *text + " is below 1MiB",
                 "omit it for the default (256MiB, sized for a whole route table), or raise it");
    return std::nullopt;
  }
  return static_cast<std::int64_t>(*bytes);
}

}  // namespace

bool is_valid_identifier(const std::string& text) {
  static const std::regex pattern("[A-Za-z0-9][A-Za-z0-9._-]*");
  return std::regex_match(text, pattern);
}

// "scheme://user:pass@host/...": an '@' in the authority (before the first '/', '?' or '#').
bool url_has_userinfo(std::string_view url) {
  std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  std::string_view rest = url.substr(scheme + 3);
  return rest.substr(0, rest.find_first_of("/?#")).find('@') != std::string_view::npos;
}

bool is_yaml_file(const std::string& path) {
  auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

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
                     "snapshot", "compare", "probes", "secrets", "safeguards", "monitoring",
                     "coordination", "twin"},
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
                        {"min_approvals", "require_rehearsal", "allowed_signers", "max_age",
                         "policy_ref", "require_signed_commits"},
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
      if (auto v = reader.string(*approval, "policy_ref", Need::optional, "approval")) {
        if (v->empty())
          reader.error((*approval)["policy_ref"], "policy_ref in approval must not be empty",
                       "leave it out to read the policy from main (or master)");
        else
          settings.approval.policy_ref = *v;
      }
      if (auto v = reader.boolean(*approval, "require_signed_commits", Need::optional, "approval"))
        settings.approval.require_signed_commits = *v;
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
  if (auto coordination = reader.child(*root, "coordination", Need::optional, "fabgate.yaml"))
    settings.coordination = coordination_settings(reader, *coordination);
  if (auto twin = reader.child(*root, "twin", Need::optional, "fabgate.yaml")) {
    TwinSettings parsed;
    if (reader.expect_map(*twin, "twin")) {
      reader.check_keys(*twin, {"enabled", "radius", "converge_timeout", "state_dir"}, "twin");
      if (auto v = reader.boolean(*twin, "enabled", Need::optional, "twin")) parsed.enabled = *v;
      if (auto v = reader.integer(*twin, "radius", Need::optional, "twin", 0, 8)) parsed.radius = static_cast<int>(*v);
      if (auto v = reader.duration(*twin, "converge_timeout", Need::optional, "twin"))
        parsed.converge_timeout = *v;
      if (auto v = reader.string(*twin, "state_dir", Need::optional, "twin")) {
        if (v->empty() || v->front() != '/')
          reader.error((*twin)["state_dir"], "twin state_dir '" + *v + "' is not an absolute path");
        else
          parsed.state_dir = *v;
      }
    }
    settings.twin = parsed;
  }
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
  if (!https && url->rfind("http://", 0) != 0) {
    reader.error(node["url"], what + " url '" + *url + "' is not an http:// or https:// URL");
  } else if (url_has_userinfo(*url)) {
    // Not echoed: the URL holds the password.
    reader.error(node["url"], what + " url carries a user name or password (user:pass@host)",
                 "leave credentials out of the URL (it is written into errors and evidence); "
                 "give a bearer token with token_env over https");
  }
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

// `coordination:` in fabgate.yaml (docs/coordination.md "Settings").
std::optional<CoordinationSettings> Loader::coordination_settings(YamlReader& reader,
                                                                  const YAML::Node& node) {
  const std::string what = "coordination";
  if (!reader.expect_map(node, what)) return std::nullopt;
  reader.check_keys(node,
                    {"endpoints", "prefix", "ca_file", "cert_file", "key_file", "username",
                     "password_env", "lab_plain_http_auth", "timeout", "lease_ttl"},
                    what);
  CoordinationSettings out;
  out.where = reader.at(node);
  std::size_t problems = reader.diagnostics().size();
  bool any_http = false;
  if (auto endpoints = reader.string_list(node, "endpoints", Need::required, what)) {
    if (endpoints->empty()) reader.error(node["endpoints"], "coordination endpoints is empty");
    for (std::size_t i = 0; i < endpoints->size(); ++i) {
      const std::string& url = (*endpoints)[i];
      bool https = url.rfind("https://", 0) == 0;
      bool http = url.rfind("http://", 0) == 0;
      if (!https && !http)
        reader.error(node["endpoints"][i],
                     "coordination endpoint '" + url + "' is not an http:// or https:// URL",
                     "an etcd client URL: https://10.0.0.1:2379");
      else if (url_has_userinfo(url))  // not echoed: it holds the password
        reader.error(node["endpoints"][i],
                     "a coordination endpoint carries a user name or password (user:pass@host)",
                     "give username and password_env instead");
      any_http = any_http || http;
    }
    out.endpoints = *endpoints;
  }
  if (auto prefix = reader.string(node, "prefix", Need::required, what)) {
    static const std::regex segments("(/[A-Za-z0-9._-]+)+");
    if (!std::regex_match(*prefix, segments))
      reader.error(node["prefix"], "coordination prefix '" + *prefix + "' is not a key prefix",
                   "'/' then names of letters, digits, '.', '_' or '-', without a trailing '/': "
                   "/fabgate/pod-a (one per fabric)");
    out.prefix = *prefix;
  }
  if (auto v = reader.string(node, "ca_file", Need::optional, what)) out.ca_file = *v;
  if (auto v = reader.string(node, "cert_file", Need::optional, what)) out.cert_file = *v;
  if (auto v = reader.string(node, "key_file", Need::optional, what)) out.key_file = *v;
  if (out.cert_file.empty() != out.key_file.empty())
    reader.error(node, "coordination needs both cert_file and key_file, or neither");
  if (auto v = reader.string(node, "username", Need::optional, what)) out.username = *v;
  if (auto v = reader.string(node, "password_env", Need::optional, what)) out.password_env = *v;
  if (auto v = reader.boolean(node, "lab_plain_http_auth", Need::optional, what))
    out.lab_plain_http_auth = *v;
  if (!out.username.empty() && out.password_env.empty())
    reader.error(node["username"], "coordination username needs password_env",
                 "the environment variable that holds its password");
  if (!out.username.empty() && any_http && !out.lab_plain_http_auth)
    reader.error(node["username"], "coordination sends a username and password over plain http",
                 "use https:// endpoints with a ca_file (lab only: lab_plain_http_auth: true)");
  if (auto v = reader.duration(node, "timeout", Need::optional, what)) {
    if (v->count() < 100 || *v > Duration{60'000})
      reader.error(node["timeout"], "coordination timeout must be between 100ms and 1m");
    else
      out.timeout = *v;
  }
  if (auto v = reader.duration(node, "lease_ttl", Need::optional, what)) {
    if (*v < Duration{3'000} || *v > Duration{300'000})
      reader.error(node["lease_ttl"], "coordination lease_ttl must be between 3s and 5m",
                   "a run keeps its lease alive every third of it");
    else
      out.lease_ttl = *v;
  }
  if (reader.diagnostics().size() != problems) return std::nullopt;
  return out;
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
            *gnmi,
            {"host", "port", "tls", "ca_file", "cert_file", "key_file", "tls_server_name",
             "credentials_env", "lab_insecure_plaintext_credentials", "max_receive_message_size"},
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
        if (auto v = reader.string(*gnmi, "tls_server_name", Need::optional, what + " gnmi"))
          endpoint.tls_server_name = *v;
        if (auto v = reader.string(*gnmi, "credentials_env", Need::optional, what + " gnmi"))
          endpoint.credentials_env = *v;
        if (auto v = reader.boolean(*gnmi, "lab_insecure_plaintext_credentials", Need::optional,
                                    what + " gnmi"))
          endpoint.lab_insecure_plaintext_credentials = *v;
        endpoint.max_receive_message_size = receive_limit(reader, *gnmi, what + " gnmi");
        // An empty ca_file is the system's trust store (docs/gnmi.md).
        if (!endpoint.tls && !endpoint.tls_server_name.empty())
          reader.error((*gnmi)["tls_server_name"],
                       what + " gnmi sets tls_server_name but tls is false",
                       "leave tls_server_name out, or use TLS");
        if (!endpoint.tls && !endpoint.credentials_env.empty() &&
            !endpoint.lab_insecure_plaintext_credentials)
          reader.error((*gnmi)["credentials_env"],
                       what +
                           " gnmi would send the username and password of credentials_env in "
                           "clear text (tls: false)",
                       "use TLS (ca_file, or the system trust store), or in a lab only set "
                       "lab_insecure_plaintext_credentials: true");
        if (endpoint.lab_insecure_plaintext_credentials &&
            (endpoint.tls || endpoint.credentials_env.empty()))
          reader.error((*gnmi)["lab_insecure_plaintext_credentials"],
                       what +
                           " gnmi sets lab_insecure_plaintext_credentials without tls: false "
                           "and credentials_env",
                       "leave it out: it only permits credentials over plaintext");
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

}  // namespace loading

LoadOutcome load_intent_repository(const git::FileTree& files, const CommitInfo& commit,
                                   const std::string& display_root) {
  LoadOutcome outcome;
  loading::Loader loader(files, display_root, outcome.diagnostics);
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

std::vector<std::string> lab_only_settings(const Inventory& inventory) {
  std::vector<std::string> lines;
  for (const auto& device : inventory.devices) {
    if (!device.gnmi || !device.gnmi->lab_insecure_plaintext_credentials) continue;
    // Worded so the redactor does not take the sentence for a password's shape.
    const auto& prefix = device.gnmi->credentials_env;
    lines.push_back("device '" + device.name +
                    "' gnmi: lab_insecure_plaintext_credentials: the login from " + prefix +
                    "_USERNAME and " + prefix +
                    "_PASSWORD goes to the device in clear text (lab only)");
  }
  return lines;
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
