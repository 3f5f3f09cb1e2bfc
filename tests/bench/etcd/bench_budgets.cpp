// Redundancy budgets at fleet scale (issue 32): C controller processes contend for the budgets
// of a simulated fabric of 2,000 devices (50 pods of 4 spines and 36 leaves; at most 1 spine
// and 25 % of the leaves of a pod in change at once) against a three-member etcd 3.4 cluster on
// 127.0.0.1. Each controller does what a run's budgets gate does, through the same code
// (BudgetLedger): take a lease, claim the one device its change targets (the queue check, the
// group read and the guarded transaction), then release and revoke.
//
// Phase 1, throughput: every controller claims and releases back to back for S seconds, each
// claim for a random device: claims per second, p50/p99/max time to claim (lease + claim, as
// the gate spends it), and how many claims were refused over budget or lost every race.
// Phase 2, cost inside a change: every controller runs K changes that each hold their claim
// for H milliseconds while a keepalive thread renews the lease every third of its TTL, as a
// run does; the share of each change's wall time spent talking to etcd.
//
// Not a test: scripts/bench-budgets builds and runs it; docs/benchmarks.md and
// docs/coordination.md record its figures.
// Usage: bench_budgets [controllers=20] [seconds=15] [changes=3] [hold_ms=5000]

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gates/coordination/claims.h"
#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace fabgate;
using namespace fabgate::etcd::testing;
using Clock = std::chrono::steady_clock;

constexpr int kPods = 50;
constexpr int kSpinesPerPod = 4;
constexpr int kLeavesPerPod = 36;
constexpr const char* kPrefix = "/fabgate/bench";

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The demand of a change on one random device of the simulated fabric.
coordination::Demand random_demand(std::mt19937& random) {
  int pod = std::uniform_int_distribution<int>(0, kPods - 1)(random);
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
  (void)ledger.release(run_id);
  (void)client.revoke(lease->id);
  tally.coordinating_ms += claim_ms + keepalive_ms + ms_since(release);
  return true;
}

// A controller process: writes its tally to `out` (one number per line, claim times last).
void controller(int index, const std::vector<std::string>& endpoints, int seconds, int changes,
                int hold_ms, const std::string& out) {
  auto client = open_client(endpoints, 5s);
  coordination::BudgetLedger ledger(client, kPrefix);
  std::mt19937 random(1000 + index);
  Tally throughput, cost;
  int serial = 0;
  auto until = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < until)
    claim_once(client, ledger, "c" + std::to_string(index) + "-" + std::to_string(++serial),
               random_demand(random), throughput, 0);
  for (int change = 0; change < changes; ++change) {
    auto start = Clock::now();
    // A run refused by the budget is retried with another change, as CI would queue another
    // job; its failed attempts count as coordination time.
    while (!claim_once(client, ledger, "c" + std::to_string(index) + "-" + std::to_string(++serial),
                       random_demand(random), cost, hold_ms)) {
    }
    cost.wall_ms += ms_since(start);
  }
  std::ofstream file(out);
  file << throughput.refused << "\n"
       << throughput.lost << "\n"
       << cost.coordinating_ms << "\n"
       << cost.wall_ms << "\n"
       << throughput.claim_ms.size() << "\n";
  for (double ms : throughput.claim_ms) file << ms << "\n";
}

double at(const std::vector<double>& sorted, double p) {
  return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  int controllers = argc > 1 ? std::atoi(argv[1]) : 20;
  int seconds = argc > 2 ? std::atoi(argv[2]) : 15;
  int changes = argc > 3 ? std::atoi(argv[3]) : 3;
  int hold_ms = argc > 4 ? std::atoi(argv[4]) : 5000;
  if (controllers < 1 || seconds < 1 || changes < 0 || hold_ms < 0) {
    std::fprintf(stderr, "usage: bench_budgets [controllers] [seconds] [changes] [hold_ms]\n");
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
  std::vector<pid_t> children;
  for (int i = 0; i < controllers; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int code = 0;
      try {
        controller(i, cluster.endpoints(), seconds, changes, hold_ms,
                   results.path() + "/" + std::to_string(i));
      } catch (const std::exception& error) {
        std::fprintf(stderr, "controller %d: %s\n", i, error.what());
        code = 1;
      }
      ::_exit(code);  // never the parent's destructors: the cluster is the parent's
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::vector<double> claim_ms;
  int refused = 0, lost = 0;
  double coordinating_ms = 0, wall_ms = 0;
  for (int i = 0; i < controllers; ++i) {
    std::ifstream in(results.path() + "/" + std::to_string(i));
    int r = 0, l = 0;
    double c = 0, w = 0;
    std::size_t n = 0;
    if (!(in >> r >> l >> c >> w >> n)) continue;
    refused += r;
    lost += l;
    coordinating_ms += c;
    wall_ms += w;
    for (std::size_t k = 0; k < n; ++k) {
      double ms = 0;
      if (in >> ms) claim_ms.push_back(ms);
    }
  }
  if (failed || claim_ms.empty()) {
    std::fprintf(stderr, "bench_budgets: %d controllers failed, %zu claims granted\n", failed,
                 claim_ms.size());
    return 1;
  }
  std::sort(claim_ms.begin(), claim_ms.end());
  std::printf("fabric: %d devices (%d pods x %d spines + %d leaves), 3 etcd members on 127.0.0.1\n",
              kPods * (kSpinesPerPod + kLeavesPerPod), kPods, kSpinesPerPod, kLeavesPerPod);
  std::printf("phase 1: %d controllers claiming for %d s\n", controllers, seconds);
  std::printf(
      "  claims granted %zu (%.1f per second), refused over budget or queued %d, lost "
      "every race or store failure %d\n",
      claim_ms.size(), static_cast<double>(claim_ms.size()) / seconds, refused, lost);
  std::printf("  time to claim (lease + claim): p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
              at(claim_ms, 0.5), at(claim_ms, 0.99), claim_ms.back());
  if (changes > 0)
    std::printf(
        "phase 2: %d changes per controller, each holding its claim %d ms\n"
        "  coordinating %.1f ms of %.1f ms wall per change: %.2f %% of a change's wall "
        "time\n",
        changes, hold_ms, coordinating_ms / (controllers * changes),
        wall_ms / (controllers * changes), 100.0 * coordinating_ms / wall_ms);
  return 0;
}
