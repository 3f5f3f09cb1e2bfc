// The telemetry timeline from scripted notifications in the shapes fabgate-gnmid streams
// (the real target is exercised by gnmid_test and the lab): BGP session and received-prefix
// changes are events at the device's timestamps next to the interface events, each subscribed
// source must be sampled across the whole window, and a second window continues the first.

#include "adapters/gnmi/telemetry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace fabgate::gnmi {
namespace {

using nlohmann::json;

constexpr std::int64_t kBase = 1'796'100'000'000'000'000;
constexpr std::int64_t kSecond = 1'000'000'000;

const std::string kNeighbors =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors";

GnmiPath path_of(const std::string& text) {
  auto parsed = parse_path(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.value();
}

GnmiNotification interface_sample(std::int64_t at, const std::string& oper) {
  GnmiNotification notification;
  notification.timestamp_ns = at;
  notification.updates.push_back(
      {path_of("/interfaces/interface[name=to-spine1]/state"), json{{"oper-status", oper}}.dump()});
  return notification;
}

// Two notifications like one SAMPLE of the two BGP subscriptions: the session-state leaf and
// the received-prefixes leaf of 10.0.1.1, as JSON_IETF carries them.
std::vector<GnmiNotification> bgp_sample(std::int64_t at, const std::string& state, int received) {
  const std::string neighbor = kNeighbors + "/neighbor[neighbor-address=10.0.1.1]";
  GnmiNotification session, prefixes;
  session.timestamp_ns = at;
  session.updates.push_back(
      {path_of(neighbor + "/state/session-state"), json("openconfig-bgp-types:" + state).dump()});
  prefixes.timestamp_ns = at + 1'000'000;
  prefixes.updates.push_back(
      {path_of(neighbor +
               "/afi-safis/afi-safi[afi-safi-name=openconfig-bgp-types:IPV4_UNICAST]/state/"
               "prefixes/received"),
       json(std::to_string(received)).dump()});
  return {session, prefixes};
}

GnmiNotification bgp_deleted(std::int64_t at) {
  GnmiNotification notification;
  notification.timestamp_ns = at;
  notification.deletes.push_back(
      path_of(kNeighbors + "/neighbor[neighbor-address=*]/state/session-state"));
  return notification;
}

std::vector<GnmiNotification> device_samples(
    const std::vector<std::tuple<std::int64_t, std::string, std::string, int>>& script) {
  std::vector<GnmiNotification> out;
  for (const auto& [at, oper, session, received] : script) {
    out.push_back(interface_sample(at, oper));
    for (auto& notification : bgp_sample(at + 2'000'000, session, received))
      out.push_back(std::move(notification));
  }
  return out;
}

TimelineWindow both_sources(std::int64_t start, std::int64_t end) {
  return {
      start, end, Duration{2500}, {TelemetrySource::interfaces, TelemetrySource::bgp_neighbors}};
}

std::vector<std::string> lines(const TelemetryTimeline& timeline) {
  std::vector<std::string> out;
  for (const auto& event : timeline.events)
    out.push_back(std::to_string((event.timestamp_ns - kBase) / 1'000'000) + "ms " +
                  std::string(to_string(event.source)) + " " + event.subject + " " + event.what);
  return out;
}

TEST(TelemetryTimeline, BgpSessionDropAndReturnAreEventsBesideTheLinkFlap) {
  // Given one sample a second where to-spine1 goes down at 2 s, the session to 10.0.1.1 drops
  // to IDLE with its 4 prefixes gone at 3 s, and both come back at 5 s and 6 s, then every
  // change is an event at the timestamp of the sample that showed it, the BGP ones naming the
  // neighbour and the address family, and the window is covered.
  auto samples = device_samples({{kBase, "UP", "ESTABLISHED", 4},
                                 {kBase + kSecond, "UP", "ESTABLISHED", 4},
                                 {kBase + 2 * kSecond, "DOWN", "ESTABLISHED", 4},
                                 {kBase + 3 * kSecond, "DOWN", "IDLE", 0},
                                 {kBase + 4 * kSecond, "DOWN", "ACTIVE", 0},
                                 {kBase + 5 * kSecond, "UP", "ACTIVE", 0},
                                 {kBase + 6 * kSecond, "UP", "ESTABLISHED", 4}});
  auto timeline =
      device_timeline({}, samples, both_sources(kBase, kBase + 6 * kSecond + 3'000'000));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  EXPECT_EQ(timeline.samples, 21u);
  EXPECT_EQ(lines(timeline), (std::vector<std::string>{
                                 "2000ms interface to-spine1 oper-status UP -> DOWN",
                                 "3002ms bgp 10.0.1.1 session-state ESTABLISHED -> IDLE",
                                 "3003ms bgp 10.0.1.1 received-prefixes IPV4_UNICAST 4 -> 0",
                                 "4002ms bgp 10.0.1.1 session-state IDLE -> ACTIVE",
                                 "5000ms interface to-spine1 oper-status DOWN -> UP",
                                 "6002ms bgp 10.0.1.1 session-state ACTIVE -> ESTABLISHED",
                                 "6003ms bgp 10.0.1.1 received-prefixes IPV4_UNICAST 0 -> 4",
                             }));
}

TEST(TelemetryTimeline, AStreamThatDeliversNoBgpSampleHasNotShownTheSessionsHeld) {
  // Given interface samples every second across the window and no BGP sample at all, then the
  // window is not covered: BGP is named as never sampled, though no event was seen.
  std::vector<GnmiNotification> samples;
  for (int second = 0; second <= 5; ++second)
    samples.push_back(interface_sample(kBase + second * kSecond, "UP"));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 5 * kSecond));
  EXPECT_FALSE(timeline.covered());
  EXPECT_TRUE(timeline.events.empty());
  EXPECT_EQ(timeline.gaps, std::vector<std::string>{"no bgp sample in the whole window"});
}

TEST(TelemetryTimeline, BgpFallingSilentMidWindowIsAGapEvenWhileInterfacesStream) {
  // Given both sources sampled for 2 s, then only interfaces for the remaining 6 s, then the
  // BGP silence from its last sample to the window's end is named and the window is not
  // covered.
  auto samples = device_samples({{kBase, "UP", "ESTABLISHED", 4},
                                 {kBase + kSecond, "UP", "ESTABLISHED", 4},
                                 {kBase + 2 * kSecond, "UP", "ESTABLISHED", 4}});
  for (int second = 3; second <= 8; ++second)
    samples.push_back(interface_sample(kBase + second * kSecond, "UP"));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 8 * kSecond));
  EXPECT_FALSE(timeline.covered());
  ASSERT_EQ(timeline.gaps.size(), 1u);
  EXPECT_EQ(timeline.gaps[0].rfind("no bgp sample from ", 0), 0u) << timeline.gaps[0];
  EXPECT_NE(timeline.gaps[0].find("the end of the window"), std::string::npos) << timeline.gaps[0];
}

TEST(TelemetryTimeline, NeighboursDeletedByTheTargetAreAnEventAndStillSampleBgp) {
  // Given a target that serves the BGP neighbours, then deletes them for two samples (FRR not
  // answering), then serves them again, then both transitions are events, the window stays
  // covered (a delete says "not there", which is evidence), and the session seen after is
  // compared with the one seen before.
  std::vector<GnmiNotification> samples;
  for (int second = 0; second <= 4; ++second)
    samples.push_back(interface_sample(kBase + second * kSecond, "UP"));
  for (auto& n : bgp_sample(kBase + 1'000'000, "ESTABLISHED", 4)) samples.push_back(n);
  samples.push_back(bgp_deleted(kBase + kSecond + 1'000'000));
  samples.push_back(bgp_deleted(kBase + 2 * kSecond + 1'000'000));
  for (auto& n : bgp_sample(kBase + 3 * kSecond + 1'000'000, "CONNECT", 0)) samples.push_back(n);
  for (auto& n : bgp_sample(kBase + 4 * kSecond + 1'000'000, "ESTABLISHED", 4))
    samples.push_back(n);
  auto timeline =
      device_timeline({}, samples, both_sources(kBase, kBase + 4 * kSecond + 2'000'000));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  EXPECT_EQ(lines(timeline), (std::vector<std::string>{
                                 "1001ms bgp neighbours no longer served (the target deleted them)",
                                 "3001ms bgp neighbours served again",
                                 "3001ms bgp 10.0.1.1 session-state ESTABLISHED -> CONNECT",
                                 "3002ms bgp 10.0.1.1 received-prefixes IPV4_UNICAST 4 -> 0",
                                 "4001ms bgp 10.0.1.1 session-state CONNECT -> ESTABLISHED",
                                 "4002ms bgp 10.0.1.1 received-prefixes IPV4_UNICAST 0 -> 4",
                             }));
}

TEST(TelemetryTimeline, ASecondWindowContinuesFromTheStateTheFirstEndedIn) {
  // Given a first window that ended with the session IDLE and the link DOWN, and a second
  // window whose first sample already shows both back, then the second window reports the
  // return at that first sample's timestamp, and nothing of the first window's events.
  auto first =
      device_samples({{kBase, "UP", "ESTABLISHED", 4}, {kBase + kSecond, "DOWN", "IDLE", 0}});
  auto second = device_samples({{kBase + 2 * kSecond, "UP", "ESTABLISHED", 4},
                                {kBase + 3 * kSecond, "UP", "ESTABLISHED", 4}});
  auto timeline = device_timeline(
      first, second, both_sources(kBase + 2 * kSecond, kBase + 3 * kSecond + 3'000'000));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  EXPECT_EQ(timeline.first_ns, kBase + 2 * kSecond);
  EXPECT_EQ(lines(timeline), (std::vector<std::string>{
                                 "2000ms interface to-spine1 oper-status DOWN -> UP",
                                 "2002ms bgp 10.0.1.1 session-state IDLE -> ESTABLISHED",
                                 "2003ms bgp 10.0.1.1 received-prefixes IPV4_UNICAST 0 -> 4",
                             }));
}

TEST(TelemetryTimeline, AWholeNeighbourEntryIsReadLikeItsLeaves) {
  // Given a target that answers the neighbour list with whole entries (state and afi-safis in
  // one value, JSON encoding), then the session and the prefix count are read from it.
  auto entry = [](std::int64_t at, const char* state, int received) {
    GnmiNotification notification;
    notification.timestamp_ns = at;
    notification.updates.push_back(
        {path_of(kNeighbors + "/neighbor[neighbor-address=10.0.1.3]"),
         json{{"neighbor-address", "10.0.1.3"},
              {"state", {{"session-state", state}, {"peer-as", 65102}}},
              {"afi-safis",
               {{"afi-safi",
                 {{{"afi-safi-name", "IPV4_UNICAST"},
                   {"state", {{"prefixes", {{"received", received}}}}}}}}}}}
             .dump()});
    return notification;
  };
  auto timeline =
      device_timeline({}, {entry(kBase, "ESTABLISHED", 2), entry(kBase + kSecond, "OPENSENT", 0)},
                      {kBase, kBase + kSecond, Duration{2500}, {TelemetrySource::bgp_neighbors}});
  EXPECT_TRUE(timeline.covered());
  EXPECT_EQ(lines(timeline), (std::vector<std::string>{
                                 "1000ms bgp 10.0.1.3 session-state ESTABLISHED -> OPENSENT",
                                 "1000ms bgp 10.0.1.3 received-prefixes IPV4_UNICAST 2 -> 0",
                             }));
}

}  // namespace
}  // namespace fabgate::gnmi
