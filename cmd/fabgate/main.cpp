// fabgate: parse flags, dispatch to gates/app, map the outcome to an exit code. No logic here.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "adapters/core/build_info.h"
#include "adapters/core/redact.h"
#include "cmd/fabgate/approve.h"
#include "cmd/fabgate/change.h"
#include "cmd/fabgate/complete.h"
#include "cmd/fabgate/diff.h"
#include "cmd/fabgate/inventory.h"
#include "cmd/fabgate/recover.h"
#include "cmd/fabgate/snapshot.h"
#include "cmd/fabgate/status.h"
#include "cmd/fabgate/subcommand.h"
#include "cmd/fabgate/validate.h"
#include "gates/app/process_signals.h"
#include "gates/app/usage.h"

namespace fabgate::cli {

// The subcommand table. Only commands that work are listed.
const std::vector<Subcommand> kSubcommands = {
    {"validate", "Validate the intent repository (and one change) at --ref", define_validate},
    {"plan", "Run the read-only gates for a change and write the review artifact", define_plan},
    {"approve", "Sign a plan's digest (ssh-keygen -Y sign) and write an approval file",
     define_approve},
    {"apply", "Run every gate; roll back and verify the baseline on failure", define_apply},
    {"rehearse", "Apply, then force the rollback and verify the baseline; write rehearsal.json",
     define_rehearse},
    {"twin", "Try an approved change on a twin of the fabric built on this machine; touch nothing",
     define_twin},
    {"recover", "Roll back what a dead run may have applied, from its journal; verify the baseline",
     define_recover},
    {"status", "Show what every controller is changing now: runs, budgets, queue, dead runs",
     define_status},
    {"evidence", "Work with evidence bundles (verify, show, sign)", define_evidence},
    {"diff", "Compare two snapshots under the compare rules; exit 3 when a check fails",
     define_diff},
    {"snapshot", "Collect device state over SSH; exit 3 when anything is missing", define_snapshot},
    {"inventory", "Write an inventory.yaml from a containerlab topology or Ansible inventory",
     define_inventory},
};

namespace {

// The one place that prints "fabgate: error: ..." and picks the exit code. Errors quote device
// output and commands, so they pass through the run's redactor, which holds the configured
// secret values once the command has read the intent.
int report(const Result<ExitCode>& outcome, const Redactor& redactor) {
  if (outcome.ok()) return to_int(outcome.value());
  const Error& error = outcome.error();
  std::fprintf(stderr, "fabgate: error: %s\n", redactor.redact(error.message).c_str());
  for (const auto& detail : error.details)
    std::fprintf(stderr, "  %s\n", redactor.redact(detail).c_str());
  return to_int(error.exit_code);
}

// The first word on the command line CLI11 did not take, when no subcommand was recognised:
// that is a mistyped command name, not a stray argument.
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
  if (!app.get_subcommands().empty()) return std::nullopt;
  auto extras = app.remaining();
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (!word.starts_with("-") && std::find(extras.begin(), extras.end(), word) != extras.end())
      return word;
  }
  return std::nullopt;
}

int run(int argc, char** argv, Redactor& redactor) {
  CLI::App app{"fabgate: change-control gates for AI-datacenter fabrics"};
  app.require_subcommand(0, 1);
  app.fallthrough();  // common options may follow the subcommand name

  app::CommonOptions common;
  app.add_option("--repo", common.repo, "Intent repository, or a folder inside one")
      ->capture_default_str();
  app.add_option("--ref", common.ref, "Commit the intent is read from")->capture_default_str();
  app.add_option("--evidence", common.evidence_dir, "Evidence directory (default: fabgate.yaml)");
  app.add_flag("--json", common.json, "Print one JSON document on stdout");
  app.add_option("--junit", common.junit_file, "Write a JUnit XML report to FILE");
  bool show_version = false;
  app.add_flag("--version", show_version, "Print version and build commit");

  std::map<const CLI::App*, Runner> runners;
  std::vector<std::string> names;
  for (const auto& row : kSubcommands) {
    CLI::App* command = app.add_subcommand(row.name, row.help);
    command->footer(app::common_help_footer());
    runners[command] = row.define(*command, common);
    for (auto* nested : command->get_subcommands({})) nested->footer(app::common_help_footer());
    names.emplace_back(row.name);
  }
  define_complete(app, common, runners);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (auto word = unknown_command(app, argc, argv)) {
      std::fprintf(stderr, "fabgate: error: %s\n",
                   app::unknown_command_message(*word, names).c_str());
      return to_int(ExitCode::invalid_input);
    }
    int code = app.exit(e);
    // CLI11 returns 0 for --help; every real parse error is invalid input (2).
    return code == 0 ? 0 : to_int(ExitCode::invalid_input);
  }

  if (show_version) {
    std::printf("fabgate %s (commit %s)\n", tool_version(), build_commit());
    return 0;
  }
  for (const auto* command : app.get_subcommands()) {
    auto console = app::Console::standard(common.json, redactor);
    return report(runners.at(command)(console), redactor);
  }
  std::fputs(app.help().c_str(), stdout);
  return to_int(ExitCode::invalid_input);
}

}  // namespace
}  // namespace fabgate::cli

int main(int argc, char** argv) {
  fabgate::app::prepare_process_signals();  // first: before any thread exists
  // One redactor for the whole run: a command adds the configured secret values to it when it
  // has read the intent, and the console, the evidence bundle and both error printers use it.
  fabgate::Redactor redactor;
  try {
    return fabgate::cli::run(argc, argv, redactor);
  } catch (const std::exception& e) {
    // what() can quote anything the run handled (a command, device output, a path).
    std::fprintf(stderr, "fabgate: error: internal: %s\n", redactor.redact(e.what()).c_str());
    return fabgate::to_int(fabgate::ExitCode::internal_error);
  } catch (...) {
    std::fprintf(stderr, "fabgate: error: internal: unknown exception\n");
    return fabgate::to_int(fabgate::ExitCode::internal_error);
  }
}
