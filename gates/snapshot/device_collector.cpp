#include "gates/snapshot/device_collector.h"

#include <algorithm>
#include <future>

#include "adapters/core/shorten.h"
#include "adapters/core/text.h"
#include "adapters/core/thread_entry.h"
#include "gates/snapshot/normalizers.h"
#include "gates/snapshot/vtysh_together.h"

namespace fabgate::snapshot {

namespace {

using nlohmann::json;

// The first line of stderr, which is where shells and tools say what went wrong.
std::string first_line(const std::string& text) {
  auto lines = split_lines(text);
  for (const auto& line : lines) {
    if (!trim(line).empty()) return shorten(trim(line), 200);
  }
  return {};
}

// Why a completed command is not evidence, or "" when its output may be parsed.
std::string completed_command_problem(const ssh::CommandResult& result) {
  if (result.exit_status != 0) {
    std::string problem = result.exit_status == 127 ? "command not found (exit 127)"
                          : result.exit_status < 0  ? "no exit status (killed by a signal?)"
                                                    : "exit " + std::to_string(result.exit_status);
    std::string detail = first_line(result.stderr_text);
    return detail.empty() ? problem : problem + ": " + detail;
  }
  if (result.stdout_truncated) {
    return "output truncated at " + std::to_string(result.stdout_text.size()) +
           " bytes; a partial table is not evidence";
  }
  return {};
}

using Requests = std::vector<ssh::RemoteShell::Request>;
using SshResults = std::vector<Expected<ssh::CommandResult, ssh::SshFailure>>;

SshResults run_requests(ssh::RemoteShell& shell, const CollectorProfile& profile,
                        const Requests& requests) {
  if (requests.empty()) return {};
  return profile.ssh_commands == SshCommands::channel_each ? shell.run_each(requests)
                                                           : shell.run_batch(requests);
}

// The device's SSH commands, with those written `vtysh -c 'X'` in one vtysh invocation where the
// profile says `vtysh_commands: together`. Returns one result per request, in order; `sent_as`
// gets the invocation for each command answered from it, and `attempt` the invocation's own
// record when it failed or could not be split (each of its commands then ran on its own).
SshResults run_device_commands(ssh::RemoteShell& shell, const CollectorProfile& profile,
                               const std::string& device, const Requests& requests,
                               std::vector<std::string>& sent_as,
                               std::optional<CommandRecord>& attempt) {
  sent_as.assign(requests.size(), "");
  std::vector<std::size_t> members;
  std::vector<std::string> shows;
  if (profile.vtysh_commands == VtyshCommands::together) {
    for (std::size_t i = 0; i < requests.size(); ++i)
      if (auto show = vtysh_show_command(requests[i].command)) {
        members.push_back(i);
        shows.push_back(std::move(*show));
      }
  }
  if (members.size() < 2) return run_requests(shell, profile, requests);

  // The invocation takes the place of the first of them. Its deadline is the longest of
  // theirs, not their sum: the show commands take milliseconds each, and a daemon that hangs
  // must cost what one hung command cost before, not every command's deadline in turn.
  ssh::RemoteShell::Request together;
  together.command = vtysh_together_invocation(shows);
  for (auto i : members) {
    together.deadline = std::max(together.deadline, requests[i].deadline);
    together.output_cap = std::max(together.output_cap, requests[i].output_cap);
  }
  Requests sent;
  std::vector<std::size_t> sent_index(requests.size(), 0);
  std::size_t together_index = 0;
  for (std::size_t i = 0, m = 0; i < requests.size(); ++i) {
    if (m < members.size() && members[m] == i) {
      if (m++ == 0) {
        together_index = sent.size();
        sent.push_back(together);
      }
      continue;
    }
    sent_index[i] = sent.size();
    sent.push_back(requests[i]);
  }
  SshResults sent_results = run_requests(shell, profile, sent);
  SshResults results;
  results.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i)
    results.push_back(ssh::SshFailure{ssh::SshFailure::Kind::rejected, "not sent"});
  for (std::size_t i = 0, m = 0; i < requests.size(); ++i) {
    if (m < members.size() && members[m] == i) {
      ++m;
      continue;
    }
    results[i] = std::move(sent_results[sent_index[i]]);
  }

  auto& whole = sent_results[together_index];
  if (!whole) {
    // Timed out, cut off or never run (the batch stopped at an earlier command): running each
    // again would wait on the same daemon or dead session, so each shares that failure, as
    // commands after a hung one did before.
    ssh::SshFailure shared = whole.error();
    shared.message += " (in one vtysh invocation with " + std::to_string(members.size() - 1) +
                      " other commands)";
    for (auto i : members) {
      results[i] = shared;
      sent_as[i] = together.command;
    }
    return results;
  }
  std::optional<std::vector<std::string>> parts;
  std::string problem = completed_command_problem(*whole);
  if (problem.empty()) {
    parts = split_vtysh_together(whole->stdout_text, shows);
    if (!parts) problem = "its output could not be split at the echoed commands";
  }
  if (parts) {
    for (std::size_t m = 0; m < members.size(); ++m) {
      ssh::CommandResult part;
      part.exit_status = 0;
      part.stdout_text = std::move((*parts)[m]);
      part.started_at = whole->started_at;
      part.duration = whole->duration;
      results[members[m]] = std::move(part);
      sent_as[members[m]] = together.command;
    }
    return results;
  }
  // Each on its own, as written; the failed invocation stays in the evidence.
  CommandRecord record;
  record.device = device;
  record.category = "vtysh";
  record.command = together.command;
  record.sent = true;
  record.parse = "skipped";
  record.failure = "one vtysh for " + std::to_string(members.size()) +
                   " commands: " + problem + "; each was then run on its own";
  record.started_at = whole->started_at;
  record.duration = whole->duration;
  record.exit_status = whole->exit_status;
  record.stdout_text = std::move(whole->stdout_text);
  record.stderr_text = std::move(whole->stderr_text);
  record.stdout_truncated = whole->stdout_truncated;
  record.stderr_truncated = whole->stderr_truncated;
  attempt = std::move(record);
  Requests alone;
  for (auto i : members) alone.push_back(requests[i]);
  SshResults alone_results = run_requests(shell, profile, alone);
  for (std::size_t m = 0; m < members.size(); ++m)
    results[members[m]] = std::move(alone_results[m]);
  return results;
}

}  // namespace

DeviceSnapshot collect_device(const ssh::SshDevice& device, const CollectorProfile& profile,
                              ssh::ConnectionCache& cache, GnmiFetcher* gnmi,
                              RouteLists routes) {
  DeviceSnapshot snapshot;
  snapshot.device = device.name;
  // Only what identity sources return; the profile's platform joins it below, never alone.
  json identity = json::object();
  json sources = json::object();
  json& document = snapshot.document;
  document = json::object();

  // A device collected over gNMI only may have no SSH access for its read login at all.
  const bool needs_ssh = std::any_of(profile.sources.begin(), profile.sources.end(),
                                     [](const CollectorSource& source) { return !source.gnmi; });
  auto shell = needs_ssh ? cache.shell(device, ssh::CredentialRole::read)
                         : Expected<ssh::RemoteShell*, ssh::SshFailure>(ssh::SshFailure{
                               ssh::SshFailure::Kind::rejected, "not opened: no SSH source"});
  snapshot.reachable = !needs_ssh || shell.ok();
  const std::string connect_problem =
      shell ? std::string()
            : std::string(ssh::to_string(shell.error().kind)) + ": " + shell.error().message;

  // Every SSH command of every source goes in one framed exec (run_batch) or, where the profile
  // asks for channel-each, at once on the device's session (one channel each, run_each); the
  // gNMI Gets run alongside on another thread. Results are then read in profile order.
  std::vector<ssh::RemoteShell::Request> requests;
  if (shell) {
    for (const auto& source : profile.sources) {
      if (source.gnmi) continue;
      for (const auto& command : source.commands) {
        ssh::RemoteShell::Request request{command.run, source.timeout};
        request.output_cap = source.max_output;
        requests.push_back(std::move(request));
      }
    }
  }
  auto gnmi_results = std::async(std::launch::async, [&] {
    std::vector<GnmiSourceResult> results;
    for (const auto& source : profile.sources) {
      if (!source.gnmi) continue;
      // This thread's entry: a Get that throws is that source without evidence; the other
      // sources, and the SSH ones beside, keep theirs.
      GnmiSourceResult result;
      const RoutesFrom from = routes == RouteLists::apart                  ? RoutesFrom::tables
                              : routes == RouteLists::apart_keeping_replies ? RoutesFrom::tables_keeping_reply
                                                                            : RoutesFrom::tree;
      if (auto what = what_escaped(
              [&] { result = collect_gnmi_source(device.name, source, gnmi, from); })) {
        result = GnmiSourceResult{};
        result.record.device = device.name;
        result.record.category = source.category;
        result.record.parse = "error: internal error: " + *what;
        result.reason = "internal error while collecting over gNMI: " + *what;
      }
      results.push_back(std::move(result));
    }
    return results;
  });
  SshResults ssh_results;
  std::vector<std::string> sent_as;
  std::optional<CommandRecord> vtysh_attempt;
  if (!requests.empty())
    ssh_results = run_device_commands(*shell.value(), profile, device.name, requests, sent_as,
                                      vtysh_attempt);
  auto gnmi_done = gnmi_results.get();
  if (vtysh_attempt) snapshot.records.push_back(std::move(*vtysh_attempt));
  std::size_t next_ssh = 0, next_gnmi = 0;

  for (const auto& source : profile.sources) {
    if (source.gnmi) {
      auto result = std::move(gnmi_done[next_gnmi++]);
      if (result.record.failure &&
          result.record.failure->kind == gnmi::GnmiFailure::Kind::unreachable)
        snapshot.reachable = false;
      json status = {{"status", result.facts ? "ok" : "no-evidence"}};
      if (!result.facts) status["reason"] = result.reason;
      status["commands"] = source_entries(result.record);
      sources[source.category] = std::move(status);
      if (result.facts) {
        snapshot.collected.push_back(source.category);
        if (source.category == "identity") {
          // Merged with whatever other identity sources found.
          for (auto& [key, value] : result.facts->items()) identity[key] = value;
        } else if (!result.route_tables.empty()) {
          // write_snapshot writes the category's lists from the tables.
          for (auto& [family, table] : result.route_tables)
            snapshot.route_tables.insert_or_assign(family, std::move(table));
        } else {
          document[source.category] = std::move(*result.facts);
        }
      } else {
        snapshot.missing.push_back({source.category, result.reason});
      }
      snapshot.gnmi_records.push_back(std::move(result.record));
      continue;
    }
    json facts = json::object();
    RouteTables tables;  // what route-table normalizers read, kept only if the source is evidence
    json commands = json::array();
    std::string reason;
    for (const auto& command : source.commands) {
      CommandRecord record;
      record.device = device.name;
      record.category = source.category;
      record.command = command.run;
      record.parse = "skipped";
      if (!shell) {
        record.failure = "not sent: " + connect_problem;
        if (reason.empty()) reason = connect_problem;
      } else {
        record.sent = true;
        record.sent_as = sent_as[next_ssh];
        auto& result = ssh_results[next_ssh++];
        if (!result) {
          record.started_at = now_utc();
          record.failure =
              std::string(ssh::to_string(result.error().kind)) + ": " + result.error().message;
          if (reason.empty()) reason = command.run + ": " + result.error().message;
        } else {
          record.started_at = result->started_at;
          record.duration = result->duration;
          record.exit_status = result->exit_status;
          record.stdout_truncated = result->stdout_truncated;
          record.stderr_truncated = result->stderr_truncated;
          std::string problem = completed_command_problem(*result);
          if (!problem.empty()) {
            if (reason.empty()) reason = command.run + ": " + problem;
          } else {
            const Normalizer* normalizer = find_normalizer(command.parse);
            json& into = source.category == "identity" ? identity : facts;
            auto parsed = !normalizer ? Expected<Ok, std::string>(std::string("no normalizer"))
                          : normalizer->read_routes
                              ? normalizer->read_routes(result->stdout_text, tables)
                              : normalize(*normalizer, result->stdout_text, into);
            record.parse = parsed ? "ok" : "error: " + parsed.error();
            if (!parsed && reason.empty())
              reason = command.run + ": unparsable output: " + parsed.error();
          }
          record.stdout_text = std::move(result->stdout_text);
          record.stderr_text = std::move(result->stderr_text);
        }
      }
      commands.push_back(source_entry(record));
      snapshot.records.push_back(std::move(record));
    }

    json status = {{"status", reason.empty() ? "ok" : "no-evidence"}};
    if (!reason.empty()) status["reason"] = reason;
    status["commands"] = std::move(commands);
    sources[source.category] = std::move(status);
    if (reason.empty()) {
      snapshot.collected.push_back(source.category);
      const bool apart = !tables.empty() && routes != RouteLists::in_document && facts.empty();
      if (apart) {
        // write_snapshot writes the category's lists from the tables.
        for (auto& [family, table] : tables)
          snapshot.route_tables.insert_or_assign(family, std::move(table));
      } else {
        for (const auto& [family, table] : tables) facts[family] = route_list_json(table);
        if (source.category != "identity") document[source.category] = std::move(facts);
      }
    } else {
      snapshot.missing.push_back({source.category, reason});
    }
  }
  // Identity keeps the fields whose commands succeeded; its source says what is missing. The
  // platform is the profile's, not the device's word: alone it would read as an identity
  // collected from a device that returned none (a profile without an identity source, an
  // unreachable device), so it is added only next to fields a source returned.
  if (!identity.empty()) identity["platform"] = profile.platform;
  document["identity"] = std::move(identity);
  document["sources"] = std::move(sources);
  return snapshot;
}

}  // namespace fabgate::snapshot
