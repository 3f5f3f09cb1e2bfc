#include "gates/app/recover_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

#include "adapters/core/build_info.h"
#include "adapters/core/foreign_json.h"
#include "adapters/core/text.h"
#include "gates/app/gate_printer.h"
#include "gates/app/intent_loading.h"
#include "gates/app/run_collaborators.h"
#include "gates/app/step_secrets.h"
#include "gates/app/trusted_policy.h"
#include "gates/approval/signature_tool.h"
#include "gates/coordination/budgets.h"
#include "gates/coordination/claims.h"
#include "gates/coordination/locks.h"
#include "gates/coordination/shared_journal.h"
#include "gates/coordination/store_settings.h"
#include "gates/pipeline/controller/pipeline.h"
#include "gates/pipeline/reporting/report_html.h"
#include "gates/pipeline/reporting/reports.h"
#include "gates/pipeline/safety/interruption.h"
#include "gates/pipeline/safety/journal.h"

namespace fabgate::app {
namespace {

constexpr const char* kJournalFile = "journal.jsonl";

pipeline::Mode mode_from(const std::string& text) {
  if (text == "plan") return pipeline::Mode::plan;
  if (text == "rehearse") return pipeline::Mode::rehearse;
  return pipeline::Mode::apply;
}

// Tells the user, in words or as the one JSON document, and returns the exit code.
ExitCode say(Console& console, ExitCode code, const std::string& dir, const std::string& message) {
  if (console.json_mode()) {
    console.json(nlohmann::json{{"evidence", dir},
                                {"exit_code", to_int(code)},
                                {"recovered", false},
                                {"message", message}});
  } else {
    console.line(message);
    console.line("evidence:        " + dir);
    console.line("exit " + std::to_string(to_int(code)));
  }
  return code;
}

// Seals the bundle of a run that needs no rollback: the journal says why, a short report says it
// in words, and the manifest makes the bundle verifiable. `code` is the exit the bundle records
// (the run's own when it ended); recover itself exits `exits_with`, `code` unless given.
// `after_start` runs once recover-start is journaled (giving back a dead run's locks and
// timers), so the journal tells in order what recover did.
Result<ExitCode> seal(const pipeline::CrashedRun& crashed, pipeline::EvidenceBundle& evidence,
                      const std::string& operator_name, ExitCode code, const std::string& why,
                      Console& console, const std::function<void()>& after_start = {},
                      std::optional<ExitCode> exits_with = std::nullopt) {
  const std::filesystem::path& dir = evidence.dir();
  nlohmann::json torn = nullptr;
  if (crashed.torn) torn = {{"line", crashed.torn->line}, {"why", crashed.torn->why}};
  evidence.append_journal({{"event", "recover-start"},
                           {"after_record", crashed.last_sequence},
                           {"last_event", crashed.last_event},
                           {"torn_record_discarded", torn},
                           {"devices", nlohmann::json::array()},
                           {"operator", operator_name},
                           {"at", format_utc(now_utc())}});
  if (after_start) after_start();
  std::string report =
      "# fabgate recover: " + crashed.start.change + "\n\n" + "- run: " + crashed.start.run_id +
      " (" + crashed.start.mode + " by " + crashed.start.operator_name +
      ")\n- intent commit: " + crashed.start.commit + "\n- recovered by: " + operator_name +
      "\n- journal: the run stopped after record " + std::to_string(crashed.last_sequence) + " (" +
      crashed.last_event + ")\n\n" + why + "\n\nexit " + std::to_string(to_int(code)) + "\n";
  if (auto written = evidence.write("recover.md", report); !written.ok())
    return std::move(written).error();
  // The page every bundle has (docs/report.md), here saying why nothing ran.
  const pipeline::RecoverNotice notice{crashed.start.change,
                                       crashed.start.run_id,
                                       crashed.start.mode,
                                       crashed.start.operator_name,
                                       crashed.start.commit,
                                       operator_name,
                                       crashed.last_sequence,
                                       crashed.last_event,
                                       why,
                                       code};
  if (auto written = evidence.write_redacted(
          "report.html", pipeline::render_recover_notice_page(notice, evidence.redactor()));
      !written.ok())
    return std::move(written).error();
  evidence.append_journal(
      {{"event", "run-end"}, {"exit_code", to_int(code)}, {"at", format_utc(now_utc())}});
  nlohmann::json manifest = {
      {"tool",
       {{"name", "fabgate"}, {"version", tool_version()}, {"build_commit", build_commit()}}},
      {"mode", crashed.start.mode},
      {"run_id", crashed.start.run_id},
      {"change", crashed.start.change},
      {"intent_commit", crashed.start.commit},
      {"operator", crashed.start.operator_name},
      {"exit_code", to_int(code)},
      {"device_state", why},
      {"recovery",
       {{"by", operator_name},
        {"after_record", crashed.last_sequence},
        {"last_event", crashed.last_event},
        {"run_ended_with", crashed.ended_with ? nlohmann::json(*crashed.ended_with) : nullptr}}}};
  if (auto finished = evidence.finish(manifest); !finished.ok()) return std::move(finished).error();
  return say(console, exits_with.value_or(code), dir.string(), why);
}

// `fabgate recover RUN` on a controller that does not hold the run's evidence folder: copies
// the run's journal (and its pre-change snapshot) from the shared journal in the fabric's etcd
// into a new local folder, <evidence>/<change>/<the run's folder name>, which recover then
// finishes like any other. The store is found through the intent repository at --repo/--ref
// (its trusted ref's coordination block, as runs use). Refused while the run is alive: its
// controller still keeps its lease.
Result<std::filesystem::path> fetch_from_store(const CommonOptions& common,
                                               const RecoverOptions& options, Console& console) {
  const std::string& run_id = options.run_dir;
  CommonOptions here = common;
  if (options.repo) here.repo = *options.repo;
  auto loaded = read_intent(here);
  if (!loaded.ok()) return std::move(loaded).error();
  if (!loaded->outcome.diagnostics.empty())
    return Error::invalid_input("recover: the intent at " + here.ref + " is invalid",
                                loaded->outcome.diagnostics.lines());
  const auto& repository = *loaded->outcome.repository;
  std::optional<intent::CoordinationSettings> coordination = repository.settings.coordination;
  approval::SshKeygen commit_signatures(Duration{20'000}, "ssh-keygen", "git");
  if (auto trusted = read_trusted_policy(here, loaded.value(), &commit_signatures); trusted.ok())
    coordination = trusted->coordination;
  if (!coordination)
    return Error::invalid_input(
        "recover: " + run_id + " is not an evidence folder here, and the intent at " + here.ref +
            " has no coordination: store to find run " + run_id + "'s journal in",
        {"give the run's evidence folder (<evidence>/<change>/<time>-" + run_id +
         "), or recover from a repository whose fabgate.yaml names the fabric's etcd"});
  auto client =
      etcd::EtcdClient::open(coordination::store_settings(*coordination, loaded->intent_dir));
  auto unusable = [&](const std::string& what) {
    return Error::refused("recover: the coordination store cannot be used to find run " + run_id +
                          ": " + what);
  };
  if (!client)
    return unusable("etcd " + std::string(etcd::to_string(client.error().kind)) + ": " +
                    client.error().message);
  // A live run is not recovered under its controller's feet.
  auto alive = client->get(coordination->prefix + "/runs/" + run_id + "/alive");
  if (!alive)
    return unusable("etcd " + std::string(etcd::to_string(alive.error().kind)) + ": " +
                    alive.error().message);
  if (!alive->kvs.empty())
    return Error::refused("recover: run " + run_id + " is alive: its controller (" +
                              alive->kvs.front().value +
                              ") still keeps its lease; recover a run only once it has died",
                          {"fabgate status lists the runs in flight and the dead ones"});
  coordination::SharedJournal journal(*client, coordination->prefix);
  auto shared = journal.read(run_id);
  if (!shared) {
    using Kind = coordination::JournalStoreFailure::Kind;
    if (shared.error().kind == Kind::store) return unusable(shared.error().message);
    return Error::invalid_input(
        "recover: " + run_id + " is not an evidence folder here; " + shared.error().message,
        {"a run shares its journal only with coordination: configured, from its budget claim on; "
         "a run whose devices ended in a known state erased it"});
  }
  // The run-start record names the change; the meta record the folder name on its controller.
  // Read from the store, so foreign data: typed, depth-limited lookups that never throw.
  auto first = parse_foreign_json(shared->records.front());
  const std::string change = first.ok() && string_member(first.document, "event") ==
                                               std::optional<std::string>("run-start")
                                 ? string_member(first.document, "change").value_or("")
                                 : "";
  if (!coordination::plain_key_segment(change))
    return Error::invalid_input("recover: the shared journal of run " + run_id +
                                " does not start with a readable run-start record");
  std::string folder =
      shared->meta.is_object() && shared->meta.contains("evidence") &&
              shared->meta["evidence"].is_string()
          ? std::filesystem::path(shared->meta["evidence"].get<std::string>()).filename().string()
          : "";
  if (!coordination::plain_key_segment(folder) || !folder.ends_with("-" + run_id))
    folder = "from-etcd-" + run_id;
  const std::filesystem::path root =
      common.evidence_dir.empty()
          ? resolve_in_intent(loaded->intent_dir, repository.settings.evidence_dir)
          : std::filesystem::path(common.evidence_dir);
  const std::filesystem::path dir = std::filesystem::absolute(root / change / folder);
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    console.warn("recover: " + dir.string() +
                 " exists already (an earlier recover copied the journal there); recovering it");
    return dir;
  }
  std::filesystem::create_directories(dir / "snapshots", ec);
  if (ec) return Error::internal("recover: create " + dir.string() + ": " + ec.message());
  std::string lines;
  for (const auto& line : shared->records) lines += line + "\n";
  if (auto written = pipeline::write_file_atomically(dir / kJournalFile, lines); !written.ok())
    return std::move(written).error();
  if (shared->baseline) {
    if (auto written =
            pipeline::write_file_atomically(dir / "snapshots/pre.json", *shared->baseline);
        !written.ok())
      return std::move(written).error();
  }
  nlohmann::json source = {{"store", "etcd"},
                           {"endpoints", coordination->endpoints},
                           {"key_prefix", journal.location(run_id)},
                           {"records", shared->records.size()},
                           {"baseline", shared->baseline ? nlohmann::json(shared->baseline->size())
                                                         : nlohmann::json(shared->no_baseline)},
                           {"run_meta", shared->meta},
                           {"copied_at", format_utc(now_utc())}};
  if (auto written =
          pipeline::write_file_atomically(dir / "shared-journal.json", source.dump(2) + "\n");
      !written.ok())
    return std::move(written).error();
  std::string from = shared->meta.is_object() ? shared->meta.value("controller", "") : "";
  console.line("recover: run " + run_id + "'s journal (" + std::to_string(shared->records.size()) +
               " records" + (shared->baseline ? " and its pre-change snapshot" : "") +
               ") copied from etcd " + journal.location(run_id) +
               (from.empty() ? "" : " (written by controller " + from + ")") + " into " +
               dir.string());
  if (!shared->baseline)
    console.warn("recover: no pre-change snapshot: " + shared->no_baseline +
                 "; the rollback is sent but the baseline cannot be verified (exit 5)");
  return dir;
}

// A run that ended in a known state (exit 0, 3 or 4) whose own end could not release what it
// held in the fabric's etcd (the store did not answer then): its fleet locks, budget claims
// and shared journal stay there, and refuse other runs, until they are released here. Its
// devices need nothing: the run verified them. An accepted apply's out_of_service and
// back_in_service targets are recorded as its release would have. The run's sealed bundle is
// not touched (its manifest covers it); the outcome says what was released.
struct StoreRelease {
  ExitCode code = ExitCode::accepted;  // invalid_input: nothing was left to release
  std::string message;
};

Result<StoreRelease> release_what_the_run_left(const pipeline::CrashedRun& crashed,
                                               const intent::IntentRepository& repository,
                                               const std::filesystem::path& intent_dir,
                                               const std::string& controller, Console& console) {
  const auto& start = crashed.start;
  const int ended = crashed.ended_with.value_or(-1);
  const std::string run = "run " + start.run_id + " ended with exit " + std::to_string(ended);
  const auto& trusted = repository.trusted_policy;
  const std::optional<intent::CoordinationSettings> coordination =
      trusted ? trusted->coordination : repository.settings.coordination;
  if (!coordination)
    return Error::invalid_input(
        "recover: " + run +
            " without releasing what it held in its coordination store, and "
            "the intent at " +
            start.commit.substr(0, 12) + " names no coordination: store",
        {"release its keys with etcdctl (docs/coordination.md lists them)"});
  const std::string& prefix = coordination->prefix;
  auto failed = [&](const std::string& what, const std::string& message) {
    return Error::refused("recover: " + run + "; " + what + " in " + prefix + ": " + message,
                          {"the devices need nothing; run `fabgate recover` again once etcd "
                           "answers"});
  };
  auto client = etcd::EtcdClient::open(coordination::store_settings(*coordination, intent_dir));
  if (!client)
    return failed("cannot open the store", "etcd " +
                                               std::string(etcd::to_string(client.error().kind)) +
                                               ": " + client.error().message);
  // The run's journal in etcd is erased last by every release: while it is there, the release
  // is unfinished; once it is gone there is nothing to do (and an accepted drain's service
  // records, perhaps undrained since, must not be written again).
  coordination::SharedJournal journal(*client, prefix);
  auto shared = journal.last_sequence(start.run_id);
  if (!shared) return failed("cannot read its shared journal", shared.error().message);
  if (*shared == 0)
    return StoreRelease{ExitCode::invalid_input, "nothing to recover: " + run +
                                                     " and nothing of it is left in " + prefix +
                                                     " (released since, by an earlier recover)"};
  // Locks first, as the run's own end does: the claims' release removes the alive key.
  coordination::LockLedger locks(*client, prefix);
  auto locks_released = locks.release(start.run_id);
  if (!locks_released)
    return failed("its device locks were NOT released", locks_released.error().message);
  coordination::ServiceTransition transition;
  const intent::Change* change = repository.find_change(start.change);
  if (ended == to_int(ExitCode::accepted) && start.mode == "apply" && change)
    transition = {{start.run_id, start.operator_name, start.change, controller, 0},
                  change->out_of_service,
                  change->back_in_service};
  coordination::BudgetLedger budgets(*client, prefix);
  auto claims_released = budgets.release(start.run_id, transition);
  if (!claims_released)
    return failed("its budget claims were NOT released", claims_released.error().message);
  auto counted = [](int n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  std::vector<std::string> done = {counted(*locks_released, "device lock"),
                                   counted(*claims_released, "budget claim")};
  if (!transition.out.empty())
    done.push_back(join(transition.out, ", ") + " recorded out of service");
  if (!transition.back.empty()) done.push_back(join(transition.back, ", ") + " back in service");
  if (auto erased = journal.erase(start.run_id); erased)
    done.push_back("its shared journal erased");
  else
    console.warn("recover: run " + start.run_id + "'s shared journal was NOT erased from " +
                 journal.location(start.run_id) + ": " + erased.error().message +
                 " (`etcdctl del --prefix " + journal.location(start.run_id) + "` removes it)");
  return StoreRelease{ExitCode::accepted,
                      "recover: " + run + " but its end could not release what it held in " +
                          prefix + ": released now (" + join(done, "; ") +
                          "); the devices were not touched (the run verified them)"};
}

// What recover holds in the fabric's etcd once it took a dead run over: its own lease, on which
// P/recovering/<run> lives until recover ends (revoked then, however it ends), so that a second
// recover of the run is refused meanwhile.
struct StoreTakeOver {
  std::optional<etcd::EtcdClient> client;
  std::int64_t lease = 0;
  StoreTakeOver() = default;
  StoreTakeOver(const StoreTakeOver&) = delete;
  StoreTakeOver& operator=(const StoreTakeOver&) = delete;
  ~StoreTakeOver() {
    if (client && lease != 0) (void)client->revoke(lease);
  }
};

// A command the dead run journaled as started and never as ended may still be running on its
// device: the controller was killed, frozen or cut off, not the device. Its own deadline (and
// the connect timeout, for one still connecting) bounds it, so recover sends nothing before
// the latest such deadline has passed, counted from the journaled start on the run's wall
// clock. A start without a journaled deadline (an older fabgate) counts as the SSH command
// timeout. Bounded: never longer than the longest deadline itself plus the connect timeout,
// so a clock far behind this one cannot make recover wait for ever.
void wait_for_open_commands(const pipeline::CrashedRun& crashed,
                            const intent::IntentRepository& repository, Console& console) {
  const Duration connect = repository.settings.ssh.connect_timeout;
  TimePoint until = now_utc();
  Duration longest{0};
  std::string which;
  for (const auto& command : crashed.open_commands) {
    const Duration deadline = command.deadline.count() > 0 ? command.deadline
                                                            : repository.settings.ssh.command_timeout;
    const TimePoint ends = command.started + deadline + connect;
    longest = std::max(longest, deadline + connect);
    if (ends > until) {
      until = ends;
      which = command.phase + " " + std::to_string(command.index + 1) + " on " + command.device;
    }
  }
  const TimePoint cap = now_utc() + longest;
  if (until > cap) until = cap;
  const auto left = std::chrono::duration_cast<Duration>(until - now_utc());
  if (left.count() <= 0) return;
  if (!console.json_mode())
    console.line("recover: " + which + " was journaled as started and never as ended: waiting " +
                 format_duration(left) +
                 " for its deadline (and the connect timeout) to pass before sending anything");
  std::this_thread::sleep_for(left);
}

// The end marker a run recorded in its coordination store before it released what it held
// (shared_journal.h run_end_key); nullopt when there is none or the store cannot be asked (the
// take-over then refuses a run that has one).
std::optional<std::string> run_end_in_store(const intent::IntentRepository& repository,
                                            const std::filesystem::path& intent_dir,
                                            const std::string& run_id) {
  const auto& trusted = repository.trusted_policy;
  const std::optional<intent::CoordinationSettings> coordination =
      trusted ? trusted->coordination : repository.settings.coordination;
  if (!coordination) return std::nullopt;
  auto client = etcd::EtcdClient::open(coordination::store_settings(*coordination, intent_dir));
  if (!client) return std::nullopt;
  auto end = client->get(coordination::run_end_key(coordination->prefix, run_id));
  if (!end || end->kvs.empty()) return std::nullopt;
  return end->kvs.front().value;
}

// With `coordination:` (the trusted ref's, as the run used), recover takes the run over in the
// store before anything reaches a device (gates/coordination/locks.h): one transaction, guarded
// by the run's alive key being absent (its lease lapsed) and by no other recover having taken
// it over, rewrites the run's fleet locks (strictly newer fencing tokens, which the devices then
// record before any rollback) and marks the take-over on recover's own lease. Refused (exit 3,
// nothing touched) while the run is alive, naming its controller and when its lease may lapse,
// or when another recover won, naming it.
Status take_over_in_store(const pipeline::CrashedRun& crashed,
                          const intent::IntentRepository& repository,
                          const std::filesystem::path& intent_dir, const std::string& controller,
                          const std::string& operator_name, const std::filesystem::path& run_dir,
                          StoreTakeOver& held, Console& console) {
  const auto& trusted = repository.trusted_policy;
  const std::optional<intent::CoordinationSettings> coordination =
      trusted ? trusted->coordination : repository.settings.coordination;
  if (!coordination) return Ok{};
  const std::string& run_id = crashed.start.run_id;
  auto refused = [&](const std::string& why) {
    return Error::refused("recover: run " + run_id + " cannot be taken over in " +
                              coordination->prefix + ": " + why + "; nothing was touched",
                          {"run `fabgate recover` again once the store answers"});
  };
  auto client = etcd::EtcdClient::open(coordination::store_settings(*coordination, intent_dir));
  if (!client)
    return refused("etcd " + std::string(etcd::to_string(client.error().kind)) + ": " +
                   client.error().message);
  held.client.emplace(std::move(client).value());
  // Held while recover runs; long enough for recover to reach its own fleet-locks gate, whose
  // alive key (kept alive) then says the run is being recovered.
  const std::int64_t ttl =
      std::max<std::int64_t>(60, (coordination->lease_ttl.count() + 999) / 1000);
  auto lease = held.client->grant(ttl);
  if (!lease)
    return refused("could not take a lease: etcd " +
                   std::string(etcd::to_string(lease.error().kind)) + ": " + lease.error().message);
  held.lease = lease->id;
  // A run whose controller died keeps its alive key until etcd expires its lease: wait for
  // that, once, at most the TTL the lease has left (and 2 s). A live run renews it meanwhile,
  // and the take-over below then refuses, naming it.
  const std::string alive_key = coordination->prefix + "/runs/" + run_id + "/alive";
  // A bundle sealed already (a run that ended NOT RESTORED and named this command) is not a run
  // that "ended meanwhile": only a manifest that appears during the wait says that.
  std::error_code sealed_error;
  const bool sealed_before = std::filesystem::exists(run_dir / "manifest.json", sealed_error);
  if (auto alive = held.client->get(alive_key); alive && !alive->kvs.empty()) {
    auto left = held.client->time_to_live(alive->kvs.front().lease);
    const std::int64_t seconds = left && left->ttl > 0 ? left->ttl : 0;
    if (!console.json_mode())
      console.line("recover: run " + run_id + " still holds its lease in " + coordination->prefix +
                   " (" + std::to_string(seconds) + " s left): waiting for it to lapse");
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(seconds + 2);
    std::int64_t last = seconds;
    bool lapsed = false;
    while (std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      auto again = held.client->get(alive_key);
      if (again && again->kvs.empty()) {
        lapsed = true;
        break;
      }
      // Renewed: the run is alive, and the take-over below refuses, naming it.
      auto now_left = held.client->time_to_live(alive->kvs.front().lease);
      if (now_left && now_left->ttl > last) break;
      if (now_left && now_left->ttl >= 0) last = now_left->ttl;
    }
    // A live run that ended meanwhile released its key: its sealed bundle says so.
    if (lapsed && !sealed_before && std::filesystem::exists(run_dir / "manifest.json"))
      return Error::refused("recover: run " + run_id +
                            " ended while recover waited for its lease (its evidence is sealed: " +
                            (run_dir / "manifest.json").string() + "); nothing to recover");
  }
  coordination::LockLedger ledger(*held.client, coordination->prefix);
  auto taken =
      ledger.take_over({run_id, operator_name, crashed.start.change, controller, held.lease});
  if (!taken) {
    using Kind = coordination::FleetLockFailure::Kind;
    const auto& failure = taken.error();
    if (failure.kind == Kind::alive)
      return Error::refused("recover: " + failure.message.substr(failure.message.find("run ")),
                            {"recover a run only once it has died; fabgate status lists the runs "
                             "in flight and the dead ones"});
    if (failure.kind == Kind::ended)
      return Error::refused("recover: " + failure.message.substr(failure.message.find("run ")),
                            {"run `fabgate recover " + run_id +
                             "` again: it releases what the run left without touching its "
                             "devices"});
    if (failure.kind == Kind::recovering)
      return Error::refused("recover: " + failure.message.substr(failure.message.find("run ")),
                            {"fabgate status shows when that recover has finished"});
    return refused(failure.message);
  }
  // The run is dead and fenced in the store; a command it had on the wire may still be running
  // on its device, and nothing is sent there before it can have ended.
  wait_for_open_commands(crashed, repository, console);
  std::string tokens;
  for (const auto& [device, token] : *taken)
    tokens += (tokens.empty() ? "" : ", ") + device + " " + std::to_string(token);
  if (!console.json_mode())
    console.line("recover: took run " + run_id + " over in " + coordination->prefix +
                 (tokens.empty() ? " (it held no device lock there)"
                                 : ": its device locks now carry newer fencing tokens (" + tokens +
                                       "); the devices refuse the run's own commands once "
                                       "recover locked them"));
  return Ok{};
}

}  // namespace

Result<ExitCode> run_recover(const CommonOptions& common, const RecoverOptions& options,
                             Console& console) {
  auto controller = controller_name(options.controller);
  if (!controller.ok()) return std::move(controller).error();
  std::filesystem::path dir = std::filesystem::absolute(options.run_dir);
  std::error_code missing;
  RecoverOptions effective = options;
  if (!std::filesystem::exists(dir, missing) && coordination::plain_key_segment(options.run_dir) &&
      options.run_dir.find('/') == std::string::npos) {
    // A run id, not a folder: its journal comes from the shared journal in etcd, and the
    // repository is this controller's, not the path the dead one journaled.
    auto fetched = fetch_from_store(common, options, console);
    if (!fetched.ok()) return std::move(fetched).error();
    dir = std::move(fetched).value();
    if (!effective.repo) effective.repo = common.repo;
  }
  auto journal = pipeline::read_journal(dir / kJournalFile);
  if (!journal.ok()) return std::move(journal).error();
  if (journal->torn) console.warn(journal->torn->describe(kJournalFile));
  auto crashed = pipeline::read_crashed_run(journal.value());
  if (!crashed.ok()) return std::move(crashed).error();
  const auto& start = crashed->start;
  const std::string operator_name =
      options.operator_name.empty() ? default_operator() : options.operator_name;

  std::error_code ec;
  // A run that ended NOT RESTORED sealed its bundle and named this command: recover finishes
  // it there. Any other sealed run has nothing left to recover.
  const bool finishes_not_restored =
      crashed->ended_with && *crashed->ended_with == to_int(ExitCode::not_restored);
  // A run that ended in a known state but left its locks, claims and shared journal in the
  // fabric's etcd (its end could not reach the store) has those to release, nothing else.
  bool left_in_store = crashed->ended_with && !finishes_not_restored &&
                             crashed->shared_in_store && !crashed->released_in_store;
  if (std::filesystem::exists(dir / "manifest.json", ec) && !finishes_not_restored &&
      !left_in_store) {
    std::string ended =
        crashed->ended_with ? "ended with exit " + std::to_string(*crashed->ended_with) : "ended";
    return say(console, ExitCode::invalid_input, dir.string(),
               "nothing to recover: run " + start.run_id + " " + ended +
                   " and its evidence is sealed (manifest.json)");
  }
  // Intent from the commit the run journaled, never from the work tree.
  CommonOptions at_commit = common;
  at_commit.repo = effective.repo.value_or(start.repo);
  at_commit.ref = start.commit;
  auto loaded = read_intent(at_commit);
  if (!loaded.ok()) return std::move(loaded).error();
  if (!loaded->outcome.diagnostics.empty())
    return Error::invalid_input("intent at " + start.commit.substr(0, 12) + " is invalid",
                                loaded->outcome.diagnostics.lines());
  if (loaded->commit.id != start.commit)
    return Error::invalid_input("recover: " + at_commit.repo + " resolved " +
                                start.commit.substr(0, 12) + " to " + loaded->commit.id);
  // The budgets, their coordination store and the exceptions register come from the trusted
  // ref, as they did for the run: a commit that pointed its own `coordination:` elsewhere
  // cannot make recover release claims in the wrong store. Recover must work in an emergency,
  // so a trusted ref that cannot be read (a clone without main) falls back to the commit's,
  // said loudly.
  // The other fleet settings (the inventory's addresses and credentials, SSH config, secrets)
  // come from there too, as they did for the run (trusted_policy.h); when the change's devices
  // are no longer in the trusted inventory, the commit's own are used, said loudly.
  approval::SshKeygen commit_signatures(Duration{20'000}, "ssh-keygen", "git");
  std::optional<RunIntent> run_intent;
  if (auto trusted = read_trusted_policy(at_commit, loaded.value(), &commit_signatures);
      trusted.ok()) {
    auto under_trusted = read_intent_under_trusted_ref(at_commit, trusted.value());
    if (under_trusted.ok() && under_trusted->loaded().outcome.diagnostics.empty() &&
        refuse_fleet_files_in_work_tree(under_trusted->loaded()).ok()) {
      run_intent = std::move(under_trusted).value();
    } else {
      console.warn("recover: the run's change is not valid under the fleet settings at " +
                   trusted->source +
                   "; devices, credentials and SSH settings are read from commit " +
                   start.commit.substr(0, 12) + " itself");
      loaded->outcome.repository->trusted_policy = std::move(trusted).value();
    }
  } else {
    console.warn("recover: the trusted policy ref cannot be read (" + trusted.error().message +
                 "); budgets and the coordination store are read from commit " +
                 start.commit.substr(0, 12) + " itself");
  }
  if (!run_intent) run_intent = RunIntent::commit_only_for_recovery(std::move(loaded).value());
  const LoadedIntent* run_loaded = &run_intent->loaded();
  const auto& repository = run_intent->repository();
  // Even a bundle that is only sealed is written with the configured secret values redacted,
  // so the intent is read first.
  const Redactor redactor = run_redactor(repository, console);
  // A run that recorded its end in the store (its devices verified) and died before its
  // release finished: nothing of it is rolled back, what it left in the store is released.
  if (!crashed->ended_with && crashed->shared_in_store) {
    if (auto end = run_end_in_store(repository, run_loaded->intent_dir, start.run_id)) {
      console.warn("recover: run " + start.run_id + " recorded its end in the coordination store (" +
                   coordination::describe_run_end(*end) +
                   ") before it died: its devices were verified then and are not rolled back");
      crashed.value().ended_with = coordination::run_end_exit_code(*end).value_or(
          to_int(ExitCode::internal_error));
      left_in_store = true;
    }
  }
  if (left_in_store) {
    auto released = release_what_the_run_left(crashed.value(), repository, run_loaded->intent_dir,
                                              controller.value(), console);
    if (!released.ok()) return std::move(released).error();
    if (std::filesystem::exists(dir / "manifest.json", ec))
      return say(console, released->code, dir.string(), released->message);
    console.warn(released->message);  // then sealed below, as for any run that ended
  }
  if (crashed->ended_with && !finishes_not_restored) {
    auto bundle = pipeline::EvidenceBundle::reopen(dir, start.run_id, redactor);
    if (!bundle.ok()) return std::move(bundle).error();
    // The bundle keeps the run's own exit code (what happened to the devices); recover itself
    // exits 2, as for any run that has nothing to recover.
    const int ended = *crashed->ended_with;
    const ExitCode run_exit = ended >= 0 && ended <= to_int(ExitCode::not_restored)
                                  ? static_cast<ExitCode>(ended)
                                  : ExitCode::internal_error;
    return seal(crashed.value(), *bundle.value(), operator_name, run_exit,
                "nothing to recover: the run finished its work (run-end, exit " +
                    std::to_string(ended) +
                    ") and died before writing its manifest; recover sealed the bundle with the "
                    "run's exit code",
                console, {}, ExitCode::invalid_input);
  }
  const intent::Change* change = repository.find_change(start.change);
  if (!change)
    return Error::invalid_input("recover: no change '" + start.change + "' at commit " +
                                start.commit.substr(0, 12) + " in " + at_commit.repo);

  // The rollback may use secrets: refused before anything is sent when one is missing.
  auto secrets = step_secret_values(repository, *change, CommandsSent::recovery);
  if (!secrets.ok()) return std::move(secrets).error();

  // Nothing reaches a device before the run is recover's alone.
  StoreTakeOver take_over;
  if (auto taken = take_over_in_store(crashed.value(), repository, run_loaded->intent_dir,
                                      controller.value(), operator_name, dir, take_over, console);
      !taken.ok())
    return std::move(taken).error();

  auto bundle = finishes_not_restored
                    ? pipeline::EvidenceBundle::reopen_not_restored(dir, start.run_id, redactor)
                    : pipeline::EvidenceBundle::reopen(dir, start.run_id, redactor);
  if (!bundle.ok()) return std::move(bundle).error();
  auto& evidence = *bundle.value();

  // The same collaborators as apply, except that host keys are always checked strictly: a run
  // that accepted new keys on first use does not pass that trust on to its recovery.
  auto collaborators = RunCollaborators::create(
      {*run_intent, *change, run_loaded->intent_dir, evidence, ssh::UnknownHostKeys::refuse,
       start.parallelism,
       options.take_over_locks ? pipeline::TakeOver::yes : pipeline::TakeOver::no, operator_name,
       std::move(secrets).value(), Duration{0}, controller.value()});
  if (!collaborators.ok()) return std::move(collaborators).error();
  auto& run = *collaborators.value();
  GatePrinter observer(console);
  // A silence the dead run created for its change window is ended first, whatever else
  // recover finds (docs/monitoring.md "Silence lifecycle").
  for (const auto& line : run.expire_silences(crashed->open_silences))
    if (!console.json_mode()) console.line(line);

  if (crashed->touched.empty()) {
    // Nothing was sent, but the run may have taken locks and armed timers: give them back, so
    // no timer fires on an untouched device and the next run is not locked out.
    auto sealed = seal(
        crashed.value(), evidence, operator_name, ExitCode::refused,
        "untouched: the run died before any step was sent (every step is journaled before it is "
        "sent, and none was); nothing to roll back; its locks and confirm timers were given back",
        console, [&] { run.release_untouched(start.run_id); });
    run.close();
    return sealed;
  }

  pipeline::PipelineOptions pipeline_options;
  pipeline_options.mode = mode_from(start.mode);
  pipeline_options.operator_name = start.operator_name;
  pipeline_options.parallelism = start.parallelism;
  pipeline_options.origin = {start.repo, start.ref, start.intent_root, start.evidence_root};
  const auto& crashed_run = crashed.value();
  pipeline_options.annotate = [&](pipeline::EvidenceBundle&, nlohmann::json& manifest) {
    nlohmann::json torn = nullptr;
    if (crashed_run.torn) torn = {{"line", crashed_run.torn->line}, {"why", crashed_run.torn->why}};
    manifest["recovery"] = {{"by", operator_name},
                            {"after_record", crashed_run.last_sequence},
                            {"last_event", crashed_run.last_event},
                            {"torn_record_discarded", torn},
                            {"devices_rolled_back", crashed_run.touched},
                            {"repo", at_commit.repo}};
  };

  if (!console.json_mode())
    console.line(
        console.bold("fabgate recover " + change->id) + " run " + start.run_id + " at " +
        start.commit.substr(0, 12) + ": rolling back " +
        join(std::vector<std::string>(crashed_run.touched.rbegin(), crashed_run.touched.rend()),
             ", "));
  pipeline::Pipeline pipeline(repository, *change, run.for_pipeline(observer), pipeline_options);
  pipeline::Interruption::Installed signals;  // a signal ends recover through its exit path
  auto outcome = pipeline.recover(crashed_run, operator_name);
  run.close();

  pipeline::ReportContext context{
      repository,   *change,           pipeline_options.mode, pipeline_options.operator_name,
      start.run_id, console.redactor()};
  if (console.json_mode()) {
    auto summary = pipeline::render_summary_json(context, outcome, dir.string());
    summary["recovered"] = outcome.exit_code == ExitCode::rolled_back;
    console.json(summary);
  } else {
    console.line("");
    console.line("devices:         " + outcome.device_state);
    console.line("evidence:        " + dir.string());
    if (!outcome.recover_command.empty())
      console.line(console.red("recover with:    ") + outcome.recover_command +
                   " (again, once the devices are reachable)");
    std::string verdict = "exit " + std::to_string(to_int(outcome.exit_code));
    if (outcome.exit_code == ExitCode::rolled_back)
      console.line(console.yellow(verdict) + ": recovered: rolled back, baseline verified");
    else
      console.line(console.red(verdict) + ": NOT RESTORED: a human must act now");
  }
  return outcome.exit_code;
}

}  // namespace fabgate::app
