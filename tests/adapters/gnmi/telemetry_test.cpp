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

// The window is not covered, for one reason: a gap whose text starts with `start`.
void expect_one_gap(const TelemetryTimeline& timeline, const std::string& start) {
  EXPECT_FALSE(timeline.covered());
  ASSERT_EQ(timeline.gaps.size(), 1u) << ::testing::PrintToString(timeline.gaps);
  EXPECT_EQ(timeline.gaps[0].rfind(start, 0), 0u) << timeline.gaps[0];
}

TEST(TelemetryTimeline, BgpSessionDropAndReturnAreEventsBesideTheLinkFlap) {
  // Given one sample a second where to-spine1 goes down at 2 s, the session to 10.0.1.1 drops
  // to IDLE with its 4 prefixes gone at 3 s, and both come back at 5 s and 6 s, then every
  // change is an event at the timestamp of the sample that showed it, the BGP ones naming the
  // neighbour and the address family, each return is a flap, and the window is covered.
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
                                 "5000ms interface to-spine1 oper-status UP again 3.0 s after "
                                 "leaving it at 2026-12-01T04:40:02.000Z: flapped",
                                 "6002ms bgp 10.0.1.1 session-state ACTIVE -> ESTABLISHED",
                                 "6002ms bgp 10.0.1.1 session-state ESTABLISHED again 3.0 s after "
                                 "leaving it at 2026-12-01T04:40:03.002Z: flapped",
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

TEST(TelemetryTimeline, NeighboursDeletedByTheTargetAreAnEventButNotCoverage) {
  // Given a target that serves the BGP neighbours, then deletes them for two samples (FRR not
  // answering), then serves them again, then both transitions are events, the 3 s without a
  // BGP value is a gap (a delete shows no value, so it covers nothing), and the session seen
  // after is compared with the one seen before (its return to ESTABLISHED is a flap).
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
  expect_one_gap(timeline,
                 "no bgp sample from 2026-12-01T04:40:00.002Z to 2026-12-01T04:40:03.001Z (3.0 s), "
                 "not covered");
  EXPECT_EQ(lines(timeline), (std::vector<std::string>{
                                 "1001ms bgp neighbours no longer served (the target deleted them)",
                                 "3001ms bgp neighbours served again",
                                 "3001ms bgp 10.0.1.1 session-state ESTABLISHED -> CONNECT",
                                 "3002ms bgp 10.0.1.1 received-prefixes IPV4_UNICAST 4 -> 0",
                                 "4001ms bgp 10.0.1.1 session-state CONNECT -> ESTABLISHED",
                                 "4001ms bgp 10.0.1.1 session-state ESTABLISHED again 1.0 s "
                                 "after leaving it at 2026-12-01T04:40:03.001Z: flapped",
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

namespace fabgate::gnmi {

// ---- Silences covered by counters, and flaps --------------------------------------------------

namespace {

// One interface sample as fabgate-gnmid streams it: to-spine1 and to-host1 with oper-status and
// carrier-transitions (absent when the count is negative: a target that does not serve it).
GnmiNotification link_sample(std::int64_t at, const std::string& spine_oper, int spine_carrier,
                             int host_carrier = 1) {
  GnmiNotification notification;
  notification.timestamp_ns = at;
  auto add = [&](const char* name, const std::string& oper, int carrier) {
    json state = {{"oper-status", oper}, {"counters", {{"in-errors", "0"}}}};
    if (carrier >= 0) state["counters"]["carrier-transitions"] = std::to_string(carrier);
    notification.updates.push_back(
        {path_of(std::string("/interfaces/interface[name=") + name + "]/state"), state.dump()});
  };
  add("to-spine1", spine_oper, spine_carrier);
  add("to-host1", "UP", host_carrier);
  return notification;
}

// One BGP reading as fabgate-gnmid streams it: the session-state and established-transitions
// paths of 10.0.1.1 and 10.0.1.3, each a notification of its own, all stamped with the reading's
// time. A negative count leaves the counter out.
std::vector<GnmiNotification> bgp_reading(std::int64_t at, const std::string& state,
                                          int established, int other_established = 1) {
  GnmiNotification sessions, counters;
  sessions.timestamp_ns = counters.timestamp_ns = at;
  auto add = [&](const char* address, const std::string& session, int count) {
    const std::string neighbor = kNeighbors + "/neighbor[neighbor-address=" + address + "]";
    sessions.updates.push_back({path_of(neighbor + "/state/session-state"),
                                json("openconfig-bgp-types:" + session).dump()});
    if (count >= 0)
      counters.updates.push_back({path_of(neighbor + "/state/established-transitions"),
                                  json(std::to_string(count)).dump()});
  };
  add("10.0.1.1", state, established);
  add("10.0.1.3", "ESTABLISHED", other_established);
  return {sessions, counters};
}

// Interface samples every second from `from` to `to` (seconds after kBase) with to-spine1 UP
// and its carrier-transitions at `carrier`.
void links_every_second(std::vector<GnmiNotification>& out, int from, int to, int carrier) {
  for (int second = from; second <= to; ++second)
    out.push_back(link_sample(kBase + second * kSecond, "UP", carrier));
}

void append(std::vector<GnmiNotification>& out, std::vector<GnmiNotification> more) {
  for (auto& notification : more) out.push_back(std::move(notification));
}

std::vector<const TelemetryEvent*> flaps(const TelemetryTimeline& timeline) {
  std::vector<const TelemetryEvent*> out;
  for (const auto& event : timeline.events)
    if (event.flap) out.push_back(&event);
  return out;
}

}  // namespace

TEST(TelemetryTimeline, ABgpSilenceBetweenSamplesCarryingTheCounterIsCoveredAndNamed) {
  // Given interface samples every second and BGP readings at 0, 1 and 6 s (FRR slow for 5 s)
  // whose established-transitions did not move, then the window is covered, the silence is
  // named with its length and what covers it, and nothing is a flap.
  std::vector<GnmiNotification> samples;
  links_every_second(samples, 0, 7, 1);
  append(samples, bgp_reading(kBase, "ESTABLISHED", 1));
  append(samples, bgp_reading(kBase + kSecond, "ESTABLISHED", 1));
  append(samples, bgp_reading(kBase + 6 * kSecond, "ESTABLISHED", 1));
  append(samples, bgp_reading(kBase + 7 * kSecond, "ESTABLISHED", 1));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 7 * kSecond));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  ASSERT_EQ(timeline.covered_gaps.size(), 1u);
  EXPECT_EQ(timeline.covered_gaps[0],
            "no bgp sample from 2026-12-01T04:40:01.000Z to 2026-12-01T04:40:06.000Z (5.0 s), "
            "covered by established-transitions on 2 sessions");
  EXPECT_TRUE(timeline.events.empty()) << lines(timeline).front();
}

TEST(TelemetryTimeline, ASilenceWhereOneSessionLacksTheCounterIsNoEvidenceNamingIt) {
  // Given a BGP silence of 5 s whose last sample before it has no established-transitions for
  // 10.0.1.1, then the window is not covered and the gap names that neighbour and why.
  std::vector<GnmiNotification> samples;
  links_every_second(samples, 0, 6, 1);
  append(samples, bgp_reading(kBase, "ESTABLISHED", -1));
  append(samples, bgp_reading(kBase + 5 * kSecond, "ESTABLISHED", 1));
  append(samples, bgp_reading(kBase + 6 * kSecond, "ESTABLISHED", 1));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 6 * kSecond));
  EXPECT_FALSE(timeline.covered());
  ASSERT_EQ(timeline.gaps.size(), 1u);
  EXPECT_EQ(timeline.gaps[0],
            "no bgp sample from 2026-12-01T04:40:00.000Z to 2026-12-01T04:40:05.000Z (5.0 s), "
            "not covered: 10.0.1.1 has no established-transitions before it");
  EXPECT_TRUE(timeline.covered_gaps.empty());
}

TEST(TelemetryTimeline, ALinkFlapHiddenInAnInterfaceSilenceIsAFlapFromTheCounter) {
  // Given interface samples at 0-1 s and 6-7 s (the target paused), to-spine1 UP on both sides
  // of the silence but its carrier-transitions up by 2, then the silence is covered and the
  // flap is an event at the first sample after it, naming the counter and the silence.
  std::vector<GnmiNotification> samples;
  links_every_second(samples, 0, 1, 3);
  links_every_second(samples, 6, 7, 5);
  append(samples, bgp_reading(kBase, "ESTABLISHED", 1));
  for (int second = 1; second <= 7; ++second)
    append(samples, bgp_reading(kBase + second * kSecond, "ESTABLISHED", 1));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 7 * kSecond));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  ASSERT_EQ(timeline.covered_gaps.size(), 1u);
  EXPECT_NE(timeline.covered_gaps[0].find("covered by carrier-transitions on 2 interfaces"),
            std::string::npos)
      << timeline.covered_gaps[0];
  auto flapped = flaps(timeline);
  ASSERT_EQ(flapped.size(), 1u) << testing::PrintToString(lines(timeline));
  EXPECT_EQ(flapped[0]->subject, "to-spine1");
  EXPECT_EQ(flapped[0]->timestamp_ns, kBase + 6 * kSecond);
  EXPECT_EQ(flapped[0]->what,
            "carrier-transitions +2 within the silence from 2026-12-01T04:40:01.000Z to "
            "2026-12-01T04:40:06.000Z (5.0 s): flapped");
}

TEST(TelemetryTimeline, ASessionThatDroppedAndReturnedBetweenTwoSamplesIsAFlap) {
  // Given two BGP readings a second apart, both ESTABLISHED, with established-transitions up by
  // one (the session re-established in between), then that is a flap of 10.0.1.1 and the
  // window is covered.
  std::vector<GnmiNotification> samples;
  links_every_second(samples, 0, 2, 1);
  append(samples, bgp_reading(kBase, "ESTABLISHED", 4));
  append(samples, bgp_reading(kBase + kSecond, "ESTABLISHED", 5));
  append(samples, bgp_reading(kBase + 2 * kSecond, "ESTABLISHED", 5));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 2 * kSecond));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  auto flapped = flaps(timeline);
  ASSERT_EQ(flapped.size(), 1u);
  EXPECT_EQ(flapped[0]->source, TelemetrySource::bgp_neighbors);
  EXPECT_EQ(flapped[0]->subject, "10.0.1.1");
  EXPECT_EQ(flapped[0]->what,
            "established-transitions +1 since the sample at 2026-12-01T04:40:00.000Z: flapped");
}

TEST(TelemetryTimeline, ACounterThatWentBackAcrossASilenceIsNoEvidence) {
  // Given a BGP silence of 5 s after which 10.0.1.1's established-transitions is lower than
  // before it (FRR restarted: its counts start again), then flaps inside the silence cannot be
  // counted: the window is not covered and the gap says the counter was reset.
  std::vector<GnmiNotification> samples;
  links_every_second(samples, 0, 6, 1);
  append(samples, bgp_reading(kBase, "ESTABLISHED", 7));
  append(samples, bgp_reading(kBase + 5 * kSecond, "ESTABLISHED", 1));
  append(samples, bgp_reading(kBase + 6 * kSecond, "ESTABLISHED", 1));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 6 * kSecond));
  EXPECT_FALSE(timeline.covered());
  ASSERT_EQ(timeline.gaps.size(), 1u);
  EXPECT_NE(timeline.gaps[0].find("not covered: 10.0.1.1's established-transitions was reset"),
            std::string::npos)
      << timeline.gaps[0];
  EXPECT_TRUE(flaps(timeline).empty());
}

TEST(TelemetryTimeline, ANeighbourThatAppearedAcrossASilenceLeavesItUncovered) {
  // Given a BGP silence after which a neighbour is served that the sample before it did not
  // name, then what happened to it inside the silence is unknown: not covered, named.
  std::vector<GnmiNotification> samples;
  links_every_second(samples, 0, 6, 1);
  GnmiNotification one;
  one.timestamp_ns = kBase;
  one.updates.push_back(
      {path_of(kNeighbors + "/neighbor[neighbor-address=10.0.1.1]/state"),
       json{{"session-state", "ESTABLISHED"}, {"established-transitions", "1"}}.dump()});
  samples.push_back(one);
  append(samples, bgp_reading(kBase + 5 * kSecond, "ESTABLISHED", 1));
  append(samples, bgp_reading(kBase + 6 * kSecond, "ESTABLISHED", 1));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 6 * kSecond));
  EXPECT_FALSE(timeline.covered());
  ASSERT_EQ(timeline.gaps.size(), 1u);
  EXPECT_NE(timeline.gaps[0].find("10.0.1.3 was not in the sample before it"), std::string::npos)
      << timeline.gaps[0];
}

TEST(TelemetryTimeline, ASilenceAtTheEndOfTheWindowStaysNoEvidenceWhateverTheCounters) {
  // Given BGP readings carrying the counter until 1 s and none after, in a window ending at 7 s,
  // then nothing beyond the silence can cover it: not covered, "the end of the window".
  std::vector<GnmiNotification> samples;
  links_every_second(samples, 0, 7, 1);
  append(samples, bgp_reading(kBase, "ESTABLISHED", 1));
  append(samples, bgp_reading(kBase + kSecond, "ESTABLISHED", 1));
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 7 * kSecond));
  EXPECT_FALSE(timeline.covered());
  ASSERT_EQ(timeline.gaps.size(), 1u);
  EXPECT_NE(timeline.gaps[0].find("the end of the window"), std::string::npos) << timeline.gaps[0];
}

TEST(TelemetryTimeline, ADrainThatTakesASessionDownForGoodIsNotAFlap) {
  // Given a session that leaves ESTABLISHED at 2 s and stays IDLE, its counter unchanged, and a
  // link that goes DOWN at 3 s (carrier-transitions +1) and stays down, then both changes are
  // events but neither is a flap.
  std::vector<GnmiNotification> samples;
  for (int second = 0; second <= 5; ++second) {
    samples.push_back(
        link_sample(kBase + second * kSecond, second >= 3 ? "DOWN" : "UP", second >= 3 ? 4 : 3));
    append(samples, bgp_reading(kBase + second * kSecond, second >= 2 ? "IDLE" : "ESTABLISHED", 2));
  }
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 5 * kSecond));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  EXPECT_TRUE(flaps(timeline).empty()) << testing::PrintToString(lines(timeline));
  EXPECT_EQ(lines(timeline), (std::vector<std::string>{
                                 "2000ms bgp 10.0.1.1 session-state ESTABLISHED -> IDLE",
                                 "3000ms interface to-spine1 oper-status UP -> DOWN",
                             }));
}

TEST(TelemetryTimeline, ALinkSeenGoingDownAndBackUpInTheSamplesIsAFlap) {
  // Given to-spine1 UP, DOWN at 2 s and UP again at 4 s, with carrier-transitions following
  // (+1 each time), then the return is one flap (not two: the counter agrees with the states).
  std::vector<GnmiNotification> samples;
  for (int second = 0; second <= 5; ++second) {
    bool down = second == 2 || second == 3;
    samples.push_back(link_sample(kBase + second * kSecond, down ? "DOWN" : "UP",
                                  second < 2   ? 1
                                  : second < 4 ? 2
                                               : 3));
    append(samples, bgp_reading(kBase + second * kSecond, "ESTABLISHED", 1));
  }
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 5 * kSecond));
  auto flapped = flaps(timeline);
  ASSERT_EQ(flapped.size(), 1u) << testing::PrintToString(lines(timeline));
  EXPECT_EQ(flapped[0]->timestamp_ns, kBase + 4 * kSecond);
  EXPECT_EQ(flapped[0]->what,
            "oper-status UP again 2.0 s after leaving it at 2026-12-01T04:40:02.000Z: flapped");
}

TEST(TelemetryTimeline, ASampleWhoseValueCannotBeReadLeavesTheWindowUncovered) {
  // Given an interface stream sampled every second, one of whose samples carries 300,000 levels
  // of nesting (or text that is not JSON), then the window is not covered (no evidence): the
  // gap names the sample's time, the path and why, and nothing overflows the stack.
  const std::string deep = std::string(300'000, '[') + std::string(300'000, ']');
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"deep", deep}, {"not JSON", "{\"oper-status\":"}}) {
    SCOPED_TRACE(name);
    std::vector<GnmiNotification> stream;
    for (int second = 0; second <= 4; ++second)
      stream.push_back(interface_sample(kBase + second * kSecond, "UP"));
    stream[2].updates[0].json = value;
    auto timeline = interface_timeline(stream, kBase, kBase + 4 * kSecond, Duration{2500});
    EXPECT_FALSE(timeline.covered());
    ASSERT_EQ(timeline.gaps.size(), 1u);
    EXPECT_NE(timeline.gaps[0].find("a sample at "), std::string::npos) << timeline.gaps[0];
    EXPECT_NE(timeline.gaps[0].find(
                  "cannot be read: value at /interfaces/interface[name=to-spine1]/state is " +
                  std::string(name == "deep" ? "nested deeper than 64 levels" : "not JSON")),
              std::string::npos)
        << timeline.gaps[0];
  }
}

// ---- Subjects that go away or arrive ----------------------------------------------------------

namespace {

// Interface samples as fabgate-gnmid sends them: every interface named in one notification.
GnmiNotification interfaces_sample(std::int64_t at, const std::vector<std::string>& names) {
  GnmiNotification notification;
  notification.timestamp_ns = at;
  for (const auto& name : names)
    notification.updates.push_back({path_of("/interfaces/interface[name=" + name + "]/state"),
                                    json{{"oper-status", "UP"}}.dump()});
  return notification;
}

}  // namespace

TEST(TelemetryTimeline, AnInterfaceLeftOutOfACompleteSampleDisappearedAndItsReturnIsReported) {
  // Given samples naming to-spine1 and to-host2, then two naming to-spine1 alone, then both
  // again, then to-host2's disappearance is one event (flagged, naming when it was last seen)
  // and its return is an appearance, not a disappearance.
  auto timeline =
      interface_timeline({interfaces_sample(kBase, {"to-spine1", "to-host2"}),
                          interfaces_sample(kBase + kSecond, {"to-spine1"}),
                          interfaces_sample(kBase + 2 * kSecond, {"to-spine1"}),
                          interfaces_sample(kBase + 3 * kSecond, {"to-spine1", "to-host2"})},
                         kBase, kBase + 3 * kSecond, Duration{2500});
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  EXPECT_EQ(lines(timeline),
            (std::vector<std::string>{"1000ms interface to-host2 disappeared (last seen UP at "
                                      "2026-12-01T04:40:00.000Z; no longer in the samples)",
                                      "3000ms interface to-host2 appeared again (UP)"}));
  ASSERT_EQ(timeline.events.size(), 2u);
  EXPECT_TRUE(timeline.events[0].disappeared);
  EXPECT_FALSE(timeline.events[1].disappeared);
}

TEST(TelemetryTimeline, APartialSampleDoesNotReadAsADisappearance) {
  // Given a session-state sample naming two neighbours and a prefixes sample at another
  // timestamp naming one (a neighbour without prefixes), and a target that sends each interface
  // in a notification of its own at its own timestamp, then nothing disappeared: neither
  // sample is complete for its source.
  auto sessions = [](std::int64_t at) {
    GnmiNotification notification;
    notification.timestamp_ns = at;
    for (std::string address : {"10.0.1.1", "10.0.2.1"})
      notification.updates.push_back(
          {path_of(kNeighbors + "/neighbor[neighbor-address=" + address + "]/state/session-state"),
           json("ESTABLISHED").dump()});
    return notification;
  };
  std::vector<GnmiNotification> samples;
  for (int second = 0; second <= 2; ++second) {
    samples.push_back(interfaces_sample(kBase + second * kSecond, {"to-spine1"}));
    samples.push_back(interfaces_sample(kBase + second * kSecond + 1'000'000, {"to-spine2"}));
    samples.push_back(sessions(kBase + second * kSecond + 2'000'000));
    samples.push_back(bgp_sample(kBase + second * kSecond + 3'000'000, "ESTABLISHED", 4)[1]);
  }
  auto timeline = device_timeline({}, samples, both_sources(kBase, kBase + 2 * kSecond));
  EXPECT_TRUE(timeline.covered()) << timeline.gaps.front();
  EXPECT_TRUE(timeline.events.empty()) << lines(timeline).front();
}

TEST(TelemetryTimeline, AnInterfaceDeletedByKeyDisappearedAndTheDeleteCoversNothing) {
  // Given interface samples of to-spine1 and to-host2, then samples that only delete to-host2
  // for 3 s, then to-spine1 again, then to-host2 disappeared at the delete and the 3 s of
  // deletes are an interface gap, not coverage.
  GnmiNotification deleted;
  deleted.timestamp_ns = kBase + kSecond;
  deleted.deletes.push_back(path_of("/interfaces/interface[name=to-host2]"));
  GnmiNotification again = deleted;
  again.timestamp_ns = kBase + 2 * kSecond;
  auto timeline = interface_timeline({interfaces_sample(kBase, {"to-spine1", "to-host2"}), deleted,
                                      again, interfaces_sample(kBase + 3 * kSecond, {"to-spine1"})},
                                     kBase, kBase + 3 * kSecond, Duration{2500});
  EXPECT_EQ(lines(timeline),
            std::vector<std::string>{"1000ms interface to-host2 disappeared (last seen UP at "
                                     "2026-12-01T04:40:00.000Z; deleted by the target)"});
  expect_one_gap(timeline,
                 "no interface sample from 2026-12-01T04:40:00.000Z to 2026-12-01T04:40:03.000Z "
                 "(3.0 s), not covered");
}

}  // namespace fabgate::gnmi
