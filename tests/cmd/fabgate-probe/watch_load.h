#pragma once

// Shared by the watch's load test (watch_load_test.cpp, in CTest) and its real-time bench
// (watch_load_bench.cpp, run by scripts/load-check): CPU hogs that starve the watch, the watch
// and responder commands they run, and the figures they print.

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/cmd/fabgate-probe/watch_lab.h"
#include "tests/support/process.h"
#include "tests/support/shell.h"

namespace fabgate::watch_load {

using testing::ChildProcess;
using testing::run_shell;
using testing::shell_quoted;
using watch_lab::kProbe;

inline constexpr int kFlows = 64;
// Above any cut of this test but far below the stalls a starved sampler sees: the verdict then
// turns on what the watch observed, and a sampler stall can only make it no-evidence.
inline constexpr const char* kAllowed = "100ms";

inline std::string why_not_runnable() {
  if (::geteuid() != 0) return "needs root for namespaces and real-time priorities";
  if (run_shell("command -v ip && command -v ping && command -v chrt").exit_code != 0)
    return "needs iproute2, ping and chrt";
  if (run_shell("command -v stress-ng").exit_code != 0)
    return "needs stress-ng to starve the sampler (apt-get install stress-ng)";
  return "";
}

// Four CPU hogs for at most `seconds` (they stop by themselves if the test is killed), sent
// SIGTERM when the object dies.
inline ChildProcess cpu_hog(int seconds) {
  return ChildProcess(
      {"stress-ng", "--cpu", "4", "--timeout", std::to_string(seconds) + "s", "--quiet"});
}

// At normal priority unless asked: these tests starve the sampler on purpose (a host where
// fabgate-probe may not raise its priority).
inline std::string watch_command(const std::string& to, int port, const std::string& duration,
                                 const std::string& priority = "normal") {
  return shell_quoted(kProbe) + " watch --to " + to + " --port " + std::to_string(port) +
         " --count " + std::to_string(kFlows) + " --interval 10ms --reply-timeout 500ms" +
         " --max-interruption " + kAllowed + " --max-duration " + duration + " --priority " +
         priority;
}

inline std::string responder_command(const std::string& listen, int port) {
  return "chrt -f 50 " + shell_quoted(kProbe) + " flows --respond --listen " + listen + " --port " +
         std::to_string(port) + " --duration 60s";
}

// The figures a reader of the run needs, printed so that repeated runs can be compared.
inline std::string stall_figures(const nlohmann::json& report) {
  return "verdict " + report.value("verdict", std::string("?")) + ", " +
         std::to_string(report.value("stall_count", -1)) + " stalls (" +
         std::to_string(report.value("responder_stall_count", -1)) + " the responder's), longest " +
         std::to_string(report.value("longest_stall_ms", -1)) + " ms, " +
         std::to_string(report.value("stalled_ms", -1)) + " ms stalled, tick late by up to " +
         std::to_string(report.value("max_tick_lateness_ms", -1)) + " ms; " +
         report.value("reason", std::string());
}

}  // namespace fabgate::watch_load
