#pragma once

// Small snapshots and rule sets written inline, so each test shows the data it judges.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "gates/compare/engine.h"
#include "gates/compare/rule_set.h"
#include "gates/compare/snapshot.h"

namespace fabgate::compare::testing {

// A snapshot document with one device "leaf1" whose facts are `facts` (categories) and whose
// sources are all ok; taken now unless `taken_at` is given.
inline nlohmann::json leaf(nlohmann::json facts, const std::string& serial = "SN1") {
  nlohmann::json device = std::move(facts);
  device["identity"] = {
      {"hostname", "leaf1"}, {"platform", "frr"}, {"serial", serial}, {"frr_version", "8.4.4"}};
  if (!device.contains("sources")) {
    nlohmann::json sources = nlohmann::json::object();
    for (auto& [key, value] : device.items())
      if (key != "identity") sources[key] = {{"status", "ok"}};
    device["sources"] = sources;
  }
  return device;
}

inline nlohmann::json document(nlohmann::json devices, TimePoint taken_at = now_utc()) {
  return {{"format", "fabgate.snapshot/1"},
          {"taken_at", format_utc(taken_at)},
          {"intent_commit", ""},
          {"devices", std::move(devices)}};
}

inline Snapshot snapshot(const nlohmann::json& doc, const std::string& name = "snap.json") {
  auto parsed = parse_snapshot(doc.dump(), name);
  if (!parsed) ADD_FAILURE() << parsed.error().message;
  return parsed ? std::move(parsed).value() : Snapshot{};
}

inline RuleSet rules(const std::string& yaml) {
  auto set = load_rule_set(yaml, "rules.yaml");
  if (!set) {
    std::string text = set.error().message;
    for (const auto& line : set.error().details) text += "\n" + line;
    ADD_FAILURE() << text;
    return RuleSet{};
  }
  return std::move(set).value();
}

// One rule in a set named "t".
inline RuleSet rule(const std::string& body) {
  return rules("name: t\nrules:\n  - name: r\n    layer: control-plane\n" + body);
}

inline Report run(const nlohmann::json& pre, const nlohmann::json& post, const RuleSet& set,
                  std::vector<intent::ExpectedDifference> expected = {},
                  const ExceptionRegister& exceptions = {}, CompareOptions options = {}) {
  return compare_snapshots(snapshot(pre, "pre.json"), snapshot(post, "post.json"), {set}, expected,
                           exceptions, options);
}

inline std::string verdicts(const Report& report) {
  std::string out;
  for (const auto& result : report.results) {
    if (!out.empty()) out += " ";
    out += std::string(to_string(result.verdict));
  }
  return out;
}

}  // namespace fabgate::compare::testing
