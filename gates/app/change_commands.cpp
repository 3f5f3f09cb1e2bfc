#include "gates/app/change_commands.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "adapters/core/text.h"
#include "gates/app/gate_printer.h"
#include "gates/app/intent_loading.h"
#include "gates/app/policy_check.h"
#include "gates/app/run_collaborators.h"
#include "gates/app/step_secrets.h"
#include "gates/app/trusted_policy.h"
#include "gates/approval/approval_judge.h"
#include "gates/pipeline/controller/pipeline.h"
#include "gates/pipeline/reporting/plan_digest.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/safety/interruption.h"

namespace fabgate::app {
namespace {

Result<ExitCode> run_change(const CommonOptions& common, const ChangeOptions& options,
                            pipeline::Mode mode, Console& console) {
  // --wait is checked before anything is read: a typo must not start a run.
  Duration budget_wait{0};
  if (!options.wait.empty()) {
    auto parsed = parse_duration(options.wait);
    if (!parsed || *parsed <= Duration::zero() || *parsed > Duration{24 * 3600'000})
      return Error::invalid_input("--wait " + options.wait + ": not a duration",
                                  {"write it as 30s, 10m or 1h (at most 24h)"});
    budget_wait = *parsed;
  }
  auto controller = controller_name(options.controller);
  if (!controller.ok()) return std::move(controller).error();
  // Intent: read from the commit, refuse uncommitted edits, find the change.
  auto own = read_intent(common);
  if (!own.ok()) return std::move(own).error();
  if (!own->outcome.diagnostics.empty())
    return Error::invalid_input("intent at " + own->commit.id.substr(0, 12) + " is invalid",
                                own->outcome.diagnostics.lines());
  auto committed = require_committed(own.value());
  if (!committed.ok()) return std::move(committed).error();
  // The fleet settings (fabgate.yaml, the inventory, allowed_signers, the exceptions register,
  // the budgets) come from the trusted ref's tip, never from this commit, whose author is not
  // trusted before the change is approved (docs/security.md). The change's steps, rollback,
  // probes and expectations come from this commit.
  approval::SshKeygen commit_signatures(Duration{20'000}, "ssh-keygen", "git");
  auto trusted = read_trusted_policy(common, own.value(), &commit_signatures);
  if (!trusted.ok()) return std::move(trusted).error();
  auto run_intent = read_intent_under_trusted_ref(common, trusted.value());
  if (!run_intent.ok()) return std::move(run_intent).error();
  const LoadedIntent* loaded = &run_intent->loaded();
  if (!loaded->outcome.diagnostics.empty()) {
    auto lines = loaded->outcome.diagnostics.lines();
    lines.push_back("fabgate.yaml and the inventory are read from " + trusted->source +
                    ", not from commit " + own->commit.id.substr(0, 12) +
                    ": a change that needs new devices or settings merges them there first");
    return Error::invalid_input("intent at " + own->commit.id.substr(0, 12) +
                                    " is invalid under the fleet settings of the trusted ref",
                                lines);
  }
  if (auto inside = refuse_fleet_files_in_work_tree(*loaded); !inside.ok())
    return std::move(inside).error();
  const auto& repository = run_intent->repository();
  warn_lab_only_settings(repository, console);
  // The commit's own policy files, as validate checks them; the trusted ref's budgets and
  // exceptions are judged by the gates that use them (a change beyond the trusted budget is
  // refused by the budgets gate, exit 3, with its evidence).
  if (auto problems = policy_problems(*own->outcome.repository); !problems.empty())
    return Error::invalid_input("policies at " + loaded->commit.id.substr(0, 12) + " are invalid",
                                problems);
  const intent::Change* change = repository.find_change(options.change);
  if (!change) {
    std::vector<std::string> ids;
    for (const auto& c : repository.changes) ids.push_back(c.id);
    std::string hint = "changes at this commit: " + join(ids, ", ");
    if (auto s = nearest_word(options.change, ids)) hint = "did you mean '" + *s + "'?";
    return Error::invalid_input(
        "no change '" + options.change + "' at commit " + loaded->commit.id.substr(0, 12), {hint});
  }

  // Secrets the commands use: all present, or the change is refused before anything is sent.
  // A plan is made before anyone approved the change, so it gets none: a probe that would
  // carry one is not run at plan time (no-evidence, docs/security.md).
  pipeline::SecretValues secret_values;
  if (mode != pipeline::Mode::plan) {
    auto secrets = step_secret_values(repository, *change, CommandsSent::change);
    if (!secrets.ok()) return std::move(secrets).error();
    secret_values = std::move(secrets).value();
  }

  // Evidence first: nothing is sent to a device before there is somewhere to record it.
  auto evidence_root = common.evidence_dir.empty()
                           ? resolve_in_intent(loaded->intent_dir, repository.settings.evidence_dir)
                           : std::filesystem::path(common.evidence_dir);
  auto evidence =
      pipeline::EvidenceBundle::create(evidence_root, change->id, now_utc(), pipeline::new_run_id(),
                                       run_redactor(repository, console));
  if (!evidence.ok()) return std::move(evidence).error();
  auto& bundle = *evidence.value();

  int parallelism =
      options.parallelism > 0 ? options.parallelism : repository.settings.ssh.parallelism;
  const std::string operator_name =
      options.operator_name.empty() ? default_operator() : options.operator_name;
  auto collaborators = RunCollaborators::create(
      {run_intent.value(), *change, loaded->intent_dir, bundle,
       options.accept_new_host_keys ? ssh::UnknownHostKeys::accept_and_record
                                    : ssh::UnknownHostKeys::refuse,
       parallelism, options.take_over_locks ? pipeline::TakeOver::yes : pipeline::TakeOver::no,
       operator_name, std::move(secret_values), budget_wait, controller.value(),
       mode == pipeline::Mode::plan ? repository.settings.secret_env : std::vector<std::string>{}});
  if (!collaborators.ok()) return std::move(collaborators).error();
  auto& run = *collaborators.value();
  GatePrinter observer(console);

  pipeline::PipelineOptions pipeline_options;
  pipeline_options.mode = mode;
  pipeline_options.operator_name = operator_name;
  pipeline_options.parallelism = parallelism;
  // Journaled in run-start, so `fabgate recover` can rebuild this run after a crash.
  auto normal = [](const std::filesystem::path& path) {
    auto out = std::filesystem::absolute(path).lexically_normal();
    return (out.has_filename() ? out : out.parent_path()).string();  // no trailing "/"
  };
  pipeline_options.origin = {normal(common.repo), common.ref, loaded->intent_root,
                             normal(evidence_root)};
  // Approvals are verified with ssh-keygen against allowed_signers at the trusted ref.
  approval::SshKeygen keygen;
  // The bundle gets the bytes that were judged (each file read once), never a second read.
  approval::SignedApprovalJudge judge({options.approvals, options.rehearsal}, keygen);
  pipeline_options.approval_judge = &judge;
  if (mode == pipeline::Mode::plan) pipeline_options.rehearsal_for_review = options.rehearsal;
  pipeline_options.annotate = [&](pipeline::EvidenceBundle& into, nlohmann::json& manifest) {
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& key : run.connector().accepted_host_keys()) {
      keys.push_back({{"device", key.device},
                      {"host", key.host},
                      {"type", key.key_type},
                      {"fingerprint", key.fingerprint},
                      {"known_hosts", key.known_hosts_file},
                      {"saved", key.saved}});
      console.warn("accepted a new host key for " + key.device + " (" + key.host +
                   "): " + key.key_type + " " + key.fingerprint);
    }
    manifest["host_keys_accepted"] = keys;
    (void)into;
  };

  if (!console.json_mode())
    console.line(
        console.bold("fabgate " + std::string(pipeline::to_string(mode)) + " " + change->id) +
        " at " + loaded->commit.id.substr(0, 12) + " (" + change->title + ")");
  pipeline::Pipeline pipeline(repository, *change, run.for_pipeline(observer), pipeline_options);
  // From here on a signal stops the run through its controller (rollback, seal), never the
  // process with a change left on the devices.
  pipeline::Interruption::Installed signals;
  auto outcome = pipeline.run();
  run.close();

  pipeline::ReportContext context{
      repository,      *change,           mode, pipeline_options.operator_name,
      bundle.run_id(), console.redactor()};
  if (!common.junit_file.empty()) {
    std::ofstream junit(common.junit_file);
    junit << pipeline::render_junit(context, outcome);
    if (!junit) console.warn("could not write " + common.junit_file);
  }
  if (console.json_mode()) {
    console.json(pipeline::render_summary_json(context, outcome, bundle.dir().string()));
  } else {
    console.line("");
    if (!outcome.first_disproven.empty())
      console.line("first disproven: " + outcome.first_disproven);
    for (const auto& line : outcome.diagnosis) console.line("diagnosis:       " + line);
    console.line("devices:         " + outcome.device_state);
    if (outcome.detection_to_restore)
      console.line("restored in:     " + format_duration(*outcome.detection_to_restore) +
                   " from failure detection to verified baseline" +
                   (outcome.detection_to_rollback_sent && outcome.rollback_sent_to_verified
                        ? " (rollback sent after " +
                              format_duration(*outcome.detection_to_rollback_sent) +
                              ", first round held " +
                              format_duration(*outcome.rollback_sent_to_verified) + " later)"
                        : std::string()));
    console.line("evidence:        " + bundle.dir().string());
    if (!outcome.sealed)
      console.line(console.red("NOT SEALED:      ") + (outcome.evidence_not_written.empty()
                                                           ? std::string("manifest.json missing")
                                                           : outcome.evidence_not_written.back()));
    if (!outcome.recover_command.empty())
      console.line(console.red("recover with:    ") + outcome.recover_command);
    console.line("plan digest:     " + pipeline::plan_digest(repository, *change));
    if (mode == pipeline::Mode::plan)
      console.line("approve with:    fabgate approve " + (bundle.dir() / "plan.json").string() +
                   " --key <your ssh key>");
    std::string verdict = "exit " + std::to_string(to_int(outcome.exit_code));
    switch (outcome.exit_code) {
      case ExitCode::accepted:
        console.line(console.green(verdict) + (mode == pipeline::Mode::plan ? ": plan ready"
                                               : mode == pipeline::Mode::rehearse
                                                   ? ": rehearsal passed (rehearsal.json)"
                                               : mode == pipeline::Mode::twin
                                                   ? ": the change held on the twin (twin/report.json)"
                                                   : ": accepted"));
        break;
      case ExitCode::refused:
        console.line(console.red(verdict) + ": refused; nothing was touched");
        break;
      case ExitCode::rolled_back:
        console.line(console.yellow(verdict) + ": change failed, rolled back, baseline verified");
        break;
      case ExitCode::internal_error:
        console.line(console.red(verdict) + ": " + outcome.device_state);
        break;
      default:
        console.line(console.red(verdict) + ": NOT RESTORED: a human must act now");
    }
  }
  return outcome.exit_code;
}

}  // namespace

Result<ExitCode> run_plan(const CommonOptions& common, const ChangeOptions& options,
                          Console& console) {
  return run_change(common, options, pipeline::Mode::plan, console);
}

Result<ExitCode> run_apply(const CommonOptions& common, const ChangeOptions& options,
                           Console& console) {
  return run_change(common, options, pipeline::Mode::apply, console);
}

Result<ExitCode> run_rehearse(const CommonOptions& common, const ChangeOptions& options,
                              Console& console) {
  return run_change(common, options, pipeline::Mode::rehearse, console);
}

Result<ExitCode> run_twin(const CommonOptions& common, const ChangeOptions& options,
                          Console& console) {
  return run_change(common, options, pipeline::Mode::twin, console);
}

}  // namespace fabgate::app
