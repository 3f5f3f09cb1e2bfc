#include "gates/app/status_command.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/text.h"
#include "gates/app/intent_loading.h"
#include "gates/coordination/budgets.h"
#include "gates/coordination/fleet.h"
#include "gates/coordination/locks.h"
#include "gates/coordination/store_settings.h"

namespace fabgate::app {

namespace {

using coordination::FleetView;

// The device-side half of every lock (safeguards.lock_dir) is on the devices, which status
// never contacts.
constexpr const char* kDeviceSide =
    "each lock is also held on its device (safeguards.lock_dir) with its fencing token; "
    "fabgate status does not contact devices";

// The evidence folder a dead run wrote, as its controller would find it: runs write
// <evidence>/<change>/<time>-<run> (docs/pipeline.md), and the claim does not say the time.
std::string recover_command(const std::string& evidence_dir, const coordination::DeadRun& run) {
  std::string folder = evidence_dir + "/" + (run.change.empty() ? "*" : run.change);
  bool plain = std::all_of(folder.begin(), folder.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == '/' || c == '*';
  });
  return "fabgate recover " + (plain ? folder : shell_quote(folder)) + "/*-" + run.run_id;
}

// A lease id as etcdctl writes it (hex), so `etcdctl lease timetolive ID` takes it as printed;
// as a JSON number it would exceed what many JSON readers hold exactly (2^53).
std::string lease_id(std::int64_t lease) {
  return coordination::lease_hex(lease);
}

// Seconds since an ISO 8601 UTC time a holder wrote; nullopt when it cannot be read.
std::optional<std::int64_t> age_s(const std::string& since) {
  auto at = parse_iso8601(since);
  if (!at) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::seconds>(now_utc() - *at).count();
}

// The fencing token is named `fence_revision`: every output is redacted, and a member whose name
// ends in "token" is taken for a secret.
nlohmann::json lock_json(const coordination::DeviceLockEntry& lock) {
  nlohmann::json out = {
      {"device", lock.device}, {"fence_revision", lock.token}, {"readable", lock.readable}};
  if (!lock.readable) return out;
  auto age = age_s(lock.since);
  out.update({{"run", lock.holder.run_id},
              {"operator", lock.holder.operator_name},
              {"change", lock.holder.change},
              {"controller", lock.holder.controller},
              {"alive", lock.alive},
              {"lease", lock.holder.lease == 0 ? nlohmann::json()
                                               : nlohmann::json(lease_id(lock.holder.lease))},
              {"since", lock.since},
              {"age_s", age ? nlohmann::json(*age) : nlohmann::json()}});
  return out;
}

nlohmann::json holder_json(const coordination::Holder& holder) {
  nlohmann::json out = {
      {"run", holder.run.run_id}, {"readable", holder.readable}, {"alive", holder.alive}};
  if (!holder.readable) return out;
  out["operator"] = holder.run.operator_name;
  out["change"] = holder.run.change;
  out["controller"] = holder.run.controller;
  out["claimed_at"] = holder.claimed_at;
  out["devices"] = holder.devices;
  return out;
}

nlohmann::json to_json(const FleetView& view, const intent::CoordinationSettings& settings,
                       const std::string& commit, const std::optional<std::string>& budgets_file,
                       const std::string& evidence_dir) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : view.runs)
    runs.push_back(
        {{"run", run.run_id},
         {"controller", run.controller},
         {"lease", run.lease == 0 ? nlohmann::json() : nlohmann::json(lease_id(run.lease))},
         {"ttl_left_s", run.ttl_left_s < 0 ? nlohmann::json() : nlohmann::json(run.ttl_left_s)},
         {"granted_ttl_s", run.lease == 0 ? nlohmann::json() : nlohmann::json(run.granted_ttl_s)}});
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& group : view.groups) {
    nlohmann::json holders = nlohmann::json::array();
    for (const auto& holder : group.holders) holders.push_back(holder_json(holder));
    auto known = [&](int value) {
      return group.in_budgets_file ? nlohmann::json(value) : nlohmann::json();
    };
    groups.push_back({{"budget", group.group.budget},
                      {"group", coordination::group_segment(group.group)},
                      {"in_budgets_file", group.in_budgets_file},
                      {"size", known(group.group.size)},
                      {"capacity", known(group.group.capacity)},
                      {"in_change", group.in_change},
                      {"out_of_service", group.out_of_service},
                      {"headroom", known(group.headroom())},
                      {"full_by_unreadable", group.full_by_unreadable()},
                      {"holders", holders}});
  }
  nlohmann::json queue = nlohmann::json::array();
  int position = 0;
  for (const auto& entry : view.queue) {
    nlohmann::json item = {
        {"position", ++position}, {"run", entry.run.run_id}, {"readable", entry.readable}};
    if (!entry.readable) {
      item["problem"] = entry.problem;
    } else {
      item.update({{"operator", entry.run.operator_name},
                   {"change", entry.run.change},
                   {"controller", entry.run.controller},
                   {"since", entry.since},
                   {"until", entry.until},
                   {"groups", entry.groups}});
    }
    queue.push_back(std::move(item));
  }
  nlohmann::json locks = nlohmann::json::array();
  for (const auto& lock : view.locks) locks.push_back(lock_json(lock));
  nlohmann::json dead = nlohmann::json::array();
  for (const auto& run : view.dead)
    dead.push_back({{"run", run.run_id},
                    {"readable", run.readable},
                    {"operator", run.operator_name},
                    {"change", run.change},
                    {"controller", run.controller},
                    {"groups", run.groups},
                    {"devices", run.devices},
                    {"recover", recover_command(evidence_dir, run)},
                    {"ended", run.ended.empty() ? nlohmann::json() : nlohmann::json(run.ended)},
                    {"recover_anywhere", run.journal_shared
                                             ? nlohmann::json("fabgate recover " + run.run_id)
                                             : nlohmann::json()}});
  nlohmann::json out_of_service = nlohmann::json::array();
  for (const auto& out : view.out_of_service) {
    nlohmann::json item = {{"device", out.device}, {"readable", out.readable}};
    if (out.readable)
      item.update({{"run", out.run.run_id},
                   {"operator", out.run.operator_name},
                   {"change", out.run.change},
                   {"controller", out.run.controller},
                   {"since", out.since}});
    out_of_service.push_back(std::move(item));
  }
  return {{"intent_commit", commit},
          {"store", {{"endpoints", settings.endpoints}, {"prefix", settings.prefix}}},
          {"budgets_file", budgets_file ? nlohmann::json(*budgets_file) : nlohmann::json()},
          {"runs", runs},
          {"budgets", groups},
          {"queue", queue},
          {"locks", locks},
          {"out_of_service", out_of_service},
          {"dead_runs", dead}};
}

// Rows of cells as lines with every column but the last padded to its widest cell.
std::vector<std::string> aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], row[i].size());
    }
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    lines.push_back(line.substr(0, line.find_last_not_of(' ') + 1));
  }
  return lines;
}

std::string who(const std::string& operator_name, const std::string& change,
                const std::string& controller) {
  std::vector<std::string> parts{operator_name.empty() ? "operator unknown" : operator_name};
  if (!change.empty()) parts.push_back("change " + change);
  if (!controller.empty()) parts.push_back("on " + controller);
  return join(parts, ", ");
}

std::string holder_line(const coordination::Holder& holder) {
  std::string line = "run " + holder.run.run_id + ": ";
  if (!holder.readable)
    return line + "claim record unreadable, counted as holding the whole group" +
           (holder.alive ? "" : "; DEAD");
  line += who(holder.run.operator_name, holder.run.change, holder.run.controller);
  line += holder.alive ? ", alive" : ", DEAD (its lease is gone)";
  if (!holder.claimed_at.empty()) line += ", claimed " + holder.claimed_at;
  if (!holder.devices.empty()) line += ", holds " + join(holder.devices, ", ");
  return line;
}

void print(Console& console, const FleetView& view, const intent::CoordinationSettings& settings,
           const std::string& commit, const std::optional<std::string>& budgets_file,
           const std::string& evidence_dir, bool from_intent_folder) {
  console.line("fleet " + view.prefix + " in etcd " + join(settings.endpoints, ", ") +
               " (intent commit " + commit.substr(0, 12) + ")");

  console.line("");
  console.line(console.bold("runs in flight: " + std::to_string(view.runs.size())));
  if (!view.runs.empty()) {
    std::vector<std::vector<std::string>> rows{{"RUN", "CONTROLLER", "LEASE", "TTL"}};
    for (const auto& run : view.runs) {
      std::string ttl = run.lease == 0       ? "no lease"
                        : run.ttl_left_s < 0 ? "expired"
                                             : std::to_string(run.ttl_left_s) + " s left of " +
                                                   std::to_string(run.granted_ttl_s) + " s";
      rows.push_back({run.run_id, run.controller, run.lease == 0 ? "-" : lease_id(run.lease), ttl});
    }
    for (const auto& line : aligned(rows)) console.line(line);
  }

  console.line("");
  console.line(console.bold("budgets: " + std::to_string(view.groups.size()) + " groups" +
                            (budgets_file ? " (" + *budgets_file + ")" : " (no budgets file)")));
  if (!view.groups.empty()) {
    std::vector<std::vector<std::string>> rows{
        {"BUDGET", "GROUP", "SIZE", "MAX", "IN CHANGE", "OUT OF SERVICE", "HEADROOM"}};
    for (const auto& group : view.groups) {
      auto known = [&](int value) {
        return group.in_budgets_file ? std::to_string(value) : std::string("?");
      };
      std::string headroom = known(group.headroom());
      if (group.full_by_unreadable()) headroom += " (unreadable claim)";
      if (!group.in_budgets_file) headroom += " (not in the budgets file)";
      rows.push_back({group.group.budget, coordination::group_segment(group.group),
                      known(group.group.size), known(group.group.capacity),
                      group.in_change.empty() ? "-" : join(group.in_change, ","),
                      group.out_of_service.empty() ? "-" : join(group.out_of_service, ","),
                      headroom});
    }
    auto lines = aligned(rows);
    console.line(lines[0]);
    for (std::size_t i = 0; i < view.groups.size(); ++i) {
      console.line(lines[i + 1]);
      for (const auto& holder : view.groups[i].holders)
        console.line("      " + holder_line(holder));
    }
  }

  console.line("");
  console.line(console.bold("out of service: " + std::to_string(view.out_of_service.size()) +
                            (view.out_of_service.empty()
                                 ? ""
                                 : ", counted by the budgets until a change with "
                                   "back_in_service is accepted")));
  for (const auto& out : view.out_of_service) {
    if (!out.readable) {
      console.line("  " + out.device + ": record unreadable");
      continue;
    }
    console.line("  " + out.device + ": since " + out.since + ", left out by run " +
                 out.run.run_id + ": " +
                 who(out.run.operator_name, out.run.change, out.run.controller));
  }

  console.line("");
  console.line(console.bold("queue: " + std::to_string(view.queue.size()) + " waiting" +
                            (view.queue.empty() ? "" : ", first in line first")));
  int position = 0;
  for (const auto& entry : view.queue) {
    std::string line = "  " + std::to_string(++position) + ". run " + entry.run.run_id + ": ";
    if (!entry.readable) {
      console.line(line + "queue record unreadable (" + entry.problem + ")");
      continue;
    }
    console.line(line + who(entry.run.operator_name, entry.run.change, entry.run.controller) +
                 ", waits for " + join(entry.groups, ", ") + " since " + entry.since + ", until " +
                 entry.until);
  }

  console.line("");
  console.line(console.bold("device locks: " + std::to_string(view.locks.size())));
  if (!view.locks.empty()) {
    std::vector<std::vector<std::string>> rows{
        {"DEVICE", "RUN", "HOLDER", "STATE", "AGE", "TOKEN"}};
    for (const auto& lock : view.locks) {
      if (!lock.readable) {
        rows.push_back(
            {lock.device, "?", "lock record unreadable", "-", "-", std::to_string(lock.token)});
        continue;
      }
      auto age = age_s(lock.since);
      rows.push_back({lock.device, lock.holder.run_id,
                      who(lock.holder.operator_name, lock.holder.change, lock.holder.controller),
                      lock.alive ? "alive" : "DEAD", age ? std::to_string(*age) + " s" : "?",
                      std::to_string(lock.token)});
    }
    for (const auto& line : aligned(rows)) console.line(line);
  }
  console.line(kDeviceSide);

  console.line("");
  console.line(console.bold("dead runs awaiting recovery: " + std::to_string(view.dead.size())));
  for (const auto& run : view.dead) {
    std::string line = "  run " + run.run_id + ": ";
    line += run.readable ? who(run.operator_name, run.change, run.controller)
                         : "a claim record is unreadable";
    if (!run.devices.empty()) line += ", holds " + join(run.devices, ", ");
    line += run.groups.empty() ? " (device locks)" : " in " + join(run.groups, ", ");
    if (!run.ended.empty()) {
      // It recorded its end: its devices were verified, and recover only releases.
      console.line(console.yellow(line));
      console.line("      it ended (" + run.ended +
                   ") but died before releasing what it holds; its devices need nothing, and "
                   "recover releases what it left without rolling anything back: " +
                   (run.journal_shared ? "fabgate recover " + run.run_id
                                       : recover_command(evidence_dir, run)));
      continue;
    }
    console.line(console.red(line));
    console.line("      its devices are in an unknown state until it is recovered; on " +
                 (run.controller.empty() ? std::string("its controller") : run.controller) +
                 (from_intent_folder ? ", from the intent folder" : "") + ": " +
                 recover_command(evidence_dir, run));
    if (run.journal_shared)
      console.line("      or, its journal being shared in etcd, from any controller with the intent "
                   "repository: fabgate recover " + run.run_id);
  }
}

}  // namespace

Result<ExitCode> run_status(const CommonOptions& common, Console& console) {
  auto loaded = load_valid_intent(common, console);
  if (!loaded.ok()) return std::move(loaded).error();
  const auto& repository = *loaded->outcome.repository;
  const std::string commit = loaded->commit.id;
  if (!repository.settings.coordination)
    return Error::invalid_input(
        "status: fabgate.yaml at " + commit.substr(0, 12) +
            " has no coordination: block, so there is no fleet to show",
        {"add coordination: {endpoints: [...], prefix: ...} (docs/coordination.md); without it "
         "every run is coordinated on its devices only"});
  const auto& settings = *repository.settings.coordination;

  // Every group of the budgets file, so the view shows headroom where nothing is claimed.
  std::vector<coordination::BudgetGroup> groups;
  std::optional<std::string> budgets_file;
  const std::string budgets_path = repository.settings.policies_dir + "/budgets.yaml";
  if (auto text = repository.policy_texts.find(budgets_path);
      text != repository.policy_texts.end()) {
    budgets_file = budgets_path;
    auto policy = coordination::load_budgets(text->second, budgets_path);
    if (!policy) return std::move(policy).error();
    auto all = coordination::groups_of(*policy, repository.inventory);
    if (!all) return std::move(all).error();
    groups = std::move(all).value();
  }

  auto client = etcd::EtcdClient::open(coordination::store_settings(settings, loaded->intent_dir));
  if (!client) {
    const auto& failure = client.error();
    std::string message = "status: the coordination store cannot be used: etcd " +
                          std::string(etcd::to_string(failure.kind)) + ": " + failure.message;
    if (failure.kind == etcd::EtcdFailure::Kind::settings)
      return Error::invalid_input(message, {settings.where.to_string() + ": coordination:"});
    return Error::refused(message + "; no evidence of what the fleet is changing");
  }
  auto view = coordination::read_fleet(*client, settings.prefix, groups);
  if (!view)
    return Error::refused("status: " + view.error().message +
                          "; no evidence of what the fleet is changing");

  // Where a dead run's bundle is, for the recover command: --evidence when given, as for the
  // commands that write bundles.
  const std::string& evidence_dir =
      common.evidence_dir.empty() ? repository.settings.evidence_dir : common.evidence_dir;
  // fabgate.yaml's folder, when relative, is relative to the intent folder; --evidence to the
  // folder fabgate was started in.
  const bool from_intent_folder =
      common.evidence_dir.empty() && !std::filesystem::path(evidence_dir).is_absolute();
  if (console.json_mode())
    console.json(to_json(*view, settings, commit, budgets_file, evidence_dir));
  else
    print(console, *view, settings, commit, budgets_file, evidence_dir, from_intent_folder);
  return ExitCode::accepted;
}

}  // namespace fabgate::app
