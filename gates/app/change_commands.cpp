#include "gates/app/change_commands.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "adapters/core/text.h"
#include "adapters/ssh/connection_cache.h"
#include "gates/app/intent_loading.h"
#include "gates/app/policy_check.h"
#include "gates/pipeline/collector_snapshotter.h"
#include "gates/pipeline/gnmi_steps.h"
#include "gates/pipeline/pipeline.h"
#include "gates/pipeline/reports.h"

namespace fabgate::app {
namespace {

std::string default_operator() {
  if (const char* user = std::getenv("USER"); user && *user) return user;
  if (const passwd* entry = ::getpwuid(::getuid())) return entry->pw_name;
  return "unknown";
}

std::filesystem::path resolve(const std::filesystem::path& base, const std::string& path) {
  std::filesystem::path expanded = expand_home(path);
  return expanded.is_absolute() ? expanded : base / expanded;
}

// Prints each gate as it ends: name, verdict, duration, summary; details of blocking gates.
class ConsoleObserver final : public pipeline::GateObserver {
 public:
  explicit ConsoleObserver(Console& console) : console_(console) {}
  void gate_finished(const pipeline::GateRecord& record) override {
    if (console_.json_mode()) return;
    std::string verdict(pipeline::to_string(record.verdict));
    std::string painted = record.verdict == pipeline::Verdict::pass ? console_.green(verdict)
                          : pipeline::blocks(record.verdict)        ? console_.red(verdict)
                                                                    : console_.yellow(verdict);
    char line[160];
    std::snprintf(line, sizeof line, "  %-18s %7.2fs  ", record.name.c_str(),
                  record.duration.count() / 1000.0);
    console_.line(std::string(line) + painted + "  " + record.summary);
    if (pipeline::blocks(record.verdict)) {
      std::size_t shown = 0;
      for (const auto& detail : record.details) {
        if (++shown > 10) {
          console_.line("      … " + std::to_string(record.details.size() - 10) +
                        " more in the report");
          break;
        }
        console_.line("      " + detail);
      }
    }
  }

 private:
  Console& console_;
};

Result<ExitCode> run_change(const CommonOptions& common, const ChangeOptions& options,
                            pipeline::Mode mode, Console& console) {
  // Intent: read from the commit, refuse uncommitted edits, find the change.
  auto loaded = read_intent(common);
  if (!loaded.ok()) return std::move(loaded).error();
  if (!loaded->outcome.diagnostics.empty())
    return Error::invalid_input("intent at " + loaded->commit.id.substr(0, 12) + " is invalid",
                                loaded->outcome.diagnostics.lines());
  auto committed = require_committed(loaded.value());
  if (!committed.ok()) return std::move(committed).error();
  const auto& repository = *loaded->outcome.repository;
  if (auto problems = policy_problems(repository); !problems.empty())
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

  // Evidence first: nothing is sent to a device before there is somewhere to record it.
  auto evidence_root = common.evidence_dir.empty()
                           ? resolve(loaded->intent_dir, repository.settings.evidence_dir)
                           : std::filesystem::path(common.evidence_dir);
  auto evidence = pipeline::EvidenceBundle::create(evidence_root, change->id, now_utc(),
                                                   pipeline::new_run_id(), Redactor{});
  if (!evidence.ok()) return std::move(evidence).error();
  auto& bundle = *evidence.value();

  ssh::SshOptions ssh_options;
  if (!repository.settings.ssh.known_hosts.empty())
    ssh_options.known_hosts_file = resolve(loaded->intent_dir, repository.settings.ssh.known_hosts);
  ssh_options.connect_timeout = repository.settings.ssh.connect_timeout;
  ssh_options.unknown_host_keys = options.accept_new_host_keys
                                      ? ssh::UnknownHostKeys::accept_and_record
                                      : ssh::UnknownHostKeys::refuse;
  int parallelism =
      options.parallelism > 0 ? options.parallelism : repository.settings.ssh.parallelism;

  auto profiles = pipeline::profiles_for(repository);
  if (!profiles.ok()) return std::move(profiles).error();

  ssh::LibsshConnector connector(ssh_options);
  ssh::ConnectionCache connections(connector);
  pipeline::SshRemote ssh_remote(connections);
  pipeline::RecordingRemote remote(ssh_remote, bundle);
  pipeline::GrpcGnmiSteps grpc_gnmi;
  pipeline::RecordingGnmiSteps gnmi_steps(grpc_gnmi, bundle);
  pipeline::CollectorSnapshotter snapshotter(std::move(profiles.value()), connections, &bundle,
                                             parallelism);
  ConsoleObserver observer(console);

  pipeline::PipelineOptions pipeline_options;
  pipeline_options.mode = mode;
  pipeline_options.operator_name =
      options.operator_name.empty() ? default_operator() : options.operator_name;
  pipeline_options.parallelism = parallelism;
  pipeline_options.annotate = [&](pipeline::EvidenceBundle& into, nlohmann::json& manifest) {
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& key : connector.accepted_host_keys()) {
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
  pipeline::Pipeline pipeline(
      repository, *change, {remote, snapshotter, bundle, observer, &gnmi_steps}, pipeline_options);
  auto outcome = pipeline.run();
  connections.close_all();

  pipeline::ReportContext context{repository, *change, mode, pipeline_options.operator_name,
                                  bundle.run_id()};
  if (!common.junit_file.empty()) {
    std::ofstream junit(common.junit_file);
    junit << pipeline::render_junit(context, outcome);
    if (!junit) console.warn("could not write " + common.junit_file);
  }
  if (console.json_mode()) {
    console.json(pipeline::render_summary_json(context, outcome, bundle.dir().string())
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    console.line("");
    if (!outcome.first_disproven.empty())
      console.line("first disproven: " + outcome.first_disproven);
    for (const auto& line : outcome.diagnosis) console.line("diagnosis:       " + line);
    console.line("devices:         " + outcome.device_state);
    if (outcome.detection_to_restore)
      console.line("restored in:     " + format_duration(*outcome.detection_to_restore) +
                   " from failure detection to verified baseline");
    console.line("evidence:        " + bundle.dir().string());
    std::string verdict = "exit " + std::to_string(to_int(outcome.exit_code));
    switch (outcome.exit_code) {
      case ExitCode::accepted:
        console.line(console.green(verdict) +
                     (mode == pipeline::Mode::plan ? ": plan ready" : ": accepted"));
        break;
      case ExitCode::refused:
        console.line(console.red(verdict) + ": refused; nothing was touched");
        break;
      case ExitCode::rolled_back:
        console.line(console.yellow(verdict) + ": change failed, rolled back, baseline verified");
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

}  // namespace fabgate::app
