#include "gates/compat/check.h"

#include <map>

#include "adapters/core/text.h"

namespace fabgate::compat {
namespace {

using nlohmann::json;

// The identity value as text: collectors write strings; anything else is not a version.
std::optional<std::string> text_of(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return value.dump();
  return std::nullopt;
}

Finding judge(const std::string& device, const Requirement& requirement, std::string subject,
              const std::optional<std::string>& found, const std::string& absent_reason) {
  Finding finding;
  finding.device = device;
  finding.component = std::string(to_string(requirement.component));
  finding.subject = std::move(subject);
  finding.allowed = requirement.allowed.describe();
  finding.where = requirement.where;
  if (!found || trim(*found).empty()) {
    finding.verdict = FindingVerdict::no_evidence;
    finding.reason = absent_reason;
    return finding;
  }
  finding.found = *found;
  auto version = parse_version(*found);
  if (!version) {
    finding.verdict = FindingVerdict::no_evidence;
    finding.reason = "'" + *found + "' is not a version string";
    return finding;
  }
  auto admission = admits(requirement.allowed, *version);
  finding.verdict = admission.admitted ? FindingVerdict::pass : FindingVerdict::fail;
  finding.reason = admission.why_not;
  return finding;
}

void check_nics(const std::string& device, Component component,
                const std::vector<const Requirement*>& requirements, const json& identity,
                std::vector<Finding>& findings) {
  const char* field = component == Component::nic_firmware ? "firmware" : "driver_version";
  const char* field_words =
      component == Component::nic_firmware ? "firmware version" : "driver version";
  auto nics = identity.find("nics");
  if (nics == identity.end() || !nics->is_object()) {
    for (const auto* requirement : requirements)
      findings.push_back(judge(device, *requirement, requirement->driver + " NICs", std::nullopt,
                               "identity has no nics (ethtool -i was not collected)"));
    return;
  }
  bool any_matched = false;
  std::vector<std::string> seen;
  for (const auto& [name, nic] : nics->items()) {
    std::string driver = nic.contains("driver") && nic["driver"].is_string()
                             ? nic["driver"].get<std::string>()
                             : std::string("unknown driver");
    seen.push_back(name + " (" + driver + ")");
    for (const auto* requirement : requirements) {
      if (requirement->driver != driver) continue;
      any_matched = true;
      std::optional<std::string> found;
      if (nic.contains(field)) found = text_of(nic[field]);
      findings.push_back(judge(device, *requirement, name + " (" + driver + ")", found,
                               std::string("no ") + field_words + " collected"));
    }
  }
  if (any_matched) return;
  // The platform requires NICs of a named driver and the device has none: that is not a pass.
  std::vector<std::string> drivers;
  for (const auto* requirement : requirements) drivers.push_back(requirement->driver);
  Finding finding =
      judge(device, *requirements.front(), "", std::nullopt,
            "no NIC uses a driver the matrix names (" + join(drivers, ", ") +
                "); NICs seen: " + (seen.empty() ? std::string("none") : join(seen, ", ")));
  if (requirements.size() > 1) {
    std::vector<std::string> allowed;
    for (const auto* requirement : requirements)
      allowed.push_back(requirement->driver + ": " + requirement->allowed.describe());
    finding.allowed = join(allowed, "; ");
  }
  findings.push_back(std::move(finding));
}

}  // namespace

std::string_view to_string(FindingVerdict verdict) {
  switch (verdict) {
    case FindingVerdict::pass:
      return "pass";
    case FindingVerdict::fail:
      return "fail";
    case FindingVerdict::no_evidence:
      return "no-evidence";
  }
  return "no-evidence";
}

std::string Finding::to_line() const {
  std::string what = device + ": " + component + (subject.empty() ? "" : " of " + subject);
  std::string location = where.to_string();
  switch (verdict) {
    case FindingVerdict::pass:
      return what + " " + found + " in " + allowed + " (" + location + ")";
    case FindingVerdict::fail:
      return what + " " + found + " not in " + allowed + (reason.empty() ? "" : ": " + reason) +
             " (" + location + ")";
    case FindingVerdict::no_evidence:
      return what + ": no evidence: " + reason + " (required by " + location + ")";
  }
  return what;
}

nlohmann::json to_json(const Finding& finding) {
  json document = {{"device", finding.device},
                   {"component", finding.component},
                   {"found", finding.found},
                   {"allowed", finding.allowed},
                   {"verdict", std::string(to_string(finding.verdict))},
                   {"matrix", finding.where.to_string()}};
  if (!finding.subject.empty()) document["subject"] = finding.subject;
  if (!finding.reason.empty()) document["reason"] = finding.reason;
  return document;
}

bool identity_collected(const nlohmann::json& device_entry) {
  if (!device_entry.is_object()) return false;
  auto identity = device_entry.find("identity");
  auto sources = device_entry.find("sources");
  if (identity == device_entry.end() || !identity->is_object() || identity->empty()) return false;
  if (sources == device_entry.end() || !sources->is_object()) return false;
  auto source = sources->find("identity");
  return source != sources->end() && source->is_object() && source->value("status", "") == "ok";
}

std::vector<Finding> check_identity(const Matrix& matrix, const std::string& device_name,
                                    const std::string& platform, const json& identity) {
  std::vector<Finding> findings;
  const PlatformRequirements* entry = matrix.find(platform);
  if (!entry) return findings;
  static const json kNoIdentity = json::object();
  const json& known = identity.is_object() ? identity : kNoIdentity;
  // NIC requirements are judged per component, over all drivers it names.
  std::map<Component, std::vector<const Requirement*>> per_driver;
  for (const auto& requirement : entry->requirements) {
    if (is_per_driver(requirement.component)) {
      per_driver[requirement.component].push_back(&requirement);
      continue;
    }
    std::string key(identity_key(requirement.component));
    std::optional<std::string> found;
    if (known.contains(key)) found = text_of(known[key]);
    findings.push_back(judge(device_name, requirement, "", found, "identity has no " + key));
  }
  for (const auto& [component, requirements] : per_driver)
    check_nics(device_name, component, requirements, known, findings);
  return findings;
}

}  // namespace fabgate::compat
