#include "gates/coordination/fleet.h"

#include <algorithm>
#include <map>
#include <set>

#include "adapters/core/foreign_json.h"
#include "gates/coordination/shared_journal.h"

namespace fabgate::coordination {

namespace {

FleetFailure store_failure(const std::string& what, const etcd::EtcdFailure& failure) {
  return FleetFailure{"coordination: " + what + ": etcd " +
                      std::string(etcd::to_string(failure.kind)) + ": " + failure.message};
}

Expected<std::vector<RunInFlight>, FleetFailure> read_runs(etcd::EtcdClient& client,
                                                           const std::string& prefix) {
  const std::string root = prefix + "/runs/";
  auto range = client.get_prefix(root);
  if (!range) return store_failure("read the runs in flight", range.error());
  std::vector<RunInFlight> runs;
  for (const auto& kv : range->kvs) {
    const std::string rest = kv.key.substr(root.size());
    if (!rest.ends_with("/alive")) continue;
    RunInFlight run{rest.substr(0, rest.size() - 6), kv.value, kv.lease, -1, 0};
    if (kv.lease != 0) {
      auto lease = client.time_to_live(kv.lease);
      if (!lease) return store_failure("read the lease of run " + run.run_id, lease.error());
      run.ttl_left_s = lease->ttl;
      run.granted_ttl_s = lease->granted_ttl;
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

// Every budget group of the file, with the holders the store has there; then groups with claims
// the file does not have.
std::vector<GroupView> group_views(const std::vector<BudgetGroup>& budget_groups,
                                   std::vector<GroupClaims> claimed,
                                   const std::vector<OutOfService>& out_of_service) {
  std::map<std::pair<std::string, std::string>, std::vector<Holder>> holders;
  for (auto& claims : claimed) holders[{claims.budget, claims.group}] = std::move(claims.holders);
  std::vector<GroupView> views;
  for (const auto& group : budget_groups) {
    GroupView view{group, true, {}, {}, {}};
    for (const auto& out : out_of_service)
      if (std::binary_search(group.members.begin(), group.members.end(), out.device))
        view.out_of_service.push_back(out.device);
    if (auto found = holders.find({group.budget, group_segment(group)}); found != holders.end()) {
      view.holders = std::move(found->second);
      holders.erase(found);
    }
    views.push_back(std::move(view));
  }
  for (auto& [key, group_holders] : holders) {
    BudgetGroup unknown{key.first, key.second == "all" ? "" : key.second, 0, 0, {}};
    views.push_back(GroupView{std::move(unknown), false, std::move(group_holders), {}, {}});
  }
  for (auto& view : views) {
    std::sort(view.holders.begin(), view.holders.end(),
              [](const Holder& a, const Holder& b) { return a.run.run_id < b.run.run_id; });
    std::set<std::string> devices;
    for (const auto& holder : view.holders)
      devices.insert(holder.devices.begin(), holder.devices.end());
    view.in_change.assign(devices.begin(), devices.end());
  }
  return views;
}

std::vector<DeadRun> dead_runs(const std::vector<GroupView>& views,
                               const std::vector<DeviceLockEntry>& locks) {
  std::map<std::string, DeadRun> dead;
  // A run that only locked devices (no budgets file) is as much in need of recovery.
  for (const auto& lock : locks) {
    if (lock.alive || !lock.readable) continue;
    DeadRun& run = dead[lock.holder.run_id];
    run.run_id = lock.holder.run_id;
    if (run.operator_name.empty()) run.operator_name = lock.holder.operator_name;
    if (run.change.empty()) run.change = lock.holder.change;
    if (run.controller.empty()) run.controller = lock.holder.controller;
    run.devices.push_back(lock.device);
  }
  for (const auto& view : views) {
    for (const auto& holder : view.holders) {
      if (holder.alive) continue;
      DeadRun& run = dead[holder.run.run_id];
      run.run_id = holder.run.run_id;
      run.readable = run.readable && holder.readable;
      if (run.operator_name.empty()) run.operator_name = holder.run.operator_name;
      if (run.change.empty()) run.change = holder.run.change;
      if (run.controller.empty()) run.controller = holder.run.controller;
      run.groups.push_back(view.group.describe());
      run.devices.insert(run.devices.end(), holder.devices.begin(), holder.devices.end());
    }
  }
  std::vector<DeadRun> out;
  for (auto& [id, run] : dead) {
    std::sort(run.devices.begin(), run.devices.end());
    run.devices.erase(std::unique(run.devices.begin(), run.devices.end()), run.devices.end());
    out.push_back(std::move(run));
  }
  return out;
}

}  // namespace

bool GroupView::full_by_unreadable() const {
  return std::any_of(holders.begin(), holders.end(),
                     [](const Holder& holder) { return !holder.readable; });
}

int GroupView::headroom() const {
  if (full_by_unreadable()) return 0;
  std::set<std::string> counted(in_change.begin(), in_change.end());
  counted.insert(out_of_service.begin(), out_of_service.end());
  return std::max(0, group.capacity - static_cast<int>(counted.size()));
}

Expected<FleetView, FleetFailure> read_fleet(etcd::EtcdClient& client, const std::string& prefix,
                                             const std::vector<BudgetGroup>& budget_groups) {
  FleetView view;
  view.prefix = prefix;
  auto runs = read_runs(client, prefix);
  if (!runs) return runs.error();
  view.runs = std::move(runs).value();

  BudgetLedger ledger(client, prefix);
  auto claimed = ledger.groups();
  if (!claimed) return FleetFailure{claimed.error().message};
  auto out_of_service = ledger.out_of_service();
  if (!out_of_service) return FleetFailure{out_of_service.error().message};
  view.out_of_service = std::move(out_of_service).value();
  view.groups = group_views(budget_groups, std::move(claimed).value(), view.out_of_service);
  auto locks = LockLedger(client, prefix).list();
  if (!locks) return FleetFailure{locks.error().message};
  view.locks = std::move(locks).value();
  view.dead = dead_runs(view.groups, view.locks);
  for (auto& run : view.dead) {
    // Its meta record: the run shared its journal, so any controller can recover it.
    auto meta = client.get(SharedJournal(client, prefix).location(run.run_id) + "meta");
    if (!meta)
      return FleetFailure{"read the shared journal of run " + run.run_id + ": etcd " +
                          std::string(etcd::to_string(meta.error().kind)) + ": " +
                          meta.error().message};
    run.journal_shared = !meta->kvs.empty();
    auto end = client.get(run_end_key(prefix, run.run_id));
    if (!end)
      return FleetFailure{"read the end marker of run " + run.run_id + ": etcd " +
                          std::string(etcd::to_string(end.error().kind)) + ": " +
                          end.error().message};
    if (!end->kvs.empty()) run.ended = describe_run_end(end->kvs.front().value);
  }

  auto queue = ledger.queue();
  if (!queue) return FleetFailure{queue.error().message};
  view.queue = std::move(queue).value();
  return view;
}

}  // namespace fabgate::coordination
