// What `fabgate-probe watch` at its default real-time priority keeps beside four CPU hogs: its
// resolution (no stall over the 100 ms allowance, verdict pass). Not a CTest test: the figure
// holds only on a machine where nothing else runs at a real-time priority or stalls the kernel.
// On the shared 2-core development machine (an FRR lab's bfdd at SCHED_RR 50, other suites'
// `chrt -f 50` responders and pings, `ctest -j2` and `stress-ng --cpu 2` beside it) it failed
// 1 of 5 runs on 2026-12-06: the real-time responder held the probes 111 ms, which the watch
// rightly called no-evidence. scripts/load-check runs it (`--only watch`), each time beside
// its own `stress-ng`. Needs root, iproute2, ping, chrt and stress-ng; skips otherwise.

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

TEST(WatchUnderLoad, AtItsDefaultRealTimePriorityTheSamplerKeepsItsResolutionBesideTheHogs) {
  // Given 64 healthy loopback flows at 10 ms beside four CPU hogs, with the watch at its default
  // priority (as root: SCHED_RR), then the report says so, no stall and no interruption is
  // longer than the 100 ms allowance and the verdict is pass: a busy host does not cost a
  // root-run watch its evidence. (An echo the loaded kernel itself held back past one interval
  // may still read as a short interruption at 10 ms resolution: seen once, 13 ms on every flow
  // beside another suite's real-time responder; the sampler's priority cannot change that.)
  if (auto reason = why_not_runnable(); !reason.empty()) GTEST_SKIP() << reason;
  TempDir dir("fabgate-watch-load");
  const int port = 7100 + ::getpid() % 400;
  ChildProcess responder({"/bin/sh", "-c",
                          "exec " + responder_command("127.0.0.1", port) + " >/dev/null 2>" +
                              shell_quoted(dir.file("responder.err"))});
  wait_for_line(dir.file("responder.err"), "listening");
  ChildProcess hog = cpu_hog(30);
  std::this_thread::sleep_for(500ms);
  std::string output;
  const int exit_code = testing::run_process(
      {"/bin/sh", "-c", watch_command("127.0.0.1", port, "10s", "realtime") + " 2>/dev/null"},
      &output);
  hog.stop();
  auto report = nlohmann::json::parse(output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << "exit " << exit_code << ": " << output;
  std::cout << "under load, real-time sampler: " << stall_figures(report) << "\n";
  EXPECT_EQ(report.value("sampler_priority", ""), "SCHED_RR 40");
  EXPECT_EQ(report.value("verdict", ""), "pass") << stall_figures(report);
  EXPECT_LE(report.value("longest_stall_ms", 100'000), 100) << stall_figures(report);
  EXPECT_LE(report.value("longest_interruption_ms", 100'000), 100) << stall_figures(report);
}

}  // namespace
}  // namespace fabgate
