// bench_compare generate DIR   writes pre.json / post.json with 1,000,000 IPv4 and 200,000
//                              IPv6 routes, 1 % churn (deterministic seed), and truth.json
// bench_compare compare DIR    loads both snapshots as `fabgate diff` does (load_snapshot_pair:
//                              one file at a time, tables built on a second thread), compares
//                              them under the default rule set, checks added/removed/changed
//                              against truth.json and prints wall time of load, compare and both,
//                              CPU time, peak RSS and the load average. Run each in its own
//                              process so the peak is the comparison's alone.
// bench_compare parallel DIR   the same with the two files loaded on two threads at once (the
//                              way before): faster on an idle machine, more memory.
// bench_compare floor DIR      simdjson alone on both files, one after the other: reading each
//                              into a padded buffer and its On-Demand index (stage 1). The
//                              comparison is judged as a ratio to this floor.

#include <sys/resource.h>

#include <fstream>
#include <sstream>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <future>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <simdjson.h>
#include <nlohmann/json.hpp>

#include "adapters/core/time.h"
#include "gates/compare/default_rules.h"
#include "gates/compare/engine.h"

namespace {

using namespace fabgate;
using namespace fabgate::compare;

constexpr std::uint32_t kIpv4Routes = 1'000'000;
constexpr std::uint32_t kIpv6Routes = 200'000;
constexpr std::uint32_t kChurnPerMille = 10;  // 1 %: a third removed, a third changed, plus as
                                              // many added as removed and changed together / 2
constexpr std::uint64_t kSeed = 20261129;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

struct Truth {
  std::uint64_t added = 0, removed = 0, changed = 0;
};

enum class Fate : std::uint8_t { same, removed, changed };

void write_prefix(std::FILE* out, bool ipv6, std::uint32_t index) {
  if (!ipv6) {
    std::uint32_t address = 0x01000000u + index * 256u;  // distinct /24s from 1.0.0.0
    std::fprintf(out, "\"%u.%u.%u.%u/24\"", address >> 24, (address >> 16) & 255,
                 (address >> 8) & 255, address & 255);
  } else {
    std::fprintf(out, "\"2001:db8:%x:%x::/64\"", index >> 16, index & 0xffff);
  }
}

// One route. `variant` alters metric or next hops for a changed route.
void write_route(std::FILE* out, bool ipv6, std::uint32_t index, int variant, bool first) {
  static const char* kHops4[] = {"10.255.0.1", "10.255.0.3", "10.255.0.5", "10.255.0.7"};
  static const char* kHops6[] = {"fe80::1", "fe80::3", "fe80::5", "fe80::7"};
  const char** hops = ipv6 ? kHops6 : kHops4;
  std::uint32_t metric = 20 + index % 3;
  unsigned a = index % 4, b = (index + 1) % 4;
  if (variant == 1) metric += 100;
  if (variant == 2) b = (index + 2) % 4;
  std::fputs(first ? "\n    " : ",\n    ", out);
  std::fputs("{\"prefix\": ", out);
  write_prefix(out, ipv6, index);
  std::fprintf(out, ", \"protocol\": \"bgp\", \"metric\": %u, \"nexthops\": [\"%s\", \"%s\"]}",
               metric, hops[a], hops[b]);
}

void write_family(std::FILE* pre, std::FILE* post, bool ipv6, std::uint32_t count,
                  std::mt19937_64& random, Truth& truth) {
  std::vector<Fate> fate(count, Fate::same);
  std::uint32_t churn = count / 1000 * kChurnPerMille;
  std::uint32_t removed = churn / 3, changed = churn / 3, added = churn - removed - changed;
  std::vector<std::uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), random);
  for (std::uint32_t i = 0; i < removed; ++i) fate[order[i]] = Fate::removed;
  for (std::uint32_t i = removed; i < removed + changed; ++i) fate[order[i]] = Fate::changed;
  truth.removed += removed;
  truth.changed += changed;
  truth.added += added;

  // Collectors emit routes in their own order; shuffle so the loader must sort.
  std::shuffle(order.begin(), order.end(), random);
  bool first_pre = true, first_post = true;
  for (auto index : order) {
    write_route(pre, ipv6, index, 0, first_pre);
    first_pre = false;
    if (fate[index] == Fate::removed) continue;
    write_route(post, ipv6, index, fate[index] == Fate::changed ? 1 + int(index % 2) : 0,
                first_post);
    first_post = false;
  }
  for (std::uint32_t i = 0; i < added; ++i) write_route(post, ipv6, count + i, 0, first_post);
}

int generate(const std::string& dir) {
  File pre(std::fopen((dir + "/pre.json").c_str(), "w"));
  File post(std::fopen((dir + "/post.json").c_str(), "w"));
  if (!pre || !post) {
    std::fprintf(stderr, "bench_compare: cannot write to %s\n", dir.c_str());
    return 2;
  }
  std::string taken_at = format_utc(now_utc());
  for (std::FILE* out : {pre.get(), post.get()})
    std::fprintf(
        out,
        "{\"format\": \"fabgate.snapshot/1\", \"taken_at\": \"%s\", \"intent_commit\": \"\",\n"
        " \"devices\": {\"spine1\": {\n"
        "  \"identity\": {\"hostname\": \"spine1\", \"platform\": \"frr\", \"serial\": \"S1\"},\n"
        "  \"sources\": {\"routes\": {\"status\": \"ok\"}},\n"
        "  \"routes\": {\"ipv4\": [",
        taken_at.c_str());
  std::mt19937_64 random(kSeed);
  Truth truth;
  write_family(pre.get(), post.get(), false, kIpv4Routes, random, truth);
  for (std::FILE* out : {pre.get(), post.get()}) std::fputs("],\n  \"ipv6\": [", out);
  write_family(pre.get(), post.get(), true, kIpv6Routes, random, truth);
  for (std::FILE* out : {pre.get(), post.get()}) std::fputs("]}}}}\n", out);

  File truth_file(std::fopen((dir + "/truth.json").c_str(), "w"));
  std::fprintf(truth_file.get(), "{\"added\": %llu, \"removed\": %llu, \"changed\": %llu}\n",
               (unsigned long long)truth.added, (unsigned long long)truth.removed,
               (unsigned long long)truth.changed);
  std::printf(
      "generated %s/pre.json and post.json: %u IPv4 + %u IPv6 routes; truth: %llu added, "
      "%llu removed, %llu changed\n",
      dir.c_str(), kIpv4Routes, kIpv6Routes, (unsigned long long)truth.added,
      (unsigned long long)truth.removed, (unsigned long long)truth.changed);
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

long peak_rss_mib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;  // Linux reports KiB
}

double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The machine's load, printed with every figure: timings on a busy machine are inflated.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

int compare_files(const std::string& dir, bool parallel) {
  std::FILE* truth_in = std::fopen((dir + "/truth.json").c_str(), "r");
  if (!truth_in) {
    std::fprintf(stderr, "bench_compare: run 'generate %s' first\n", dir.c_str());
    return 2;
  }
  auto truth = nlohmann::json::parse(truth_in);
  std::fclose(truth_in);
  std::printf("load average before: %s\n", load_average().c_str());

  double cpu_start = cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  Result<SnapshotPair> pair = Error::internal("not loaded");
  if (parallel) {
    auto pre_future = std::async(std::launch::async, load_snapshot_file, dir + "/pre.json");
    auto post = load_snapshot_file(dir + "/post.json");
    auto pre = pre_future.get();
    if (!pre)
      pair = pre.error();
    else if (!post)
      pair = post.error();
    else
      pair = SnapshotPair{std::move(pre).value(), std::move(post).value()};
  } else {
    pair = load_snapshot_pair(dir + "/pre.json", dir + "/post.json");
  }
  if (!pair) {
    std::fprintf(stderr, "bench_compare: %s\n", pair.error().message.c_str());
    return 2;
  }
  double load_s = seconds_since(start);
  const Snapshot& pre = pair->pre;
  const Snapshot& post = pair->post;

  auto rules = load_rule_set(default_rule_set_text(), kDefaultRuleSetName);
  auto compare_start = std::chrono::steady_clock::now();
  CompareOptions options;
  options.max_age = Duration{0};  // the files may be older than 10 minutes: compare them anyway
  auto report = compare_snapshots(pre, post, {*rules}, {}, {}, options);
  double compare_s = seconds_since(compare_start);
  double total_s = seconds_since(start);
  double cpu_s = cpu_seconds() - cpu_start;

  // Exact counts straight from the merge-join, against the generator's ground truth.
  std::uint64_t added = 0, removed = 0, changed = 0;
  for (const char* family : {"ipv4", "ipv6"}) {
    const auto& a = pre.devices.at("spine1").routes.at(family);
    const auto& b = post.devices.at("spine1").routes.at(family);
    auto diff = diff_routes(a, b);
    added += diff.added;
    removed += diff.removed;
    changed += diff.changed;
  }
  bool exact =
      added == truth["added"] && removed == truth["removed"] && changed == truth["changed"];
  std::printf("routes: %llu added, %llu removed, %llu changed (truth %s) -> %s\n",
              (unsigned long long)added, (unsigned long long)removed, (unsigned long long)changed,
              truth.dump().c_str(), exact ? "exact" : "MISMATCH");
  for (const auto& result : report.results)
    std::printf("  %s %s: %s\n", std::string(to_string(result.verdict)).c_str(),
                result.path.c_str(), result.reason.c_str());
  std::printf(
      "load (%s): %.3f s\ncompare: %.3f s\nload + compare: %.3f s wall, %.3f s CPU\n"
      "peak RSS: %ld MiB\nload average after: %s\n",
      parallel ? "two files on two threads" : "one file at a time, tables on a second thread",
      load_s, compare_s, total_s, cpu_s, peak_rss_mib(), load_average().c_str());
  return exact ? 0 : 1;
}

// The floor under any loader built on simdjson, in the order `fabgate diff` works (one file
// after the other): reading each file into a padded buffer and simdjson's On-Demand index of it
// (stage 1), nothing else. scripts/bench-compare divides the comparison's wall time by this
// figure, measured in the same run, so the ratio holds on any machine. The DOM parse of pre.json
// (every value, no tables) is printed beside it for reference and is not part of the floor.
int floor_of(const std::string& dir) {
  std::printf("load average before: %s\n", load_average().c_str());
  simdjson::ondemand::parser ondemand;
  double read_s = 0, index_s = 0;
  std::size_t bytes = 0;
  simdjson::padded_string text;
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (const char* name : {"/pre.json", "/post.json"}) {
    auto read_start = std::chrono::steady_clock::now();
    if (auto code = simdjson::padded_string::load(dir + name).get(text)) {
      std::fprintf(stderr, "bench_compare: %s%s: %s\n", dir.c_str(), name,
                   simdjson::error_message(code));
      return 2;
    }
    read_s += seconds_since(read_start);
    bytes += text.size();
    auto index_start = std::chrono::steady_clock::now();
    simdjson::ondemand::document document;
    if (auto code = ondemand.iterate(text).get(document)) {
      std::fprintf(stderr, "bench_compare: %s%s: %s\n", dir.c_str(), name,
                   simdjson::error_message(code));
      return 2;
    }
    index_s += seconds_since(index_start);
  }
  const double floor_s = seconds_since(start);
  const double floor_cpu_s = cpu_seconds() - cpu_start;
  simdjson::dom::parser dom;
  auto dom_start = std::chrono::steady_clock::now();
  simdjson::dom::element root;
  if (auto code = dom.parse(text).get(root)) {  // text holds post.json now
    std::fprintf(stderr, "bench_compare: %s\n", simdjson::error_message(code));
    return 2;
  }
  double dom_s = seconds_since(dom_start);
  std::printf(
      "pre.json + post.json, %zu bytes, simdjson %d.%d (%s)\nread: %.3f s\n"
      "On-Demand index: %.3f s\nfloor (read + index, both files): %.3f s wall, %.3f s CPU\n"
      "for reference, DOM parse of post.json: %.3f s (%.2f GB/s)\nload average after: %s\n",
      bytes, int(simdjson::SIMDJSON_VERSION_MAJOR), int(simdjson::SIMDJSON_VERSION_MINOR),
      simdjson::get_active_implementation()->name().c_str(), read_s, index_s, floor_s, floor_cpu_s,
      dom_s, double(text.size()) / dom_s / 1e9, load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "generate") return generate(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "compare") return compare_files(argv[2], false);
  if (argc == 3 && std::string(argv[1]) == "parallel") return compare_files(argv[2], true);
  if (argc == 3 && std::string(argv[1]) == "floor") return floor_of(argv[2]);
  std::fprintf(stderr, "usage: bench_compare generate|compare|parallel|floor DIR\n");
  return 2;
}
