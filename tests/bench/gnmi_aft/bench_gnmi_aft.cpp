// bench_gnmi_aft get ROUTES        one gNMI Get of the AFT from a real fabgate-gnmid on loopback
//                                  serving ROUTES synthetic IPv4 routes: wall time, reply size
//                                  and the client's peak RSS (the proto, the JSON text).
// bench_gnmi_aft snapshot ROUTES   the same table through the snapshot's routes source
//                                  (collect_gnmi_source(): the Get, the facts, the evidence's
//                                  copy of the reply) and its commands.jsonl line serialised:
//                                  wall time, routes in the facts and the peak RSS.
// Each mode in its own process, so the peak is that mode's alone; the target's own peak (it
// builds the table as a JSON document and serialises it) is printed from RUSAGE_CHILDREN
// once it has exited. Issue 30, item 8; figures in docs/benchmarks.md.

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "adapters/gnmi/client.h"
#include "gates/snapshot/collector_profile.h"
#include "gates/snapshot/gnmi_source.h"
#include "tests/adapters/gnmi/gnmid_harness.h"

namespace {

using namespace fabgate;
using Clock = std::chrono::steady_clock;

constexpr const char* kAfts = "/network-instances/network-instance[name=default]/afts";

double mib(long kib) {
  return static_cast<double>(kib) / 1024.0;
}

long peak_rss_kib(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return usage.ru_maxrss;
}

// User + system CPU seconds of this process (RUSAGE_SELF) or its reaped children.
double cpu_seconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The snapshot's gNMI seam with a real client, as pipeline::EndpointGnmiFetcher does it (one
// fresh channel per Get, the default receive limit); kept here so the benchmark does not link
// the whole pipeline.
class LoopbackFetcher final : public snapshot::GnmiFetcher {
 public:
  explicit LoopbackFetcher(std::string address) : address_(std::move(address)) {}
  gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> get(const std::string& device,
                                                            const std::vector<std::string>& paths,
                                                            gnmi::Encoding encoding,
                                                            Duration deadline) override {
    gnmi::GnmiClientOptions options;
    options.device = device;
    options.address = address_;
    options.tls = false;
    auto client = gnmi::connect(options);
    if (!client) return client.error();
    return client.value()->get(paths, encoding, deadline);
  }

 private:
  std::string address_;
};

int bench_get(const std::string& address) {
  gnmi::GnmiClientOptions options;
  options.device = "aft-node";
  options.address = address;
  options.tls = false;
  auto client = gnmi::connect(options);
  if (!client) {
    std::fprintf(stderr, "%s\n", client.error().message.c_str());
    return 1;
  }
  const long before = peak_rss_kib(RUSAGE_SELF);
  const auto start = Clock::now();
  auto reply = client.value()->get({kAfts}, gnmi::Encoding::json_ietf, Duration(600'000));
  const double wall = seconds_since(start);
  if (!reply) {
    std::fprintf(stderr, "%s\n", reply.error().message.c_str());
    return 1;
  }
  std::size_t bytes = 0;
  for (const auto& notification : *reply)
    for (const auto& update : notification.updates) bytes += update.json.size();
  std::printf("get: %.2f s, reply %.1f MiB of JSON_IETF, peak RSS %.1f MiB (%.1f MiB before)\n",
              wall, static_cast<double>(bytes) / (1 << 20), mib(peak_rss_kib(RUSAGE_SELF)),
              mib(before));
  return 0;
}

int bench_snapshot(const std::string& address) {
  auto profile = snapshot::parse_collector_profile(
      "platform: gnmi-node\nsources:\n  - category: routes\n    timeout: 600s\n"
      "    gnmi: {paths: [\"" +
          std::string(kAfts) + "\"]}\n",
      "policies/collectors/gnmi-node.yaml");
  if (!profile) {
    std::fprintf(stderr, "%s\n", profile.error().message.c_str());
    return 1;
  }
  LoopbackFetcher fetcher(address);
  const long before = peak_rss_kib(RUSAGE_SELF);
  const auto start = Clock::now();
  auto result = snapshot::collect_gnmi_source("aft-node", profile->sources.at(0), &fetcher);
  const double to_facts = seconds_since(start);
  if (!result.facts) {
    std::fprintf(stderr, "%s\n", result.reason.c_str());
    return 1;
  }
  // What the snapshotter then writes to commands.jsonl for this Get.
  const std::size_t evidence = snapshot::evidence_entry(result.record).dump().size();
  const double wall = seconds_since(start);
  std::printf(
      "snapshot: %.2f s to the facts, %.2f s with the commands.jsonl line (%.1f MiB), %zu routes "
      "in the facts, peak RSS %.1f MiB (%.1f MiB before)\n",
      to_facts, wall, static_cast<double>(evidence) / (1 << 20), (*result.facts)["ipv4"].size(),
      mib(peak_rss_kib(RUSAGE_SELF)), mib(before));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "get" && std::string(argv[1]) != "snapshot")) {
    std::fprintf(stderr, "usage: bench_gnmi_aft get|snapshot ROUTES\n");
    return 2;
  }
  const std::string mode = argv[1];
  const std::string routes = argv[2];
  gnmi::testing::TempDir dir;
  int status = 1;
  {
    gnmi::testing::TargetProcess target;
    auto line =
        target.start({gnmi::testing::gnmid_path(), "--listen", "127.0.0.1:0",
                      "--insecure-plaintext", "--no-auth", "--hostname", "aft-node", "--vtysh",
                      "/nonexistent/vtysh", "--debug-synthetic-ipv4-routes", routes},
                     dir.file("gnmid.stderr"));
    if (!line) {
      std::fprintf(stderr, "fabgate-gnmid did not start: %s\n", target.failure.c_str());
      return 1;
    }
    std::printf("%s routes, fabgate-gnmid on 127.0.0.1:%s\n", routes.c_str(), line->c_str());
    const std::string address = "127.0.0.1:" + *line;
    status = mode == "get" ? bench_get(address) : bench_snapshot(address);
    target.terminate();
  }
  std::printf("bench_gnmi_aft CPU %.2f s; fabgate-gnmid CPU %.2f s, peak RSS %.1f MiB\n",
              cpu_seconds(RUSAGE_SELF), cpu_seconds(RUSAGE_CHILDREN),
              mib(peak_rss_kib(RUSAGE_CHILDREN)));
  return status;
}
