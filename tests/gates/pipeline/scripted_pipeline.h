#pragma once

// A real Pipeline around scripted collaborators, for unit tests of gate logic: a Remote that
// answers every command with exit 0 and records it, and a Snapshotter whose documents have the
// shape gates/snapshot/device_collector.cpp writes. Shared by the approval, compat, compare
// and snapshot gate tests.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gates/pipeline/controller/pipeline.h"
#include "gates/pipeline/reporting/evidence.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {

// Answers every command with exit 0 and records it, so a test can tell whether a step was
// sent. Probes are plain commands here, so they pass.
class ScriptedRemote final : public Remote {
 public:
  struct Call {
    std::string device;
    std::string command;
    std::string purpose;
  };

  RemoteResult run(const intent::Device& device, ssh::CredentialRole, const std::string& command,
                   Duration, std::string_view purpose) override {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back({device.name, command, std::string(purpose)});
    ssh::CommandResult result;
    result.exit_status = 0;
    result.started_at = now_utc();
    return result;
  }

  std::size_t sent(std::string_view purpose) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<std::size_t>(std::count_if(
        calls_.begin(), calls_.end(), [&](const Call& call) { return call.purpose == purpose; }));
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
};

// Returns the same document every time, shaped as the collector writes it: a device whose
// identity the test set has those fields plus the profile's platform and an ok identity source;
// any other device has an empty identity and no identity source (its profile collects none).
// No other category is collected.
class ScriptedSnapshotter final : public Snapshotter {
 public:
  nlohmann::json identities = nlohmann::json::object();  // device name -> identity fields
  // device name -> category -> facts, each collected with an ok source (e.g. evpn, bfd).
  nlohmann::json categories = nlohmann::json::object();
  std::function<void()> before_returning;  // runs inside take(), e.g. to break the evidence
  // device name -> the prefixes of its ipv4 table at each take() in turn (the last one for every
  // take after): the device gets an ok routes source and its table kept apart from the document
  // (TakenSnapshot::routes), as the collector hands a gated run its route tables.
  std::map<std::string, std::vector<std::vector<std::string>>> ipv4_prefixes;
  std::size_t takes = 0;

  TakenSnapshot take(const std::vector<const intent::Device*>& devices,
                     const std::string& intent_commit, ProgressSink* /*progress*/) override {
    const std::size_t take_number = takes++;
    TakenSnapshot taken;
    taken.document = {{"format", "fabgate.snapshot/1"},
                      {"taken_at", format_utc(now_utc())},
                      {"intent_commit", intent_commit},
                      {"devices", nlohmann::json::object()}};
    for (const auto* device : devices) {
      nlohmann::json entry = {{"identity", nlohmann::json::object()},
                              {"sources", nlohmann::json::object()}};
      if (identities.contains(device->name)) {
        entry["identity"] = identities[device->name];
        entry["identity"]["platform"] = device->platform;
        entry["sources"]["identity"] = {
            {"status", "ok"},
            {"commands", {{{"command", "hostname"}, {"exit_status", 0}, {"parse", "ok"}}}}};
      }
      if (categories.contains(device->name)) {
        for (auto& [category, facts] : categories[device->name].items()) {
          entry[category] = facts;
          entry["sources"][category] = {{"status", "ok"}, {"commands", nlohmann::json::array()}};
        }
      }
      if (auto listed = ipv4_prefixes.find(device->name);
          listed != ipv4_prefixes.end() && !listed->second.empty()) {
        const auto& prefixes = listed->second[std::min(take_number, listed->second.size() - 1)];
        compare::RouteTable table(compare::Family::ipv4);
        std::string error;
        for (const auto& prefix : prefixes)
          EXPECT_TRUE(table.add("default", prefix, "bgp", 20, {"10.0.0.1"}, &error)) << error;
        EXPECT_TRUE(table.finalize(&error)) << error;
        auto tables = std::make_shared<snapshot::RouteTables>();
        tables->emplace("ipv4", std::move(table));
        taken.routes[device->name] = std::move(tables);
        entry["sources"]["routes"] = {{"status", "ok"}, {"commands", nlohmann::json::array()}};
      }
      taken.document["devices"][device->name] = std::move(entry);
    }
    if (before_returning) before_returning();
    return taken;
  }
};

inline intent::Device scripted_device(const std::string& name, const std::string& platform) {
  intent::Device result;
  result.name = name;
  result.platform = platform;
  result.ssh = {"127.0.0.1", 22};
  return result;
}

// An intent repository at one commit, held in memory: leaf1 (frr) and host1 (linux), and a
// change on the targets given with one step, its rollback and one probe per target.
struct ScriptedRun {
  intent::IntentRepository repository;
  intent::Change change;
  ScriptedRemote remote;
  ScriptedSnapshotter snapshotter;
  testing::TempDir evidence_root{"fabgate-gate-test"};

  explicit ScriptedRun(std::vector<std::string> targets) {
    repository.commit.id = "0123456789abcdef0123456789abcdef01234567";
    repository.inventory.devices = {scripted_device("leaf1", "frr"),
                                    scripted_device("host1", "linux")};
    change.id = "gate-test";
    change.targets = targets;
    change.bounds.max_targets = static_cast<int>(targets.size());
    // One matching round verifies the restore here; the dwell's own tests set it
    // (tests/gates/pipeline/controller/restore_path_test.cpp).
    change.acceptance.restore_dwell = Duration::zero();
    with_matrix(kNothingRequired);
    for (const auto& target : targets) {
      intent::Step step;
      step.device = target;
      step.run = "echo change " + target;
      change.steps.push_back(step);
      step.run = "echo undo " + target;
      change.rollback.push_back(step);
      intent::Probe probe;
      probe.name = "reachable-" + target;
      probe.host = target;
      probe.run = "true";
      change.acceptance.probes.push_back(probe);
    }
  }

  // A compatibility matrix at the commit; the default lists both scripted platforms with
  // nothing required, so gates other than compat's run. nullopt: no matrix at all.
  void with_matrix(const std::optional<std::string>& text) {
    auto& files = repository.policy_files;
    files.erase(std::remove(files.begin(), files.end(), "policies/compat.yaml"), files.end());
    repository.policy_texts.erase("policies/compat.yaml");
    if (!text) return;
    files.push_back("policies/compat.yaml");
    repository.policy_texts["policies/compat.yaml"] = *text;
  }
  static constexpr const char* kNothingRequired = "version: 1\nplatforms:\n  frr:\n  linux:\n";

  RunOutcome run() {
    auto bundle =
        EvidenceBundle::create(evidence_root.path(), change.id, now_utc(), "run1", Redactor{});
    EXPECT_TRUE(bundle.ok());
    if (!bundle.ok()) return RunOutcome{};
    GateObserver observer;
    PipelineOptions options;
    options.mode = Mode::apply;
    options.operator_name = "gate-test";
    Pipeline pipeline(repository, change, {remote, snapshotter, *bundle.value(), observer},
                      options);
    return pipeline.run();
  }
};

inline const GateRecord* gate_named(const RunOutcome& outcome, const std::string& name) {
  for (const auto& record : outcome.gates)
    if (record.name == name) return &record;
  return nullptr;
}

inline std::string all_details(const GateRecord& record) {
  std::string text = record.summary + "\n";
  for (const auto& detail : record.details) text += detail + "\n";
  return text;
}

}  // namespace fabgate::pipeline
