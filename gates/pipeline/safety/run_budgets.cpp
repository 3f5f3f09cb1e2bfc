#include "gates/pipeline/safety/run_budgets.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "adapters/core/text.h"
#include "adapters/core/time.h"
#include "gates/coordination/budgets.h"
#include "gates/coordination/locks.h"
#include "gates/coordination/shared_journal.h"
#include "gates/coordination/store_settings.h"
#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/safety/interruption.h"
#include "gates/pipeline/safety/journal_mirror.h"

namespace fabgate::pipeline {

namespace {

using Clock = std::chrono::steady_clock;

// How often a run waiting in the queue asks again whether its claim fits.
constexpr Duration kQueuePollInterval{300};

Duration since(Clock::time_point start) {
  return std::chrono::duration_cast<Duration>(Clock::now() - start);
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown controller";
  return name;
}

std::string etcd_problem(const etcd::EtcdFailure& failure) {
  return "etcd " + std::string(etcd::to_string(failure.kind)) + ": " + failure.message;
}

}  // namespace

RunBudgets::RunBudgets(BudgetSetup setup, const intent::Inventory& inventory,
                       const intent::Change& change, EvidenceBundle& evidence)
    : setup_(std::move(setup)), inventory_(inventory), change_(change), evidence_(evidence) {}

std::string RunBudgets::release_later() const {
  // The bundle, not the run id: the journal in etcd may lack this run's last records (the
  // store did not answer at its end), so only this controller's copy shows that it ended.
  return "`fabgate recover " + evidence_.dir().string() +
         "` releases them (the devices need nothing) once etcd answers";
}

std::string RunBudgets::controller_name() const {
  return setup_.controller.empty() ? host_name() : setup_.controller;
}

RunBudgets::~RunBudgets() {
  stop_keepalive();
  if (mirror_) evidence_.detach_journal_mirror();
}

Expected<etcd::EtcdClient, etcd::EtcdFailure> RunBudgets::open_client() const {
  return etcd::EtcdClient::open(
      coordination::store_settings(*setup_.coordination, setup_.intent_dir));
}

void RunBudgets::claim(GateRecord& record, const std::string& run_id,
                       const std::string& operator_name) {
  auto policy = coordination::load_budgets(*setup_.budgets_text, setup_.budgets_file);
  const std::string from = setup_.source.empty() ? "" : " (read from " + setup_.source + ")";
  if (!policy) {
    record.verdict = Verdict::fail;
    record.summary = policy.error().message + from;
    record.details = policy.error().details;
    return;
  }
  auto demands = coordination::demands_of(*policy, inventory_, change_.targets);
  if (!demands) {
    record.verdict = Verdict::fail;
    record.summary = demands.error().message + from;
    record.details = demands.error().details;
    return;
  }
  nlohmann::json groups = nlohmann::json::array();
  std::vector<std::string> group_lines;
  for (const auto& demand : *demands) {
    group_lines.push_back(demand.group.describe() + ": " + join(demand.devices, ", ") + " (" +
                          std::to_string(demand.devices.size()) + " of at most " +
                          std::to_string(demand.group.capacity) + " of " +
                          std::to_string(demand.group.size) + " in change at once)");
    groups.push_back({{"budget", demand.group.budget},
                      {"group", demand.group.group},
                      {"size", demand.group.size},
                      {"capacity", demand.group.capacity},
                      {"devices", demand.devices}});
  }
  record_["budgets_file"] = setup_.budgets_file;
  record_["budgets_from"] = setup_.source;
  record_["groups"] = groups;
  const std::string counted =
      std::to_string(demands->size()) + " budget group" + (demands->size() == 1 ? "" : "s");
  // The groups follow the verdict's reason, which leads the details (the report's "first
  // disproven" line is the first of them).
  auto decide = [&](Verdict verdict, std::string summary, bool reason_in_details) {
    record.verdict = verdict;
    if (reason_in_details) record.details.push_back(summary);
    record.details.insert(record.details.end(), group_lines.begin(), group_lines.end());
    record.summary = std::move(summary);
  };
  if (demands->empty()) {
    decide(Verdict::pass,
           "no target falls in a budget of " + setup_.budgets_file + " (" +
               std::to_string(policy->budgets.size()) + " budgets)",
           false);
    return;
  }
  if (!setup_.coordination) {
    decide(Verdict::pass,
           counted +
               " within budget for this change's own targets; runs of other controllers "
               "are not counted: no coordination store (coordination: in fabgate.yaml)",
           false);
    record_["store"] = nullptr;
    return;
  }

  const auto& settings = *setup_.coordination;
  record_["store"] = {{"endpoints", settings.endpoints}, {"prefix", settings.prefix}};
  if (auto problem = start_lease()) {
    decide(Verdict::no_evidence, *problem, true);
    return;
  }
  operator_name_ = operator_name;
  coordination::RunIdentity identity{run_id, operator_name, change_.id, controller_name(), lease_};
  coordination::BudgetLedger ledger(*client_, settings.prefix);
  auto claimed = claim_or_wait(ledger, identity, *demands, record);
  if (!claimed) {
    end_unused_lease();
    const auto& failure = claimed.error();
    record_["refused"] = failure.message;
    decide(failure.kind == coordination::ClaimFailure::Kind::over_budget ||
                   failure.kind == coordination::ClaimFailure::Kind::queued
               ? Verdict::fail
               : Verdict::no_evidence,
           failure.message, true);
    return;
  }
  claimed_ = true;
  claimed_demands_ = *demands;
  // Shared from the fleet-locks gate on; here only if that gate did not share it.
  const bool shared_here = !mirror_;
  if (auto shared = mirror_ ? Status(Ok{}) : share_journal(run_id, 0); !shared.ok()) {
    decide(Verdict::no_evidence,
           "the journal cannot be shared in the coordination store: " + shared.error().message +
               "; no step is sent that another controller could not recover",
           true);
    return;
  }
  record_["run"] = run_id;
  record_["controller"] = identity.controller;
  record_["lease"] = lease_;
  record_["lease_ttl_s"] = lease_ttl_s_;
  record_["claimed_at_revision"] = *claimed;
  record_["claimed_at"] = format_utc(now_utc());
  evidence_.append_journal({{"event", "budget-claim"},
                            {"prefix", settings.prefix},
                            {"revision", *claimed},
                            {"groups", groups},
                            {"at", format_utc(now_utc())}});
  if (shared_here)
    record.details.push_back("journal shared in etcd at " + mirror_->location() +
                             ": `fabgate recover " + run_id + "` works from any controller");
  decide(Verdict::pass,
         "claimed " + counted + " in " + settings.prefix + " (etcd revision " +
             std::to_string(*claimed) + "), held until the run ends" +
             (record_.contains("waited")
                  ? " (after " + record_["waited"].get<std::string>() + " in the queue)"
                  : ""),
         false);
}

std::optional<std::string> RunBudgets::start_lease() {
  if (lease_ != 0) return std::nullopt;
  const auto& settings = *setup_.coordination;
  auto client = open_client();
  if (!client) return "the coordination store cannot be used: " + etcd_problem(client.error());
  client_.emplace(std::move(client).value());
  lease_ttl_s_ = std::max<std::int64_t>(1, (settings.lease_ttl.count() + 999) / 1000);
  const auto grant_sent = LeaseFence::Clock::now();
  auto lease = client_->grant(lease_ttl_s_);
  if (!lease)
    return "could not take a lease in the coordination store: " + etcd_problem(lease.error());
  lease_ = lease->id;
  // From here the lease is kept alive, also while the run waits in the queue; the fence closes
  // one etcd call timeout (at most a third of the TTL) before the lease could have expired.
  fence_.arm(lease_, Duration{lease->ttl * 1000},
             std::min(settings.timeout, settings.lease_ttl / 3), grant_sent);
  Duration every{std::max<std::int64_t>(500, settings.lease_ttl.count() / 3)};
  keepalive_ = std::thread([this, every] {
    // A thread's entry point: nothing may escape it (std::terminate mid-change). A keepalive
    // that stops renewing closes the fence at the latest when the lease may have expired.
    try {
      keep_alive(lease_, every);
    } catch (const std::exception& error) {
      fence_.renewal_failed(std::string("the keepalive thread stopped: ") + error.what());
    } catch (...) {
      fence_.renewal_failed("the keepalive thread stopped on an exception of unknown type");
    }
  });
  return std::nullopt;
}

void RunBudgets::end_unused_lease() {
  // Device locks live under the same lease: a run that holds them keeps it until release().
  if (locked_ || lease_ == 0) return;
  stop_keepalive();
  fence_.disarm();
  (void)client_->revoke(lease_);
  lease_ = 0;
}

void RunBudgets::lock_devices(GateRecord& record, const std::string& run_id,
                              const std::string& operator_name) {
  const auto& settings = *setup_.coordination;
  record_["store"] = {{"endpoints", settings.endpoints}, {"prefix", settings.prefix}};
  if (auto problem = start_lease()) {
    record.verdict = Verdict::no_evidence;
    record.summary = *problem;
    return;
  }
  operator_name_ = operator_name;
  coordination::RunIdentity identity{run_id, operator_name, change_.id, controller_name(), lease_};
  coordination::LockLedger ledger(*client_, settings.prefix);
  auto taken = ledger.take(identity, change_.targets);
  if (!taken) {
    const auto& failure = taken.error();
    record_["locks_refused"] = failure.message;
    // A write whose answer was lost may still have been applied: release() then removes
    // whatever of it is in the store, rather than leaving locks of a run that ends now.
    if (failure.kind == coordination::FleetLockFailure::Kind::store) locked_ = true;
    end_unused_lease();
    record.verdict = failure.kind == coordination::FleetLockFailure::Kind::held
                         ? Verdict::fail
                         : Verdict::no_evidence;
    record.summary =
        failure.kind == coordination::FleetLockFailure::Kind::held
            ? "a target is locked in " + settings.prefix + " by another run; nothing was touched"
            : failure.message;
    for (const auto& holder : failure.holders) record.details.push_back(holder.describe());
    if (failure.holders.empty()) record.details.push_back(failure.message);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    tokens_ = *taken;
  }
  locked_ = true;
  nlohmann::json tokens = nlohmann::json::object();
  std::string listed;
  for (const auto& [device, token] : *taken) {
    tokens[device] = token;
    listed += (listed.empty() ? "" : ", ") + device + " " + std::to_string(token);
  }
  record_["run"] = run_id;
  record_["controller"] = identity.controller;
  record_["lease"] = lease_;
  record_["lease_ttl_s"] = lease_ttl_s_;
  record_["locks"] = tokens;
  evidence_.append_journal({{"event", "fleet-lock"},
                            {"prefix", settings.prefix},
                            {"tokens", tokens},
                            {"at", format_utc(now_utc())}});
  // From here on a step is sent only when its record is in etcd too (write-ahead), so recover
  // can finish this run from any controller.
  if (auto shared = share_journal(run_id, 0); !shared.ok()) {
    record.verdict = Verdict::no_evidence;
    record.summary = "the journal cannot be shared in the coordination store: " +
                     shared.error().message +
                     "; no step is sent that another controller could not recover";
    return;
  }
  record.details.push_back("journal shared in etcd at " + mirror_->location() +
                           ": `fabgate recover " + run_id + "` works from any controller");
  record.verdict = Verdict::pass;
  record.summary = "locked " + std::to_string(taken->size()) + " target" +
                   (taken->size() == 1 ? "" : "s") + " in " + settings.prefix + " for run " +
                   run_id + ", held until the run ends";
  record.details.push_back("fencing tokens (the devices refuse older ones): " + listed);
}

std::optional<std::int64_t> RunBudgets::fence_token(const std::string& device) const {
  std::lock_guard lock(mutex_);
  auto found = tokens_.find(device);
  if (found == tokens_.end()) return std::nullopt;
  return found->second;
}

Expected<std::int64_t, coordination::ClaimFailure> RunBudgets::claim_or_wait(
    coordination::BudgetLedger& ledger, const coordination::RunIdentity& identity,
    const std::vector<coordination::Demand>& demands, GateRecord& record) {
  using Kind = coordination::ClaimFailure::Kind;
  const auto started = Clock::now();
  const auto give_up = started + setup_.wait;
  bool queued = false;
  auto leave_queue = [&] {
    if (queued) (void)ledger.dequeue(identity.run_id);
  };
  std::string first_reason;
  for (;;) {
    auto claimed = ledger.claim(identity, demands);
    if (claimed) {
      leave_queue();
      if (queued) {
        record_["waited"] = format_duration(since(started));
        record.details.push_back("waited " + format_duration(since(started)) +
                                 " in the queue: " + first_reason);
      }
      return claimed;
    }
    const auto& failure = claimed.error();
    const bool may_wait = failure.kind == Kind::over_budget || failure.kind == Kind::queued;
    if (!may_wait || setup_.wait <= Duration::zero()) {
      leave_queue();
      return claimed;
    }
    auto refuse = [&](std::string why) {
      leave_queue();
      auto out = failure;
      out.message = std::move(why);
      return Expected<std::int64_t, coordination::ClaimFailure>(std::move(out));
    };
    if (first_reason.empty()) first_reason = failure.message;
    if (Clock::now() >= give_up)
      return refuse("waited " + format_duration(setup_.wait) +
                    " (--wait) and still: " + failure.message);
    if (auto why = fence_.closed()) {
      auto out = failure;
      out.kind = Kind::store;
      out.message = "stopped waiting in the queue: " + *why;
      leave_queue();
      return out;
    }
    if (!queued) {
      // Queued from the first refusal on: the place in the queue is what makes it fair.
      auto entered = ledger.enqueue(identity, demands, now_utc() + setup_.wait);
      if (!entered) {
        leave_queue();
        return entered.error();
      }
      queued = true;
      record_["queued_at"] = format_utc(now_utc());
    }
    // Polls rather than watches (the client has no watch): a few calls per poll, each with
    // the client's deadline; a signal ends the wait at once.
    auto left = std::chrono::duration_cast<Duration>(give_up - Clock::now());
    if (!Interruption::sleep_unless(std::clamp(left, Duration{0}, kQueuePollInterval), 0))
      return refuse("stopped waiting in the queue: " + Interruption::first_name() +
                    " received; still: " + failure.message);
  }
}

Status RunBudgets::share_journal(const std::string& run_id, std::uint64_t stored_up_to) {
  auto client = open_client();
  if (!client) return Error::internal(etcd_problem(client.error()));
  const auto& prefix = setup_.coordination->prefix;
  if (stored_up_to == 0) {
    coordination::SharedJournal journal(*client, prefix);
    auto meta = journal.put_meta(run_id, {{"run", run_id},
                                          {"change", change_.id},
                                          {"controller", controller_name()},
                                          {"evidence", evidence_.dir().string()},
                                          {"shared_at", format_utc(now_utc())}});
    if (!meta) return Error::internal(meta.error().message);
  }
  // One writer per shared journal: this run (or this recover) on its own lease.
  if (lease_ != 0) {
    coordination::SharedJournal journal(*client, prefix);
    if (auto writer = journal.claim_writer(run_id, lease_, controller_name()); !writer)
      return Error::internal(writer.error().message);
  }
  mirror_ = std::make_unique<EtcdJournalMirror>(std::move(client).value(), prefix, run_id, lease_);
  record_["journal"] = {{"store", "etcd"},
                        {"endpoints", setup_.coordination->endpoints},
                        {"key_prefix", mirror_->location()}};
  return evidence_.attach_journal_mirror(mirror_.get(), stored_up_to);
}

Result<std::string> RunBudgets::share_baseline(const std::string& bytes) {
  if (!mirror_) return std::string();
  auto client = open_client();
  if (!client) return Error::internal(etcd_problem(client.error()));
  coordination::SharedJournal journal(*client, setup_.coordination->prefix);
  const std::string run_id = evidence_.run_id();
  if (bytes.size() > coordination::SharedJournal::kMaxBaselineBytes) {
    std::string why = "pre-change snapshot not copied into etcd (" +
                      std::to_string(bytes.size() / (1024 * 1024)) + " MiB, more than " +
                      std::to_string(coordination::SharedJournal::kMaxBaselineBytes /
                                     (1024 * 1024)) +
                      " MiB): recover on another controller can roll back but not verify "
                      "the baseline";
    record_["journal"]["baseline"] = why;
    return why;
  }
  auto shared = journal.put_baseline(run_id, bytes);
  if (!shared) return Error::internal(shared.error().message);
  record_["journal"]["baseline"] = {{"bytes", bytes.size()}};
  return "pre-change snapshot copied beside the shared journal (" + std::to_string(bytes.size()) +
         " bytes)";
}

std::optional<std::string> RunBudgets::adopt(const std::string& run_id, JournalShared shared) {
  adopted_ = setup_.coordination.has_value();
  if (!adopted_ || mirror_) return std::nullopt;
  // Recover writes the run's shared journal on its own lease (single writer): taken now, kept
  // alive from here, and the one its fleet-locks gate then locks under.
  if (auto problem = start_lease()) {
    record_["journal"] = {{"problem", "not continued in etcd: " + *problem}};
    return std::nullopt;
  }
  auto client = open_client();
  if (!client) {
    record_["journal"] = {{"problem", "not continued in etcd: " + etcd_problem(client.error())}};
    return std::nullopt;
  }
  coordination::SharedJournal journal(*client, setup_.coordination->prefix);
  auto stored = journal.last_sequence(run_id);
  if (!stored) {
    record_["journal"] = {{"problem", "not continued in etcd: " + stored.error().message}};
    return std::nullopt;
  }
  if (*stored == 0) {
    // A run that never shared its journal (its coordination came later, or it died before its
    // claim) has none to continue. One that did and has none now was finished elsewhere.
    if (shared == JournalShared::no) return std::nullopt;
    record_["journal"] = {{"problem", "erased from etcd before this recover"}};
    return "run " + run_id + " shared its journal in " + journal.location(run_id) +
           " and etcd holds none now: it was erased when another controller recovered the run "
           "(or the run ended), and other runs may have changed its devices since; rolling "
           "them back from this folder could undo their changes. Check `fabgate status` and the "
           "devices";
  }
  if (auto continued = share_journal(run_id, *stored); !continued.ok())
    record_["journal"]["problem"] = "not continued in etcd: " + continued.error().message;
  return std::nullopt;
}

void RunBudgets::keep_alive(std::int64_t lease, Duration every) {
  auto client = open_client();
  std::unique_lock lock(mutex_);
  bool failed = false;
  while (!stopping_) {
    // After a failed renewal the next comes sooner: the fence closes if none succeeds in time.
    if (wake_.wait_for(lock, failed ? every / 3 : every, [this] { return stopping_; })) break;
    lock.unlock();
    std::string problem;
    const auto sent = LeaseFence::Clock::now();
    if (!client) {
      problem = etcd_problem(client.error());
    } else if (auto renewed = client->keepalive(lease); !renewed) {
      problem = etcd_problem(renewed.error());
    } else if (renewed->ttl == 0) {
      problem = "the lease had expired: the run shows as dead to other controllers";
      fence_.expired(problem);
    } else {
      fence_.renewed(sent);
    }
    if (!problem.empty()) fence_.renewal_failed(problem);
    failed = !problem.empty();
    lock.lock();
    if (!problem.empty()) {
      ++keepalive_failures_;
      last_keepalive_problem_ = problem;
    }
  }
}

void RunBudgets::stop_keepalive() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (keepalive_.joinable()) keepalive_.join();
}

namespace {
// Test-only fault hooks of the run's end: with FABGATE_FAULT_STOP_BEFORE_RELEASE=1 in the
// environment the process stops itself (SIGSTOP) after its last gate and before it records its
// end in the store; with FABGATE_FAULT_STOP_AFTER_END_RECORDED=1, right after it recorded it
// and before its release. A test lets the lease lapse (or kills the run) exactly there and
// proves that the run then hands off (exit 5) instead of exiting 0 over a recover, and that a
// recover of a run that recorded its end rolls nothing back
// (tests/cmd/fabgate/takeover_e2e_test.cpp, docs/reliability.md). Inert when unset.
void stop_if_faulted(const char* variable) {
  const char* text = std::getenv(variable);
  if (text && std::string_view(text) == "1") ::raise(SIGSTOP);
}
}  // namespace

bool RunBudgets::record_end(const std::string& run_id, ChangeFate fate, int exit_code) {
  const std::string alive = setup_.coordination->prefix + "/runs/" + run_id + "/alive";
  nlohmann::json marker = {{"run", run_id},
                           {"exit_code", exit_code},
                           {"fate", fate == ChangeFate::kept ? "kept" : "not-kept"},
                           {"controller", controller_name()},
                           {"at", format_utc(now_utc())}};
  const std::string end_key = coordination::run_end_key(setup_.coordination->prefix, run_id);
  std::string last_problem;
  // Retried while the lease certainly holds (the keepalive thread still renews it); once the
  // fence closes, another controller may already act on the devices.
  for (int attempt = 0; attempt < 64; ++attempt) {
    if (auto why = fence_.closed()) {
      taken_over_ = "its end could not be recorded in the coordination store before its lease "
                    "may have expired (" + *why + (last_problem.empty() ? "" : "; last: " + last_problem) + ")";
      return false;
    }
    auto written = client_->txn(
        {etcd::Compare::lease_is(alive, lease_)},
        {etcd::TxnOp::put(end_key, marker.dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace))});
    if (written && written->succeeded) {
      record_["end_recorded"] = {{"key", end_key}, {"revision", written->revision}};
      return true;
    }
    if (written) {
      taken_over_ = "its alive key in " + setup_.coordination->prefix +
                    " was no longer on its lease when it went to record its end: the lease had "
                    "expired in etcd, so other controllers saw the run dead and may have taken "
                    "it over";
      return false;
    }
    last_problem = etcd_problem(written.error());
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  taken_over_ = "its end could not be recorded in the coordination store (" + last_problem + ")";
  return false;
}

std::optional<std::string> RunBudgets::release_in_store(
    const std::string& run_id, const coordination::ServiceTransition& transition,
    bool on_own_lease, int& released) {
  const std::string& prefix = setup_.coordination->prefix;
  coordination::LockLedger locks(*client_, prefix);
  auto lock_ops = locks.release_ops(run_id);
  if (!lock_ops)
    return "device locks of run " + run_id + " NOT released: " + lock_ops.error().message + "; " +
           release_later();
  coordination::BudgetLedger ledger(*client_, prefix);
  // A run that claimed here knows its groups; one that adopted a crashed run's claims
  // (recover) looks for them.
  auto claim_ops =
      ledger.release_ops(run_id, transition, claimed_ && !adopted_ ? &claimed_demands_ : nullptr);
  if (!claim_ops)
    return "budget claims of run " + run_id + " NOT released: " + claim_ops.error().message +
           "; " + release_later();
  // Everything in one transaction: no reader sees the locks gone and the claims (or the
  // journal) still there. The shared journal, its end marker included, goes with them.
  std::vector<etcd::TxnOp> ops = *lock_ops;
  ops.insert(ops.end(), claim_ops->ops.begin(), claim_ops->ops.end());
  ops.push_back(etcd::TxnOp::del_prefix(coordination::SharedJournal(*client_, prefix).location(run_id)));
  std::vector<etcd::Compare> guards;
  const std::string alive = prefix + "/runs/" + run_id + "/alive";
  if (lease_ != 0 && on_own_lease) guards.push_back(etcd::Compare::lease_is(alive, lease_));
  // etcd refuses a transaction of more than --max-txn-ops (128 by default) operations: a
  // release that large goes in batches, the journal (with the end marker) last, so a release
  // cut short still reads as an ended run (recover then finishes it without touching devices).
  constexpr std::size_t kOpsPerTxn = 120;
  released = claim_ops->found;
  int batches = 0;
  for (std::size_t first = 0; first < ops.size(); first += kOpsPerTxn) {
    std::vector<etcd::TxnOp> batch(
        ops.begin() + static_cast<std::ptrdiff_t>(first),
        ops.begin() + static_cast<std::ptrdiff_t>(std::min(ops.size(), first + kOpsPerTxn)));
    auto result = client_->txn(guards, batch);
    if (!result)
      return "the claims and locks of run " + run_id + " NOT released: " +
             etcd_problem(result.error()) + "; " + release_later();
    if (!result->succeeded)
      return "the claims and locks of run " + run_id +
             " NOT released: its lease lapsed after it recorded its end, so they stay until `fabgate "
             "recover " + run_id + "` releases them (its devices need nothing)";
    for (const auto& read : result->reads) released += read.kvs.empty() ? 0 : 1;
    ++batches;
  }
  record_["release_transactions"] = batches;
  record_["locks_released"] = lock_ops->size();
  if (!lock_ops->empty())
    evidence_.append_journal({{"event", "fleet-lock-release"},
                              {"locks", lock_ops->size()},
                              {"at", format_utc(now_utc())}});
  return std::nullopt;
}

void RunBudgets::hand_off() {
  stop_keepalive();
  fence_.disarm();
  if (lease_ == 0 || !client_) return;
  if (auto revoked = client_->revoke(lease_); revoked) {
    record_["lease_revoked_at_hand_off"] = format_utc(now_utc());
  } else {
    record_["lease_not_revoked"] = etcd_problem(revoked.error());
  }
}

std::vector<std::string> RunBudgets::release(const std::string& run_id, ChangeFate fate,
                                             int exit_code, bool sent_anything) {
  auto end_lease = [&] {
    stop_keepalive();
    fence_.disarm();
  };
  if (!setup_.coordination || !holds()) {
    end_lease();
    return {};
  }
  if (!client_) {
    auto client = open_client();
    if (!client) {
      end_lease();
      release_ok_ = false;
      record_["release"] = etcd_problem(client.error());
      return {"budget claims of run " + run_id + " NOT released: " + etcd_problem(client.error()) +
              "; " + release_later()};
    }
    client_.emplace(std::move(client).value());
  }
  stop_if_faulted("FABGATE_FAULT_STOP_BEFORE_RELEASE");
  // The end is decided here, while the keepalive still renews the lease: recorded, or the run
  // may have been taken over and releases nothing (another controller may be recovering it).
  bool on_own_lease = true;
  if (lease_ != 0 && !record_end(run_id, fate, exit_code)) {
    record_["taken_over"] = taken_over_;
    if (sent_anything) {
      end_lease();
      release_ok_ = false;
      return {};
    }
    on_own_lease = false;
  }
  if (lease_ != 0) stop_if_faulted("FABGATE_FAULT_STOP_AFTER_END_RECORDED");
  end_lease();
  coordination::ServiceTransition transition;
  if (fate == ChangeFate::kept) {
    transition = {{run_id, operator_name_, change_.id, controller_name(), 0},
                  change_.out_of_service,
                  change_.back_in_service};
  }
  // The mirror stops first: the journal in etcd goes with the release.
  if (mirror_) {
    record_["journal"]["state"] = evidence_.journal_mirror_state();
    evidence_.detach_journal_mirror();
    mirror_.reset();
  }
  int released = 0;
  auto problem = release_in_store(run_id, transition, on_own_lease, released);
  if (lease_ != 0) (void)client_->revoke(lease_);
  if (problem) {
    release_ok_ = false;
    record_["release"] = *problem;
    return {*problem};
  }
  locked_ = false;
  claimed_ = false;
  adopted_ = false;
  record_["released"] = released;
  record_["released_at"] = format_utc(now_utc());
  nlohmann::json journal = {
      {"event", "budget-release"}, {"claims", released}, {"at", format_utc(now_utc())}};
  std::vector<std::string> lines;
  if (released != 0)
    lines.push_back("released " + std::to_string(released) + " budget claim" +
                    (released == 1 ? "" : "s") + " of run " + run_id);
  if (!transition.empty()) {
    journal["out_of_service"] = transition.out;
    journal["back_in_service"] = transition.back;
    record_["out_of_service"] = transition.out;
    record_["back_in_service"] = transition.back;
    if (!transition.out.empty())
      service_changes_.push_back(join(transition.out, ", ") + " out of service in " +
                                 setup_.coordination->prefix +
                                 ": counted by the budgets until a change with back_in_service "
                                 "lists " +
                                 (transition.out.size() == 1 ? "it" : "them") + " is accepted");
    if (!transition.back.empty())
      service_changes_.push_back(join(transition.back, ", ") + " back in service in " +
                                 setup_.coordination->prefix);
  }
  evidence_.append_journal(journal);
  return lines;
}

nlohmann::json RunBudgets::to_json() const {
  nlohmann::json out = record_;
  if (mirror_) out["journal"]["state"] = evidence_.journal_mirror_state();
  std::lock_guard lock(mutex_);
  out["keepalive_failures"] = keepalive_failures_;
  if (lease_ != 0 || claimed_) out["fence"] = fence_.to_json();
  if (!last_keepalive_problem_.empty()) out["last_keepalive_problem"] = last_keepalive_problem_;
  return out;
}

}  // namespace fabgate::pipeline
