#include "gates/app/run_collaborators.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>

#include "adapters/core/text.h"
#include "gates/app/console.h"
#include "gates/app/intent_loading.h"
#include "gates/app/secrets.h"

namespace fabgate::app {
namespace {

// Budgets and the coordination store as the trusted policy ref has them (never the change's
// own commit, which could raise its own budget); a command without a trusted policy (none acts
// on devices without one) reads the commit's.
pipeline::BudgetSetup budget_setup(const RunSetup& setup) {
  pipeline::BudgetSetup out;
  out.intent_dir = setup.intent_dir;
  out.wait = setup.budget_wait;
  out.controller = setup.controller;
  if (const auto& trusted = setup.intent.repository().trusted_policy) {
    out.budgets_text = trusted->budgets;
    out.budgets_file = trusted->budgets_path;
    out.source = trusted->source;
    out.coordination = trusted->coordination;
    return out;
  }
  const std::string path = setup.intent.repository().settings.policies_dir + "/budgets.yaml";
  if (auto text = setup.intent.repository().policy_texts.find(path);
      text != setup.intent.repository().policy_texts.end())
    out.budgets_text = text->second;
  out.budgets_file = path;
  out.source = "commit " + setup.intent.repository().commit.id.substr(0, 12);
  out.coordination = setup.intent.repository().settings.coordination;
  return out;
}

}  // namespace

Result<std::string> controller_name(const std::string& option) {
  std::string name = option;
  std::string from = "--controller";
  if (name.empty()) {
    const char* variable = std::getenv("FABGATE_CONTROLLER");
    if (variable && *variable) {
      name = variable;
      from = "FABGATE_CONTROLLER";
    } else {
      return std::string();  // the host name, which the budgets gate looks up itself
    }
  }
  bool control = std::any_of(name.begin(), name.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  });
  if (name.size() > 128 || control)
    return Error::invalid_input(
        from + ": not a controller name",
        {"at most 128 bytes, no control characters (a host or runner name)"});
  return name;
}

namespace {

pipeline::SafeguardOptions safeguard_options(const RunSetup& setup) {
  pipeline::SafeguardOptions options;
  options.locks.base_dir = setup.intent.repository().settings.safeguards.lock_dir;
  options.timers.base_dir = setup.intent.repository().settings.safeguards.timer_dir;
  options.timers.rollback_step_timeout = setup.change.bounds.effective_rollback_timeout();
  options.take_over = setup.take_over;
  options.operator_name = setup.operator_name;
  return options;
}

// The device-side locks carry the fencing tokens of the run's locks in the coordination store.
pipeline::SafeguardOptions with_fence_tokens(pipeline::SafeguardOptions options,
                                             const pipeline::RunBudgets& budgets) {
  options.fence_token = [&budgets](const std::string& device) {
    return budgets.fence_token(device);
  };
  return options;
}

prom::HttpEndpoint http_endpoint(const intent::MonitoringEndpoint& endpoint,
                                 const std::filesystem::path& intent_dir) {
  prom::HttpEndpoint out;
  out.base_url = endpoint.url;
  if (!endpoint.ca_file.empty())
    out.ca_file = resolve_in_intent(intent_dir, endpoint.ca_file).string();
  out.timeout = endpoint.timeout;
  // The token's value is redacted like every configured secret (secrets.cpp).
  if (!endpoint.token_env.empty())
    if (const char* token = std::getenv(endpoint.token_env.c_str())) out.bearer_token = token;
  return out;
}

}  // namespace

Result<std::unique_ptr<RunCollaborators>> RunCollaborators::create(const RunSetup& setup) {
  const auto& settings = setup.intent.repository().settings;
  ssh::SshOptions ssh_options;
  if (!settings.ssh.known_hosts.empty())
    ssh_options.known_hosts_file = resolve_in_intent(setup.intent_dir, settings.ssh.known_hosts);
  if (!settings.ssh.config.empty())
    ssh_options.config_file =
        settings.ssh.config == "none"
            ? settings.ssh.config
            : resolve_in_intent(setup.intent_dir, settings.ssh.config).string();
  ssh_options.connect_timeout = settings.ssh.connect_timeout;
  ssh_options.shell_startup_timeout = settings.ssh.shell_startup_timeout;
  ssh_options.slow_shell_startup = settings.ssh.slow_shell_startup;
  ssh_options.unknown_host_keys = setup.unknown_host_keys;
  auto profiles = pipeline::profiles_for(setup.intent.repository());
  if (!profiles.ok()) return std::move(profiles).error();
  return std::unique_ptr<RunCollaborators>(
      new RunCollaborators(setup, std::move(ssh_options), std::move(profiles.value())));
}

RunCollaborators::RunCollaborators(const RunSetup& setup, ssh::SshOptions ssh_options,
                                   snapshot::ProfileSet profiles)
    : evidence_(setup.evidence),
      targets_(setup.change.targets),
      budgets_(budget_setup(setup), setup.intent.repository().inventory, setup.change,
               setup.evidence),
      connector_(std::move(ssh_options)),
      connections_(connector_),
      ssh_remote_(connections_),
      token_fenced_(
          ssh_remote_, [this](const std::string& device) { return budgets_.fence_token(device); },
          setup.intent.repository().settings.safeguards.lock_dir),
      with_secrets_(token_fenced_, setup.secrets, setup.withheld_secrets),
      fenced_(with_secrets_, budgets_.fence()),
      remote_(fenced_, setup.evidence),
      fenced_gnmi_(grpc_gnmi_, budgets_.fence()),
      gnmi_steps_(fenced_gnmi_, setup.evidence),
      snapshotter_(std::move(profiles), connections_, &setup.evidence, setup.parallelism),
      safeguards_(remote_, setup.intent.repository().inventory, setup.change, setup.evidence,
                  with_fence_tokens(safeguard_options(setup), budgets_)) {
  const auto& monitoring = setup.intent.repository().settings.monitoring;
  if (monitoring.prometheus)
    prometheus_ = std::make_unique<prom::PrometheusClient>(
        http_endpoint(monitoring.prometheus->endpoint, setup.intent_dir));
  if (monitoring.alertmanager)
    alertmanager_ = std::make_unique<prom::AlertmanagerClient>(
        http_endpoint(monitoring.alertmanager->endpoint, setup.intent_dir));
}

std::vector<std::string> RunCollaborators::expire_silences(const std::vector<std::string>& ids) {
  std::vector<std::string> lines;
  nlohmann::json document = nlohmann::json::array();
  for (const auto& id : ids) {
    if (!alertmanager_) {
      lines.push_back("silence " + id +
                      " left by the run: no Alertmanager configured at this "
                      "commit; it ends by itself");
      document.push_back({{"silence", id}, {"expired", false}, {"why", lines.back()}});
      continue;
    }
    auto expired = alertmanager_->expire_silence(id);
    if (expired.ok()) {
      evidence_.append_journal({{"event", "silence-expired"},
                                {"silence", id},
                                {"by", "recover"},
                                {"at", format_utc(now_utc())}});
      lines.push_back("silence " + id + " left by the run: expired");
      document.push_back({{"silence", id}, {"expired", true}});
    } else {
      lines.push_back("silence " + id + " left by the run: NOT expired: " +
                      expired.error().message + "; it ends by itself");
      document.push_back({{"silence", id}, {"expired", false}, {"why", expired.error().message}});
    }
  }
  if (!ids.empty()) (void)evidence_.write_json("monitoring/silence-recover.json", document);
  return lines;
}

void RunCollaborators::release_untouched(const std::string& run_id) {
  safeguards_.adopt_timers(run_id, targets_);
  pipeline::GateRecord ignored;
  safeguards_.disarm_timers(ignored);
  safeguards_.adopt_locks(run_id, targets_);
  safeguards_.release_locks();
  (void)evidence_.write_json("safeguards.json", safeguards_.to_json());
  (void)budgets_.adopt(run_id);
  (void)budgets_.release(run_id);
  if (budgets_.wanted() || !budgets_.released_ok())
    (void)evidence_.write_json("coordination.json", budgets_.to_json());
}

pipeline::Pipeline::Collaborators RunCollaborators::for_pipeline(pipeline::GateObserver& observer) {
  return {remote_,
          snapshotter_,
          evidence_,
          observer,
          &gnmi_steps_,
          &safeguards_,
          [this] { return session_notes(); },
          prometheus_.get(),
          alertmanager_.get(),
          &pipeline::connect_gnmi,
          &budgets_};
}

std::vector<std::string> RunCollaborators::session_notes() {
  std::vector<std::string> notes;
  for (const auto& startup : connector_.shell_startups(startups_seen_)) {
    ++startups_seen_;
    nlohmann::json record = {{"device", startup.device},
                             {"role", std::string(ssh::to_string(startup.role))},
                             {"session", std::string(ssh::to_string(startup.lane))},
                             {"purpose", "shell-startup"},
                             {"command", "true"},
                             {"duration_ms", startup.took.count()},
                             {"slow", startup.slow}};
    if (startup.slow) {
      record["warning"] = startup.note();
      notes.push_back(startup.note());
    }
    evidence_.append_command(record);
  }
  return notes;
}

Redactor run_redactor(const intent::IntentRepository& repository, Console& console) {
  auto secrets = configured_secrets(repository);
  for (const auto& name : secrets.unset)
    if (std::find(repository.settings.secret_env.begin(), repository.settings.secret_env.end(),
                  name) != repository.settings.secret_env.end())
      // Worded without "secret NAME", which the redactor would rightly take for a secret's shape.
      console.warn(name + " (named in fabgate.yaml secrets.env) is not set in the environment");
  for (const auto& [name, value] : secrets.values) console.add_secret(value);
  return console.redactor();
}

}  // namespace fabgate::app
