#pragma once

// Shared by the watch's integration tests: two network namespaces joined by a veth pair that
// can be cut on either side, background commands in a namespace, and ping's view of an outage.
// Namespaces are named fgw-<pid>-* and removed even when an assertion fails.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace fabgate::watch_lab {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using testing::ChildProcess;
using testing::run_shell;
using testing::shell_quoted;

inline const std::string kProbe = FABGATE_BINARY_DIR "/cmd/fabgate-probe/fabgate-probe";
constexpr const char* kNearAddress = "10.199.0.1";
constexpr const char* kFarAddress = "10.199.0.2";
constexpr int kPort = 7400;

// Two namespaces joined by a veth pair: the watch runs in `near`, the responder in `far`.
class VethPair {
 public:
  VethPair() {
    const std::string base = "fgw-" + std::to_string(::getpid());
    near_ = base + "-near";
    far_ = base + "-far";
    const std::string script = "set -e; ip netns add " + near_ + "; ip netns add " + far_ +
                               "; ip link add cut0 netns " + near_ +
                               " type veth peer name cut1 netns " + far_ + "; ip -n " + near_ +
                               " addr add " + kNearAddress + "/24 dev cut0; ip -n " + far_ +
                               " addr add " + kFarAddress + "/24 dev cut1; for ns in " + near_ +
                               " " + far_ + "; do ip -n $ns link set lo up; done; ip -n " + near_ +
                               " link set cut0 up; ip -n " + far_ + " link set cut1 up";
    auto outcome = run_shell(script);
    created_ = true;
    if (outcome.exit_code != 0) failure_ = outcome.output;
  }
  ~VethPair() {
    if (created_)
      (void)run_shell("ip netns del " + near_ + " 2>/dev/null; ip netns del " + far_ +
                      " 2>/dev/null");
  }
  VethPair(const VethPair&) = delete;
  VethPair& operator=(const VethPair&) = delete;

  const std::string& failure() const { return failure_; }
  const std::string& near() const { return near_; }
  const std::string& far() const { return far_; }

  // Takes one end down for `length` and brings it back.
  void cut(const std::string& side, milliseconds length) const {
    const bool near_side = side == "near";
    const std::string prefix =
        "ip -n " + (near_side ? near_ : far_) + " link set " + (near_side ? "cut0" : "cut1");
    run_shell(prefix + " down");
    std::this_thread::sleep_for(length);
    run_shell(prefix + " up");
  }

 private:
  std::string near_, far_, failure_;
  bool created_ = false;
};

// A background command in a namespace with its stdout and stderr in files; SIGTERM asks it to
// report, and the object reaps it (SIGKILL after 5 s) whatever happens.
class Background {
 public:
  Background(const std::string& netns, const std::string& command, const std::string& out,
             const std::string& err)
      : child_({"/bin/sh", "-c",
                "exec ip netns exec " + netns + " " + command + " >" + shell_quoted(out) + " 2>" +
                    shell_quoted(err)}) {}

  // Asks it to stop and waits (at most 5 s) for it to exit.
  void finish() {
    if (child_.pid() <= 0) return;
    ::kill(child_.pid(), SIGTERM);
    for (int i = 0; i < 50 && child_.running(); ++i) std::this_thread::sleep_for(100ms);
    child_.stop();
  }

 private:
  ChildProcess child_;
};

// One of ping's replies: when it arrived (`-D`, seconds since the epoch) and its round trip.
struct PingReply {
  double at_s = 0;
  double rtt_ms = 0;
};

inline std::vector<PingReply> ping_replies(const std::string& ping_output) {
  static const std::regex reply(R"(^\[(\d+\.\d+)\] \d+ bytes from .* time=([0-9.]+) ms)");
  std::vector<PingReply> replies;
  std::size_t start = 0;
  while (start < ping_output.size()) {
    std::size_t end = ping_output.find('\n', start);
    if (end == std::string::npos) end = ping_output.size();
    std::smatch match;
    std::string line = ping_output.substr(start, end - start);
    if (std::regex_search(line, match, reply))
      replies.push_back({std::stod(match[1]), std::stod(match[2])});
    start = end + 1;
  }
  return replies;
}

// The longest time between two consecutive ping replies that came back within `on_time`
// (and when it ended): the time the path delivered nothing within that bound, to ping's own
// interval (2 ms). The watch counts an echo slower than its interval as not answered
// (docs/probes.md), so it is judged against the gap between replies within its interval: on a
// busy host the kernel's packet work can lag tens of milliseconds after a link comes back,
// which ping's bare reply gap never shows.
struct ReplyGap {
  double length_ms = 0;
  double ended_at_s = 0;
};

inline std::optional<ReplyGap> longest_reply_gap(const std::string& ping_output,
                                                 double on_time_ms = 1e9) {
  std::optional<double> previous;
  std::optional<ReplyGap> longest;
  for (const PingReply& reply : ping_replies(ping_output)) {
    if (reply.rtt_ms > on_time_ms) continue;
    if (previous) {
      const double gap = (reply.at_s - *previous) * 1000.0;
      if (!longest || gap > longest->length_ms) longest = ReplyGap{gap, reply.at_s};
    }
    previous = reply.at_s;
  }
  return longest;
}

inline std::optional<double> longest_reply_gap_ms(const std::string& ping_output) {
  auto gap = longest_reply_gap(ping_output);
  if (!gap) return std::nullopt;
  return gap->length_ms;
}

// Waits at most 20 s for a readiness line in a probe's stderr; whether it came. How soon a probe
// starts is not what these tests judge, and beside the suite's other tests (three at a time in
// CI, some starting whole labs) a start can take seconds, which a 5 s wait left no room for.
inline bool wait_for_line(const std::string& path, const std::string& text) {
  for (int i = 0; i < 200; ++i) {
    if (std::filesystem::exists(path) && testing::read_file(path).find(text) != std::string::npos)
      return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

}  // namespace fabgate::watch_lab
