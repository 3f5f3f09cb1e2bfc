// Latency of the etcd adapter's calls against a three-member etcd cluster on 127.0.0.1 (the
// Debian etcd 3.4, data in a temp folder), beside a floor measured in the same run against the
// same member: N sequential puts, N transactions guarded by the key's mod_revision, N
// create-if-absent transactions on fresh keys, each made three ways and interleaved call by
// call (the order rotating), so all three see the same load:
//   fabgate   EtcdClient, as the coordination gates call it (libcurl, a new connection per call,
//             the answer parsed and checked);
//   floor     the same JSON body over one kept-alive HTTP/1.1 connection, written and read with
//             plain sockets (plain_http.h): what any client of etcd's HTTP/JSON gateway pays;
//   fresh     the floor with a new TCP connection per call, to show what a connection costs.
// Prints p50, p90, p99 and the maximum of each, and the ratios to the floor.
// Usage: bench_etcd [N]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/bench/etcd/plain_http.h"

namespace {

using namespace fabgate::etcd;
using namespace fabgate::etcd::testing;
using fabgate::etcd::bench::PlainHttp;

double at(const std::vector<double>& sorted, double p) {
  return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1))];
}

struct Figures {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

Figures report(const std::string& name, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  Figures f{at(ms, 0.5), at(ms, 0.9), at(ms, 0.99), ms.back()};
  std::printf("%-38s n=%zu  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n", name.c_str(),
              ms.size(), f.p50, f.p90, f.p99, f.max);
  return f;
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string put_body(const std::string& key, const std::string& value) {
  return R"({"key":")" + base64_encode(key) + R"(","value":")" + base64_encode(value) + R"("})";
}

std::string txn_body(const std::string& compare, const std::string& key, const std::string& value) {
  return R"({"compare":[)" + compare + R"(],"success":[{"request_put":{"key":")" +
         base64_encode(key) + R"(","value":")" + base64_encode(value) + R"("}}],"failure":[]})";
}

std::string mod_revision_is(const std::string& key, std::int64_t revision) {
  return R"({"key":")" + base64_encode(key) +
         R"(","target":"MOD","result":"EQUAL","mod_revision":")" + std::to_string(revision) +
         R"("})";
}

std::string absent(const std::string& key) {
  return R"({"key":")" + base64_encode(key) +
         R"(","target":"CREATE","result":"EQUAL","create_revision":"0"})";
}

// One way of making the three kinds of call; each keeps its own keys and revisions.
struct Way {
  std::string name;
  std::function<std::int64_t(const std::string&, const std::string&)> put;  // -> revision
  // -> revision after the txn, or -1 when the compare did not hold
  std::function<std::int64_t(const std::string&, std::int64_t, const std::string&)> guarded;
  std::function<bool(const std::string&)> create;
  std::int64_t revision = 0;
  std::vector<double> put_ms, guarded_ms, create_ms;
};

Way plain_way(const std::string& name, const std::string& endpoint, bool keep_alive) {
  auto http = std::make_shared<PlainHttp>(endpoint, keep_alive);
  Way way;
  way.name = name;
  way.put = [http](const std::string& key, const std::string& value) {
    return bench::answer_revision(http->post("/v3/kv/put", put_body(key, value)));
  };
  way.guarded = [http](const std::string& key, std::int64_t revision, const std::string& value) {
    auto answer = http->post("/v3/kv/txn", txn_body(mod_revision_is(key, revision), key, value));
    return bench::answer_succeeded(answer) ? bench::answer_revision(answer) : -1;
  };
  way.create = [http](const std::string& key) {
    return bench::answer_succeeded(http->post("/v3/kv/txn", txn_body(absent(key), key, "holder")));
  };
  return way;
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
  try {
    auto client = open_client(cluster.endpoints(), 5s);
    for (int i = 0; i < 50; ++i) (void)client.put("bench/warm", std::to_string(i));
    // Every way talks to the member the adapter settled on (a follower forwards writes to the
    // leader, so the member matters).
    const std::string endpoint = client.current_endpoint();

    std::vector<Way> ways;
    {
      Way way;
      way.name = "fabgate";
      way.put = [&client](const std::string& key, const std::string& value) -> std::int64_t {
        auto put = client.put(key, value);
        if (!put) throw std::runtime_error("put: " + put.error().message);
        return put->revision;
      };
      way.guarded = [&client](const std::string& key, std::int64_t revision,
                              const std::string& value) -> std::int64_t {
        auto txn = client.txn({Compare::mod_revision_is(key, revision)}, {TxnOp::put(key, value)});
        if (!txn) throw std::runtime_error("txn: " + txn.error().message);
        return txn->succeeded ? txn->revision : -1;
      };
      way.create = [&client](const std::string& key) {
        auto txn = client.txn({Compare::absent(key)}, {TxnOp::put(key, "holder")});
        if (!txn) throw std::runtime_error("txn: " + txn.error().message);
        return txn->succeeded;
      };
      ways.push_back(std::move(way));
    }
    ways.push_back(plain_way("floor", endpoint, true));
    ways.push_back(plain_way("fresh", endpoint, false));
    for (auto& way : ways)  // warm each way's connection and code
      for (int i = 0; i < 20; ++i) (void)way.put("bench/" + way.name + "/warm", std::to_string(i));

    using Clock = std::chrono::steady_clock;
    const std::size_t count = ways.size();
    for (int i = 0; i < n; ++i)
      for (std::size_t k = 0; k < count; ++k) {
        Way& way = ways[(i + k) % count];
        auto start = Clock::now();
        way.revision = way.put("bench/" + way.name + "/put", std::to_string(i));
        way.put_ms.push_back(since(start));
        if (way.revision <= 0) throw std::runtime_error(way.name + ": put without a revision");
      }
    for (int i = 0; i < n; ++i)
      for (std::size_t k = 0; k < count; ++k) {
        Way& way = ways[(i + k) % count];
        auto start = Clock::now();
        way.revision = way.guarded("bench/" + way.name + "/put", way.revision, std::to_string(i));
        way.guarded_ms.push_back(since(start));
        if (way.revision <= 0)
          throw std::runtime_error(way.name + ": guarded txn failed at " + std::to_string(i));
      }
    for (int i = 0; i < n; ++i)
      for (std::size_t k = 0; k < count; ++k) {
        Way& way = ways[(i + k) % count];
        auto start = Clock::now();
        bool created = way.create("bench/" + way.name + "/lock/" + std::to_string(i));
        way.create_ms.push_back(since(start));
        if (!created)
          throw std::runtime_error(way.name + ": create-if-absent txn failed at " +
                                   std::to_string(i));
      }

    std::printf(
        "etcd 3.4 (Debian etcd-server), 3 members on 127.0.0.1, every call to %s, one client "
        "at a time; fabgate, floor and fresh interleaved call by call\n",
        endpoint.c_str());
    struct Kind {
      const char* name;
      std::vector<double> Way::*ms;
    };
    for (Kind kind : {Kind{"put", &Way::put_ms}, Kind{"txn (mod_revision guard)", &Way::guarded_ms},
                      Kind{"txn (create if absent)", &Way::create_ms}}) {
      Figures floor{}, fresh{}, fabgate{};
      for (auto& way : ways) {
        Figures f = report(std::string(kind.name) + ", " + way.name, way.*kind.ms);
        (way.name == "floor" ? floor : way.name == "fresh" ? fresh : fabgate) = f;
      }
      std::printf(
          "%-38s fabgate / floor: p50 %.2fx  p99 %.2fx;  fresh / floor: p50 %.2fx  p99 %.2fx\n",
          (std::string(kind.name) + ", ratios").c_str(), fabgate.p50 / floor.p50,
          fabgate.p99 / floor.p99, fresh.p50 / floor.p50, fresh.p99 / floor.p99);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_etcd: %s\n", error.what());
    return 1;
  }
  return 0;
}
