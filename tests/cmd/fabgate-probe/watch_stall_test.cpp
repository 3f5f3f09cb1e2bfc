// `fabgate-probe watch` when the watch itself stops, made deterministic: the watch's own process
// or its responder is stopped (SIGSTOP) for 50 ms while every path is fine, then continued. A
// stall that hits every flow at once is the watch's, not the paths': it must read as a stall
// (no evidence for its span when it is longer than allowed), never as every flow interrupted,
// and never as a silent pass. And a real drop on the path (an nft rule in the responder's
// namespace) still fails the watch. The stop tests run on loopback without root; the drop test
// needs root, iproute2 and nft, and skips otherwise. Every child is killed and every namespace
// removed even when an assertion fails.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "tests/cmd/fabgate-probe/watch_lab.h"
#include "tests/support/process.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace fabgate {
namespace {

using namespace std::chrono_literals;
using namespace watch_lab;
using testing::ChildProcess;
using testing::read_file;
using testing::run_shell;
using testing::shell_quoted;
using testing::TempDir;

constexpr int kFlows = 64;
// Less than the 50 ms stop, so that the stop's span is one an outage longer than allowed could
// have hidden in: the watch must then say it has no evidence for it.
constexpr const char* kAllowed = "20ms";

std::string watch_command(const std::string& to, int port) {
  return shell_quoted(kProbe) + " watch --to " + to + " --port " + std::to_string(port) +
         " --count " + std::to_string(kFlows) + " --interval 10ms --reply-timeout 500ms" +
         " --max-interruption " + kAllowed + " --max-duration 3s";
}

std::string responder_command(const std::string& listen, int port) {
  return shell_quoted(kProbe) + " flows --respond --listen " + listen + " --port " +
         std::to_string(port) + " --duration 30s";
}

// A command run with its output in files; its pid is the probe's own (the shell execs it).
ChildProcess started(const std::string& command, const std::string& out, const std::string& err) {
  return ChildProcess(
      {"/bin/sh", "-c", "exec " + command + " >" + shell_quoted(out) + " 2>" + shell_quoted(err)});
}

// Waits (at most 10 s) for a watch that stops by itself at --max-duration.
void wait_for_exit(ChildProcess& child) {
  for (int i = 0; i < 100 && child.running(); ++i) std::this_thread::sleep_for(100ms);
}

// Stops `pid` for 50 ms: no instruction of it runs meanwhile, whatever its priority.
void stop_for_50ms(pid_t pid) {
  ::kill(pid, SIGSTOP);
  std::this_thread::sleep_for(50ms);
  ::kill(pid, SIGCONT);
}

std::string figures(const nlohmann::json& report) {
  return "verdict " + report.value("verdict", std::string("?")) + ", " +
         std::to_string(report.value("stall_count", -1)) + " stalls (" +
         std::to_string(report.value("responder_stall_count", -1)) + " the responder's), longest " +
         std::to_string(report.value("longest_stall_ms", -1)) + " ms, longest interruption " +
         std::to_string(report.value("longest_interruption_ms", -1)) + " ms; " +
         report.value("reason", std::string());
}

enum class Stopped { watch, responder };

// A 3 s watch of 64 healthy loopback flows with one of its two processes stopped for 50 ms a
// second after it said it was sampling; the watch's report.
nlohmann::json watch_with_a_stop(Stopped which) {
  TempDir dir("fabgate-watch-stall");
  const int port = 7900 + ::getpid() % 90;
  ChildProcess responder = started(responder_command("127.0.0.1", port), dir.file("responder.json"),
                                   dir.file("responder.err"));
  EXPECT_TRUE(wait_for_line(dir.file("responder.err"), "listening"));
  ChildProcess watch =
      started(watch_command("127.0.0.1", port), dir.file("watch.json"), dir.file("watch.err"));
  EXPECT_TRUE(wait_for_line(dir.file("watch.err"), "sampling"));
  std::this_thread::sleep_for(1s);
  stop_for_50ms(which == Stopped::watch ? watch.pid() : responder.pid());
  wait_for_exit(watch);
  const std::string text = read_file(dir.file("watch.json"));
  auto report = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(report.is_discarded()) << text << read_file(dir.file("watch.err"));
  return report.is_discarded() ? nlohmann::json::object() : report;
}

// What both stop tests require: no flow interrupted, a stall of the stopped process at least
// as long as the stop, and no evidence (not pass, not fail) against an allowance shorter than it.
void expect_a_stall_of(const nlohmann::json& report, const std::string& by) {
  std::cout << by << " stopped 50 ms: " << figures(report) << "\n";
  EXPECT_EQ(report.value("verdict", ""), "no-evidence") << figures(report);
  ASSERT_TRUE(report.contains("flows"));
  ASSERT_EQ(report["flows"].size(), static_cast<std::size_t>(kFlows));
  int interrupted = 0;
  for (const auto& flow : report["flows"]) interrupted += flow.value("interruptions", 0) > 0;
  EXPECT_EQ(interrupted, 0) << "flows read interrupted while only the watch stopped; "
                            << figures(report);
  bool named = false;
  for (const auto& stall : report["stalls"])
    named = named || (stall.value("by", "") == by && stall.value("length_ms", 0) >= 50);
  EXPECT_TRUE(named) << "no stall of the " << by << " of at least 50 ms; " << figures(report);
  // The reason names whose the longest stall was. On a loaded machine that can be the other
  // process's (a fresh-clone CI run beside a second build saw the responder held 111 ms while
  // the sampler was stopped 50 ms), so it is checked against the longest stall in the report,
  // and the stall of the stopped process is required above.
  std::string longest_by;
  int longest = -1;
  for (const auto& stall : report["stalls"])
    if (stall.value("length_ms", 0) > longest) {
      longest = stall.value("length_ms", 0);
      longest_by = stall.value("by", "");
    }
  EXPECT_NE(report.value("reason", "").find("the " + longest_by + "'s"), std::string::npos)
      << figures(report);
}

TEST(WatchStall, TheWatchStoppedFor50msIsAStallOfItsSamplerNotAnOutage) {
  // Given 64 healthy loopback flows watched at 10 ms with 20 ms allowed, and the watch's own
  // process stopped for 50 ms, then no flow is interrupted, the report names a stall of the
  // sampler of at least 50 ms, and the verdict is no-evidence: neither fail (the paths were
  // fine) nor pass (an outage longer than allowed could have hidden in the stop).
  expect_a_stall_of(watch_with_a_stop(Stopped::watch), "sampler");
}

TEST(WatchStall, TheResponderStoppedFor50msIsAStallOfTheResponderNotAnOutage) {
  // Given the same flows and the responder stopped for 50 ms (its probes wait in its receive
  // buffer, as on a host too busy to schedule it), then the same: no flow interrupted, a stall
  // of the responder's named, no-evidence. Before the responder reported how long each probe
  // sat on its host, every flow read about 50 ms interrupted at the same instant and the watch
  // failed: the product's false alarm beside stress-ng.
  expect_a_stall_of(watch_with_a_stop(Stopped::responder), "responder");
}

TEST(WatchStall, ARealDropOnThePathStillFails) {
  // Given the same flows across a veth pair between two namespaces, and the responder's
  // namespace dropping the probes (an nft rule) for 200 ms while both processes run, then
  // every flow reports an interruption that may have lasted at least the 200 ms and the watch
  // fails. (The responder may still stall on its own on a busy host; probes it held are
  // answered, and the dropped ones never reached it, so its stalls cannot explain the drop.)
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for namespaces and nft";
  if (run_shell("command -v ip && command -v nft").exit_code != 0)
    GTEST_SKIP() << "needs iproute2 and nft";
  VethPair pair;
  ASSERT_TRUE(pair.failure().empty()) << pair.failure();
  const std::string nft = "ip netns exec " + pair.far() + " nft ";
  ASSERT_EQ(run_shell(nft + "add table inet fgw_drop && " + nft +
                      "'add chain inet fgw_drop input { type filter hook input priority 0; }'")
                .exit_code,
            0);
  TempDir dir("fabgate-watch-drop");
  Background responder(pair.far(), responder_command(kFarAddress, kPort),
                       dir.file("responder.json"), dir.file("responder.err"));
  ASSERT_TRUE(wait_for_line(dir.file("responder.err"), "listening"));
  Background watch(pair.near(), watch_command(kFarAddress, kPort), dir.file("watch.json"),
                   dir.file("watch.err"));
  ASSERT_TRUE(wait_for_line(dir.file("watch.err"), "sampling"));
  std::this_thread::sleep_for(1s);
  // In force from the add's return to the flush's start at least: never shorter than 200 ms.
  ASSERT_EQ(
      run_shell(nft + "add rule inet fgw_drop input udp dport " + std::to_string(kPort) + " drop")
          .exit_code,
      0);
  std::this_thread::sleep_for(200ms);
  run_shell(nft + "flush chain inet fgw_drop input");
  std::this_thread::sleep_for(2500ms);  // past the watch's 3 s
  watch.finish();
  const std::string text = read_file(dir.file("watch.json"));
  auto report = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << text << read_file(dir.file("watch.err"));
  std::cout << "200 ms drop: " << figures(report) << "\n";
  EXPECT_EQ(report.value("verdict", ""), "fail") << figures(report);
  ASSERT_EQ(report["flows"].size(), static_cast<std::size_t>(kFlows));
  for (const auto& flow : report["flows"]) {
    EXPECT_GE(flow.value("longest_possible_interruption_ms", -1), 200)
        << "flow " << flow.value("src_port", 0) << " under-reported the drop";
  }
}

}  // namespace
}  // namespace fabgate
