// bench_gnmi_aft get ROUTES        one gNMI Get of the AFT from a real fabgate-gnmid on loopback
//                                  serving ROUTES synthetic IPv4 routes: wall time, reply size
//                                  and the client's peak RSS (the proto, the JSON text).
// bench_gnmi_aft snapshot ROUTES   the same table through the snapshot's routes source
//                                  (collect_gnmi_source(): the Get, the facts, the evidence's
//                                  copy of the reply) and its commands.jsonl line serialised:
//                                  wall time, routes in the facts and the peak RSS.
// bench_gnmi_aft tables ROUTES     the same source as `fabgate snapshot` reads it
//                                  (RoutesFrom::tables: the AFT read from the reply's text
//                                  straight into compact route tables, no record of the reply):
//                                  wall time, routes in the tables and the peak RSS.
// bench_gnmi_aft gated ROUTES      the same source as a gated run reads it
//                                  (RoutesFrom::tables_keeping_reply: the tables as above, and
//                                  the reply kept as JSON for commands.jsonl) and that line
//                                  serialised: wall time, routes in the tables and the peak RSS.
// bench_gnmi_aft floor ROUTES      the floor (issue 33): the same Get from the same target by
//                                  the plainest means, gRPC's generated gNMI stub (no fabgate
//                                  client), every update's JSON_IETF parsed with simdjson's DOM
//                                  and every ipv4-entry read into a compact table (prefix,
//                                  protocol, its next-hop group's addresses), counted against
//                                  ROUTES. Nothing written back: no facts document, no evidence.
// Each mode in its own process, so the peak is that mode's alone; the target's own peak (it
// builds the table as a JSON document and serialises it) is printed from RUSAGE_CHILDREN
// once it has exited. Issue 30, item 8; figures in docs/benchmarks.md.

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <simdjson.h>

#include "adapters/gnmi/client.h"
#include "adapters/gnmi/proto/gnmi.grpc.pb.h"
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
  fabgate::gnmi::GnmiResult<std::vector<fabgate::gnmi::GnmiNotification>> get(
      const std::string& device, const std::vector<std::string>& paths,
      fabgate::gnmi::Encoding encoding, Duration deadline) override {
    fabgate::gnmi::GnmiClientOptions options;
    options.device = device;
    options.address = address_;
    options.tls = false;
    auto client = fabgate::gnmi::connect(options);
    if (!client) return client.error();
    return client.value()->get(paths, encoding, deadline);
  }

 private:
  std::string address_;
};

int bench_get(const std::string& address) {
  fabgate::gnmi::GnmiClientOptions options;
  options.device = "aft-node";
  options.address = address;
  options.tls = false;
  auto client = fabgate::gnmi::connect(options);
  if (!client) {
    std::fprintf(stderr, "%s\n", client.error().message.c_str());
    return 1;
  }
  const long before = peak_rss_kib(RUSAGE_SELF);
  const auto start = Clock::now();
  auto reply = client.value()->get({kAfts}, fabgate::gnmi::Encoding::json_ietf, Duration(600'000));
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

int bench_snapshot(const std::string& address, snapshot::RoutesFrom from) {
  const bool tables = from != snapshot::RoutesFrom::tree;
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
  auto result = snapshot::collect_gnmi_source(
      "aft-node", profile->sources.at(0), &fetcher, from);
  const double to_facts = seconds_since(start);
  if (!result.facts) {
    std::fprintf(stderr, "%s\n", result.reason.c_str());
    return 1;
  }
  if (from == snapshot::RoutesFrom::tables_keeping_reply) {
    auto found = result.route_tables.find("ipv4");
    const double to_tables = seconds_since(start);
    const std::size_t evidence = snapshot::evidence_entry(result.record).dump().size();
    std::printf("gated: %.2f s to the tables, %.2f s with the commands.jsonl line (%.1f MiB), %zu "
                "routes in them, peak RSS %.1f MiB (%.1f MiB before)\n",
                to_tables, seconds_since(start), static_cast<double>(evidence) / (1 << 20),
                found == result.route_tables.end() ? 0 : found->second.size(),
                mib(peak_rss_kib(RUSAGE_SELF)), mib(before));
    return found == result.route_tables.end() ? 1 : 0;
  }
  if (tables) {
    auto found = result.route_tables.find("ipv4");
    std::printf("tables: %.2f s to the tables, %zu routes in them, peak RSS %.1f MiB (%.1f MiB "
                "before)\n",
                to_facts, found == result.route_tables.end() ? 0 : found->second.size(),
                mib(peak_rss_kib(RUSAGE_SELF)), mib(before));
    return found == result.route_tables.end() ? 1 : 0;
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

using Element = std::optional<simdjson::dom::element>;

bool named(std::string_view key, std::string_view name) {
  return key == name || (key.size() > name.size() && key.ends_with(name) &&
                         key[key.size() - name.size() - 1] == ':');
}

// A member of a JSON_IETF object by its name, with or without a module prefix.
Element member(Element object, std::string_view name) {
  simdjson::dom::object fields;
  if (!object || object->get_object().get(fields)) return std::nullopt;
  for (auto field : fields)
    if (named(field.key, name)) return field.value;
  return std::nullopt;
}

// The first object member named `name` at any depth (arrays are not searched).
Element find(Element at, std::string_view name) {
  simdjson::dom::object fields;
  if (!at || at->get_object().get(fields)) return std::nullopt;
  for (auto field : fields)
    if (named(field.key, name)) return field.value;
  for (auto field : fields)
    if (auto found = find(field.value, name)) return found;
  return std::nullopt;
}

// The elements of a list, none when it is not one.
std::vector<simdjson::dom::element> items(Element list) {
  std::vector<simdjson::dom::element> out;
  simdjson::dom::array array;
  if (!list || list->get_array().get(array)) return out;
  out.reserve(array.size());
  for (auto item : array) out.push_back(item);
  return out;
}

std::string_view text(Element value) {
  std::string_view out;
  if (!value || value->get_string().get(out)) return {};
  return out;
}

// A key leaf of the AFT: a number, or a number written as a string.
std::uint64_t number(Element value) {
  std::uint64_t out = 0;
  if (!value) return 0;
  if (!value->get_uint64().get(out)) return out;
  return std::strtoull(std::string(text(value)).c_str(), nullptr, 10);
}

struct FloorRoute {
  std::string_view prefix;
  std::string_view protocol;
  const std::vector<std::string_view>* nexthops;
};

int bench_floor(const std::string& address, std::size_t expected) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(
      static_cast<int>(fabgate::gnmi::kDefaultMaxReceiveMessageSize));
  auto stub = ::gnmi::gNMI::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments));
  ::gnmi::GetRequest request;
  request.set_encoding(::gnmi::JSON_IETF);
  auto* path = request.add_path();
  path->add_elem()->set_name("network-instances");
  auto* instance = path->add_elem();
  instance->set_name("network-instance");
  (*instance->mutable_key())["name"] = "default";
  path->add_elem()->set_name("afts");
  const long before = peak_rss_kib(RUSAGE_SELF);
  const auto start = Clock::now();
  ::gnmi::GetResponse reply;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(600));
  grpc::Status status = stub->Get(&context, request, &reply);
  const double get_wall = seconds_since(start);
  if (!status.ok()) {
    std::fprintf(stderr, "floor: Get: %s\n", status.error_message().c_str());
    return 1;
  }
  std::size_t bytes = 0, routes = 0;
  simdjson::dom::parser parser;
  std::vector<FloorRoute> table;
  std::unordered_map<std::uint64_t, std::string_view> hops;
  std::unordered_map<std::uint64_t, std::vector<std::string_view>> groups;
  static const std::vector<std::string_view> kNone;
  for (const auto& notification : reply.notification())
    for (const auto& update : notification.update()) {
      const std::string& json = update.val().json_ietf_val();
      bytes += json.size();
      simdjson::dom::element document;
      if (auto error = parser.parse(json).get(document)) {
        std::fprintf(stderr, "floor: %s\n", simdjson::error_message(error));
        return 1;
      }
      // The parser's document lives until the next parse: one update holds the whole AFT.
      // items() copies the element handles of a list (8 bytes each), not the values.
      for (auto hop : items(find(find(document, "next-hops"), "next-hop")))
        hops[number(member(hop, "index"))] = text(member(member(hop, "state"), "ip-address"));
      for (auto group : items(find(find(document, "next-hop-groups"), "next-hop-group"))) {
        auto& members = groups[number(member(group, "id"))];
        for (auto hop : items(member(member(group, "next-hops"), "next-hop")))
          members.push_back(hops[number(member(hop, "index"))]);
      }
      for (auto entry : items(find(find(document, "ipv4-unicast"), "ipv4-entry"))) {
        auto state = member(entry, "state");
        auto group = groups.find(number(member(state, "next-hop-group")));
        table.push_back({text(member(entry, "prefix")), text(member(state, "origin-protocol")),
                         group == groups.end() ? &kNone : &group->second});
      }
      routes += table.size();
      std::size_t with_hops = 0;
      for (const auto& route : table)
        with_hops += !route.nexthops->empty() && !route.prefix.empty();
      if (with_hops != table.size()) {
        std::fprintf(stderr, "floor: %zu of %zu entries without a prefix or next hops\n",
                     table.size() - with_hops, table.size());
        return 1;
      }
      table.clear();
    }
  const double wall = seconds_since(start);
  std::printf(
      "floor: %.2f s (the Get %.2f s, simdjson and the table %.2f s), reply %.1f MiB of "
      "JSON_IETF, %zu routes read, peak RSS %.1f MiB (%.1f MiB before)\n",
      wall, get_wall, wall - get_wall, static_cast<double>(bytes) / (1 << 20), routes,
      mib(peak_rss_kib(RUSAGE_SELF)), mib(before));
  if (routes != expected) {
    std::fprintf(stderr, "floor: %zu routes read, %zu served\n", routes, expected);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "get" && std::string(argv[1]) != "snapshot" &&
                    std::string(argv[1]) != "tables" && std::string(argv[1]) != "gated" &&
                    std::string(argv[1]) != "floor")) {
    std::fprintf(stderr, "usage: bench_gnmi_aft get|snapshot|tables|gated|floor ROUTES\n");
    return 2;
  }
  const std::string mode = argv[1];
  const std::string routes = argv[2];
  fabgate::gnmi::testing::TempDir dir;
  int status = 1;
  {
    fabgate::gnmi::testing::TargetProcess target;
    auto line =
        target.start({fabgate::gnmi::testing::gnmid_path(), "--listen", "127.0.0.1:0",
                      "--insecure-plaintext", "--no-auth", "--hostname", "aft-node", "--vtysh",
                      "/nonexistent/vtysh", "--debug-synthetic-ipv4-routes", routes},
                     dir.file("gnmid.stderr"));
    if (!line) {
      std::fprintf(stderr, "fabgate-gnmid did not start: %s\n", target.failure.c_str());
      return 1;
    }
    std::printf("%s routes, fabgate-gnmid on 127.0.0.1:%s\n", routes.c_str(), line->c_str());
    const std::string address = "127.0.0.1:" + *line;
    status = mode == "get"     ? bench_get(address)
             : mode == "floor" ? bench_floor(address, std::strtoull(routes.c_str(), nullptr, 10))
             : mode == "tables"
                 ? bench_snapshot(address, fabgate::snapshot::RoutesFrom::tables)
             : mode == "gated"
                 ? bench_snapshot(address, fabgate::snapshot::RoutesFrom::tables_keeping_reply)
                 : bench_snapshot(address, fabgate::snapshot::RoutesFrom::tree);
    target.terminate();
  }
  std::printf("bench_gnmi_aft CPU %.2f s; fabgate-gnmid CPU %.2f s, peak RSS %.1f MiB\n",
              cpu_seconds(RUSAGE_SELF), cpu_seconds(RUSAGE_CHILDREN),
              mib(peak_rss_kib(RUSAGE_CHILDREN)));
  return status;
}
