// Latency of the etcd adapter's calls against a three-member etcd cluster on 127.0.0.1 (the
// Debian etcd 3.4, data in a temp folder): N sequential puts, N transactions guarded by the
// key's mod_revision, N create-if-absent transactions on fresh keys. Prints p50, p90, p99 and
// the maximum of each. Usage: bench_etcd [N]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/adapters/etcd/etcd_cluster.h"

namespace {

using namespace fabgate::etcd;
using namespace fabgate::etcd::testing;

double at(const std::vector<double>& sorted, double p) {
  return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1))];
}

void report(const char* name, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  std::printf("%-28s n=%zu  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n", name, ms.size(),
              at(ms, 0.5), at(ms, 0.9), at(ms, 0.99), ms.back());
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  if (n < 1) n = 1000;
  if (!std::filesystem::exists(kEtcd)) {
    std::fprintf(stderr, "bench_etcd: %s is missing (scripts/bootstrap --tests)\n", kEtcd);
    return 2;
  }
  Cluster cluster(3);
  if (!cluster.ready()) {
    std::fprintf(stderr, "bench_etcd: the cluster did not form:\n%s\n", cluster.log(0).c_str());
    return 1;
  }
  auto client = open_client(cluster.endpoints(), 5s);
  for (int i = 0; i < 50; ++i) (void)client.put("bench/warm", std::to_string(i));

  std::vector<double> put_ms, guarded_ms, create_ms;
  std::int64_t revision = 0;
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto put = client.put("bench/put", std::to_string(i));
    put_ms.push_back(since(start));
    if (!put) {
      std::fprintf(stderr, "bench_etcd: put: %s\n", put.error().message.c_str());
      return 1;
    }
    revision = put->revision;
  }
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto txn = client.txn({Compare::mod_revision_is("bench/put", revision)},
                          {TxnOp::put("bench/put", std::to_string(i))});
    guarded_ms.push_back(since(start));
    if (!txn || !txn->succeeded) {
      std::fprintf(stderr, "bench_etcd: guarded txn failed at %d\n", i);
      return 1;
    }
    revision = txn->revision;
  }
  for (int i = 0; i < n; ++i) {
    std::string key = "bench/lock/" + std::to_string(i);
    auto start = std::chrono::steady_clock::now();
    auto txn = client.txn({Compare::absent(key)}, {TxnOp::put(key, "holder")});
    create_ms.push_back(since(start));
    if (!txn || !txn->succeeded) {
      std::fprintf(stderr, "bench_etcd: create-if-absent txn failed at %d\n", i);
      return 1;
    }
  }
  std::printf("etcd %s, 3 members on 127.0.0.1, one client, sequential calls\n",
              "3.4 (Debian etcd-server)");
  report("put", put_ms);
  report("txn (mod_revision guard)", guarded_ms);
  report("txn (create if absent)", create_ms);
  return 0;
}
