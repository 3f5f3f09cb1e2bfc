#include "gates/pipeline/reporting/plan_digest.h"

#include <algorithm>
#include <map>

#include "adapters/core/sha256.h"
#include "gates/compare/default_rules.h"
#include "gates/compare/rule_set.h"
#include "gates/pipeline/families/probes.h"

namespace fabgate::pipeline {
namespace {

nlohmann::json credential_json(const intent::Credential& credential) {
  return {{"user", credential.user},
          {"identity_file", credential.identity_file},
          {"use_agent", credential.use_agent}};
}

nlohmann::json device_json(const intent::Device& device) {
  nlohmann::json out = {{"name", device.name},
                        {"platform", device.platform},
                        {"role", device.role},
                        {"ssh", {{"host", device.ssh.host}, {"port", device.ssh.port}}},
                        {"read", credential_json(device.read)},
                        {"change", credential_json(device.change)},
                        {"data_addresses", device.data_addresses},
                        {"labels", device.labels},
                        {"gnmi", nullptr}};
  if (device.identity)  // only when declared, so other plans keep the digest they had
    out["identity"] = {{"hostname", device.identity->hostname},
                       {"serial", device.identity->serial},
                       {"system_mac", device.identity->system_mac}};
  if (device.gnmi)
    out["gnmi"] = {{"host", device.gnmi->host},
                   {"port", device.gnmi->port},
                   {"tls", device.gnmi->tls},
                   {"ca_file", device.gnmi->ca_file},
                   {"cert_file", device.gnmi->cert_file},
                   {"key_file", device.gnmi->key_file},
                   {"credentials_env", device.gnmi->credentials_env}};
  return out;
}

nlohmann::json steps_json(const std::vector<intent::Step>& steps) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& step : steps) {
    nlohmann::json gnmi = nlohmann::json::array();
    for (const auto& op : step.gnmi_set)
      gnmi.push_back({{"op", op.op}, {"path", op.path}, {"value", op.value}});
    out.push_back({{"device", step.device},
                   {"description", step.description},
                   {"run", step.run},
                   {"gnmi_set", gnmi},
                   {"timeout_ms", step.timeout ? nlohmann::json(step.timeout->count())
                                               : nlohmann::json(nullptr)}});
  }
  return out;
}

nlohmann::json change_json(const intent::Change& change) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& probe : change.acceptance.probes) {
    probes.push_back(to_json(probe));
    if (probe.kind == "promql") {  // only then, so other plans keep the digest they had
      probes.back()["query"] = probe.query;
      probes.back()["expect"] = probe.expect;
      probes.back()["range"] = probe.range;
      probes.back()["empty_is_zero"] = probe.empty_is_zero;
    }
  }
  nlohmann::json during = nullptr;
  if (const auto& watch = change.acceptance.during)
    during = {{"host", watch->host},
              {"target", watch->target},
              {"flows", watch->flows},
              {"max_disruption_ms", watch->max_disruption.count()}};
  nlohmann::json expected = nlohmann::json::array();
  for (const auto& item : change.compare.expected)
    expected.push_back({{"device", item.device},
                        {"path", item.path},
                        {"values", item.values},
                        {"absent", item.absent}});
  nlohmann::json window = nullptr;
  if (change.window)
    window = {{"start_ms", change.window->start.time_since_epoch().count()},
              {"end_ms", change.window->end.time_since_epoch().count()}};
  nlohmann::json acceptance = {
      {"settle_ms", change.acceptance.settle.count()}, {"probes", probes}, {"during", during}};
  if (!change.acceptance.expected_alerts.empty())
    acceptance["expected_alerts"] = change.acceptance.expected_alerts;
  // What the telemetry gate tolerates is part of what was reviewed (absent: as before).
  if (!change.acceptance.expected_flaps.empty())
    acceptance["expected_flaps"] = change.acceptance.expected_flaps;
  if (change.acceptance.telemetry_max_gap)
    acceptance["telemetry_max_gap_ms"] = change.acceptance.telemetry_max_gap->count();
  nlohmann::json out = {{"id", change.id},
          {"title", change.title},
          {"file", change.file},
          {"targets", change.targets},
          {"window", window},
          {"bounds",
           {{"max_targets", change.bounds.max_targets},
            {"step_timeout_ms", change.bounds.step_timeout.count()},
            {"rollback_timeout_ms", change.bounds.effective_rollback_timeout().count()},
            {"deadline_ms", change.bounds.deadline.count()},
            {"waves", change.bounds.waves}}},
          {"confirm_timeout_ms", change.confirm_timeout
                                     ? nlohmann::json(change.confirm_timeout->count())
                                     : nlohmann::json(nullptr)},
          {"steps", steps_json(change.steps)},
          {"rollback", steps_json(change.rollback)},
          {"acceptance", acceptance},
          {"compare", {{"rule_sets", change.compare.rule_sets}, {"expected", expected}}}};
  // What an accepted change does to the budgets' count of drained devices is reviewed too:
  // dropping out_of_service after the approval would let a drain go uncounted. Only when set,
  // so plans of changes without them keep the digest they had.
  if (!change.out_of_service.empty()) out["out_of_service"] = change.out_of_service;
  if (!change.back_in_service.empty()) out["back_in_service"] = change.back_in_service;
  return out;
}

nlohmann::json settings_json(const intent::Settings& settings) {
  nlohmann::json approval = {{"min_approvals", settings.approval.min_approvals},
                             {"require_rehearsal", settings.approval.require_rehearsal},
                             {"allowed_signers", settings.approval.allowed_signers}};
  // Only when set, so plans of intents that never set it keep the digest they had.
  if (settings.approval.max_age) approval["max_age_ms"] = settings.approval.max_age->count();
  nlohmann::json out = {
      {"inventory", settings.inventory},
      {"changes_dir", settings.changes_dir},
      {"policies_dir", settings.policies_dir},
      {"ssh",
       {{"known_hosts", settings.ssh.known_hosts},
        {"connect_timeout_ms", settings.ssh.connect_timeout.count()},
        {"command_timeout_ms", settings.ssh.command_timeout.count()},
        {"parallelism", settings.ssh.parallelism}}},
      {"approval", approval},
      {"probes", {{"binary", settings.probes.binary}, {"port", settings.probes.port}}},
      {"snapshot_max_age_ms", settings.snapshot_max_age.count()},
      {"rule_sets", settings.rule_sets}};
  // The monitoring gates judge the change too (docs/monitoring.md); only when configured.
  auto endpoint = [](const intent::MonitoringEndpoint& e) {
    return nlohmann::json{{"url", e.url},
                          {"ca_file", e.ca_file},
                          {"token_env", e.token_env},
                          {"timeout_ms", e.timeout.count()}};
  };
  if (const auto& p = settings.monitoring.prometheus)
    out["monitoring"]["prometheus"] = {
        {"endpoint", endpoint(p->endpoint)},     {"series", p->series},
        {"max_age_ms", p->max_age.count()},      {"fresh", p->fresh},
        {"identity_metric", p->identity_metric}, {"identity_label", p->identity_label}};
  if (const auto& a = settings.monitoring.alertmanager)
    out["monitoring"]["alertmanager"] = {{"endpoint", endpoint(a->endpoint)},
                                         {"device_label", a->device_label},
                                         {"failure_domain", a->failure_domain},
                                         {"silence", a->silence}};
  return out;
}

// The rule sets the compare gates will use, resolved the way the pipeline resolves them: the
// last file in policies/compare/ with that `name:`, else the compiled-in default.
nlohmann::json rule_sets_json(const intent::IntentRepository& repository,
                              const intent::Change& change) {
  std::vector<std::string> names = repository.settings.rule_sets;
  for (const auto& name : change.compare.rule_sets)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::map<std::string, std::string> source_of;  // rule set name -> policy path
  const std::string compare_dir = repository.settings.policies_dir + "/compare/";
  for (const auto& [path, text] : repository.policy_texts) {
    if (path.rfind(compare_dir, 0) != 0) continue;
    auto set = compare::load_rule_set(text, path);
    if (set.ok()) source_of[set->name] = path;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& name : names) {
    nlohmann::json entry = {{"name", name}};
    if (auto it = source_of.find(name); it != source_of.end()) {
      entry["source"] = it->second;
      entry["sha256"] = sha256_hex(repository.policy_texts.at(it->second));
    } else if (name == "fabric-default" || name == "rdma-default") {
      entry["source"] = "built-in";
      entry["sha256"] = sha256_hex(name == "fabric-default" ? compare::default_rule_set_text()
                                                            : compare::rdma_rule_set_text());
    } else {
      entry["source"] = nullptr;  // the compare gate will refuse; the digest still says so
    }
    out.push_back(entry);
  }
  return out;
}

std::string canonical_text(const nlohmann::json& document) {
  // nlohmann::json keeps object keys sorted; ASCII-only output makes the bytes independent of
  // how a consumer re-encodes the document.
  return document.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

}  // namespace

nlohmann::json plan_digest_input(const intent::IntentRepository& repository,
                                 const intent::Change& change) {
  std::vector<const intent::Device*> devices;
  for (const auto& device : repository.inventory.devices) devices.push_back(&device);
  std::sort(devices.begin(), devices.end(),
            [](const intent::Device* a, const intent::Device* b) { return a->name < b->name; });
  nlohmann::json inventory = nlohmann::json::array();
  for (const auto* device : devices) inventory.push_back(device_json(*device));
  nlohmann::json policies = nlohmann::json::object();
  for (const auto& [path, text] : repository.policy_texts) policies[path] = sha256_hex(text);
  return {{"format", "fabgate.plan-digest/1"},
          {"intent_commit", repository.commit.id},
          {"intent_root", repository.root},
          {"change", change_json(change)},
          {"inventory", inventory},
          {"settings", settings_json(repository.settings)},
          {"rule_sets", rule_sets_json(repository, change)},
          {"policies", policies}};
}

std::string digest_of_input(const nlohmann::json& digest_input) {
  return "sha256:" + sha256_hex(canonical_text(digest_input));
}

std::string plan_digest(const intent::IntentRepository& repository, const intent::Change& change) {
  return digest_of_input(plan_digest_input(repository, change));
}

}  // namespace fabgate::pipeline
