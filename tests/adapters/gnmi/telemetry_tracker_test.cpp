// Given notifications fed one at a time to a TimelineTracker, as the telemetry layer does while
// a change runs, then each window's timeline is the one device_timeline() gives for that
// window after everything before it, what it holds does not grow with the length of the
// change, and a device past the limits is no-evidence with what was left out named
// ("(truncated)"), never a shorter timeline that passes.

#include "adapters/gnmi/telemetry_tracker.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace fabgate::gnmi {
namespace {

using nlohmann::json;

constexpr std::int64_t kBase = 1'796'100'000'000'000'000;
constexpr std::int64_t kSecond = 1'000'000'000;

const std::string kNeighbor =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=";

// One sample as fabgate-gnmid streams it: `interfaces` with oper-status, in-errors and
// carrier-transitions in one notification, and the neighbours' session-state in another.
std::vector<GnmiNotification> sample(std::int64_t at, int interfaces, const std::string& oper,
                                     int carrier, int errors, const std::string& session) {
  GnmiNotification links, sessions;
  links.timestamp_ns = sessions.timestamp_ns = at;
  for (int i = 0; i < interfaces; ++i)
    links.updates.push_back(
        {parse_path("/interfaces/interface[name=swp" + std::to_string(i + 1) + "]/state").value(),
         json{{"oper-status", i == 0 ? oper : "UP"},
              {"counters",
               {{"in-errors", std::to_string(i == 0 ? errors : 0)},
                {"carrier-transitions", std::to_string(i == 0 ? carrier : 2)}}}}
             .dump()});
  sessions.updates.push_back(
      {parse_path(kNeighbor + "10.0.1.1]/state/session-state").value(), json(session).dump()});
  return {links, sessions};
}

// 30 s of samples every second on 4 interfaces: swp1 goes down at 8 s and comes back at 9 s,
// in-errors rise at 15 s, the session drops at 22 s and stays down, and nothing arrives from
// 25 s to 28 s (carrier-transitions cover the interfaces' silence; the session has no
// transitions counter, so the BGP silence is a gap).
std::vector<GnmiNotification> change_stream() {
  std::vector<GnmiNotification> all;
  for (int second = 0; second < 30; ++second) {
    if (second >= 25 && second < 29) continue;
    const bool down = second == 8;
    for (auto& notification :
         sample(kBase + second * kSecond, 4, down ? "DOWN" : "UP", second < 8 ? 2 : 4,
                second < 15 ? 0 : 3, second < 22 ? "ESTABLISHED" : "IDLE"))
      all.push_back(std::move(notification));
  }
  return all;
}

std::vector<std::string> lines(const TelemetryTimeline& timeline) {
  std::vector<std::string> out;
  for (const auto& event : timeline.events)
    out.push_back(std::to_string((event.timestamp_ns - kBase) / 1'000'000) + " " + event.subject +
                  " " + event.what + (event.flap ? " [flap]" : ""));
  for (const auto& gap : timeline.gaps) out.push_back("gap: " + gap);
  for (const auto& gap : timeline.covered_gaps) out.push_back("covered: " + gap);
  out.push_back("samples " + std::to_string(timeline.samples) + " from " +
                std::to_string(timeline.first_ns) + " to " + std::to_string(timeline.last_ns));
  return out;
}

const std::vector<TelemetrySource> kBoth = {TelemetrySource::interfaces,
                                            TelemetrySource::bgp_neighbors};

TEST(TimelineTracker, EachWindowIsTheTimelineOfItsNotificationsAfterAllThoseBeforeIt) {
  // Given 30 s of samples cut into windows at 10 s and 20 s, fed one notification at a time,
  // then each window's timeline (events, flaps, gaps, samples) is device_timeline()'s for that
  // window's notifications after every earlier one: the flap, the error rise, the session drop
  // and the 5 s silence each land in their window, once.
  const auto all = change_stream();
  const Duration max_gap{3000};
  TimelineTracker tracker(kBoth, max_gap);
  tracker.begin_window(std::nullopt);
  std::vector<GnmiNotification> before, window;
  std::size_t windows = 0;
  auto end_window = [&] {
    std::int64_t first = window.front().timestamp_ns, last = first;
    for (const auto& notification : window) {
      first = std::min(first, notification.timestamp_ns);
      last = std::max(last, notification.timestamp_ns);
    }
    auto expected = device_timeline(before, window, {first, last, max_gap, kBoth});
    EXPECT_EQ(lines(tracker.end_window(std::nullopt)), lines(expected)) << "window " << windows;
    EXPECT_FALSE(expected.events.empty()) << "window " << windows;
    before.insert(before.end(), window.begin(), window.end());
    window.clear();
    ++windows;
  };
  for (const auto& notification : all) {
    if (!window.empty() && (notification.timestamp_ns - kBase) % (10 * kSecond) == 0 &&
        notification.timestamp_ns != window.back().timestamp_ns)
      end_window();
    window.push_back(notification);
    tracker.add(notification);
  }
  end_window();
  EXPECT_EQ(windows, 3u);
}

TEST(TimelineTracker, WhatItHoldsDoesNotGrowWithTheLengthOfTheChange) {
  // Given 64 interfaces and a BGP neighbour sampled every second, then after 3 minutes the
  // tracker holds about what it held after 20 s (the subjects' state and the samples waiting
  // to be put in order), not the 180 samples.
  TimelineTracker tracker(kBoth, Duration{3000});
  tracker.begin_window(std::nullopt);
  std::size_t after_20s = 0;
  for (int second = 0; second < 180; ++second) {
    for (const auto& notification : sample(kBase + second * kSecond, 64, "UP", 2, 0, "ESTABLISHED"))
      tracker.add(notification);
    if (second == 19) after_20s = tracker.retained_bytes();
  }
  EXPECT_GT(after_20s, 0u);
  EXPECT_LT(tracker.retained_bytes(), after_20s + after_20s / 10) << after_20s;
  auto timeline = tracker.end_window(std::nullopt);
  EXPECT_TRUE(timeline.covered());
  EXPECT_EQ(timeline.samples, 360u);
}

TEST(TimelineTracker, PastItsLimitsTheWindowIsNoEvidenceNamingWhatWasNotKept) {
  // Given a tracker keeping at most 2 events per window and 2 interfaces, and a device with
  // 4 interfaces whose swp1 flaps and whose errors rise (5 events), then the window keeps the
  // first 2 events and is not covered: one gap says how many events were not kept, another
  // that interfaces past the limit are not followed.
  TimelineTracker tracker(kBoth, Duration{3000}, {.subjects = 2, .events = 2});
  tracker.begin_window(std::nullopt);
  for (int second = 0; second < 4; ++second)
    for (const auto& notification :
         sample(kBase + second * kSecond, 4, second == 1 ? "DOWN" : "UP", 2 + 2 * (second >= 1),
                second >= 3 ? 5 : 0, "ESTABLISHED"))
      tracker.add(notification);
  auto timeline = tracker.end_window(std::nullopt);
  EXPECT_FALSE(timeline.covered());
  EXPECT_EQ(timeline.events.size(), 2u);
  ASSERT_EQ(timeline.gaps.size(), 2u) << ::testing::PrintToString(timeline.gaps);
  EXPECT_EQ(timeline.gaps[0], "3 events after the first 2 of the window were not kept (truncated)");
  EXPECT_EQ(timeline.gaps[1],
            "more interfaces than the 2 followed per device: the others are not followed "
            "(truncated)");
}

}  // namespace
}  // namespace fabgate::gnmi
