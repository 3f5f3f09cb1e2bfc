// Redundancy budgets at fleet scale (issues 32, 33 and 46): C controller processes contend for the
// budgets of a simulated fabric of 2,000 devices (50 pods of 4 spines and 36 leaves; PODS pods when
// given; at most 1 spine and 25 % of the leaves of a pod in change at once) against a three-member
// etcd 3.4 cluster on 127.0.0.1. Each controller does what a run's budgets gate does, through the
// same code (BudgetLedger): take a lease, claim the one device its change targets (the queue check,
// the group read and the guarded transaction), then release and revoke.
//
// Floor (issue 33), measured in the same run, before and after phase 1, with the same C
// processes, the same cluster and member, and the same random devices: the least a claim can
// do, one create-if-absent transaction on the device's key and one delete to give it back,
// each over one kept-alive HTTP/1.1 connection with plain sockets (plain_http.h). No lease, no
// queue, no group, no budget: only the two raft writes any claim-and-release must make.
// Phase 1, throughput: every controller claims and releases back to back for S seconds, each
// claim for a random device: claims per second, p50/p99/max time to claim (lease + claim, as
// the gate spends it), and how many claims were refused over budget or lost every race.
// Phase 2, cost inside a change: every controller runs K changes that each hold their claim
// for H milliseconds while a keepalive thread renews the lease every third of its TTL, as a
// run does; the share of each change's wall time spent talking to etcd.
//
// Not a test: scripts/bench-budgets builds and runs it; docs/benchmarks.md and
// docs/coordination.md record its figures.
// Usage: bench_budgets [controllers=20] [seconds=15] [changes=3] [hold_ms=5000] [pods=50]

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "adapters/prom/http_client.h"
#include "gates/coordination/claims.h"
#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/bench/etcd/plain_http.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace fabgate;
using namespace fabgate::etcd::testing;
using Clock = std::chrono::steady_clock;

// Pods in the simulated fabric: 50 (2,000 devices) unless the fifth argument says otherwise
// (issue 46 item 4 runs 500: 20,000 devices).
int pods = 50;
constexpr int kSpinesPerPod = 4;
constexpr int kLeavesPerPod = 36;
constexpr const char* kPrefix = "/fabgate/bench";

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The demand of a change on one random device of the simulated fabric.
coordination::Demand random_demand(std::mt19937& random) {
  int pod = std::uniform_int_distribution<int>(0, pods - 1)(random);
  int member = std::uniform_int_distribution<int>(0, kSpinesPerPod + kLeavesPerPod - 1)(random);
  bool spine = member < kSpinesPerPod;
  std::string device = "p" + std::to_string(pod) + (spine ? "-spine" : "-leaf") +
                       std::to_string(spine ? member : member - kSpinesPerPod);
  coordination::BudgetGroup group{spine ? "spines-per-pod" : "leaves-per-pod",
                                  "pod=p" + std::to_string(pod),
                                  spine ? kSpinesPerPod : kLeavesPerPod,
                                  spine ? 1 : kLeavesPerPod / 4,
                                  {"policies/budgets.yaml", 1, 1}};
  return {group, {device}};
}

struct Tally {
  std::vector<double> claim_ms;  // lease + claim of the claims granted
  int refused = 0;               // over budget or queued behind another run
  int lost = 0;                  // contention, or a store failure
  double coordinating_ms = 0;    // phase 2: every etcd call of the changes
  double wall_ms = 0;            // phase 2: the changes' wall time
};

// One claim as the gate makes it; adds to `tally`. True when granted (then released).
bool claim_once(etcd::EtcdClient& client, coordination::BudgetLedger& ledger,
                const std::string& run_id, const coordination::Demand& demand, Tally& tally,
                int hold_ms) {
  auto start = Clock::now();
  auto lease = client.grant(15);
  if (!lease) {
    ++tally.lost;
    return false;
  }
  coordination::RunIdentity run{run_id, "bench", "change-" + run_id, "controller", lease->id};
  auto claimed = ledger.claim(run, {demand});
  double claim_ms = ms_since(start);
  if (!claimed) {
    (void)client.revoke(lease->id);
    auto kind = claimed.error().kind;
    if (kind == coordination::ClaimFailure::Kind::over_budget ||
        kind == coordination::ClaimFailure::Kind::queued)
      ++tally.refused;
    else
      ++tally.lost;
    tally.coordinating_ms += ms_since(start);
    return false;
  }
  tally.claim_ms.push_back(claim_ms);
  double keepalive_ms = 0;
  if (hold_ms > 0) {
    // The change itself: the claim is held while a keepalive renews the lease every 5 s.
    std::atomic<bool> done{false};
    std::thread keepalive([&] {
      auto next = Clock::now() + std::chrono::milliseconds(5000);
      while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (Clock::now() < next) continue;
        auto renew = Clock::now();
        (void)client.keepalive(lease->id);
        keepalive_ms += ms_since(renew);
        next = Clock::now() + std::chrono::milliseconds(5000);
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    done = true;
    keepalive.join();
  }
  auto release = Clock::now();
  // As the budgets gate releases its own claim: with the groups it was granted.
  const std::vector<coordination::Demand> held = {demand};
  (void)ledger.release(run_id, {}, &held);
  (void)client.revoke(lease->id);
  tally.coordinating_ms += claim_ms + keepalive_ms + ms_since(release);
  return true;
}

enum class Phase { floor, claims, changes };

void write_tally(const Tally& tally, const std::string& out) {
  std::ofstream file(out);
  file << tally.refused << "\n"
       << tally.lost << "\n"
       << tally.coordinating_ms << "\n"
       << tally.wall_ms << "\n"
       << tally.claim_ms.size() << "\n";
  for (double ms : tally.claim_ms) file << ms << "\n";
}

// The floor's claim and release of one device: a create-if-absent txn, then a delete.
void floor_once(etcd::bench::PlainHttp& http, const std::string& run_id,
                const coordination::Demand& demand, Tally& tally) {
  const std::string key =
      etcd::base64_encode(std::string(kPrefix) + "/floor/" + demand.devices.front());
  const std::string claim =
      R"({"compare":[{"key":")" + key +
      R"(","target":"CREATE","result":"EQUAL","create_revision":"0"}],"success":[{"request_put":{"key":")" +
      key + R"(","value":")" + etcd::base64_encode(run_id) + R"("}}],"failure":[]})";
  auto start = Clock::now();
  bool granted = false;
  try {
    granted = etcd::bench::answer_succeeded(http.post("/v3/kv/txn", claim));
  } catch (const std::exception&) {
    ++tally.lost;
    return;
  }
  double claim_ms = ms_since(start);
  if (!granted) {
    ++tally.refused;  // another controller holds the device
    return;
  }
  tally.claim_ms.push_back(claim_ms);
  try {
    (void)http.post("/v3/kv/deleterange", R"({"key":")" + key + R"("})");
  } catch (const std::exception&) {
    ++tally.lost;
  }
}

// A controller process in one phase: writes its tally to `out` (one number per line, claim
// times last). The same seed in every phase: the floor claims the same devices as phase 1.
void controller(Phase phase, int index, const std::vector<std::string>& endpoints, int seconds,
                int changes, int hold_ms, const std::string& out) {
  std::mt19937 random(1000 + index);
  Tally tally;
  int serial = 0;
  const std::string prefix = "c" + std::to_string(index) + "-";
  if (phase == Phase::floor) {
    etcd::bench::PlainHttp http(endpoints.front(), true);
    auto until = Clock::now() + std::chrono::seconds(seconds);
    while (Clock::now() < until)
      floor_once(http, prefix + std::to_string(++serial), random_demand(random), tally);
    write_tally(tally, out);
    return;
  }
  auto client = open_client(endpoints, 5s);
  coordination::BudgetLedger ledger(client, kPrefix);
  if (phase == Phase::claims) {
    auto until = Clock::now() + std::chrono::seconds(seconds);
    while (Clock::now() < until)
      claim_once(client, ledger, prefix + std::to_string(++serial), random_demand(random), tally,
                 0);
  } else {
    serial = 1'000'000;  // run ids not used by phase 1
    for (int change = 0; change < changes; ++change) {
      auto start = Clock::now();
      // A run refused by the budget is retried with another change, as CI would queue another
      // job; its failed attempts count as coordination time.
      while (!claim_once(client, ledger, prefix + std::to_string(++serial), random_demand(random),
                         tally, hold_ms)) {
      }
      tally.wall_ms += ms_since(start);
    }
  }
  write_tally(tally, out);
}

double at(const std::vector<double>& sorted, double p) {
  return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1))];
}

struct Totals {
  std::vector<double> claim_ms;  // sorted
  int refused = 0, lost = 0, failed = 0;
  double coordinating_ms = 0, wall_ms = 0;
};

// Forks `controllers` processes for one phase, waits for them and adds up their tallies.
Totals run_phase(Phase phase, int controllers, const std::vector<std::string>& endpoints,
                 int seconds, int changes, int hold_ms, const std::string& folder) {
  static int batch = 0;
  const std::string prefix = folder + "/" + std::to_string(++batch) + "-";
  std::vector<pid_t> children;
  for (int i = 0; i < controllers; ++i) {
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      int code = 0;
      try {
        controller(phase, i, endpoints, seconds, changes, hold_ms, prefix + std::to_string(i));
      } catch (const std::exception& error) {
        std::fprintf(stderr, "controller %d: %s\n", i, error.what());
        code = 1;
      }
      ::_exit(code);  // never the parent's destructors: the cluster is the parent's
    }
    children.push_back(pid);
  }
  Totals totals;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    totals.failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int i = 0; i < controllers; ++i) {
    std::ifstream in(prefix + std::to_string(i));
    int r = 0, l = 0;
    double c = 0, w = 0;
    std::size_t n = 0;
    if (!(in >> r >> l >> c >> w >> n)) continue;
    totals.refused += r;
    totals.lost += l;
    totals.coordinating_ms += c;
    totals.wall_ms += w;
    for (std::size_t k = 0; k < n; ++k) {
      double ms = 0;
      if (in >> ms) totals.claim_ms.push_back(ms);
    }
  }
  std::sort(totals.claim_ms.begin(), totals.claim_ms.end());
  return totals;
}

// etcd's own count of the gRPC calls it handled (the gateway's included), by method, summed
// over the members: grpc_server_handled_total from each member's /metrics.
std::map<std::string, double> handled_calls(const std::vector<std::string>& endpoints) {
  std::map<std::string, double> calls;
  for (const auto& endpoint : endpoints) {
    prom::HttpEndpoint where;
    where.base_url = endpoint;
    where.timeout = Duration(10'000);
    auto answer = prom::http_request(where, prom::HttpMethod::get, "/metrics");
    if (!answer || answer->status != 200) continue;
    std::istringstream lines(answer->body);
    std::string line;
    while (std::getline(lines, line)) {
      if (!line.starts_with("grpc_server_handled_total{")) continue;
      auto method_at = line.find("grpc_method=\"");
      auto close = line.rfind('}');
      if (method_at == std::string::npos || close == std::string::npos) continue;
      method_at += 13;
      std::string method = line.substr(method_at, line.find('"', method_at) - method_at);
      calls[method] += std::atof(line.c_str() + close + 1);
    }
  }
  return calls;
}

// The leader's database as etcd reports it: the revision (every write adds one) and the file's
// size, all of it and the part in use (what compaction and defragmentation leave).
struct Database {
  double revision = 0, total_bytes = 0, in_use_bytes = 0;
};

Database database_of(const std::string& endpoint) {
  Database database;
  prom::HttpEndpoint where;
  where.base_url = endpoint;
  where.timeout = Duration(10'000);
  auto answer = prom::http_request(where, prom::HttpMethod::get, "/metrics");
  if (!answer || answer->status != 200) return database;
  std::istringstream lines(answer->body);
  std::string line;
  auto value_of = [&](const char* name, double& into) {
    if (line.rfind(name, 0) == 0 && line.size() > std::strlen(name) &&
        line[std::strlen(name)] == ' ')
      into = std::atof(line.c_str() + std::strlen(name) + 1);
  };
  while (std::getline(lines, line)) {
    value_of("etcd_debugging_mvcc_current_revision", database.revision);
    value_of("etcd_mvcc_db_total_size_in_bytes", database.total_bytes);
    value_of("etcd_mvcc_db_total_size_in_use_in_bytes", database.in_use_bytes);
  }
  return database;
}

void print_database(const char* when, const Database& database) {
  std::printf("  etcd database %s: revision %.0f, %.2f MiB on disk, %.2f MiB in use\n", when,
              database.revision, database.total_bytes / 1048576.0,
              database.in_use_bytes / 1048576.0);
}

// Compacts away every revision before the current one and defragments each member, as an
// operator's --auto-compaction-retention and a periodic defrag do; what is left is the live keys.
void compact_and_defragment(const std::vector<std::string>& endpoints, double revision) {
  prom::HttpEndpoint where;
  where.base_url = endpoints.front();
  where.timeout = Duration(30'000);
  char body[96];
  std::snprintf(body, sizeof body, "{\"revision\":\"%.0f\",\"physical\":true}", revision);
  auto compacted = prom::http_request(where, prom::HttpMethod::post, "/v3/kv/compaction", {}, body);
  if (!compacted || compacted->status != 200)
    std::fprintf(stderr, "bench_budgets: compaction failed: %s\n",
                 compacted ? compacted->body.c_str() : compacted.error().message.c_str());
  for (const auto& endpoint : endpoints) {
    where.base_url = endpoint;
    auto defragmented =
        prom::http_request(where, prom::HttpMethod::post, "/v3/maintenance/defragment", {}, "{}");
    if (!defragmented || defragmented->status != 200)
      std::fprintf(stderr, "bench_budgets: defragmenting %s failed\n", endpoint.c_str());
  }
}

// The calls handled between two counts, per claim attempt: "Range 3.02, Txn 2.00, ...".
std::string calls_per_claim(const std::map<std::string, double>& before,
                            const std::map<std::string, double>& after, std::size_t claims) {
  std::string out;
  double total = 0;
  for (const auto& [method, count] : after) {
    auto found = before.find(method);
    double delta = count - (found == before.end() ? 0 : found->second);
    if (delta < 0.5 || method == "Status" || method == "Check") continue;
    char text[64];
    std::snprintf(text, sizeof text, "%s%s %.2f", out.empty() ? "" : ", ", method.c_str(),
                  delta / static_cast<double>(claims));
    out += text;
    total += delta;
  }
  char text[64];
  std::snprintf(text, sizeof text, "; %.2f in all", total / static_cast<double>(claims));
  return (out.empty() ? "none counted (no grpc_server_handled_total)" : out) + text;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

void print_claims(const char* name, const Totals& totals, int seconds) {
  std::printf(
      "%s\n  claims granted %zu (%.1f per second), refused (over budget, queued or held) %d, "
      "lost every race or store failure %d\n",
      name, totals.claim_ms.size(), static_cast<double>(totals.claim_ms.size()) / seconds,
      totals.refused, totals.lost);
  if (!totals.claim_ms.empty())
    std::printf("  time to claim: p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
                at(totals.claim_ms, 0.5), at(totals.claim_ms, 0.99), totals.claim_ms.back());
}

}  // namespace

int main(int argc, char** argv) {
  int controllers = argc > 1 ? std::atoi(argv[1]) : 20;
  int seconds = argc > 2 ? std::atoi(argv[2]) : 15;
  int changes = argc > 3 ? std::atoi(argv[3]) : 3;
  int hold_ms = argc > 4 ? std::atoi(argv[4]) : 5000;
  pods = argc > 5 ? std::atoi(argv[5]) : 50;
  if (controllers < 1 || seconds < 1 || changes < 0 || hold_ms < 0 || pods < 1) {
    std::fprintf(stderr,
                 "usage: bench_budgets [controllers] [seconds] [changes] [hold_ms] [pods]\n");
    return 2;
  }
  if (!std::filesystem::exists(kEtcd)) {
    std::fprintf(stderr, "bench_budgets: %s is missing (scripts/bootstrap --tests)\n", kEtcd);
    return 2;
  }
  Cluster cluster(3);
  if (!cluster.ready()) {
    std::fprintf(stderr, "bench_budgets: the cluster did not form:\n%s\n", cluster.log(0).c_str());
    return 1;
  }
  fabgate::testing::TempDir results("fabgate-bench-budgets");
  const auto endpoints = cluster.endpoints();
  std::printf(
      "fabric: %d devices (%d pods x %d spines + %d leaves), 3 etcd members on 127.0.0.1, "
      "every controller starting at %s\n",
      pods * (kSpinesPerPod + kLeavesPerPod), pods, kSpinesPerPod, kLeavesPerPod,
      endpoints.front().c_str());
  std::printf("%d controllers, %d s per claiming phase; load average %s\n", controllers, seconds,
              load_average().c_str());
  std::fflush(stdout);
  const Database database_at_start = database_of(endpoints.front());
  print_database("at the start", database_at_start);
  auto counted = handled_calls(endpoints);
  auto count_calls = [&](std::size_t claims) {
    auto now = handled_calls(endpoints);
    std::printf("  etcd calls handled per claim attempt (etcd's grpc_server_handled_total): %s\n",
                calls_per_claim(counted, now, std::max<std::size_t>(claims, 1)).c_str());
    counted = std::move(now);
  };
  Totals floor_before =
      run_phase(Phase::floor, controllers, endpoints, seconds, 0, 0, results.path());
  print_claims("floor, before phase 1 (create-if-absent txn + delete, kept-alive connection)",
               floor_before, seconds);
  count_calls(floor_before.claim_ms.size() + floor_before.refused);
  std::printf("  load average %s\n", load_average().c_str());
  std::fflush(stdout);
  const Database before_ledger = database_of(endpoints.front());
  Totals claims = run_phase(Phase::claims, controllers, endpoints, seconds, 0, 0, results.path());
  const Database after_ledger = database_of(endpoints.front());
  print_claims("phase 1: fabgate's BudgetLedger (lease + claim; release + revoke)", claims,
               seconds);
  count_calls(claims.claim_ms.size() + claims.refused);
  std::printf("  load average %s\n", load_average().c_str());
  std::fflush(stdout);
  Totals floor_after =
      run_phase(Phase::floor, controllers, endpoints, seconds, 0, 0, results.path());
  print_claims("floor, after phase 1", floor_after, seconds);
  count_calls(floor_after.claim_ms.size() + floor_after.refused);
  std::printf("  load average %s\n", load_average().c_str());
  std::fflush(stdout);
  int failed = floor_before.failed + claims.failed + floor_after.failed;
  if (failed || claims.claim_ms.empty() || floor_before.claim_ms.empty() ||
      floor_after.claim_ms.empty()) {
    std::fprintf(stderr, "bench_budgets: %d controllers failed, %zu claims granted\n", failed,
                 claims.claim_ms.size());
    return 1;
  }
  Totals floor = floor_before;
  floor.claim_ms.insert(floor.claim_ms.end(), floor_after.claim_ms.begin(),
                        floor_after.claim_ms.end());
  std::sort(floor.claim_ms.begin(), floor.claim_ms.end());
  const double floor_rate = static_cast<double>(floor.claim_ms.size()) / (2.0 * seconds);
  const double rate = static_cast<double>(claims.claim_ms.size()) / seconds;
  std::printf(
      "ratios to the floor (both floor phases pooled: %.1f claims per second, p50 %.2f ms, p99 "
      "%.2f ms):\n  claims per second: floor / fabgate %.2fx\n  time to claim: fabgate / floor "
      "p50 %.2fx  p99 %.2fx\n",
      floor_rate, at(floor.claim_ms, 0.5), at(floor.claim_ms, 0.99), floor_rate / rate,
      at(claims.claim_ms, 0.5) / at(floor.claim_ms, 0.5),
      at(claims.claim_ms, 0.99) / at(floor.claim_ms, 0.99));
  std::fflush(stdout);
  Database before_changes = database_of(endpoints.front()), after_changes = before_changes;
  std::size_t changes_done = 0;
  if (changes > 0) {
    Totals cost =
        run_phase(Phase::changes, controllers, endpoints, 0, changes, hold_ms, results.path());
    if (cost.failed || cost.wall_ms <= 0) {
      std::fprintf(stderr, "bench_budgets: phase 2: %d controllers failed\n", cost.failed);
      return 1;
    }
    std::printf(
        "phase 2: %d changes per controller, each holding its claim %d ms\n"
        "  coordinating %.1f ms of %.1f ms wall per change: %.2f %% of a change's wall "
        "time (a ratio to the change itself; target under 5 %%)\n  load average %s\n",
        changes, hold_ms, cost.coordinating_ms / (controllers * changes),
        cost.wall_ms / (controllers * changes), 100.0 * cost.coordinating_ms / cost.wall_ms,
        load_average().c_str());
    after_changes = database_of(endpoints.front());
    changes_done = static_cast<std::size_t>(controllers) * changes;
  }
  // What the ledger's runs left in etcd (phase 1 and phase 2, not the floor's): each claim
  // attempt and release is a few revisions, and every revision keeps its keys' old values
  // until compaction (etcd's database only grows without it). Then what compaction leaves.
  const std::size_t ledger_runs =
      claims.claim_ms.size() + static_cast<std::size_t>(claims.refused) + changes_done;
  const double revisions = (after_ledger.revision - before_ledger.revision) +
                           (after_changes.revision - before_changes.revision);
  const double bytes = (after_ledger.in_use_bytes - before_ledger.in_use_bytes) +
                       (after_changes.in_use_bytes - before_changes.in_use_bytes);
  const Database before_compaction = database_of(endpoints.front());
  print_database("after every phase", before_compaction);
  std::printf(
      "  the ledger's runs (phases 1 and 2, %zu): %.2f revisions and %.0f bytes of database in "
      "use per run, until compacted\n",
      ledger_runs, revisions / std::max<double>(ledger_runs, 1),
      bytes / std::max<double>(ledger_runs, 1));
  compact_and_defragment(endpoints, before_compaction.revision);
  const Database after = database_of(endpoints.front());
  print_database("compacted to its current revision and defragmented", after);
  std::printf("  left after compaction: %.0f bytes in use over the start's, all phases together\n",
              after.in_use_bytes - database_at_start.in_use_bytes);
  return 0;
}
