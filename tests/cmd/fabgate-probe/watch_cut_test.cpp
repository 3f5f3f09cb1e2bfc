// `fabgate-probe watch` against outages of a known length: a veth pair between two network
// namespaces this test creates is cut on the near side (the watch's own link goes down: sends
// are refused) or on the far side (the watch's link only loses carrier: packets are parked in
// the neighbour queue and handed over in one burst when ARP resolves again). An independent
// `ping -D -i 0.002` across the same veth gives the truth the watch is judged against: the
// longest gap between ping's replies that came back within the watch's interval, the watch's
// own rule for an answer (a slower echo is not one). Needs
// root and iproute2; skips otherwise. Namespaces are named fgw-<pid>-* and removed even when an
// assertion fails.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/cmd/fabgate-probe/watch_lab.h"
#include "tests/support/process.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace fabgate {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using testing::ChildProcess;
using testing::read_file;
using testing::run_shell;
using testing::shell_quoted;
using testing::TempDir;
using namespace watch_lab;

// One flow's longest interruption: what was observed, and the most it may have lasted with the
// sampler's own lateness at its ends (longest_possible_interruption_ms).
struct FlowFigure {
  long long observed = -1;
  long long possible = -1;
};

struct CutResult {
  double truth_ms = 0;  // ping's longest reply gap, whatever the replies' round trips
  // per interval: ping's longest gap between replies back within that interval, the outage by
  // the watch's own rule (an echo slower than the interval is not an answer)
  std::map<int, double> on_time_truth_ms;
  // per interval: every flow's longest interruption
  std::vector<std::pair<int, std::vector<FlowFigure>>> watches;
  std::string diagnostics;
};

// One cut of `length` on `side`, watched at 10 ms and at 100 ms resolution at once.
CutResult watch_one_cut(const VethPair& pair, const std::string& side, milliseconds length) {
  TempDir dir("fabgate-watch-cut");
  CutResult result;
  const std::vector<int> intervals = {10, 100};
  std::vector<std::unique_ptr<Background>> watches;
  for (int interval : intervals) {
    const std::string name = "watch" + std::to_string(interval);
    watches.push_back(std::make_unique<Background>(
        pair.near(),
        shell_quoted(kProbe) + " watch --to " + kFarAddress + " --port " + std::to_string(kPort) +
            " --count 8 --interval " + std::to_string(interval) +
            "ms --reply-timeout 500ms --max-duration 20s",
        dir.file(name + ".json"), dir.file(name + ".err")));
  }
  Background ping(pair.near(), std::string("chrt -f 50 ping -n -D -i 0.002 ") + kFarAddress,
                  dir.file("ping.txt"), dir.file("ping.err"));
  // Both watches sampling against a working baseline before the cut: on a busy host a watch
  // may take longer than any fixed wait to start, and one that has not had an answer yet
  // counts its interruption from its first sample, before the cut (its readiness line is
  // what fabgate waits for before a change, too).
  for (int interval : intervals) {
    if (!wait_for_line(dir.file("watch" + std::to_string(interval) + ".err"), "sampling")) {
      // No truth either: the caller stops on it with this diagnostic.
      result.diagnostics +=
          "the watch at " + std::to_string(interval) + " ms never said it was sampling\n";
      return result;
    }
  }
  std::this_thread::sleep_for(300ms);
  pair.cut(side, length);
  // Wait until ping has its replies back (ARP may take up to two retransmissions after a
  // far-side cut, more on a busy host), then a little longer so the watches see the healed path
  // too. The bound is only for a path that never heals; a healed one ends the wait at once.
  const auto healed_by = std::chrono::steady_clock::now() + 10s;
  std::string ping_text;
  while (std::chrono::steady_clock::now() < healed_by) {
    std::this_thread::sleep_for(200ms);
    ping_text = read_file(dir.file("ping.txt"));
    auto gap = longest_reply_gap_ms(ping_text);
    if (gap && *gap >= static_cast<double>(length.count())) break;
  }
  std::this_thread::sleep_for(400ms);
  ping.finish();
  for (auto& watch : watches) watch->finish();
  ping_text = read_file(dir.file("ping.txt"));
  result.truth_ms = longest_reply_gap_ms(ping_text).value_or(-1);
  for (int interval : intervals) {
    auto gap = longest_reply_gap(ping_text, interval);
    result.on_time_truth_ms[interval] = gap ? gap->length_ms : -1;
    if (gap)
      result.diagnostics += "ping's longest gap between replies within " +
                            std::to_string(interval) + " ms: " +
                            std::to_string(static_cast<long long>(gap->length_ms)) +
                            " ms, ended at " + std::to_string(gap->ended_at_s) + "\n";
  }
  for (int interval : intervals) {
    const std::string name = "watch" + std::to_string(interval);
    const std::string text = read_file(dir.file(name + ".json"));
    auto document = nlohmann::json::parse(text, nullptr, false);
    std::vector<FlowFigure> longest;
    if (!document.is_discarded() && document.contains("flows")) {
      for (const auto& flow : document["flows"])
        longest.push_back({flow.value("longest_interruption_ms", -1LL),
                           flow.value("longest_possible_interruption_ms", -1LL)});
      result.diagnostics += name + ": " + std::to_string(document.value("stall_count", -1)) +
                            " stalls, longest " +
                            std::to_string(document.value("longest_stall_ms", -1)) + " ms\n";
      result.diagnostics += name + ": " + document.value("reason", "") + "\n";
      // Where a flow's longest interruption sits and what filled it (late or lost samples),
      // so a figure over ping's can be told apart from the path (docs/probes.md).
      const auto& first = document["flows"].empty() ? nlohmann::json::object()
                                                    : document["flows"].front();
      result.diagnostics += name + " flow 1: " + first.value("longest_interruption",
                                                             nlohmann::json::object()).dump() +
                            ", late " + std::to_string(first.value("samples_late", -1)) +
                            ", errors " + std::to_string(first.value("errors", -1)) + "\n";
    } else {
      result.diagnostics += name + ": unparsable: " + text + read_file(dir.file(name + ".err"));
    }
    result.watches.emplace_back(interval, longest);
  }
  return result;
}

void expect_bracketed(const std::string& side, milliseconds length, int repetitions) {
  VethPair pair;
  ASSERT_TRUE(pair.failure().empty()) << pair.failure();
  TempDir dir("fabgate-watch-responder");
  // The responder (and ping below) at a real-time priority: the test judges the watch, which
  // measures its own scheduling, and the truth ping gives, while a responder starved by other
  // work on this host delays its echoes past the late bound (docs/probes.md, Limits) and
  // ping's replies, which the kernel sends, would not show it: beside stress-ng --cpu 2, a
  // 300 ms cut that ping saw as 575 ms then read 862 ms at 10 ms resolution.
  Background responder(pair.far(),
                       "chrt -f 50 " + shell_quoted(kProbe) + " flows --respond --listen " +
                           kFarAddress + " --port " + std::to_string(kPort) + " --duration 120s",
                       dir.file("responder.json"), dir.file("responder.err"));
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    SCOPED_TRACE(side + " cut of " + std::to_string(length.count()) + " ms, repetition " +
                 std::to_string(repetition + 1));
    CutResult result = watch_one_cut(pair, side, length);
    // The figures of every cut, for comparing runs (docs/probes.md).
    for (const auto& [interval, flows] : result.watches) {
      long long least = 1'000'000, most = -1, possible = -1;
      for (const auto& flow : flows) {
        least = std::min(least, flow.observed);
        most = std::max(most, flow.observed);
        possible = std::max(possible, flow.possible);
      }
      const double on_time = result.on_time_truth_ms[interval];
      std::cout << side << " cut " << length.count() << " ms, ping saw "
                << static_cast<long long>(result.truth_ms) << " ms ("
                << static_cast<long long>(on_time) << " ms by replies within " << interval
                << " ms), watch at " << interval
                << " ms observed " << least << "-" << most << " ms (possible up to " << possible
                << " ms)\n";
    }
    // The independent measurement saw at least the cut, or the setup itself is broken.
    ASSERT_GE(result.truth_ms, static_cast<double>(length.count())) << result.diagnostics;
    for (const auto& [interval, flows] : result.watches) {
      const double truth = result.on_time_truth_ms[interval];
      SCOPED_TRACE("interval " + std::to_string(interval) + " ms; ping saw " +
                   std::to_string(static_cast<long long>(result.truth_ms)) + " ms, " +
                   std::to_string(static_cast<long long>(truth)) + " ms by replies within " +
                   std::to_string(interval) + " ms\n" + result.diagnostics);
      ASSERT_EQ(flows.size(), 8u);
      // Within max(50 ms, one interval) of the truth by the watch's rule (ping's gap between
      // replies within the interval), plus ping's own 2 ms interval. The sampler's own
      // lateness at the ends is not in the observed figure (it is unobserved, in the possible
      // one), so a starved sender does not widen it.
      const double allowance = std::max(50, interval) + 2.0;
      for (const auto& flow : flows) {
        EXPECT_GE(flow.possible, length.count()) << "a flow reported less than the cut";
        EXPECT_LE(static_cast<double>(flow.observed), truth + allowance)
            << "a flow reported more than the outage plus the probe's resolution";
      }
    }
  }
}

bool can_run() {
  if (::geteuid() != 0) {
    GTEST_LOG_(INFO) << "not root";
    return false;
  }
  return run_shell("command -v ip && command -v ping && command -v chrt").exit_code == 0;
}

TEST(WatchCut, NearSideCutsAreNeverUnderReported) {
  // Given the watch's own link taken down for 300 ms and for 1000 ms (sends are refused while
  // it is down), then every flow at 10 ms and at 100 ms resolution reports at least the cut and
  // at most the outage ping saw plus max(50 ms, one interval).
  if (!can_run()) GTEST_SKIP() << "needs root, iproute2, ping and chrt to cut a veth in namespaces";
  expect_bracketed("near", 300ms, 3);
  expect_bracketed("near", 1000ms, 2);
}

TEST(WatchCut, FarSideCutsAreNeverUnderReported) {
  // Given the far end taken down for 300 ms and for 1000 ms (the watch's link only loses
  // carrier: packets wait in the neighbour queue and arrive in one burst once ARP resolves,
  // which the old 1 s late-echo rule counted as answers and reported as 0-100 ms), then every
  // flow reports at least the cut and at most the outage ping saw plus max(50 ms, interval).
  if (!can_run()) GTEST_SKIP() << "needs root, iproute2, ping and chrt to cut a veth in namespaces";
  expect_bracketed("far", 300ms, 3);
  expect_bracketed("far", 1000ms, 2);
}

}  // namespace
}  // namespace fabgate
