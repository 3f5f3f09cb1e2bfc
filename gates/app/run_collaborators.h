#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "adapters/core/result.h"
#include "adapters/ssh/connection_cache.h"
#include "gates/app/trusted_policy.h"
#include "gates/intent/model.h"
#include "gates/pipeline/controller/pipeline.h"
#include "gates/pipeline/families/collector_snapshotter.h"
#include "gates/pipeline/families/gnmi_steps.h"
#include "gates/pipeline/families/remote.h"
#include "gates/pipeline/families/secret_substitution.h"
#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/safety/safeguards.h"

namespace fabgate::app {

class Console;

// What a run that may touch devices (apply, rehearse, recover) is built from.
struct RunSetup {
  // The change from its commit, every fleet setting from the trusted ref (trusted_policy.h):
  // what SSH, gNMI, monitoring and etcd are reached with comes from nothing else.
  const RunIntent& intent;
  const intent::Change& change;
  std::filesystem::path intent_dir;  // relative settings paths (known_hosts) resolve from here
  pipeline::EvidenceBundle& evidence;
  ssh::UnknownHostKeys unknown_host_keys = ssh::UnknownHostKeys::refuse;
  int parallelism = 64;
  pipeline::TakeOver take_over = pipeline::TakeOver::no;
  std::string operator_name;
  // Put into commands just before they go over SSH (step_secrets.h), never into records.
  pipeline::SecretValues secrets;
  // --wait: how long a budget claim that does not fit waits in the fabric's queue.
  Duration budget_wait{0};
  // This controller's name in the coordination store (controller_name()); empty: the host name.
  std::string controller;
  // secrets.env names whose commands are refused rather than sent (plan: nothing approved yet).
  std::vector<std::string> withheld_secrets;
};

// The name this controller gives itself in the coordination store: --controller, else
// $FABGATE_CONTROLLER; empty for neither (the store then gets the host name). Invalid input (exit
// 2) when it is empty, longer than 128 bytes, or holds a control character: other operators read it
// in refusals and status.
Result<std::string> controller_name(const std::string& option);

// The real collaborators of one run, all recording into its evidence bundle: SSH sessions
// (one per device and role), the command remote, gNMI Set steps, the collector snapshotter,
// the device locks and confirm timers, and the budget claims. One place, so apply and recover
// cannot drift apart in how they reach devices.
class RunCollaborators {
 public:
  static Result<std::unique_ptr<RunCollaborators>> create(const RunSetup& setup);

  pipeline::Pipeline::Collaborators for_pipeline(pipeline::GateObserver& observer);
  // The sessions opened since the last call: each is recorded in commands.jsonl (purpose
  // "shell-startup"); a slow login shell also comes back as a line for the gate's details.
  std::vector<std::string> session_notes();
  const ssh::LibsshConnector& connector() const { return connector_; }
  void close() { connections_.close_all(); }
  // For `recover` of a run that died before sending a step: disarms the timers and releases
  // the locks that run may have left on its targets, and records that in safeguards.json.
  void release_untouched(const std::string& run_id);
  // For `recover`: expires the Alertmanager silences a dead run left (journaled silence-created
  // without silence-expired), journals each and writes monitoring/silence-recover.json. Returns
  // one line per silence for the terminal.
  std::vector<std::string> expire_silences(const std::vector<std::string>& ids);

 private:
  RunCollaborators(const RunSetup& setup, ssh::SshOptions ssh_options,
                   snapshot::ProfileSet profiles);

  pipeline::EvidenceBundle& evidence_;
  std::vector<std::string> targets_;
  // First: its lease fence guards every command and Set the remotes below send.
  pipeline::RunBudgets budgets_;
  ssh::LibsshConnector connector_;
  ssh::ConnectionCache connections_;
  pipeline::SshRemote ssh_remote_;
  // With coordination: each command to a device this run locked carries its fencing token,
  // checked on the device (remote.h); below the secrets, so the guard never sees a placeholder.
  pipeline::TokenFencedRemote token_fenced_;
  pipeline::SecretSubstitutingRemote with_secrets_;  // below the recorder: it sees placeholders
  pipeline::FencedRemote fenced_;  // below the recorder: what it refuses is recorded too
  pipeline::RecordingRemote remote_;
  pipeline::GrpcGnmiSteps grpc_gnmi_;
  pipeline::FencedGnmiSteps fenced_gnmi_;
  pipeline::RecordingGnmiSteps gnmi_steps_;
  pipeline::CollectorSnapshotter snapshotter_;
  pipeline::Safeguards safeguards_;
  // docs/monitoring.md: present when fabgate.yaml configures them.
  std::unique_ptr<prom::PrometheusClient> prometheus_;
  std::unique_ptr<prom::AlertmanagerClient> alertmanager_;
  std::size_t startups_seen_ = 0;
};

// Adds the values of the secrets fabgate.yaml names (`secrets.env`) and of the gNMI passwords to
// the run's one redactor (the console's, which the error printer shares) and returns a copy
// for the evidence bundle, so terminal, errors and evidence redact the same values. Warns about
// named secrets that are not set.
Redactor run_redactor(const intent::IntentRepository& repository, Console& console);

}  // namespace fabgate::app
