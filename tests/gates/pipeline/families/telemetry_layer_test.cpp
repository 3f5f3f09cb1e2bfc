// Given the during-change telemetry layer with scripted gNMI targets (the real fabgate-gnmid
// is exercised by the lab test), then the devices streamed are the targets and their BGP or
// LLDP neighbours from the pre snapshot, a flap shows at the device's timestamps, and a stream
// that stops delivering, a target that cannot be reached and a device without an endpoint are
// no-evidence, never silence.

#include "gates/pipeline/families/telemetry_layer.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "tests/gates/pipeline/live_gnmi.h"

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

constexpr std::int64_t kBase = 1'796'100'000'000'000'000;  // 2026-12-01T...Z in ns

// One sample of both subscribed sources: an interface's state and the session state of the
// BGP neighbour 10.0.1.0.
gnmi::GnmiNotification sample(std::int64_t at_ns, const std::string& interface,
                              const std::string& oper, int in_errors,
                              const std::string& session = "ESTABLISHED") {
  gnmi::GnmiNotification notification;
  notification.timestamp_ns = at_ns;
  auto path = gnmi::parse_path("/interfaces/interface[name=" + interface + "]/state");
  notification.updates.push_back(
      {path.value(),
       json{{"oper-status", oper}, {"counters", {{"in-errors", std::to_string(in_errors)}}}}
           .dump()});
  auto bgp = gnmi::parse_path(
      "/network-instances/network-instance[name=default]/protocols/"
      "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=10.0.1.0]/"
      "state/session-state");
  notification.updates.push_back({bgp.value(), json(session).dump()});
  return notification;
}

// Hands over its script one notification every 50 ms, then stays silent (or keeps repeating
// the last sample, the notifications of its timestamp) until stopped.
class ScriptedStream final : public gnmi::GnmiStream {
 public:
  ScriptedStream(std::vector<gnmi::GnmiNotification> script, bool keep_delivering)
      : script_(std::move(script)), keep_delivering_(keep_delivering) {}
  gnmi::GnmiResult<Ok> run(
      const std::function<void(const gnmi::GnmiNotification&)>& on_notification) override {
    std::size_t next = 0;
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      if (next < script_.size()) {
        on_notification(script_[next++]);
      } else if (keep_delivering_ && !script_.empty()) {
        // The last sample again (every notification of its timestamp), 50 ms later each round.
        std::size_t last = script_.size();
        while (last > 0 && script_[last - 1].timestamp_ns == script_.back().timestamp_ns) --last;
        const std::size_t repeated = next++ - script_.size(), width = script_.size() - last;
        auto again = script_[last + repeated % width];
        again.timestamp_ns += static_cast<std::int64_t>(repeated / width + 1) * 50'000'000;
        on_notification(again);
      }
      stop_.wait_for(lock, std::chrono::milliseconds(50));
    }
    return Ok{};
  }
  void stop() override {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    stop_.notify_all();
  }

 private:
  std::vector<gnmi::GnmiNotification> script_;
  bool keep_delivering_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopped_ = false;
};

class ScriptedClient final : public StreamOnlyClient {
 public:
  ScriptedClient(std::vector<gnmi::GnmiNotification> script, bool keep_delivering)
      : script_(std::move(script)), keep_delivering_(keep_delivering) {}
  gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiStream>> subscribe_stream(
      const std::vector<std::string>& paths, gnmi::Encoding, Duration interval, Duration) override {
    subscribed_paths = paths;
    subscribed_interval = interval;
    return std::unique_ptr<gnmi::GnmiStream>(
        std::make_unique<ScriptedStream>(script_, keep_delivering_));
  }
  std::vector<std::string> subscribed_paths;
  Duration subscribed_interval{0};

 private:
  std::vector<gnmi::GnmiNotification> script_;
  bool keep_delivering_ = false;
};

intent::Device device_named(const std::string& name, bool with_gnmi) {
  intent::Device device;
  device.name = name;
  if (with_gnmi) device.gnmi = intent::GnmiEndpoint{.host = "127.0.0.1", .port = 1, .tls = false};
  return device;
}

TEST(TelemetrySubjects, TargetsThenTheirBgpAndLldpNeighboursFromThePreSnapshot) {
  // Given spine1 as the target, leaf1 whose interface address is one of spine1's BGP peers,
  // leaf2 that peers with spine1's address, host9 named by spine1's LLDP and host1 adjacent to
  // nothing, then spine1, leaf1, leaf2 and host9 are streamed, each saying why, host1 is not.
  intent::Inventory inventory;
  for (const char* name : {"leaf1", "leaf2", "host1", "spine1", "host9"})
    inventory.devices.push_back(device_named(name, true));
  json pre = {{"devices",
               {{"spine1",
                 {{"interfaces", {{"to-leaf1", {{"addresses", {"10.0.1.0/31"}}}}}},
                  {"bgp", {{"peers", {{"10.0.1.1", json::object()}}}}},
                  {"lldp", {{"neighbors", {{"eth9", {{{"system_name", "host9"}}}}}}}}}},
                {"leaf1", {{"interfaces", {{"to-spine1", {{"addresses", {"10.0.1.1/31"}}}}}}}},
                {"leaf2",
                 {{"interfaces", {{"to-spine1", {{"addresses", {"10.0.1.3/31"}}}}}},
                  {"bgp", {{"peers", {{"10.0.1.0", json::object()}}}}}}},
                {"host1", {{"interfaces", {{"eth0", {{"addresses", {"10.1.1.11/24"}}}}}}}}}}};
  auto subjects = telemetry_subjects(inventory, {"spine1"}, pre);
  std::vector<std::string> got;
  for (const auto& subject : subjects) got.push_back(subject.device->name + ": " + subject.why);
  EXPECT_EQ(got, (std::vector<std::string>{"spine1: target", "leaf1: neighbour of spine1 (BGP)",
                                           "leaf2: neighbour of spine1 (BGP)",
                                           "host9: neighbour of spine1 (LLDP)"}));
}

TEST(TelemetrySession, AFlapShowsAtDeviceTimestampsAndASilentStreamIsNoEvidence) {
  // Given leaf1 whose stream shows to-spine1 going DOWN and UP with 3 more in-errors and keeps
  // delivering, and leaf2 whose stream delivers one sample then falls silent for the rest of a
  // 2.6 s window, then leaf1 is covered with the flap and the error rise at its own timestamps,
  // leaf2 is no-evidence with the silence named, and the layer is no-evidence.
  intent::Inventory inventory;
  inventory.devices = {device_named("leaf1", true), device_named("leaf2", true)};
  std::vector<gnmi::GnmiNotification> flap = {
      sample(kBase, "to-spine1", "UP", 0),
      sample(kBase + 50'000'000, "to-spine1", "DOWN", 0, "IDLE"),
      sample(kBase + 100'000'000, "to-spine1", "UP", 3),
  };
  std::map<std::string, ScriptedClient*> clients;
  GnmiConnector connect =
      [&](const intent::Device& device) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
    bool leaf1 = device.name == "leaf1";
    auto client = std::make_unique<ScriptedClient>(
        leaf1 ? flap : std::vector<gnmi::GnmiNotification>{sample(kBase, "to-spine2", "UP", 0)},
        leaf1);
    clients[device.name] = client.get();
    return std::unique_ptr<gnmi::GnmiClient>(std::move(client));
  };
  TelemetrySession session(
      connect,
      {{&inventory.devices[0], "target"}, {&inventory.devices[1], "neighbour of leaf1 (BGP)"}},
      Duration{100});
  auto started = session.start(Duration{60'000}, Duration{2'000});
  EXPECT_EQ(started.verdict, Verdict::pass) << started.summary;
  EXPECT_EQ(clients["leaf1"]->subscribed_paths,
            (std::vector<std::string>{
                "/interfaces/interface[name=*]/state",
                "/network-instances/network-instance[name=default]/protocols/"
                "protocol[identifier=BGP][name=bgp]/bgp/neighbors/"
                "neighbor[neighbor-address=*]/state/session-state",
                "/network-instances/network-instance[name=default]/protocols/"
                "protocol[identifier=BGP][name=bgp]/bgp/neighbors/"
                "neighbor[neighbor-address=*]/afi-safis/afi-safi[afi-safi-name=*]/state/"
                "prefixes/received",
                "/network-instances/network-instance[name=default]/protocols/"
                "protocol[identifier=BGP][name=bgp]/bgp/neighbors/"
                "neighbor[neighbor-address=*]/state/established-transitions"}));
  EXPECT_EQ(clients["leaf1"]->subscribed_interval, Duration{100});
  std::this_thread::sleep_for(std::chrono::milliseconds(2600));
  TelemetryOutcome outcome = session.stop();

  EXPECT_EQ(outcome.verdict, Verdict::no_evidence) << outcome.summary;
  ASSERT_EQ(outcome.devices.size(), 2u);
  const auto& leaf1 = outcome.devices[0];
  EXPECT_EQ(leaf1.verdict, Verdict::pass);
  EXPECT_TRUE(leaf1.gaps.empty()) << leaf1.gaps.front();
  EXPECT_EQ(
      event_lines(outcome),
      (std::vector<std::string>{
          "leaf1 to-spine1 " + format_device_time(kBase + 50'000'000) + " oper-status UP -> DOWN",
          "leaf1 bgp 10.0.1.0 " + format_device_time(kBase + 50'000'000) +
              " session-state ESTABLISHED -> IDLE",
          "leaf1 to-spine1 " + format_device_time(kBase + 100'000'000) + " oper-status DOWN -> UP",
          "leaf1 to-spine1 " + format_device_time(kBase + 100'000'000) +
              " oper-status UP again 0.1 s after leaving it at " +
              format_device_time(kBase + 50'000'000) + ": flapped",
          "leaf1 to-spine1 " + format_device_time(kBase + 100'000'000) + " in-errors +3",
          "leaf1 bgp 10.0.1.0 " + format_device_time(kBase + 100'000'000) +
              " session-state IDLE -> ESTABLISHED",
          "leaf1 bgp 10.0.1.0 " + format_device_time(kBase + 100'000'000) +
              " session-state ESTABLISHED again 0.1 s after leaving it at " +
              format_device_time(kBase + 50'000'000) + ": flapped",
      }));
  EXPECT_EQ(leaf1.bgp_neighbours, std::vector<std::string>{"10.0.1.0"});
  const auto& leaf2 = outcome.devices[1];
  EXPECT_EQ(leaf2.verdict, Verdict::no_evidence);
  EXPECT_EQ(leaf2.samples, 1u);
  ASSERT_EQ(leaf2.gaps.size(), 1u);
  EXPECT_NE(leaf2.gaps[0].find("no sample in the last 2."), std::string::npos) << leaf2.gaps[0];
  EXPECT_NE(leaf2.gaps[0].find("stopped delivering"), std::string::npos) << leaf2.gaps[0];
  json written = to_json(outcome);
  EXPECT_EQ(written["devices"][0]["events"][0]["time"], format_device_time(kBase + 50'000'000));
  EXPECT_EQ(written["devices"][0]["events"][1]["bgp_neighbor"], "10.0.1.0");
  EXPECT_EQ(written["devices"][1]["verdict"], "no-evidence");
}

TEST(TelemetrySession, ACutKeepsStreamingAndTheNextWindowShowsWhatCameBack) {
  // Given leaf1 streaming every 50 ms whose uplink and BGP session go down while the first
  // window runs and come back after it was cut, then the first window holds the drop, the
  // second (the rollback's) holds the return at device timestamps after the drop, neither
  // repeats the other's events, both are covered, and the second starts where the first ended.
  intent::Inventory inventory;
  inventory.devices = {device_named("leaf1", true)};
  std::mutex state_mutex;
  bool up = true;
  auto current = [&] {
    std::lock_guard lock(state_mutex);
    return sample(0, "to-spine1", up ? "UP" : "DOWN", 0, up ? "ESTABLISHED" : "IDLE");
  };
  auto set_up = [&](bool value) {
    std::lock_guard lock(state_mutex);
    up = value;
  };
  GnmiConnector connect =
      [&](const intent::Device&) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
    return std::unique_ptr<gnmi::GnmiClient>(std::make_unique<LiveClient>(current, kBase));
  };
  TelemetrySession session(connect, {{&inventory.devices[0], "target"}}, Duration{50});
  ASSERT_EQ(session.start(Duration{60'000}, Duration{2'000}).verdict, Verdict::pass);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  set_up(false);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  TelemetryOutcome during = session.cut();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  set_up(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  TelemetryOutcome rollback = session.stop();

  auto whats = [](const TelemetryOutcome& outcome) {
    std::vector<std::string> out;
    for (const auto& event : outcome.devices.at(0).events)
      out.push_back(event_subject(event) + " " + event.what);
    return out;
  };
  EXPECT_EQ(during.verdict, Verdict::pass) << during.summary;
  EXPECT_EQ(rollback.verdict, Verdict::pass) << rollback.summary;
  EXPECT_EQ(whats(during),
            (std::vector<std::string>{"to-spine1 oper-status UP -> DOWN",
                                      "bgp 10.0.1.0 session-state ESTABLISHED -> IDLE"}));
  EXPECT_EQ(whats(rollback),
            (std::vector<std::string>{"to-spine1 oper-status DOWN -> UP",
                                      "bgp 10.0.1.0 session-state IDLE -> ESTABLISHED"}));
  EXPECT_GT(rollback.devices[0].events[0].timestamp_ns, during.devices[0].events[0].timestamp_ns);
  EXPECT_GT(rollback.devices[0].first_ns, during.devices[0].last_ns);
  EXPECT_EQ(rollback.window_start, during.window_end);
  EXPECT_NE(rollback.summary.find("1 interface event, 1 BGP event"), std::string::npos)
      << rollback.summary;
}

// leaf1 streaming through the client `make_client` returns, sampled every `interval`, started.
std::unique_ptr<TelemetrySession> started_leaf1(
    const intent::Inventory& inventory,
    std::function<std::unique_ptr<gnmi::GnmiClient>()> make_client, Duration interval) {
  GnmiConnector connect =
      [make_client](const intent::Device&) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
    return make_client();
  };
  auto session = std::make_unique<TelemetrySession>(
      connect, std::vector<TelemetrySubject>{{&inventory.devices.at(0), "target"}}, interval);
  EXPECT_EQ(session->start(Duration{60'000}, Duration{2'000}).verdict, Verdict::pass);
  return session;
}

TEST(TelemetrySession, ASampleSinceTheVerifyingRoundBeganEndsTheRollbackWindowAtOnce) {
  // Given leaf1 streaming every 50 ms under a 2 s sampling interval and a mark taken when the
  // restore's verifying round began, 300 ms before the window ends, then the window ends at
  // once (the samples of the verified state are there; waiting for the next one would cost up
  // to 4 s), covered, with samples that arrived after the mark.
  intent::Inventory inventory;
  inventory.devices = {device_named("leaf1", true)};
  auto session = started_leaf1(
      inventory,
      [] {
        return std::make_unique<LiveClient>([] { return sample(0, "to-spine1", "UP", 0); }, kBase);
      },
      Duration{2'000});
  const auto marked = session->mark();
  ASSERT_EQ(marked.size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  const auto stopping = std::chrono::steady_clock::now();
  TelemetryOutcome outcome = session->stop_after_sample_since(marked);
  const auto waited = std::chrono::steady_clock::now() - stopping;

  EXPECT_LT(waited, std::chrono::milliseconds(1'000));
  EXPECT_EQ(outcome.verdict, Verdict::pass) << outcome.summary;
  EXPECT_GT(session->mark().at(0), marked.at(0));  // samples arrived after the mark
}

TEST(TelemetrySession, WithoutASampleSinceTheMarkTheRollbackWindowWaitsAtMostTwoIntervals) {
  // Given leaf1 that delivered one sample and then fell silent, sampled every 200 ms, and a
  // mark taken after that sample, then ending the window waits for one more sample, gives up
  // after two intervals (400 ms), and does not hang.
  intent::Inventory inventory;
  inventory.devices = {device_named("leaf1", true)};
  auto session = started_leaf1(
      inventory,
      [] {
        return std::make_unique<ScriptedClient>(
            std::vector<gnmi::GnmiNotification>{sample(kBase, "to-spine1", "UP", 0)}, false);
      },
      Duration{200});
  const auto marked = session->mark();

  const auto stopping = std::chrono::steady_clock::now();
  (void)session->stop_after_sample_since(marked);
  const auto waited = std::chrono::steady_clock::now() - stopping;

  EXPECT_GE(waited, std::chrono::milliseconds(350));
  EXPECT_LT(waited, std::chrono::milliseconds(2'000));
}

TEST(TelemetrySession, UnreachableTargetAndMissingEndpointAreNamed) {
  // Given a target whose connection fails and a neighbour without a gnmi endpoint, then the
  // start is no-evidence naming the failed device and its cause, the endpoint-less device is
  // listed as not streamed, and the window's outcome is no-evidence for the failed device.
  intent::Inventory inventory;
  inventory.devices = {device_named("leaf1", true), device_named("host1", false)};
  GnmiConnector connect =
      [](const intent::Device&) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
    return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::unreachable,
                             "gnmi: leaf1 (127.0.0.1:1): Subscribe STREAM: connection refused"};
  };
  TelemetrySession session(connect, {{&inventory.devices[0], "target"},
                                     {&inventory.devices[1], "neighbour of leaf1 (BGP)"}});
  auto started = session.start(Duration{10'000}, Duration{1'000});
  EXPECT_EQ(started.verdict, Verdict::no_evidence);
  ASSERT_EQ(started.details.size(), 2u);
  EXPECT_EQ(started.details[0],
            "leaf1: gnmi: leaf1 (127.0.0.1:1): Subscribe STREAM: connection refused");
  EXPECT_EQ(started.details[1],
            "not streamed: host1 (neighbour of leaf1 (BGP)): no gnmi endpoint in the inventory");
  auto outcome = session.stop();
  EXPECT_EQ(outcome.verdict, Verdict::no_evidence);
  ASSERT_EQ(outcome.devices.size(), 1u);
  EXPECT_EQ(outcome.devices[0].gaps, std::vector<std::string>{"no sample in the whole window"});
}

}  // namespace
}  // namespace fabgate::pipeline

namespace fabgate::pipeline {
namespace {

// leaf1 streaming `script` one sample every 50 ms (then repeating the last one) for 500 ms.
TelemetryOutcome leaf1_window(std::vector<gnmi::GnmiNotification> script, TelemetryRules rules,
                              Flaps flaps) {
  intent::Inventory inventory;
  inventory.devices = {device_named("leaf1", true)};
  GnmiConnector connect =
      [&](const intent::Device&) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
    return std::unique_ptr<gnmi::GnmiClient>(std::make_unique<ScriptedClient>(script, true));
  };
  TelemetrySession session(connect, {{&inventory.devices[0], "target"}}, Duration{100},
                           std::move(rules));
  EXPECT_EQ(session.start(Duration{60'000}, Duration{2'000}).verdict, Verdict::pass);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return session.stop(flaps);
}

// leaf1 streaming every 50 ms whose to-spine1 goes DOWN at 50 ms and is UP again at 100 ms.
TelemetryOutcome flapping_leaf1_window(TelemetryRules rules, Flaps flaps) {
  return leaf1_window(
      {sample(kBase, "to-spine1", "UP", 0), sample(kBase + 50'000'000, "to-spine1", "DOWN", 0),
       sample(kBase + 100'000'000, "to-spine1", "UP", 0)},
      std::move(rules), flaps);
}

const std::string kNeighbor =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=";

// One sample as fabgate-gnmid sends it: every interface (UP) in one notification, every BGP
// neighbour (ESTABLISHED) in one, both at one timestamp.
std::vector<gnmi::GnmiNotification> whole_sample(std::int64_t at_ns,
                                                 const std::vector<std::string>& interfaces,
                                                 const std::vector<std::string>& neighbours) {
  gnmi::GnmiNotification links, sessions;
  links.timestamp_ns = sessions.timestamp_ns = at_ns;
  for (const auto& name : interfaces)
    links.updates.push_back(
        {gnmi::parse_path("/interfaces/interface[name=" + name + "]/state").value(),
         json{{"oper-status", "UP"}}.dump()});
  for (const auto& address : neighbours)
    sessions.updates.push_back(
        {gnmi::parse_path(kNeighbor + address + "]/state/session-state").value(),
         json("ESTABLISHED").dump()});
  return {links, sessions};
}

std::vector<gnmi::GnmiNotification> joined(
    std::initializer_list<std::vector<gnmi::GnmiNotification>> parts) {
  std::vector<gnmi::GnmiNotification> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// leaf1 with to-spine1 and to-host2, then only to-spine1 from 100 ms on.
std::vector<gnmi::GnmiNotification> to_host2_vanishes() {
  return joined({whole_sample(kBase, {"to-spine1", "to-host2"}, {"10.0.1.0"}),
                 whole_sample(kBase + 50'000'000, {"to-spine1", "to-host2"}, {"10.0.1.0"}),
                 whole_sample(kBase + 100'000'000, {"to-spine1"}, {"10.0.1.0"})});
}

TEST(TelemetrySession, AFlapTheChangeDoesNotExpectFailsTheJudgedWindowAndIsNamed) {
  // Given leaf1's to-spine1 going down and back up within the during window and a change that
  // declares no expected flap, then the window fails (the change is rolled back), the device
  // names the flap, and telemetry/during.json marks it as a flap that was not expected.
  TelemetryOutcome outcome = flapping_leaf1_window({}, Flaps::judged);
  EXPECT_EQ(outcome.verdict, Verdict::fail) << outcome.summary;
  ASSERT_EQ(outcome.devices.size(), 1u);
  ASSERT_EQ(outcome.devices[0].unexpected_flaps.size(), 1u);
  EXPECT_EQ(outcome.devices[0].unexpected_flaps[0].rfind("to-spine1: oper-status UP again ", 0), 0u)
      << outcome.devices[0].unexpected_flaps[0];
  EXPECT_NE(outcome.summary.find("1 flap, not all expected by the change"), std::string::npos)
      << outcome.summary;
  json written = to_json(outcome);
  bool flagged = false;
  for (const auto& event : written["devices"][0]["events"])
    if (event.value("flap", false)) flagged = event["expected"] == false;
  EXPECT_TRUE(flagged) << written.dump();
}

TEST(TelemetrySession, AFlapTheChangeExpectsPassesAndTheRollbackWindowOnlyReportsFlaps) {
  // Given the same flap, then a change that lists "leaf1:to-spine1" in expected_flaps passes,
  // and a window whose flaps are only reported (the rollback's) passes without the list.
  TelemetryOutcome expected =
      flapping_leaf1_window({std::nullopt, {"leaf1:to-spine1"}}, Flaps::judged);
  EXPECT_EQ(expected.verdict, Verdict::pass) << expected.summary;
  EXPECT_TRUE(expected.devices.at(0).unexpected_flaps.empty());
  EXPECT_NE(expected.summary.find("all expected by the change"), std::string::npos)
      << expected.summary;
  TelemetryOutcome reported = flapping_leaf1_window({}, Flaps::reported);
  EXPECT_EQ(reported.verdict, Verdict::pass) << reported.summary;
  EXPECT_TRUE(reported.devices.at(0).unexpected_flaps.empty());
}

TEST(TelemetrySession, AnInterfaceThatVanishesMidWindowFailsTheJudgedWindowNamingIt) {
  // Given leaf1 sending to-spine1 and to-host2 in each sample, then to-spine1 alone, and a
  // change that declares nothing, then to-host2's disappearance is an event and fails the
  // window: "interface to-host2 disappeared at T (last seen UP at T0; ...)".
  TelemetryOutcome outcome = leaf1_window(to_host2_vanishes(), {}, Flaps::judged);
  EXPECT_EQ(outcome.verdict, Verdict::fail) << outcome.summary;
  ASSERT_EQ(outcome.devices.size(), 1u);
  ASSERT_EQ(outcome.devices[0].unexpected_flaps.size(), 1u) << outcome.summary;
  EXPECT_EQ(outcome.devices[0].unexpected_flaps[0],
            "interface to-host2 disappeared at " + format_device_time(kBase + 100'000'000) +
                " (last seen UP at " + format_device_time(kBase + 50'000'000) +
                "; no longer in the samples)");
  EXPECT_NE(outcome.summary.find("1 subject disappeared, not all expected by the change"),
            std::string::npos)
      << outcome.summary;
  EXPECT_EQ(to_json(outcome)["devices"][0]["events"][0]["disappeared"], true);
}

TEST(TelemetrySession, ADisappearanceTheChangeDeclaresPassesAndIsReported) {
  // Given the same vanishing to-host2 and a change listing "leaf1:to-host2" in expected_flaps,
  // then the window passes and the report still shows the disappearance, as expected.
  TelemetryOutcome outcome =
      leaf1_window(to_host2_vanishes(), {std::nullopt, {"leaf1:to-host2"}}, Flaps::judged);
  EXPECT_EQ(outcome.verdict, Verdict::pass) << outcome.summary;
  EXPECT_TRUE(outcome.devices.at(0).unexpected_flaps.empty());
  auto lines = event_lines(outcome);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "leaf1 to-host2 " + format_device_time(kBase + 100'000'000) +
                          " disappeared (last seen UP at " +
                          format_device_time(kBase + 50'000'000) +
                          "; no longer in the samples) (expected by the change)");
}

TEST(TelemetrySession, ABgpNeighbourDeletedThenNotSentFailsTheWindowOnce) {
  // Given leaf1 with the BGP neighbours 10.0.1.0 and 10.0.2.0, then a sample whose neighbour
  // notification deletes 10.0.2.0, then samples without it, then the window fails naming the
  // deletion once (the samples that leave it out after do not repeat it).
  auto deleted = whole_sample(kBase + 50'000'000, {"to-spine1"}, {"10.0.1.0"});
  deleted[1].deletes.push_back(gnmi::parse_path(kNeighbor + "10.0.2.0]").value());
  TelemetryOutcome outcome =
      leaf1_window(joined({whole_sample(kBase, {"to-spine1"}, {"10.0.1.0", "10.0.2.0"}), deleted,
                           whole_sample(kBase + 100'000'000, {"to-spine1"}, {"10.0.1.0"})}),
                   {}, Flaps::judged);
  EXPECT_EQ(outcome.verdict, Verdict::fail) << outcome.summary;
  EXPECT_EQ(outcome.devices.at(0).unexpected_flaps,
            std::vector<std::string>{"BGP neighbour 10.0.2.0 disappeared at " +
                                     format_device_time(kBase + 50'000'000) +
                                     " (last seen ESTABLISHED at " + format_device_time(kBase) +
                                     "; deleted by the target)"});
}

TEST(TelemetrySession, ASampleOfDeletesOnlyDoesNotCoverTheSource) {
  // Given leaf1 whose BGP neighbours are deleted in every sample after the first (FRR not
  // answering) while its interfaces keep their values, and a 150 ms allowed gap, then BGP is
  // not covered for the rest of the 500 ms window: no-evidence, not a pass.
  auto silent = whole_sample(kBase + 50'000'000, {"to-spine1"}, {});
  silent[1].deletes.push_back(gnmi::parse_path(kNeighbor + "*]/state/session-state").value());
  TelemetryOutcome outcome =
      leaf1_window(joined({whole_sample(kBase, {"to-spine1"}, {"10.0.1.0"}), silent}),
                   {Duration{150}, {}}, Flaps::judged);
  EXPECT_EQ(outcome.verdict, Verdict::no_evidence) << outcome.summary;
  ASSERT_FALSE(outcome.devices.at(0).gaps.empty());
  EXPECT_EQ(outcome.devices[0].gaps[0].rfind("no bgp sample from " + format_device_time(kBase), 0),
            0u)
      << outcome.devices[0].gaps[0];
}

TEST(TelemetrySession, ASubjectAppearingInTheWindowIsReportedNotFailed) {
  // Given leaf1 with to-spine1, then to-spine1 and a new to-host3, then the window passes and
  // reports to-host3's appearance.
  TelemetryOutcome outcome = leaf1_window(
      joined({whole_sample(kBase, {"to-spine1"}, {"10.0.1.0"}),
              whole_sample(kBase + 50'000'000, {"to-spine1", "to-host3"}, {"10.0.1.0"})}),
      {}, Flaps::judged);
  EXPECT_EQ(outcome.verdict, Verdict::pass) << outcome.summary;
  EXPECT_EQ(event_lines(outcome),
            std::vector<std::string>{"leaf1 to-host3 " + format_device_time(kBase + 50'000'000) +
                                     " appeared (UP)"});
}

TEST(TelemetrySession, TheChangesMaxGapReplacesTheDefault) {
  // Given a change with telemetry_max_gap 10s, then the window's allowed silence is 10 s.
  TelemetryOutcome outcome =
      flapping_leaf1_window({Duration{10'000}, {"leaf1:to-spine1"}}, Flaps::judged);
  EXPECT_EQ(outcome.max_gap, Duration{10'000});
  EXPECT_EQ(to_json(outcome)["max_gap_ms"], 10'000);
}

}  // namespace
}  // namespace fabgate::pipeline
