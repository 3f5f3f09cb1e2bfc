// `fabgate-probe watch` beside a CPU hog: the sampler is starved on purpose (`stress-ng --cpu 4`,
// started by the test and killed with it) while the paths are fine, and while a veth it watches
// is cut for 300 ms. The responder and the independent ping run at a real-time priority; what
// the responder's process still holds back is measured (its residence) and kept out of the
// paths' figures like the sampler's own stalls (docs/probes.md). Needs root (namespaces, chrt),
// iproute2, ping and stress-ng; skips otherwise. What a real-time sampler keeps beside the hogs
// is a figure of an otherwise quiet machine: watch_load_bench.cpp, run by scripts/load-check.

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>

#include "tests/cmd/fabgate-probe/watch_lab.h"
#include "tests/cmd/fabgate-probe/watch_load.h"
#include "tests/support/process.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace fabgate {
namespace {

using namespace std::chrono_literals;
using namespace watch_lab;
using namespace watch_load;
using testing::ChildProcess;
using testing::read_file;
using testing::run_shell;
using testing::shell_quoted;
using testing::TempDir;

TEST(WatchUnderLoad, AStarvedSamplerOnHealthyPathsReportsNoInterruption) {
  // Given 64 flows watched at 10 ms for 15 s on loopback while four CPU hogs starve the
  // sampler, then no flow reports an interruption and the verdict is not fail: the sampler's
  // stalls are reported as stalls (lost resolution), never as 64 paths interrupted at once.
  if (auto reason = why_not_runnable(); !reason.empty()) GTEST_SKIP() << reason;
  TempDir dir("fabgate-watch-load");
  const int port = 7500 + ::getpid() % 400;
  ChildProcess responder({"/bin/sh", "-c",
                          "exec " + responder_command("127.0.0.1", port) + " >/dev/null 2>" +
                              shell_quoted(dir.file("responder.err"))});
  wait_for_line(dir.file("responder.err"), "listening");
  ChildProcess hog = cpu_hog(30);
  std::this_thread::sleep_for(500ms);  // the hogs running before the first tick
  std::string output;
  const int exit_code = testing::run_process(
      {"/bin/sh", "-c", watch_command("127.0.0.1", port, "15s") + " 2>/dev/null"}, &output);
  hog.stop();
  auto report = nlohmann::json::parse(output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << "exit " << exit_code << ": " << output;
  std::cout << "under load, healthy paths: " << stall_figures(report) << "\n";
  EXPECT_NE(report.value("verdict", ""), "fail") << report.value("reason", "");
  ASSERT_TRUE(report["stalls"].is_array());
  ASSERT_EQ(report["flows"].size(), static_cast<std::size_t>(kFlows));
  int interrupted = 0;
  for (const auto& flow : report["flows"]) interrupted += flow.value("interruptions", 0) > 0;
  EXPECT_EQ(interrupted, 0) << "flows reported interrupted while every path was fine; "
                            << stall_figures(report);
  // A stall reported is one the sampler had, at the length it had: never more than the run.
  EXPECT_LE(report.value("longest_stall_ms", 0), 15'000);
}

TEST(WatchUnderLoad, ACutWhileTheSamplerIsStarvedIsReportedInFull) {
  // Given the watch's own link cut for 300 ms while four CPU hogs starve the sampler, then
  // every flow reports the cut in full (observed plus the sampler's own lateness at its ends
  // at least the cut; observed alone within ping's outage plus max(50 ms, interval)) and the
  // watch fails on what it observed.
  if (auto reason = why_not_runnable(); !reason.empty()) GTEST_SKIP() << reason;
  VethPair pair;
  ASSERT_TRUE(pair.failure().empty()) << pair.failure();
  TempDir dir("fabgate-watch-load-cut");
  Background responder(pair.far(), responder_command(kFarAddress, kPort),
                       dir.file("responder.json"), dir.file("responder.err"));
  // The responder listening before the first probe: refused probes before it would make an
  // interruption of their own (the watch's baseline not yet established).
  wait_for_line(dir.file("responder.err"), "listening");
  ChildProcess hog = cpu_hog(30);
  Background watch(pair.near(), watch_command(kFarAddress, kPort, "20s"), dir.file("watch.json"),
                   dir.file("watch.err"));
  Background ping(pair.near(), std::string("chrt -f 50 ping -n -D -i 0.002 ") + kFarAddress,
                  dir.file("ping.txt"), dir.file("ping.err"));
  // Sampling against a working baseline: the readiness line, within 5 s even when starved.
  wait_for_line(dir.file("watch.err"), "sampling");
  std::this_thread::sleep_for(1s);
  pair.cut("near", 300ms);
  const auto healed_by = std::chrono::steady_clock::now() + 4s;
  while (std::chrono::steady_clock::now() < healed_by) {
    std::this_thread::sleep_for(200ms);
    auto gap = longest_reply_gap_ms(read_file(dir.file("ping.txt")));
    if (gap && *gap >= 300.0) break;
  }
  std::this_thread::sleep_for(1s);
  ping.finish();
  watch.finish();
  hog.stop();
  const double truth = longest_reply_gap_ms(read_file(dir.file("ping.txt"))).value_or(-1);
  ASSERT_GE(truth, 300.0) << "ping did not see the cut: the setup is broken";
  const std::string text = read_file(dir.file("watch.json"));
  auto report = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << text << read_file(dir.file("watch.err"));
  std::cout << "under load, 300 ms cut (ping saw " << static_cast<long long>(truth)
            << " ms): " << stall_figures(report) << "\n";
  ASSERT_EQ(report["flows"].size(), static_cast<std::size_t>(kFlows));
  long long least = 1'000'000, most = 0;
  int with_more = 0;  // flows with an interruption besides the cut
  for (const auto& flow : report["flows"]) {
    const long long observed = flow.value("longest_interruption_ms", -1LL);
    const long long possible = flow.value("longest_possible_interruption_ms", -1LL);
    least = std::min(least, observed);
    most = std::max(most, observed);
    EXPECT_GE(possible, 300) << "flow " << flow.value("src_port", 0) << " under-reported the cut";
    EXPECT_LE(static_cast<double>(observed), truth + 50 + 2)
        << "flow " << flow.value("src_port", 0) << " reported more than the outage";
    // Counted, not asserted: in one of five runs beside two more hogs, every flow also had a
    // one-sample interruption from an echo over the late bound (the sampler's stamps rule
    // the sampler out; the kernel's deferred packet processing under this load is suspected,
    // not shown). The healthy-path test above is where a stall must never read as one.
    if (flow.value("interruptions", 0) > 1) ++with_more;
  }
  std::cout << "  flows observed " << least << "-" << most << " ms; " << with_more
            << " flows with another interruption\n";
  EXPECT_EQ(report.value("verdict", ""), "fail") << stall_figures(report);
}

}  // namespace
}  // namespace fabgate
