#include "gates/pipeline/families/identity_check.h"

#include <algorithm>
#include <cctype>

#include "gates/compat/check.h"

namespace fabgate::pipeline {
namespace {

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool same(const std::string& field, const std::string& expected, const std::string& found) {
  if (field == "serial") return expected == found;
  if (field == "system_mac") return lower(expected) == lower(found);
  // hostname: DNS names ignore case; "leaf1" is satisfied by "leaf1.dc1.example".
  std::string want = lower(expected), got = lower(found);
  if (want == got) return true;
  return want.find('.') == std::string::npos && got.rfind(want + ".", 0) == 0;
}

}  // namespace

nlohmann::json to_json(const IdentityFinding& finding) {
  return {
      {"device", finding.device},
      {"field", finding.field},
      {"expected", finding.expected},
      {"found", finding.found.empty() ? nlohmann::json(nullptr) : nlohmann::json(finding.found)},
      {"verdict", std::string(to_string(finding.verdict))},
      {"line", finding.line}};
}

std::vector<IdentityFinding> check_identities(const std::vector<const intent::Device*>& devices,
                                              const nlohmann::json& snapshot) {
  std::vector<IdentityFinding> findings;
  static const nlohmann::json kNone = nlohmann::json::object();
  const auto& entries =
      snapshot.is_object() && snapshot.contains("devices") ? snapshot.at("devices") : kNone;
  for (const auto* device : devices) {
    if (!device->identity) continue;
    const auto& declared = *device->identity;
    const std::string where = " (" + declared.where.to_string() + ")";
    auto entry = entries.find(device->name);
    const bool collected = entry != entries.end() && compat::identity_collected(*entry);
    for (const auto& [field, expected] :
         {std::pair{"hostname", &declared.hostname}, std::pair{"serial", &declared.serial},
          std::pair{"system_mac", &declared.system_mac}}) {
      if (expected->empty()) continue;
      IdentityFinding finding;
      finding.device = device->name;
      finding.field = field;
      finding.expected = *expected;
      if (!collected) {
        finding.line = device->name + ": identity could not be read from " + device->ssh.host +
                       ", so it is not proven to be " + *expected + where;
        findings.push_back(std::move(finding));
        continue;
      }
      const auto& identity = entry->at("identity");
      auto value = identity.find(field);
      if (value == identity.end() || !value->is_string() || value->get<std::string>().empty()) {
        auto why = identity.find(std::string(field) + "_unavailable");
        finding.line =
            device->name + ": no identity source of platform " + device->platform + " collected " +
            field +
            (why != identity.end() && why->is_string() ? " (" + why->get<std::string>() + ")"
                                                       : std::string()) +
            ", so " + device->ssh.host + " is not proven to be " + *expected + where;
        findings.push_back(std::move(finding));
        continue;
      }
      finding.found = value->get<std::string>();
      finding.verdict = same(field, *expected, finding.found) ? Verdict::pass : Verdict::fail;
      const std::string shown_field =
          std::string(field) == "hostname" ? "" : std::string(field) + " ";
      finding.line = device->name + ": " + device->ssh.host + " answered as " + shown_field +
                     finding.found + ", inventory says " + shown_field + *expected + where;
      findings.push_back(std::move(finding));
    }
  }
  return findings;
}

}  // namespace fabgate::pipeline
