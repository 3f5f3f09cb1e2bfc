// The simdjson snapshot reader against the nlohmann SAX reader it replaced
// (reference_snapshot.h): the same documents must give the same snapshots, and the same bad
// documents the same refusals, so `fabgate diff` and the compare gate judge exactly as before.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <stdexcept>

#include "gates/compare/snapshot.h"
#include "tests/gates/compare/fixtures.h"
#include "tests/gates/compare/reference_snapshot.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using testing::document;
using testing::leaf;
using testing::parse_snapshot_reference;

// Every route of a table as text, in table order (VRF, then key).
std::vector<std::string> routes_of(const RouteTable& table) {
  std::vector<std::string> out;
  for (const auto& [vrf, routes] : table.vrfs())
    for (const auto& route : routes) out.push_back(table.describe(vrf, route));
  return out;
}

// The simdjson reader with its tables built on the walking thread and on a second thread.
std::vector<Result<Snapshot>> read_both_paths(const std::string& text, const std::string& name) {
  std::vector<Result<Snapshot>> out;
  out.push_back(detail::parse_snapshot_threaded_from(text, name, SIZE_MAX));
  out.push_back(detail::parse_snapshot_threaded_from(text, name, 0));
  return out;
}

void expect_same(const Snapshot& fast, const Snapshot& reference) {
  EXPECT_EQ(fast.file, reference.file);
  EXPECT_EQ(fast.taken_at, reference.taken_at);
  EXPECT_EQ(fast.intent_commit, reference.intent_commit);
  ASSERT_EQ(fast.devices.size(), reference.devices.size());
  for (const auto& [name, device] : reference.devices) {
    ASSERT_TRUE(fast.devices.count(name)) << name;
    const DeviceSnapshot& other = fast.devices.at(name);
    // dump() also tells unsigned from signed and integer from double.
    EXPECT_EQ(other.identity.dump(), device.identity.dump()) << name;
    EXPECT_EQ(other.facts.dump(), device.facts.dump()) << name;
    EXPECT_EQ(other.has_routes, device.has_routes) << name;
    ASSERT_EQ(other.sources.size(), device.sources.size()) << name;
    for (const auto& [category, source] : device.sources) {
      ASSERT_NE(other.source(category), nullptr) << name << " " << category;
      EXPECT_EQ(other.source(category)->ok, source.ok);
      EXPECT_EQ(other.source(category)->reason, source.reason);
    }
    ASSERT_EQ(other.routes.size(), device.routes.size()) << name;
    for (const auto& [family, table] : device.routes) {
      ASSERT_TRUE(other.routes.count(family)) << name << " " << family;
      const RouteTable& mine = other.routes.at(family);
      EXPECT_EQ(mine.family(), table.family());
      EXPECT_EQ(routes_of(mine), routes_of(table)) << name << " " << family;
      EXPECT_TRUE(diff_routes(table, mine).empty()) << name << " " << family;
    }
  }
}

// A random route document: both families, several VRFs, shuffled order, metrics present and
// absent up to 2^32-1, next-hop lists with repeats and in any order, keys this version ignores.
json random_device(std::mt19937_64& random, std::size_t routes_per_family) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
  static const char* kVrfs[] = {"default", "red", "blue"};
  static const char* kProtocols[] = {"bgp", "static", "connected", "ospf"};
  static const char* kHops4[] = {"10.255.0.1", "10.255.0.3", "192.0.2.1", "198.51.100.7"};
  static const char* kHops6[] = {"fe80::1", "fe80::3", "2001:db8::ffff", "::1"};
  json device = leaf({});
  device["sources"]["routes"] = {{"status", "ok"}};
  device["interfaces"] = {{"eth1", {{"oper", "up"}, {"mtu", 9000}, {"speed", 400.5}}}};
  for (bool ipv6 : {false, true}) {
    std::set<std::string> seen;
    json list = json::array();
    while (list.size() < routes_per_family) {
      std::string prefix;
      char buffer[96];
      if (!ipv6) {
        std::snprintf(buffer, sizeof buffer, "%zu.%zu.%zu.%zu/%zu", pick(224), pick(256), pick(256),
                      pick(4) * 64, pick(33));
      } else {
        static const char* kShapes[] = {"2001:db8:%zx:%zx::/%zu", "2001:DB8:%zx::%zx/%zu",
                                        "fd00:%zx:0:0:0:0:0:%zx/%zu", "::ffff:10.0.%zu.%zu/%zu"};
        std::size_t shape = pick(4);
        std::snprintf(buffer, sizeof buffer, kShapes[shape], pick(shape == 3 ? 256 : 65536),
                      pick(256), pick(129));
      }
      prefix = buffer;
      std::string vrf = kVrfs[pick(3)];
      if (!seen.insert(vrf + " " + prefix).second) continue;
      json route = {{"prefix", prefix}, {"protocol", kProtocols[pick(4)]}};
      if (vrf != "default" || pick(2)) route["vrf"] = vrf;
      std::size_t metric = pick(4);
      if (metric == 1) route["metric"] = 0;
      if (metric == 2) route["metric"] = pick(1000);
      if (metric == 3) route["metric"] = 4294967295u;
      json hops = json::array();
      for (std::size_t i = pick(5); i > 0; --i) hops.push_back((ipv6 ? kHops6 : kHops4)[pick(4)]);
      if (pick(8) != 0) route["nexthops"] = hops;
      if (pick(10) == 0) route["uptime"] = {{"seconds", pick(100000)}, {"flags", {true, nullptr}}};
      list.push_back(route);
    }
    device["routes"][ipv6 ? "ipv6" : "ipv4"] = list;
  }
  return device;
}

TEST(SnapshotEquivalence, RandomRouteDocumentsGiveTheSameSnapshotsBothWays) {
  // Given 40 random documents (1-3 devices, up to 300 routes per family, compact and indented),
  // then the simdjson reader (tables built on one thread or two) and the reference reader give
  // the same snapshot for each.
  std::mt19937_64 random(20261201);
  for (int round = 0; round < 40; ++round) {
    json devices = json::object();
    for (std::size_t d = 0; d < 1 + random() % 3; ++d)
      devices["leaf" + std::to_string(d)] = random_device(random, random() % 300);
    std::string text = document(devices).dump(round % 2 ? 2 : -1);
    auto reference = parse_snapshot_reference(text, "r.json");
    ASSERT_TRUE(reference) << reference.error().message;
    for (auto& fast : read_both_paths(text, "r.json")) {
      ASSERT_TRUE(fast) << fast.error().message;
      expect_same(*fast, *reference);
    }
  }
}

// Escapes, numbers at and past every limit, Unicode and repeated keys, written by hand.
const char* kAwkwardDocument =
    R"({"format": "fabgate.snapshot/1", "taken_at": "2026-12-01T00:00:00Z",
 "devices": {"le\u0061f1": {
   "identity": {"hostname": "le\u0061f1", "serial": "caf\u00e9 \ud83d\ude00 \"q\" \\ \/", "n": -0},
   "sources": {"routes": {"status": "ok"}, "bgp": {"status": "no-evidence", "reason": "exit 127"}},
   "numbers": {"big": 18446744073709551615, "bigger": 18446744073709551616, "neg": -9223372036854775808,
               "float": 1.5e300, "tiny": 4.9e-324, "exp": 1E2, "frac": 0.1, "zero": 0.0},
   "numbers": {"repeated": "the last one counts"},
   "routes": {
     "ipv4": [
       {"prefix": "10.0.2.0/24", "protocol": "b\u0067p", "metric": 4294967295, "nexthops": ["10.0.0.\u0031", "10.0.0.1", "10.0.0.0"]},
       {"vrf": "red", "prefix": "10.0.1.0/24", "nexthops": [], "ignored": {"deep": [[[{"x": null}]]]}},
       {"prefix": "0.0.0.0/0", "prefix": "10.0.0.0/8", "protocol": "static"}
     ],
     "ipv6": [
       {"prefix": "2001:DB8::/32", "metric": 0, "nexthops": ["fe80::1"]},
       {"prefix": "::/0", "nexthops": ["fe80::1", "FE80::1"]},
       {"prefix": "::ffff:10.0.0.1/128"}
     ]}},
  "spine1": {"identity": {"hostname": "spine1"}}}}
)";

TEST(SnapshotEquivalence, EscapesBigNumbersAndRepeatedKeysReadTheSameBothWays) {
  // Given the hand-written awkward document, then both readers agree, and the routes are the
  // ones a person reads in it (escapes decoded, the later of two 'prefix' keys kept).
  auto fast = parse_snapshot(kAwkwardDocument, "a.json");
  auto reference = parse_snapshot_reference(kAwkwardDocument, "a.json");
  ASSERT_TRUE(reference) << reference.error().message;
  ASSERT_TRUE(fast) << fast.error().message;
  expect_same(*fast, *reference);
  const DeviceSnapshot& leaf1 = fast->devices.at("leaf1");
  EXPECT_EQ(routes_of(leaf1.routes.at("ipv4")),
            (std::vector<std::string>{"10.0.0.0/8 static via (none)",
                                      "10.0.2.0/24 bgp metric 4294967295 via 10.0.0.0,10.0.0.1",
                                      "10.0.1.0/24 vrf red  via (none)"}));
  EXPECT_EQ(
      routes_of(leaf1.routes.at("ipv6")),
      (std::vector<std::string>{"::/0  via FE80::1,fe80::1", "::ffff:10.0.0.1/128  via (none)",
                                "2001:db8::/32  metric 0 via fe80::1"}));
  EXPECT_EQ(leaf1.facts["numbers"].dump(), R"({"repeated":"the last one counts"})");
  EXPECT_EQ(leaf1.identity["serial"], "caf\u00e9 \U0001F600 \"q\" \\ /");
}

struct BadDocument {
  const char* name;
  std::string text;
  bool same_message;  // a rule of the format (same words both ways), or a JSON syntax error
};

// A document with leaf1's route list ipv4 = `routes` (raw JSON text).
std::string with_routes(const std::string& routes, const std::string& family = "ipv4") {
  return R"({"format": "fabgate.snapshot/1", "taken_at": "2026-12-01T00:00:00Z", "devices": {"leaf1": {"identity": {"hostname": "leaf1"}, "routes": {")" +
         family + "\": " + routes + "}}}}";
}
std::string with_fact(const std::string& value) {
  return R"({"format": "fabgate.snapshot/1", "taken_at": "2026-12-01T00:00:00Z", "devices": {"leaf1": {"identity": {"hostname": "leaf1"}, "fact": )" +
         value + "}}}";
}

std::vector<BadDocument> bad_documents() {
  std::string deep = std::string(70, '[') + std::string(70, ']');
  return {
      // Rules of the format: the same message both ways.
      {"no prefix", with_routes(R"([{"prefix": "10.0.0.0/24"}, {"metric": 1}])"), true},
      {"prefix too long", with_routes(R"([{"prefix": "10.0.0.0/33"}])"), true},
      {"prefix not an address", with_routes(R"([{"prefix": "300.0.0.0/24"}])"), true},
      {"prefix without length", with_routes(R"([{"prefix": "10.0.0.0"}])"), true},
      {"IPv6 in the IPv4 list", with_routes(R"([{"prefix": "2001:db8::/32"}])"), true},
      {"IPv4 in the IPv6 list", with_routes(R"([{"prefix": "10.0.0.0/8"}])", "ipv6"), true},
      {"route listed twice",
       with_routes(
           R"([{"prefix": "10.0.1.0/24"}, {"prefix": "10.0.0.0/24"}, {"prefix": "10.0.1.0/24", "metric": 5}])"),
       true},
      {"metric negative", with_routes(R"([{"prefix": "10.0.0.0/24", "metric": -1}])"), true},
      {"metric fraction", with_routes(R"([{"prefix": "10.0.0.0/24", "metric": 1.5}])"), true},
      {"metric text", with_routes(R"([{"prefix": "10.0.0.0/24", "metric": "20"}])"), true},
      {"metric over 32 bits", with_routes(R"([{"prefix": "10.0.0.0/24", "metric": 4294967296}])"),
       true},
      {"metric over 64 bits",
       with_routes(R"([{"prefix": "10.0.0.0/24", "metric": 18446744073709551616}])"), true},
      {"metric null", with_routes(R"([{"prefix": "10.0.0.0/24", "metric": null}])"), true},
      {"metric object", with_routes(R"([{"prefix": "10.0.0.0/24", "metric": {}}])"), true},
      {"nexthops text", with_routes(R"([{"prefix": "10.0.0.0/24", "nexthops": "10.0.0.1"}])"),
       true},
      {"nexthops number", with_routes(R"([{"prefix": "10.0.0.0/24", "nexthops": [1]}])"), true},
      {"nexthops object", with_routes(R"([{"prefix": "10.0.0.0/24", "nexthops": [{}]}])"), true},
      {"nexthops nested", with_routes(R"([{"prefix": "10.0.0.0/24", "nexthops": [[]]}])"), true},
      {"prefix number", with_routes(R"([{"prefix": 5}])"), true},
      {"prefix list", with_routes(R"([{"prefix": ["10.0.0.0/24"]}])"), true},
      {"vrf object", with_routes(R"([{"prefix": "10.0.0.0/24", "vrf": {"name": "red"}}])"), true},
      {"route a number", with_routes("[5]"), true},
      {"route a string", with_routes(R"(["10.0.0.0/24"])"), true},
      {"route a list", with_routes(R"([["10.0.0.0/24"]])"), true},
      {"empty key holding an object", with_routes(R"([{"prefix": "10.0.0.0/24", "": {}}])"), true},
      {"unknown family", with_routes("[]", "ipv5"), true},
      {"family listed twice",
       R"({"format": "fabgate.snapshot/1", "taken_at": "2026-12-01T00:00:00Z", "devices": {"leaf1": {"routes": {"ipv4": [], "ipv4": []}}}})",
       true},
      {"family not a list", with_routes("5"), true},
      {"routes a list",
       R"({"format": "fabgate.snapshot/1", "taken_at": "2026-12-01T00:00:00Z", "devices": {"leaf1": {"routes": []}}})",
       true},
      {"nesting in an ignored route key",
       with_routes(R"([{"prefix": "10.0.0.0/24", "x": )" + deep + "}]"), true},
      {"nesting in a fact", with_fact(deep), true},
      {"wrong format",
       R"({"format": "fabgate.snapshot/2", "taken_at": "2026-12-01T00:00:00Z", "devices": {}})",
       true},
      {"no taken_at", R"({"format": "fabgate.snapshot/1", "devices": {}})", true},
      {"devices a list",
       R"({"format": "fabgate.snapshot/1", "taken_at": "2026-12-01T00:00:00Z", "devices": []})",
       true},
      {"document a list", "[1, 2]", true},
      {"document a number", "5", true},
      // JSON syntax: both refuse; the words differ, the new ones name byte, line and column.
      {"cut short", R"({"format": )", false},
      {"comma missing between keys", with_fact(R"({"a": 1 "b": 2})"), false},
      {"colon missing", with_fact(R"({"a" 1})"), false},
      {"comma before a brace", with_fact(R"({"a": 1,})"), false},
      {"comma before a bracket in a route list", with_routes(R"([{"prefix": "10.0.0.0/24"},])"),
       false},
      {"comma missing in a route", with_routes(R"([{"prefix": "10.0.0.0/24" "metric": 1}])"),
       false},
      {"comma missing in ignored route data",
       with_routes(R"([{"prefix": "10.0.0.0/24", "x": [1 2]}])"), false},
      {"string never closed", with_fact(R"("abc)"), false},
      {"line break inside a string", with_fact("\"a\nb\""), false},
      {"unknown escape", with_fact(R"("a\x")"), false},
      {"lone surrogate", with_fact(R"("\ud800")"), false},
      {"misspelt true", with_fact("tru"), false},
      {"misspelt null in a route", with_routes(R"([{"prefix": "10.0.0.0/24", "x": nul}])"), false},
      {"leading zero", with_fact("01"), false},
      {"leading zero in a metric", with_routes(R"([{"prefix": "10.0.0.0/24", "metric": 020}])"),
       false},
      {"number without digits", with_fact("-"), false},
      {"fraction without digits", with_fact("1."), false},
      {"number too large for a double", with_fact("1e400"), false},
      {"text after the document", R"({"format": "fabgate.snapshot/1"} x)", false},
      {"two documents", "{}{}", false},
      {"not UTF-8 in a prefix", with_routes("[{\"prefix\": \"10.0.0.0/2\xff\"}]"), false},
      {"empty", "", false},
      {"blanks only", " \n ", false},
  };
}

TEST(SnapshotEquivalence, BadDocumentsAreRefusedBothWaysNamingTheFileAndThePlace) {
  // Given 60 bad documents, then both readers (simdjson on both paths) refuse each as invalid input
  // naming the file; a rule of the format is worded the same way by both, a JSON syntax error names
  // byte, line and column; nothing crashes.
  const std::regex place(
      R"(^snapshot bad\.json: (byte \d+ \(line \d+, column \d+\): |the file holds no JSON|at the end of the text: ))");
  for (const auto& bad : bad_documents())
    for (auto& fast : read_both_paths(bad.text, "bad.json")) {
      SCOPED_TRACE(bad.name);
      auto reference = parse_snapshot_reference(bad.text, "bad.json");
      ASSERT_FALSE(reference) << "the reference reader accepts it";
      ASSERT_FALSE(fast) << "the simdjson reader accepts it";
      EXPECT_EQ(fast.error().exit_code, ExitCode::invalid_input);
      EXPECT_EQ(fast.error().message.rfind("snapshot bad.json: ", 0), 0u) << fast.error().message;
      if (bad.same_message) {
        EXPECT_EQ(fast.error().message, reference.error().message);
      } else {
        EXPECT_TRUE(std::regex_search(fast.error().message, place)) << fast.error().message;
      }
    }
}

TEST(SnapshotEquivalence, SyntaxErrorsPointAtTheFaultyLine) {
  // Given a missing comma on line 3 and a byte that is not UTF-8 on line 2, then the message
  // names those lines.
  auto comma = parse_snapshot("{\"format\": 1,\n \"a\": [1,\n 2 3]}", "c.json");
  ASSERT_FALSE(comma);
  EXPECT_NE(comma.error().message.find("(line 3, column "), std::string::npos)
      << comma.error().message;
  auto bytes = parse_snapshot("{\"format\": 1,\n \"a\": \"caf\xe9\"}", "u.json");
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.error().message.find(
                "byte 25 (line 2, column 11): not UTF-8 (near ' \"a\": \"caf\\xe9"),
            std::string::npos)
      << bytes.error().message;
  EXPECT_NE(bytes.error().message.find("\\xe9"), std::string::npos) << bytes.error().message;
}

// A file in a fresh folder under /tmp, removed with it.
class TempFiles {
 public:
  TempFiles() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fabgate-eq-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
  }
  ~TempFiles() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string write(const std::string& name, const std::string& text) {
    auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

 private:
  std::filesystem::path dir_;
};

TEST(SnapshotEquivalence, FilesAndPairsLoadAsTheirText) {
  // Given two random documents in files, then loading each file and loading the pair give the
  // reference reader's snapshots; a bad POST is refused naming the POST file.
  std::mt19937_64 random(7);
  TempFiles files;
  std::string pre_text = document({{"leaf1", random_device(random, 500)}}).dump(1);
  std::string post_text = document({{"leaf1", random_device(random, 700)}}).dump();
  auto pre_path = files.write("pre.json", pre_text);
  auto post_path = files.write("post.json", post_text);
  auto pre_reference = parse_snapshot_reference(pre_text, pre_path);
  auto post_reference = parse_snapshot_reference(post_text, post_path);
  ASSERT_TRUE(pre_reference && post_reference);

  auto single = load_snapshot_file(pre_path);
  ASSERT_TRUE(single) << single.error().message;
  expect_same(*single, *pre_reference);
  auto pair = load_snapshot_pair(pre_path, post_path);
  ASSERT_TRUE(pair) << pair.error().message;
  expect_same(pair->pre, *pre_reference);
  expect_same(pair->post, *post_reference);

  auto bad_path = files.write("bad.json", post_text.substr(0, post_text.size() / 2));
  auto bad = load_snapshot_pair(pre_path, bad_path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.rfind("snapshot " + bad_path + ": ", 0), 0u) << bad.error().message;
}

}  // namespace
}  // namespace fabgate::compare
