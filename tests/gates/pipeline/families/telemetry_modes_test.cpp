// Given targets that implement only some Subscribe modes (a real fabgate-gnmid on loopback told
// to answer STREAM, or STREAM and POLL, with UNIMPLEMENTED, and scripted clients for the
// refusals a real target would not give on demand), then the telemetry layer falls back to
// POLL, then to ONCE, at the sampling interval, names the mode it used and what it costs in
// the start gate, the window and telemetry/during.json, judges the polled samples by the same
// gap rules (a failed round is a silence), and refuses only when no mode works, naming each
// mode tried and its error; a failure that is not "mode not implemented" is never retried in
// another mode.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "gates/pipeline/families/gnmi_steps.h"
#include "gates/pipeline/families/telemetry_layer.h"
#include "tests/adapters/gnmi/gnmid_harness.h"
#include "tests/gates/pipeline/live_gnmi.h"

namespace fabgate::pipeline {
namespace {

using gnmi::testing::TargetProcess;
using gnmi::testing::TempDir;

// FRR stand-in: one established neighbour with its transitions counter (as gnmid_test's).
const char* kFakeVtysh = R"(#!/bin/sh
case "$2" in
  "show version") echo "FRRouting 9.1.0 (fake) on Linux(6.1.0)." ;;
  "show bgp neighbors json") cat <<'JSON'
{"10.0.1.0": {"remoteAs": 65000, "localAs": 65101, "bgpState": "Established",
              "bgpTimerUpMsec": 5000, "connectionsEstablished": 1,
              "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": 4}}}}
JSON
  ;;
  *) exit 1 ;;
esac
)";

// fabgate-gnmid on 127.0.0.1 answering `unimplemented` Subscribe modes with UNIMPLEMENTED,
// and leaf1 in an inventory pointing at it (plaintext).
struct PartialTarget {
  TempDir dir;
  TargetProcess process;
  intent::Inventory inventory;

  bool start(const std::vector<std::string>& unimplemented, std::string& failure) {
    dir.write("vtysh", kFakeVtysh, true);
    std::vector<std::string> argv = {gnmi::testing::gnmid_path(),
                                     "--hostname",
                                     "leaf1",
                                     "--vtysh",
                                     dir.file("vtysh"),
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--insecure-plaintext",
                                     "--no-auth"};
    for (const auto& mode : unimplemented)
      argv.insert(argv.end(), {"--debug-unimplemented-mode", mode});
    auto port = process.start(argv, dir.file("gnmid.stderr"));
    if (!port) {
      failure = process.failure;
      return false;
    }
    intent::Device leaf1;
    leaf1.name = "leaf1";
    leaf1.gnmi = intent::GnmiEndpoint{.host = "127.0.0.1", .port = std::stoi(*port), .tls = false};
    inventory.devices = {leaf1};
    return true;
  }

  TelemetrySession session(Duration interval = Duration{200}) {
    return TelemetrySession(connect_gnmi, {{&inventory.devices[0], "target"}}, interval);
  }
};

std::string joined_details(const std::vector<std::string>& details) {
  std::string text;
  for (const auto& line : details) text += line + "\n";
  return text;
}

TEST(TelemetryModes, ATargetWithoutStreamIsPolledAtTheIntervalAndTheWindowNamesIt) {
  // Given fabgate-gnmid answering STREAM with UNIMPLEMENTED (Get, Set, POLL and ONCE work),
  // then telemetry-start passes by POLL every 200 ms, saying the target does not implement
  // STREAM and what POLL costs, and a 1.5 s window is covered by the polled samples with the
  // mode, its cost and the rounds in telemetry/during.json.
  PartialTarget target;
  std::string failure;
  ASSERT_TRUE(target.start({"STREAM"}, failure)) << failure;
  auto session = target.session();
  auto started = session.start(Duration{60'000}, Duration{5'000});
  ASSERT_EQ(started.verdict, Verdict::pass) << started.summary << "\n"
                                            << joined_details(started.details);
  EXPECT_NE(started.summary.find("leaf1 by POLL: the target does not implement STREAM"),
            std::string::npos)
      << started.summary;
  ASSERT_EQ(started.details.size(), 1u) << joined_details(started.details);
  EXPECT_EQ(started.details[0].rfind("leaf1: subscribed by POLL (the target does not implement "
                                     "the modes before it: STREAM: gnmi: leaf1",
                                     0),
            0u)
      << started.details[0];
  EXPECT_NE(started.details[0].find("Subscribe STREAM is not implemented here (gRPC status 12)"),
            std::string::npos)
      << started.details[0];
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  TelemetryOutcome outcome = session.stop(Flaps::judged);

  EXPECT_EQ(outcome.verdict, Verdict::pass) << outcome.summary;
  ASSERT_EQ(outcome.devices.size(), 1u);
  const auto& leaf1 = outcome.devices[0];
  EXPECT_TRUE(leaf1.gaps.empty()) << leaf1.gaps.front();
  EXPECT_EQ(leaf1.mode, "POLL");
  EXPECT_EQ(leaf1.mode_cost.rfind("POLL every 200ms: fabgate asks for each sample", 0), 0u)
      << leaf1.mode_cost;
  // A round starts every 200 ms, or as soon as the one before ends when that one took longer
  // (docs: "rounds longer than the interval run back to back"): 1.5 s holds at least
  // 1.5 s / max(200 ms, the longest round) rounds, less the two at the window's edges. Idle
  // that is 5 (rounds take a few ms); beside a CPU hog a round can take 300-400 ms.
  const auto per_round = std::max(Duration{200}, leaf1.longest_round);
  EXPECT_GE(leaf1.rounds + 2, static_cast<std::size_t>(Duration{1500} / per_round))
      << "longest round " << leaf1.longest_round.count() << " ms";
  EXPECT_GE(leaf1.rounds, 1u);
  EXPECT_EQ(leaf1.failed_rounds, 0u);
  EXPECT_EQ(leaf1.bgp_neighbours, std::vector<std::string>{"10.0.1.0"});
  EXPECT_EQ(modes_text(outcome), "STREAM/SAMPLE; POLL for leaf1");
  auto written = to_json(outcome);
  EXPECT_EQ(written["mode"], "STREAM/SAMPLE; POLL for leaf1");
  EXPECT_EQ(written["devices"][0]["mode"], "POLL");
  EXPECT_EQ(written["devices"][0]["modes_refused"].size(), 1u);
  EXPECT_EQ(written["devices"][0]["failed_rounds"], 0);
}

TEST(TelemetryModes, ATargetWithOnlyOnceIsAskedEveryIntervalAndAFailedRoundIsASilence) {
  // Given fabgate-gnmid answering STREAM and POLL with UNIMPLEMENTED, then telemetry-start
  // passes by ONCE naming both refusals; when the target goes away in the middle of the
  // window, its rounds fail and the device is no-evidence: the silence is a gap and the failed
  // rounds are counted with their error, never "nothing happened".
  PartialTarget target;
  std::string failure;
  ASSERT_TRUE(target.start({"STREAM", "POLL"}, failure)) << failure;
  auto session = target.session();
  auto started = session.start(Duration{60'000}, Duration{5'000});
  ASSERT_EQ(started.verdict, Verdict::pass) << started.summary << "\n"
                                            << joined_details(started.details);
  ASSERT_EQ(started.details.size(), 1u) << joined_details(started.details);
  EXPECT_NE(started.details[0].find("leaf1: subscribed by ONCE"), std::string::npos);
  EXPECT_NE(started.details[0].find("STREAM: gnmi: leaf1"), std::string::npos);
  EXPECT_NE(started.details[0].find("; POLL: gnmi: leaf1"), std::string::npos);
  EXPECT_NE(started.details[0].find("each sample is a fresh subscription"), std::string::npos);

  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  TelemetryOutcome covered = session.cut(Flaps::judged);
  EXPECT_EQ(covered.verdict, Verdict::pass) << covered.summary;
  EXPECT_EQ(covered.devices.at(0).mode, "ONCE");

  target.process.terminate();
  std::this_thread::sleep_for(std::chrono::milliseconds(2600));
  TelemetryOutcome silent = session.stop(Flaps::judged);
  EXPECT_EQ(silent.verdict, Verdict::no_evidence) << silent.summary;
  const auto& leaf1 = silent.devices.at(0);
  EXPECT_EQ(leaf1.mode, "ONCE");
  EXPECT_GE(leaf1.failed_rounds, 3u);
  EXPECT_FALSE(leaf1.gaps.empty());
  ASSERT_FALSE(leaf1.round_failures.empty());
  EXPECT_NE(leaf1.round_failures[0].find("Subscribe ONCE"), std::string::npos)
      << leaf1.round_failures[0];
  EXPECT_EQ(to_json(silent)["devices"][0]["failed_rounds"], leaf1.failed_rounds);
}

TEST(TelemetryModes, ATargetThatImplementsNoModeIsRefusedNamingEachModeAndItsError) {
  // Given fabgate-gnmid answering every Subscribe mode with UNIMPLEMENTED, then
  // telemetry-start is no-evidence (the change is refused before any step) and names STREAM,
  // POLL and ONCE with the target's answer to each.
  PartialTarget target;
  std::string failure;
  ASSERT_TRUE(target.start({"STREAM", "POLL", "ONCE"}, failure)) << failure;
  auto session = target.session();
  auto started = session.start(Duration{60'000}, Duration{5'000});
  EXPECT_EQ(started.verdict, Verdict::no_evidence) << started.summary;
  ASSERT_EQ(started.details.size(), 1u) << joined_details(started.details);
  const std::string& line = started.details[0];
  EXPECT_EQ(line.rfind("leaf1: no subscription mode works: STREAM: gnmi: leaf1", 0), 0u) << line;
  for (const char* mode : {"STREAM", "POLL", "ONCE"})
    EXPECT_NE(
        line.find(std::string("Subscribe ") + mode + " is not implemented here (gRPC status 12)"),
        std::string::npos)
        << mode << ": " << line;
  auto outcome = session.stop();
  EXPECT_EQ(outcome.verdict, Verdict::no_evidence);
  EXPECT_EQ(outcome.devices.at(0).stream_failure, line.substr(std::string("leaf1: ").size()));
}

// A target whose STREAM is refused for another reason than the mode: a path it does not
// serve (NOT_FOUND), or credentials. It counts the other modes' calls.
class RefusingClient final : public StreamOnlyClient {
 public:
  explicit RefusingClient(gnmi::GnmiFailure refusal) : refusal_(std::move(refusal)) {}
  gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiStream>> subscribe_stream(
      const std::vector<std::string>&, gnmi::Encoding, Duration, Duration) override {
    return refusal_;
  }
  gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> subscribe_once(
      const std::vector<std::string>& paths, gnmi::Encoding encoding, Duration deadline) override {
    ++other_modes;
    return StreamOnlyClient::subscribe_once(paths, encoding, deadline);
  }
  gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiPollSession>> subscribe_poll(
      const std::vector<std::string>& paths, gnmi::Encoding encoding, Duration deadline) override {
    ++other_modes;
    return StreamOnlyClient::subscribe_poll(paths, encoding, deadline);
  }
  int other_modes = 0;

 private:
  gnmi::GnmiFailure refusal_;
};

TEST(TelemetryModes, AFailureThatIsNotAnUnimplementedModeIsNotRetriedInAnotherMode) {
  // Given targets refusing STREAM with NOT_FOUND (a path) and with UNAUTHENTICATED, then
  // neither is tried with POLL or ONCE (they would fail alike): telemetry-start is no-evidence
  // with the target's own message.
  for (auto refusal :
       {gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                          "gnmi: leaf1: Subscribe STREAM: path not found (gRPC status 5)"},
        gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::auth,
                          "gnmi: leaf1: Subscribe STREAM: bad password (gRPC status 16)"}}) {
    intent::Inventory inventory;
    inventory.devices.resize(1);
    inventory.devices[0].name = "leaf1";
    inventory.devices[0].gnmi = intent::GnmiEndpoint{.host = "127.0.0.1", .port = 1, .tls = false};
    RefusingClient* client = nullptr;
    GnmiConnector connect =
        [&](const intent::Device&) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
      auto made = std::make_unique<RefusingClient>(refusal);
      client = made.get();
      return std::unique_ptr<gnmi::GnmiClient>(std::move(made));
    };
    TelemetrySession session(connect, {{&inventory.devices[0], "target"}}, Duration{100});
    auto started = session.start(Duration{10'000}, Duration{2'000});
    EXPECT_EQ(started.verdict, Verdict::no_evidence);
    ASSERT_EQ(started.details.size(), 1u);
    EXPECT_EQ(started.details[0], "leaf1: " + refusal.message);
    ASSERT_NE(client, nullptr);
    EXPECT_EQ(client->other_modes, 0);
    session.stop();
  }
}

}  // namespace
}  // namespace fabgate::pipeline
