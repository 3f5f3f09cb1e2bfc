#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/exit_code.h"
#include "gates/intent/model.h"
#include "gates/pipeline/evidence.h"
#include "gates/pipeline/execute.h"
#include "gates/pipeline/probes.h"
#include "gates/pipeline/remote.h"
#include "gates/pipeline/snapshots.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

enum class Mode {
  plan,      // read-only gates, then the review artifact
  apply,     // every gate; roll back on failure
  rehearse,  // apply, then a forced rollback and the same restore verification
};
std::string_view to_string(Mode mode);

struct PipelineOptions {
  Mode mode = Mode::apply;
  std::string operator_name;
  int parallelism = 64;
  TimePoint now = now_utc();  // the clock for the maintenance window (tests move it)
  // Called just before the manifest is written, to add what only the caller knows (host keys
  // accepted on first use, approvals...).
  std::function<void(EvidenceBundle&, nlohmann::json& manifest)> annotate;
};

// Live progress for people: the terminal shows each gate as it starts and ends.
class GateObserver {
 public:
  virtual ~GateObserver() = default;
  virtual void gate_started(const std::string& /*name*/) {}
  virtual void gate_finished(const GateRecord& /*record*/) {}
};

// What a run ended with. Everything here also lands in the evidence bundle.
struct RunOutcome {
  ExitCode exit_code = ExitCode::internal_error;
  std::vector<GateRecord> gates;
  std::string first_disproven;  // the first failing check, one line; empty when none failed
  bool change_started = false;  // at least one step was sent
  std::string device_state;     // one line: what state the devices were left in
  std::vector<ProbeOutcome> probes;
  std::vector<StepRun> steps;
  std::vector<StepRun> rollback_steps;
  std::optional<Duration> detection_to_restore;      // failure detected -> restore verified
  nlohmann::json layers = nlohmann::json::object();  // phase -> layer -> verdict of its checks
  std::vector<std::string> diagnosis;                // what the layers mean together, in words
  std::vector<std::string> exceptions_used;  // register entries that waived a check or probe
};

// The gate pipeline of DESIGN.md for one committed change. Collaborators are injected so the
// same code runs against real SSH targets and against fakes in unit tests.
class Pipeline {
 public:
  struct Collaborators {
    Remote& remote;
    Snapshotter& snapshotter;
    EvidenceBundle& evidence;
    GateObserver& observer;
    GnmiSteps* gnmi = nullptr;  // sends gNMI steps; null: changes with gNMI steps are refused
  };

  Pipeline(const intent::IntentRepository& repository, const intent::Change& change,
           Collaborators collaborators, PipelineOptions options);

  RunOutcome run();

 private:
  // Runs one gate: times it, records it, tells the observer. `body` fills in the verdict.
  GateRecord& gate(const std::string& name, const std::function<void(GateRecord&)>& body);
  GateRecord& skip(const std::string& name, const std::string& why);
  bool stopped() const;  // the last gate blocked

  void check_window(GateRecord& record);
  void take_snapshot(GateRecord& record, const std::string& label, nlohmann::json& into);
  void check_compat(GateRecord& record);
  void check_rollback_plan(GateRecord& record);
  void check_approval(GateRecord& record);
  void probe(GateRecord& record, const std::string& phase);
  void execute(GateRecord& record);
  void settle(GateRecord& record);
  void compare(GateRecord& record, const nlohmann::json& post, const std::string& label,
               bool with_expected_differences);
  void roll_back(GateRecord& record);
  void start_watch(GateRecord& record);
  void stop_watch(GateRecord& record);

  void note_first_failure(const GateRecord& record);
  void diagnose();
  void write_outputs(RunOutcome& outcome);

  const intent::IntentRepository& repository_;
  const intent::Change& change_;
  Collaborators with_;
  PipelineOptions options_;

  RunOutcome outcome_;
  std::vector<const intent::Device*> scope_;  // devices snapshotted and compared
  nlohmann::json pre_, post_, restored_;
  Execution execution_;
  RollbackResult rollback_;
  ProbeContext probe_context_;
  std::unique_ptr<WatchSession> watch_;
  std::chrono::steady_clock::time_point started_;
  std::optional<std::chrono::steady_clock::time_point> failure_detected_;
};

}  // namespace fabgate::pipeline
