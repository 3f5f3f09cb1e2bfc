#include "gates/coordination/claims.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "adapters/core/foreign_json.h"
#include "adapters/core/time.h"
#include "gates/coordination/run_record.h"

namespace fabgate::coordination {

namespace {

using etcd::Compare;
using etcd::TxnOp;

ClaimFailure plain_failure(ClaimFailure::Kind kind, std::string message) {
  ClaimFailure failure;
  failure.kind = kind;
  failure.message = std::move(message);
  return failure;
}

ClaimFailure store_failure(const std::string& what, const etcd::EtcdFailure& failure) {
  return plain_failure(ClaimFailure::Kind::store, "coordination: " + what + ": etcd " +
                                                      std::string(etcd::to_string(failure.kind)) +
                                                      ": " + failure.message);
}

std::string record_of(const RunIdentity& run, const std::vector<std::string>& devices) {
  nlohmann::json record = {{"run", run.run_id},    {"operator", run.operator_name},
                           {"change", run.change}, {"controller", run.controller},
                           {"devices", devices},   {"claimed_at", format_utc(now_utc())}};
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A holder from its claim record, which another controller (perhaps another fabgate version)
// wrote: read with typed lookups; a record that cannot be read is kept, marked unreadable.
Holder holder_from(const etcd::KeyValue& kv, const std::string& run_from_key) {
  Holder holder;
  holder.key = kv.key;
  holder.run.run_id = run_from_key;
  auto parsed = parse_foreign_json(kv.value);
  const auto* devices = parsed.ok() ? array_member(parsed.document, "devices") : nullptr;
  if (!parsed.ok() || !devices) {
    holder.readable = false;
    return holder;
  }
  holder.run.operator_name = string_member(parsed.document, "operator").value_or("");
  holder.run.change = string_member(parsed.document, "change").value_or("");
  holder.run.controller = string_member(parsed.document, "controller").value_or("");
  holder.claimed_at = string_member(parsed.document, "claimed_at").value_or("");
  for (const auto& device : *devices) {
    if (!device.is_string()) {
      holder.readable = false;
      holder.devices.clear();
      return holder;
    }
    holder.devices.push_back(device.get<std::string>());
  }
  return holder;
}

std::string service_record_of(const RunIdentity& run, const std::string& device) {
  nlohmann::json record = {{"device", device},
                           {"run", run.run_id},
                           {"operator", run.operator_name},
                           {"change", run.change},
                           {"controller", run.controller},
                           {"since", format_utc(now_utc())}};
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// An out-of-service record another controller wrote. The device comes from the key, so an
// unreadable record still counts its device.
OutOfService out_of_service_from(const etcd::KeyValue& kv, const std::string& device) {
  OutOfService entry;
  entry.key = kv.key;
  entry.device = device;
  auto parsed = parse_foreign_json(kv.value);
  auto recorded = parsed.ok() ? recorded_run(parsed.document) : std::nullopt;
  if (!recorded) {
    entry.readable = false;
    return entry;
  }
  entry.run = std::move(recorded->run);
  entry.since = std::move(recorded->since);
  return entry;
}

// Why a queue record cannot be read, or empty when it can; fills `entry` as it reads.
std::string read_queue_record(const nlohmann::json& record, QueuedRun& entry) {
  if (!record.is_object()) return "the record is " + json_kind(record) + ", not an object";
  for (auto [field, into] : {std::pair{"until", &entry.until}, std::pair{"since", &entry.since}}) {
    auto text = string_member(record, field);
    if (!text) return wrong_member(record, field, "a string");
    *into = *text;
  }
  const auto* groups = array_member(record, "groups");
  if (!groups) return wrong_member(record, "groups", "an array");
  for (std::size_t i = 0; i < groups->size(); ++i) {
    if (!(*groups)[i].is_string())
      return "groups[" + std::to_string(i) + "] is " + json_kind((*groups)[i]) + ", not a string";
    entry.groups.push_back((*groups)[i].get<std::string>());
  }
  entry.run.operator_name = string_member(record, "operator").value_or("");
  entry.run.change = string_member(record, "change").value_or("");
  entry.run.controller = string_member(record, "controller").value_or("");
  return {};
}

// A queue entry another controller wrote; one that cannot be read is kept, marked unreadable,
// with nothing half-read shown as if it were known.
QueuedRun queued_from(const etcd::KeyValue& kv, const std::string& run_from_key) {
  QueuedRun entry;
  entry.key = kv.key;
  entry.run.run_id = run_from_key;
  entry.create_revision = kv.create_revision;
  auto parsed = parse_foreign_json(kv.value);
  std::string problem = parsed.ok() ? read_queue_record(parsed.document, entry) : parsed.problem;
  if (problem.empty()) return entry;
  QueuedRun unreadable;
  unreadable.key = kv.key;
  unreadable.run.run_id = run_from_key;
  unreadable.create_revision = kv.create_revision;
  unreadable.readable = false;
  unreadable.problem = std::move(problem);
  return unreadable;
}

}  // namespace

std::string group_segment(const BudgetGroup& group) {
  return group.group.empty() ? "all" : group.group;
}

std::string queue_group_name(const BudgetGroup& group) {
  return group.budget + "/" + group_segment(group);
}

std::string QueuedRun::describe() const {
  std::string text = "run " + run.run_id + " (";
  if (!readable) return text + "queue record unreadable: " + problem + ")";
  text += run.operator_name.empty() ? "operator unknown" : run.operator_name;
  if (!run.change.empty()) text += ", change " + run.change;
  if (!run.controller.empty()) text += ", on " + run.controller;
  if (!since.empty()) text += ", queued since " + since;
  return text + ")";
}

std::string OutOfService::describe() const {
  std::string text = device + " (out of service";
  if (!readable) return text + "; record unreadable)";
  if (!since.empty()) text += " since " + since;
  text += ", left out by run " + run.run_id + ": ";
  text += run.operator_name.empty() ? "operator unknown" : run.operator_name;
  if (!run.change.empty()) text += ", change " + run.change;
  if (!run.controller.empty()) text += ", on " + run.controller;
  return text + ")";
}

std::string Holder::describe() const {
  std::string text = "run " + run.run_id + " (";
  if (!readable) return text + "claim record unreadable: counted as holding the whole group)";
  text += run.operator_name.empty() ? "operator unknown" : run.operator_name;
  if (!run.change.empty()) text += ", change " + run.change;
  if (!run.controller.empty()) text += ", on " + run.controller;
  text += alive ? ", alive"
                : ", holder dead or without a lease: devices in unknown state until "
                  "`fabgate recover " +
                      run.run_id + "`";
  if (!devices.empty()) {
    text += ", holds ";
    for (std::size_t i = 0; i < devices.size(); ++i) text += (i ? ", " : "") + devices[i];
  }
  return text + ")";
}

BudgetLedger::BudgetLedger(etcd::EtcdClient& client, std::string prefix)
    : client_(client), prefix_(std::move(prefix)) {}

std::string BudgetLedger::group_prefix(const std::string& budget, const std::string& group) const {
  return prefix_ + "/budgets/" + budget + "/" + (group.empty() ? "all" : group);
}

std::string BudgetLedger::guard_of(const std::string& group) const {
  const std::string budgets_root = prefix_ + "/budgets/";
  return prefix_ + "/guards/" + group.substr(budgets_root.size());
}

std::pair<std::vector<OutOfService>, std::int64_t> BudgetLedger::service_from(
    const etcd::Range& range) const {
  const std::string root = prefix_ + "/service/";
  std::vector<OutOfService> out;
  std::int64_t guard = 0;
  for (const auto& kv : range.kvs) {
    if (kv.key == root + "guard") guard = kv.mod_revision;
    if (!kv.key.starts_with(root + "out/")) continue;
    out.push_back(out_of_service_from(kv, kv.key.substr(root.size() + 4)));
  }
  std::sort(out.begin(), out.end(),
            [](const OutOfService& a, const OutOfService& b) { return a.device < b.device; });
  return {std::move(out), guard};
}

std::vector<QueuedRun> BudgetLedger::queue_from(const etcd::Range& range) const {
  const std::string root = prefix_ + "/queue/";
  std::vector<QueuedRun> out;
  for (const auto& kv : range.kvs) out.push_back(queued_from(kv, kv.key.substr(root.size())));
  std::stable_sort(out.begin(), out.end(), [](const QueuedRun& a, const QueuedRun& b) {
    return a.create_revision < b.create_revision;
  });
  return out;
}

Expected<std::vector<OutOfService>, ClaimFailure> BudgetLedger::out_of_service() {
  auto range = client_.get_prefix(prefix_ + "/service/");
  if (!range) return store_failure("read the devices out of service", range.error());
  return service_from(*range).first;
}

Expected<Ok, ClaimFailure> BudgetLedger::read_liveness(std::vector<Holder>& holders) {
  for (auto& holder : holders) {
    auto alive = client_.get(prefix_ + "/runs/" + holder.run.run_id + "/alive");
    if (!alive)
      return store_failure("read whether run " + holder.run.run_id + " is alive", alive.error());
    holder.alive = !alive->kvs.empty();
  }
  return Ok{};
}

Expected<std::int64_t, ClaimFailure> BudgetLedger::claim(const RunIdentity& run,
                                                         const std::vector<Demand>& demands) {
  if (!plain_key_segment(run.run_id))
    return plain_failure(ClaimFailure::Kind::invalid,
                         "coordination: run id '" + run.run_id + "' cannot be a key segment");
  std::set<std::string> wanted_groups;
  for (const auto& demand : demands) wanted_groups.insert(queue_group_name(demand.group));
  // Groups of other budgets found to hold a member of a wanted group: their guards must be in
  // the same read as everything else, so finding a new one reads again (bounded: each read
  // adds at least one, and a fabric has finitely many groups; kMaxDiscoveries caps it anyway).
  std::vector<std::string> overlapping_groups;
  int discoveries = 0;
  // The claims of other budgets are what can hold a member of a wanted group (a budget's groups
  // partition its devices); when every demand is under one budget, that budget's own claims
  // are left out of the fabric-wide read (its wanted groups are read one by one).
  std::string only_budget = demands.empty() ? std::string() : demands.front().group.budget;
  for (const auto& demand : demands)
    if (demand.group.budget != only_budget) only_budget.clear();
  const std::string budgets_root = prefix_ + "/budgets/";
  std::vector<TxnOp> claim_reads;
  if (only_budget.empty()) {
    claim_reads.push_back(TxnOp::get_prefix(budgets_root));
  } else {
    // [P/budgets/, P/budgets/<budget>/) and [P/budgets/<budget>0, P/budgets0): '0' follows '/'.
    const std::string own = budgets_root + only_budget + "/";
    claim_reads.push_back(TxnOp::get_range(budgets_root, own));
    claim_reads.push_back(TxnOp::get_range(budgets_root + only_budget + "0", prefix_ + "/budgets0"));
  }
  const std::size_t groups_at = 2 + claim_reads.size();
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    // Everything the claim judges, read in one read-only transaction: the queue, the devices
    // out of service, every claim of other budgets in the fabric, every group it needs and the
    // guards it will write under, one consistent view at one revision, one call. The guards
    // live apart from the claims (P/guards/), so reading the claims does not read every
    // group's guard: at 20,000 devices that read was 1,000 guards per claim and most of etcd's
    // work.
    std::vector<TxnOp> reads = {TxnOp::get_prefix(prefix_ + "/queue/"),
                                TxnOp::get_prefix(prefix_ + "/service/")};
    reads.insert(reads.end(), claim_reads.begin(), claim_reads.end());
    for (const auto& demand : demands)
      reads.push_back(
          TxnOp::get_prefix(group_prefix(demand.group.budget, demand.group.group) + "/"));
    for (const auto& demand : demands)
      reads.push_back(TxnOp::get(guard_of(group_prefix(demand.group.budget, demand.group.group))));
    for (const auto& other : overlapping_groups) reads.push_back(TxnOp::get(guard_of(other)));
    auto view = client_.txn({}, reads);
    if (!view)
      return store_failure("read the queue, the devices out of service and the budget groups",
                           view.error());
    if (view->reads.size() != reads.size())
      return plain_failure(ClaimFailure::Kind::store,
                           "coordination: etcd answered " + std::to_string(view->reads.size()) +
                               " of the " + std::to_string(reads.size()) +
                               " reads of a claim; nothing was claimed");

    // Fairness first: runs queued before this one (all queued runs, when it is not queued)
    // that wait for one of its groups go before it.
    auto waiting = queue_from(view->reads[0]);
    std::int64_t own_place = 0;
    for (const auto& queued : waiting)
      if (queued.run.run_id == run.run_id) own_place = queued.create_revision;
    std::vector<QueuedRun> ahead;
    for (const auto& queued : waiting) {
      if (queued.run.run_id == run.run_id || !queued.readable) continue;
      if (own_place != 0 && queued.create_revision >= own_place) continue;
      if (std::any_of(queued.groups.begin(), queued.groups.end(),
                      [&](const std::string& group) { return wanted_groups.contains(group); }))
        ahead.push_back(queued);
    }
    if (!ahead.empty()) {
      std::string message = "runs queued before this one wait for its budget groups: ";
      for (std::size_t i = 0; i < ahead.size(); ++i)
        message += (i ? "; " : "") + ahead[i].describe();
      return ClaimFailure{
          ClaimFailure::Kind::queued, message, std::nullopt, {}, {}, std::move(ahead)};
    }
    // Devices out of service count in every group they are members of; the guard makes a
    // drain accepted between this read and the write fail the transaction.
    auto service = service_from(view->reads[1]);
    // Every claim in the fabric, whatever budget it was made under: a run in flight counts by
    // its DEVICES in every group they are members of, so a budget renamed (or regrouped) on
    // main while runs are in flight does not let a new run overlook them.
    std::vector<const etcd::KeyValue*> all_claims;
    for (std::size_t i = 2; i < groups_at; ++i)
      for (const auto& kv : view->reads[i].kvs) all_claims.push_back(&kv);
    // A guard's mod_revision as read (0: absent), by group.
    auto guard_revision_of = [&](std::size_t read_index) -> std::int64_t {
      const auto& kvs = view->reads[read_index].kvs;
      return kvs.empty() ? 0 : kvs.front().mod_revision;
    };
    std::map<std::string, std::int64_t> other_guards;
    for (std::size_t i = 0; i < overlapping_groups.size(); ++i)
      other_guards[overlapping_groups[i]] = guard_revision_of(groups_at + 2 * demands.size() + i);
    bool read_again = false;
    const std::string service_guard = prefix_ + "/service/guard";
    std::vector<Compare> guards = {service.second == 0
                                       ? Compare::absent(service_guard)
                                       : Compare::mod_revision_is(service_guard, service.second)};
    std::vector<TxnOp> writes;
    for (std::size_t index = 0; index < demands.size(); ++index) {
      const auto& demand = demands[index];
      const std::string group = group_prefix(demand.group.budget, demand.group.group);
      const etcd::Range& range = view->reads[groups_at + index];
      const std::int64_t guard_revision = guard_revision_of(groups_at + demands.size() + index);

      // What others hold here; this run's own earlier claim is replaced, not counted.
      std::vector<Holder> others;
      bool unreadable = false;
      std::set<std::string> in_change(demand.devices.begin(), demand.devices.end());
      for (const auto& kv : range.kvs) {
        const std::string claims = group + "/claims/";
        if (!kv.key.starts_with(claims) || kv.key == claims + run.run_id) continue;
        others.push_back(holder_from(kv, kv.key.substr(claims.size())));
        unreadable = unreadable || !others.back().readable;
        in_change.insert(others.back().devices.begin(), others.back().devices.end());
      }
      // Claims of other runs made under another budget (a name this budgets file may no longer
      // have) that hold a member of this group: counted here, and their group's
      // guard joins this claim's guards, so a release or claim there meanwhile makes it read
      // again.
      for (const etcd::KeyValue* claim : all_claims) {
        const etcd::KeyValue& kv = *claim;
        auto claims_at = kv.key.find("/claims/", budgets_root.size());
        if (claims_at == std::string::npos) continue;
        const std::string other_group = kv.key.substr(0, claims_at);
        const std::string other_run = kv.key.substr(claims_at + 8);
        if (other_group == group || other_run == run.run_id) continue;
        // Groups of one budget partition its devices: only another budget's claims can hold
        // a member of this group.
        if (other_group.starts_with(budgets_root + demand.group.budget + "/")) continue;
        // An unreadable record names no device: it counts full in its own group only.
        auto holder = holder_from(kv, other_run);
        bool overlaps = false;
        for (const auto& device : holder.devices)
          if (std::binary_search(demand.group.members.begin(), demand.group.members.end(),
                                 device)) {
            overlaps = true;
            in_change.insert(device);
          }
        if (!holder.readable || !overlaps) continue;
        others.push_back(std::move(holder));
        auto known = other_guards.find(other_group);
        if (known == other_guards.end()) {
          // Its guard was not in this read: read again with it.
          overlapping_groups.push_back(other_group);
          other_guards[other_group] = 0;
          read_again = true;
          continue;
        }
        guards.push_back(known->second == 0
                             ? Compare::absent(guard_of(other_group))
                             : Compare::mod_revision_is(guard_of(other_group), known->second));
      }
      std::vector<OutOfService> out_here;
      for (const auto& out : service.first) {
        if (!std::binary_search(demand.group.members.begin(), demand.group.members.end(),
                                out.device))
          continue;
        out_here.push_back(out);
        in_change.insert(out.device);
      }
      if (read_again) continue;
      if (unreadable || static_cast<int>(in_change.size()) > demand.group.capacity) {
        if (auto read = read_liveness(others); !read) return read.error();
        std::string message = "budget " + demand.group.describe() + " allows " +
                              std::to_string(demand.group.capacity) + " of " +
                              std::to_string(demand.group.size) +
                              " devices in change or out of service at once; this change needs ";
        for (std::size_t i = 0; i < demand.devices.size(); ++i)
          message += (i ? ", " : "") + demand.devices[i];
        std::vector<std::string> reasons;
        for (const auto& holder : others) reasons.push_back("held by " + holder.describe());
        for (const auto& out : out_here) reasons.push_back(out.describe());
        for (const auto& reason : reasons) message += "; " + reason;
        return ClaimFailure{ClaimFailure::Kind::over_budget,
                            message,
                            demand.group,
                            std::move(others),
                            demand.devices,
                            {},
                            std::move(out_here)};
      }
      guards.push_back(guard_revision == 0
                           ? Compare::absent(guard_of(group))
                           : Compare::mod_revision_is(guard_of(group), guard_revision));
      writes.push_back(TxnOp::put(group + "/claims/" + run.run_id, record_of(run, demand.devices)));
      writes.push_back(TxnOp::put(guard_of(group), run.run_id));
      // The guard where controllers before 2026-12-07 kept it: it is inside every claim's read
      // of the claims, so the first claim in each group takes it away (docs/coordination.md).
      writes.push_back(TxnOp::del(group + "/guard"));
    }
    if (read_again) {
      if (++discoveries > kMaxDiscoveries)
        return plain_failure(ClaimFailure::Kind::contention,
                             "coordination: run " + run.run_id + " found claims of " +
                                 std::to_string(overlapping_groups.size()) +
                                 " groups of other budgets holding its devices and read again " +
                                 std::to_string(kMaxDiscoveries) + " times; try again");
      --attempt;  // not a lost race: the same claim with the guards it needs
      continue;
    }
    if (run.lease != 0)
      writes.push_back(
          TxnOp::put(prefix_ + "/runs/" + run.run_id + "/alive", run.controller, run.lease));
    auto result = client_.txn(guards, writes);
    if (!result) return store_failure("claim budgets for run " + run.run_id, result.error());
    if (result->succeeded) return result->revision;
    // Another claim or release changed a group between the read and the write: read again.
  }
  return plain_failure(ClaimFailure::Kind::contention,
                       "coordination: run " + run.run_id + " lost the race for its budgets " +
                           std::to_string(kMaxAttempts) + " times in a row; try again");
}

Expected<BudgetLedger::ReleaseOps, ClaimFailure> BudgetLedger::release_ops(
    const std::string& run_id, const ServiceTransition& transition,
    const std::vector<Demand>* claimed) {
  if (!plain_key_segment(run_id))
    return plain_failure(ClaimFailure::Kind::invalid,
                         "coordination: run id '" + run_id + "' cannot be a key segment");
  const std::string suffix = "/claims/" + run_id;
  ReleaseOps out;
  auto& writes = out.ops;
  if (claimed) {
    // The run knows where it claimed: each claim key is read (to count it) and deleted in the
    // release's own transaction, so releasing costs one call. A guard bumped in a group where
    // the claim was already gone only makes a concurrent claim there read again.
    for (const auto& demand : *claimed) {
      const std::string group = group_prefix(demand.group.budget, demand.group.group);
      writes.push_back(TxnOp::get(group + suffix));
      writes.push_back(TxnOp::del(group + suffix));
      writes.push_back(TxnOp::put(guard_of(group), run_id));
    }
  } else {
    // Anyone else (fabgate recover) finds the run's claims wherever they are.
    auto range = client_.get_prefix(prefix_ + "/budgets/");
    if (!range) return store_failure("read the budgets to release run " + run_id, range.error());
    for (const auto& kv : range->kvs) {
      if (!kv.key.ends_with(suffix)) continue;
      const std::string group = kv.key.substr(0, kv.key.size() - suffix.size());
      writes.push_back(TxnOp::del(kv.key));
      writes.push_back(TxnOp::put(guard_of(group), run_id));
      ++out.found;
    }
  }
  writes.push_back(TxnOp::del(prefix_ + "/runs/" + run_id + "/alive"));
  writes.push_back(TxnOp::del(prefix_ + "/queue/" + run_id));
  for (const auto& device : transition.out) {
    if (!plain_key_segment(device))
      return plain_failure(ClaimFailure::Kind::invalid,
                           "coordination: device '" + device + "' cannot be a key segment");
    writes.push_back(
        TxnOp::put(prefix_ + "/service/out/" + device, service_record_of(transition.by, device)));
  }
  for (const auto& device : transition.back)
    writes.push_back(TxnOp::del(prefix_ + "/service/out/" + device));
  if (!transition.empty()) writes.push_back(TxnOp::put(prefix_ + "/service/guard", run_id));
  return out;
}

Expected<int, ClaimFailure> BudgetLedger::release(const std::string& run_id,
                                                  const ServiceTransition& transition,
                                                  const std::vector<Demand>* claimed) {
  auto planned = release_ops(run_id, transition, claimed);
  if (!planned) return planned.error();
  auto result = client_.txn({}, planned->ops);
  if (!result) return store_failure("release the budgets of run " + run_id, result.error());
  int released = planned->found;
  for (const auto& read : result->reads) released += read.kvs.empty() ? 0 : 1;
  return released;
}

Expected<Ok, ClaimFailure> BudgetLedger::enqueue(const RunIdentity& run,
                                                 const std::vector<Demand>& demands,
                                                 TimePoint until) {
  if (!plain_key_segment(run.run_id))
    return plain_failure(ClaimFailure::Kind::invalid,
                         "coordination: run id '" + run.run_id + "' cannot be a key segment");
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& demand : demands) groups.push_back(queue_group_name(demand.group));
  nlohmann::json record = {{"run", run.run_id},         {"operator", run.operator_name},
                           {"change", run.change},      {"controller", run.controller},
                           {"groups", groups},          {"since", format_utc(now_utc())},
                           {"until", format_utc(until)}};
  // Create only: a run already queued keeps its place (its create_revision).
  const std::string key = prefix_ + "/queue/" + run.run_id;
  auto result = client_.txn(
      {Compare::absent(key)},
      {TxnOp::put(key, record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  run.lease)});
  if (!result) return store_failure("queue run " + run.run_id, result.error());
  return Ok{};
}

Expected<Ok, ClaimFailure> BudgetLedger::dequeue(const std::string& run_id) {
  auto result = client_.del(prefix_ + "/queue/" + run_id);
  if (!result) return store_failure("take run " + run_id + " out of the queue", result.error());
  return Ok{};
}

Expected<std::vector<QueuedRun>, ClaimFailure> BudgetLedger::queue() {
  auto range = client_.get_prefix(prefix_ + "/queue/");
  if (!range) return store_failure("read the queue", range.error());
  return queue_from(*range);
}

Expected<std::vector<GroupClaims>, ClaimFailure> BudgetLedger::groups() {
  const std::string root = prefix_ + "/budgets/";
  auto range = client_.get_prefix(root);
  if (!range) return store_failure("read the budgets", range.error());
  std::map<std::pair<std::string, std::string>, GroupClaims> by_group;
  for (const auto& kv : range->kvs) {
    // <budget>/<group>/claims/<run>
    std::string rest = kv.key.substr(root.size());
    auto first = rest.find('/');
    auto claims = rest.find("/claims/", first == std::string::npos ? 0 : first);
    if (first == std::string::npos || claims == std::string::npos || claims <= first) continue;
    std::string budget = rest.substr(0, first);
    std::string group = rest.substr(first + 1, claims - first - 1);
    auto& entry = by_group[{budget, group}];
    entry.budget = budget;
    entry.group = group;
    entry.holders.push_back(holder_from(kv, rest.substr(claims + 8)));
  }
  std::vector<GroupClaims> out;
  for (auto& [key, entry] : by_group) {
    if (auto read = read_liveness(entry.holders); !read) return read.error();
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace fabgate::coordination
