// Runs the built `fabgate diff` binary on snapshot files in a temporary directory and checks
// what CI depends on: exit codes and output.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "adapters/core/text.h"
#include "adapters/core/time.h"

namespace fabgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A temporary directory removed with everything in it when the test ends, pass or fail.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "fabgate-diff-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string write(const std::string& name, const std::string& text) const {
    auto file = path_ / name;
    std::ofstream(file) << text;
    return file.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

Outcome fabgate(const std::string& arguments) {
  std::string command = std::string("NO_COLOR=1 ") + FABGATE_BINARY_DIR "/cmd/fabgate/fabgate " +
                        arguments + " 2>&1 </dev/null";
  Outcome outcome;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.output.append(buffer, got);
  int status = ::pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

std::string snapshot(const char* peer_state, int mtu = 9000) {
  json device = {{"identity", {{"hostname", "leaf1"}, {"platform", "frr"}, {"serial", "SN1"}}},
                 {"sources",
                  {{"interfaces", {{"status", "ok"}}},
                   {"bgp", {{"status", "ok"}}},
                   {"routes", {{"status", "ok"}}}}},
                 {"interfaces",
                  {{"eth1",
                    {{"oper", "up"},
                     {"admin", "up"},
                     {"mtu", mtu},
                     {"counters", {{"rx_packets", std::rand()}, {"rx_errors", 0}}}}}}},
                 {"bgp",
                  {{"peers",
                    {{"10.0.1.0",
                      {{"state", peer_state},
                       {"remote_as", 65000},
                       {"prefixes_received", 4},
                       {"uptime_ms", std::rand()}}}}}}},
                 {"routes",
                  {{"ipv4", json::array({{{"prefix", "10.0.2.0/24"},
                                          {"protocol", "bgp"},
                                          {"metric", 20},
                                          {"nexthops", {"10.0.1.0"}}}})}}}};
  json doc = {{"format", "fabgate.snapshot/1"},
              {"taken_at", format_utc(now_utc())},
              {"devices", {{"leaf1", device}}}};
  return doc.dump(2);
}

TEST(DiffCli, UnchangedFabricPassesWithExitZero) {
  // Given two snapshots that differ only in volatile counters, then exit 0 and a PASS summary
  // that lists the ignored patterns from the built-in default rule set.
  TempDir dir;
  auto pre = dir.write("pre.json", snapshot("Established"));
  auto post = dir.write("post.json", snapshot("Established"));
  auto outcome = fabgate("diff " + pre + " " + post);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("PASS: "), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("devices.*.bgp.peers.*.uptime_ms"), std::string::npos);
}

TEST(DiffCli, FailureExitsThreeAndJsonHasEveryResult) {
  // Given the BGP peer down after the change, then exit 3, the human output names the rule,
  // and --json prints one document with every result and the first disproven hypothesis.
  TempDir dir;
  auto pre = dir.write("pre.json", snapshot("Established"));
  auto post = dir.write("post.json", snapshot("Idle"));
  auto human = fabgate("diff " + pre + " " + post);
  EXPECT_EQ(human.exit_code, 3) << human.output;
  EXPECT_NE(human.output.find("fail  bgp-peer-state  devices.leaf1.bgp.peers.\"10.0.1.0\".state"),
            std::string::npos)
      << human.output;

  auto machine = fabgate("--json diff " + pre + " " + post);
  EXPECT_EQ(machine.exit_code, 3);
  json doc = json::parse(machine.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << machine.output;
  EXPECT_EQ(doc["verdict"], "fail");
  EXPECT_EQ(doc["first_disproven"]["rule"], "bgp-peer-state");
  EXPECT_EQ(doc["results"].size(), doc["counts"]["total"]);
}

TEST(DiffCli, ExpectedChangeAndExceptionTurnTheVerdictToPass) {
  // Given the drain's change file expecting the peer to go Idle and an MTU change waived by
  // an exception, then exit 0 and the waived item is still printed with its id.
  TempDir dir;
  auto pre = dir.write("pre.json", snapshot("Established", 9000));
  auto post = dir.write("post.json", snapshot("Idle", 1500));
  auto change = dir.write("drain.yaml",
                          "id: drain\ncompare:\n  expected:\n    - device: leaf1\n"
                          "      path: bgp.peers.*.state\n      values: [Idle]\n");
  auto exceptions =
      dir.write("exceptions.yaml",
                "exceptions:\n  - id: EXC-9\n    scope: {device: leaf1, rule: interface-mtu}\n"
                "    reason: lab NIC\n    owner: me\n    expiry: 2099-01-01T00:00:00Z\n");
  auto outcome =
      fabgate("diff " + pre + " " + post + " --change " + change + " --exceptions " + exceptions);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("waived  interface-mtu"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("[exception EXC-9]"), std::string::npos);
}

TEST(DiffCli, InvalidInputExitsTwoNamingTheFile) {
  // Given a truncated snapshot, then exit 2 naming it; given a rule file with a bad key, then
  // exit 2 with file:line:column.
  TempDir dir;
  auto good = dir.write("good.json", snapshot("Established"));
  auto broken = dir.write("broken.json", "{\"format\": \"fabgate.snapshot/1\", ");
  auto outcome = fabgate("diff " + good + " " + broken);
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_NE(outcome.output.find("broken.json"), std::string::npos) << outcome.output;

  auto rules = dir.write("rules.yaml",
                         "name: x\nrules:\n  - name: a\n    layer: link\n"
                         "    path: devices.*.interfaces.*.mtu\n    operator: no-change\n"
                         "    vale: 3\n");
  auto bad_rules = fabgate("diff " + good + " " + good + " --rules " + rules);
  EXPECT_EQ(bad_rules.exit_code, 2) << bad_rules.output;
  EXPECT_NE(bad_rules.output.find("rules.yaml:7:5: error: unknown key 'vale'"), std::string::npos)
      << bad_rules.output;

  auto missing = fabgate("diff " + good + " " + (dir.path() / "nope.json").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
}

TEST(DiffCli, RepeatedRulesBeforeThePositionalsTakeOneFileEach) {
  // Given two --rules flags before PRE and POST, then both sets apply and the snapshots are
  // still read as PRE and POST (one result per rule set).
  TempDir dir;
  auto snap = dir.write("s.json", snapshot("Established"));
  auto a = dir.write("a.yaml",
                     "name: a\nrules:\n  - {name: oper, layer: link, path: "
                     "devices.*.interfaces.*.oper, operator: no-change}\n");
  auto b = dir.write("b.yaml",
                     "name: b\nrules:\n  - {name: mtu, layer: link, path: "
                     "devices.*.interfaces.*.mtu, operator: equal, value: 9000}\n");
  auto outcome = fabgate("--json diff --rules " + a + " --rules " + b + " " + snap + " " + snap);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  json doc = json::parse(outcome.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << outcome.output;
  ASSERT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["results"][0]["rule_set"], "a");
  EXPECT_EQ(doc["results"][1]["rule_set"], "b");
}

TEST(DiffCli, StaleSnapshotIsRefusedUnlessMaxAgeAllowsIt) {
  // Given snapshots taken an hour ago, then exit 3 under the default 10m, and 0 with
  // --max-age 2h.
  TempDir dir;
  json doc = json::parse(snapshot("Established"));
  doc["taken_at"] = format_utc(now_utc() - std::chrono::hours(1));
  auto pre = dir.write("pre.json", doc.dump());
  auto post = dir.write("post.json", doc.dump());
  EXPECT_EQ(fabgate("diff " + pre + " " + post).exit_code, 3);
  EXPECT_EQ(fabgate("diff " + pre + " " + post + " --max-age 2h").exit_code, 0);
}

// Archived snapshots of 30 devices, pre taken 72h05m ago and post 72h ago.
json archived_fabric(const char* leaf7_peer_state, std::chrono::minutes age) {
  json one = json::parse(snapshot("Established"))["devices"]["leaf1"];
  json devices = json::object();
  for (int n = 1; n <= 30; ++n) {
    std::string name = "leaf" + std::to_string(n);
    json device = one;
    device["identity"]["hostname"] = name;
    if (n == 7) device["bgp"]["peers"]["10.0.1.0"]["state"] = leaf7_peer_state;
    devices[name] = std::move(device);
  }
  return {{"format", "fabgate.snapshot/1"},
          {"taken_at", format_utc(now_utc() - age)},
          {"devices", std::move(devices)}};
}

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t count = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

TEST(DiffCli, StaleSnapshotsAreSaidOnceAndTheRealDifferencesStillListed) {
  // Given archived snapshots of 30 devices, three days old, where one BGP peer went down, then
  // the output says once that they are older than max age, how old, and how to compare them
  // (--max-age), lists the real difference instead of a no-evidence line per element, and
  // exits 3; --json carries the same statement and the fail.
  TempDir dir;
  auto pre = dir.write("pre.json",
                       archived_fabric("Established", std::chrono::minutes(72 * 60 + 5)).dump());
  auto post = dir.write("post.json", archived_fabric("Idle", std::chrono::minutes(72 * 60)).dump());
  auto human = fabgate("diff " + pre + " " + post);
  EXPECT_EQ(human.exit_code, 3) << human.output;
  EXPECT_NE(human.output.find("stale: pre taken at "), std::string::npos) << human.output;
  EXPECT_NE(human.output.find(" is 72h5m old, post taken at "), std::string::npos) << human.output;
  EXPECT_NE(human.output.find(" is 72h old, older than max age 10m."), std::string::npos)
      << human.output;
  EXPECT_NE(human.output.find("fabgate diff --max-age 73h " + pre + " " + post), std::string::npos)
      << human.output;
  EXPECT_NE(human.output.find("fail  bgp-peer-state  devices.leaf7.bgp.peers.\"10.0.1.0\".state"),
            std::string::npos)
      << human.output;
  EXPECT_EQ(occurrences(human.output, "no-evidence  "), 0u) << human.output;
  EXPECT_LE(occurrences(human.output, "older than max age"), 2u) << human.output;
  // As long as the same comparison without an age check, but for the statement (5 lines).
  auto unchecked = fabgate("diff --max-age 0s " + pre + " " + post);
  EXPECT_EQ(occurrences(human.output, "\n"), occurrences(unchecked.output, "\n") + 5)
      << human.output;

  auto machine = fabgate("--json diff " + pre + " " + post);
  EXPECT_EQ(machine.exit_code, 3);
  json doc = json::parse(machine.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << machine.output;
  EXPECT_EQ(doc["verdict"], "fail");
  ASSERT_EQ(doc["stale"].size(), 2u);
  EXPECT_EQ(doc["stale"][0]["side"], "pre");
  EXPECT_EQ(doc["stale"][0]["age"], "72h5m");
  EXPECT_EQ(doc["stale"][1]["max_age"], "10m");
  EXPECT_EQ(doc["counts"]["no_evidence"], 0);

  // Nothing differs: still no pass, the verdict says there is no evidence.
  auto same =
      dir.write("same.json", archived_fabric("Established", std::chrono::minutes(90)).dump());
  auto unchanged = fabgate("diff " + same + " " + same);
  EXPECT_EQ(unchanged.exit_code, 3) << unchanged.output;
  EXPECT_NE(unchanged.output.find("NO-EVIDENCE: "), std::string::npos) << unchanged.output;
  EXPECT_NE(
      unchanged.output.find("both snapshots are older than max age 10m, so no check can pass"),
      std::string::npos)
      << unchanged.output;
  EXPECT_NE(unchanged.output.find("--max-age 2h "), std::string::npos) << unchanged.output;
}

TEST(DiffCli, ZeroChecksIsNoEvidenceWithExitThreeInTextAndJson) {
  // Given two snapshots without any device, then no rule reaches anything: exit 3, the text
  // summary is NO-EVIDENCE saying nothing was compared (not "PASS: 0 checks"), and --json says
  // no-evidence with zero checks.
  TempDir dir;
  json empty = {{"format", "fabgate.snapshot/1"},
                {"taken_at", format_utc(now_utc())},
                {"devices", json::object()}};
  auto pre = dir.write("pre.json", empty.dump());
  auto post = dir.write("post.json", empty.dump());
  auto human = fabgate("diff " + pre + " " + post);
  EXPECT_EQ(human.exit_code, 3) << human.output;
  EXPECT_NE(human.output.find("NO-EVIDENCE: 0 checks"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("nothing was compared"), std::string::npos) << human.output;
  EXPECT_EQ(human.output.find("PASS"), std::string::npos) << human.output;

  auto machine = fabgate("--json diff " + pre + " " + post);
  EXPECT_EQ(machine.exit_code, 3);
  json doc = json::parse(machine.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << machine.output;
  EXPECT_EQ(doc["verdict"], "no-evidence");
  EXPECT_EQ(doc["counts"]["total"], 0);
}

TEST(DiffCli, JsonKeepsNoEvidenceApartFromFail) {
  // Given BGP collected before but not after (its source no-evidence) and nothing failing,
  // then --json says no-evidence, not fail, and the exit code is 3 as for a failure.
  TempDir dir;
  auto pre = dir.write("pre.json", snapshot("Established"));
  json after = json::parse(snapshot("Established"));
  json& leaf1 = after["devices"]["leaf1"];
  leaf1.erase("bgp");
  leaf1["sources"]["bgp"] = {{"status", "no-evidence"}, {"reason", "vtysh: timed out after 10 s"}};
  auto post = dir.write("post.json", after.dump());
  auto machine = fabgate("--json diff " + pre + " " + post);
  EXPECT_EQ(machine.exit_code, 3) << machine.output;
  json doc = json::parse(machine.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << machine.output;
  EXPECT_EQ(doc["counts"]["fail"], 0);
  EXPECT_GT(doc["counts"]["no_evidence"].get<int>(), 0);
  EXPECT_EQ(doc["verdict"], "no-evidence");
}

}  // namespace
}  // namespace fabgate
