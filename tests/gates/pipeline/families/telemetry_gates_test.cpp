// The telemetry gates inside a real Pipeline with scripted collaborators and a live scripted
// gNMI target on the target device, whose link and BGP session go down when the change's step
// is sent and come back when the rollback is sent: a failed change is streamed through its
// rollback by the same streams, an accepted change's streams close at acceptance, and a
// rollback decided after acceptance (rehearse) opens fresh ones.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>

#include "tests/gates/pipeline/live_gnmi.h"
#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

constexpr std::int64_t kBase = 1'796'100'000'000'000'000;

// Steps and rollback steps succeed; probes pass before the step and after the rollback, and
// fail in between unless `probes_pass_while_changed`. The device is "changed" in between.
class ChangingRemote final : public Remote {
 public:
  explicit ChangingRemote(bool probes_pass_while_changed)
      : probes_pass_while_changed_(probes_pass_while_changed) {}
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string&, Duration,
                   std::string_view purpose) override {
    ssh::CommandResult result;
    result.started_at = now_utc();
    result.exit_status = 0;
    if (purpose == "step") changed = true;
    if (purpose == "rollback") {
      changed = false;
      rolled_back_at = std::chrono::steady_clock::now().time_since_epoch().count();
    }
    if (purpose == "probe" && changed && !probes_pass_while_changed_) result.exit_status = 1;
    return result;
  }
  std::atomic<bool> changed{false};
  std::atomic<std::int64_t> rolled_back_at{0};  // steady clock ticks; 0: not rolled back

 private:
  bool probes_pass_while_changed_;
};

// What leaf1's target says: its uplink and the session to 10.0.1.0, down while changed.
gnmi::GnmiNotification leaf1_state(bool changed) {
  gnmi::GnmiNotification notification;
  notification.updates.push_back(
      {gnmi::parse_path("/interfaces/interface[name=to-spine1]/state").value(),
       nlohmann::json{{"oper-status", changed ? "DOWN" : "UP"}}.dump()});
  notification.updates.push_back(
      {gnmi::parse_path("/network-instances/network-instance[name=default]/protocols/"
                        "protocol[identifier=BGP][name=bgp]/bgp/neighbors/"
                        "neighbor[neighbor-address=10.0.1.0]/state/session-state")
           .value(),
       nlohmann::json(changed ? "IDLE" : "ESTABLISHED").dump()});
  return notification;
}

struct TelemetryRun {
  ScriptedRun run{{"leaf1"}};
  ChangingRemote remote;
  std::atomic<int> subscriptions{0};
  RunOutcome outcome;
  // The device clock: a fixed past instant, or (departure tests) the real time.
  std::int64_t base_ns = kBase;
  // What leaf1's target says; unset: leaf1_state(remote.changed).
  std::function<gnmi::GnmiNotification()> state;

  explicit TelemetryRun(bool probes_pass_while_changed) : remote(probes_pass_while_changed) {
    run.repository.inventory.devices[0].gnmi =
        intent::GnmiEndpoint{.host = "127.0.0.1", .port = 1, .tls = false};
    run.change.acceptance.settle = Duration{1'200};  // a few samples in each window
    for (const auto& device : run.repository.inventory.devices) {
      run.snapshotter.identities[device.name] = {{"hostname", device.name}};
      run.snapshotter.categories[device.name] = {
          {"interfaces", {{"eth0", {{"oper", "up"}, {"addresses", {"192.0.2.1/24"}}}}}}};
    }
  }

  void go(Mode mode) {
    auto bundle = EvidenceBundle::create(run.evidence_root.path(), run.change.id, now_utc(), "run1",
                                         Redactor{});
    ASSERT_TRUE(bundle.ok());
    dir = bundle.value()->dir();
    GateObserver observer;
    PipelineOptions options;
    options.mode = mode;
    options.operator_name = "telemetry-test";
    Pipeline::Collaborators with{remote, run.snapshotter, *bundle.value(), observer};
    with.gnmi_connect =
        [this](const intent::Device&) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
      auto current = state ? state : [this] { return leaf1_state(remote.changed); };
      return std::unique_ptr<gnmi::GnmiClient>(
          std::make_unique<LiveClient>(current, base_ns, [this] { ++subscriptions; }));
    };
    Pipeline pipeline(run.repository, run.change, with, options);
    outcome = pipeline.run();
  }

  std::vector<std::string> gate_names() const {
    std::vector<std::string> names;
    for (const auto& gate : outcome.gates)
      if (gate.name.starts_with("telemetry") || gate.name == "rollback" ||
          gate.name == "acceptance" || gate.name == "restored-probes")
        names.push_back(gate.name);
    return names;
  }

  std::filesystem::path dir;
};

std::vector<std::string> events(const std::optional<TelemetryOutcome>& window) {
  std::vector<std::string> out;
  if (!window) return out;
  for (const auto& device : window->devices)
    for (const auto& event : device.events)
      out.push_back(device.device + " " + event_subject(event) + " " + event.what);
  return out;
}

TEST(TelemetryGates, AFailedChangeIsStreamedThroughItsRollbackByTheSameStreams) {
  // Given a change whose acceptance probe fails while leaf1's uplink and session are down,
  // then the telemetry gate cuts the during window (the drop) and the streams keep running:
  // one subscription in all, telemetry-restored after restored-probes ends the rollback window
  // (the return), which starts where the during window ended and marks the rollback's start,
  // both windows are written to the bundle, and the run is rolled back (exit 4).
  TelemetryRun test(false);
  test.go(Mode::apply);
  EXPECT_EQ(test.outcome.exit_code, ExitCode::rolled_back);
  EXPECT_EQ(test.gate_names(),
            (std::vector<std::string>{"telemetry-start", "acceptance", "telemetry", "rollback",
                                      "restored-probes", "telemetry-restored"}));
  EXPECT_EQ(test.subscriptions, 1);
  EXPECT_EQ(events(test.outcome.telemetry),
            (std::vector<std::string>{"leaf1 to-spine1 oper-status UP -> DOWN",
                                      "leaf1 bgp 10.0.1.0 session-state ESTABLISHED -> IDLE"}));
  EXPECT_EQ(events(test.outcome.rollback_telemetry),
            (std::vector<std::string>{"leaf1 to-spine1 oper-status DOWN -> UP",
                                      "leaf1 bgp 10.0.1.0 session-state IDLE -> ESTABLISHED"}));
  ASSERT_TRUE(test.outcome.telemetry && test.outcome.rollback_telemetry);
  EXPECT_EQ(test.outcome.telemetry->verdict, Verdict::pass) << test.outcome.telemetry->summary;
  EXPECT_EQ(test.outcome.rollback_telemetry->verdict, Verdict::pass)
      << test.outcome.rollback_telemetry->summary;
  EXPECT_EQ(test.outcome.rollback_telemetry->window_start, test.outcome.telemetry->window_end);
  ASSERT_TRUE(test.outcome.rollback_telemetry->rollback_started.has_value());
  EXPECT_GT(*test.outcome.rollback_telemetry->rollback_started,
            test.outcome.rollback_telemetry->window_start);
  EXPECT_TRUE(std::filesystem::exists(test.dir / "telemetry/during.json"));
  EXPECT_TRUE(std::filesystem::exists(test.dir / "telemetry/rollback.json"));
  EXPECT_EQ(test.outcome.layers["rollback"]["telemetry"], "pass");
}

TEST(TelemetryGates, WithoutADwellTheRollbackWindowStillShowsTheVerifiedState) {
  // Given the same failed change with `restore_dwell: 0s`, where telemetry-restored ends the
  // window on a sample since the verifying round began instead of waiting for one more, then
  // the window still holds the return of leaf1's uplink and session, is covered, and the run
  // is rolled back with its baseline verified (exit 4).
  TelemetryRun test(false);
  test.run.change.acceptance.restore_dwell = Duration::zero();
  test.go(Mode::apply);
  EXPECT_EQ(test.outcome.exit_code, ExitCode::rolled_back) << test.outcome.device_state;
  EXPECT_EQ(events(test.outcome.rollback_telemetry),
            (std::vector<std::string>{"leaf1 to-spine1 oper-status DOWN -> UP",
                                      "leaf1 bgp 10.0.1.0 session-state IDLE -> ESTABLISHED"}));
  ASSERT_TRUE(test.outcome.rollback_telemetry);
  EXPECT_EQ(test.outcome.rollback_telemetry->verdict, Verdict::pass)
      << test.outcome.rollback_telemetry->summary;
}

TEST(TelemetryGates, AnAcceptedChangesStreamsCloseAtAcceptance) {
  // Given a change whose probes pass, then the telemetry gate closes the streams: no rollback
  // window, no telemetry-restored, no rollback.json, exit 0.
  TelemetryRun test(true);
  test.go(Mode::apply);
  EXPECT_EQ(test.outcome.exit_code, ExitCode::accepted);
  EXPECT_EQ(test.gate_names(),
            (std::vector<std::string>{"telemetry-start", "acceptance", "telemetry"}));
  EXPECT_FALSE(test.outcome.rollback_telemetry.has_value());
  EXPECT_EQ(events(test.outcome.telemetry),
            (std::vector<std::string>{"leaf1 to-spine1 oper-status UP -> DOWN",
                                      "leaf1 bgp 10.0.1.0 session-state ESTABLISHED -> IDLE"}));
  EXPECT_FALSE(std::filesystem::exists(test.dir / "telemetry/rollback.json"));
}

TEST(TelemetryGates, ARehearsalsForcedRollbackIsStreamedByFreshStreams) {
  // Given a rehearsal of a change that is accepted, then the streams closed at acceptance and
  // telemetry-rollback-start opens fresh ones before the rollback: two subscriptions, and the
  // rollback window shows the link and session coming back (the baseline against which the
  // fresh window compares is its own first sample, taken before the rollback).
  TelemetryRun test(true);
  test.go(Mode::rehearse);
  EXPECT_EQ(test.outcome.exit_code, ExitCode::accepted);
  EXPECT_EQ(test.gate_names(),
            (std::vector<std::string>{"telemetry-start", "acceptance", "telemetry",
                                      "telemetry-rollback-start", "rollback", "restored-probes",
                                      "telemetry-restored"}));
  EXPECT_EQ(test.subscriptions, 2);
  EXPECT_EQ(events(test.outcome.rollback_telemetry),
            (std::vector<std::string>{"leaf1 to-spine1 oper-status DOWN -> UP",
                                      "leaf1 bgp 10.0.1.0 session-state IDLE -> ESTABLISHED"}));
  ASSERT_TRUE(test.outcome.rollback_telemetry.has_value());
  EXPECT_EQ(test.outcome.rollback_telemetry->verdict, Verdict::pass)
      << test.outcome.rollback_telemetry->summary;
}

// Steps, rollback steps and probes succeed; it counts the steps sent, which the live target's
// state follows.
class CountingRemote final : public Remote {
 public:
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string&, Duration,
                   std::string_view purpose) override {
    ssh::CommandResult result;
    result.started_at = now_utc();
    result.exit_status = 0;
    if (purpose == "step") ++steps;
    return result;
  }
  std::atomic<int> steps{0};
};

// Applies a one-step change on leaf1 whose probes pass, with `remote` running the steps and
// leaf1's live target answering `state()` every 50 ms.
ExitCode run_streamed(Remote& remote, std::function<gnmi::GnmiNotification()> state,
                      std::vector<std::string> expected_flaps, RunOutcome& outcome) {
  ScriptedRun run{{"leaf1"}};
  run.repository.inventory.devices[0].gnmi =
      intent::GnmiEndpoint{.host = "127.0.0.1", .port = 1, .tls = false};
  run.change.acceptance.settle = Duration{1'200};
  run.change.acceptance.expected_flaps = std::move(expected_flaps);
  for (const auto& device : run.repository.inventory.devices) {
    run.snapshotter.identities[device.name] = {{"hostname", device.name}};
    run.snapshotter.categories[device.name] = {
        {"interfaces", {{"eth0", {{"oper", "up"}, {"addresses", {"192.0.2.1/24"}}}}}}};
  }
  auto bundle = EvidenceBundle::create(run.evidence_root.path(), run.change.id, now_utc(), "run1",
                                       Redactor{});
  EXPECT_TRUE(bundle.ok());
  GateObserver observer;
  PipelineOptions options;
  options.mode = Mode::apply;
  options.operator_name = "telemetry-test";
  Pipeline::Collaborators with{remote, run.snapshotter, *bundle.value(), observer};
  with.gnmi_connect =
      [&state](const intent::Device&) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
    return std::unique_ptr<gnmi::GnmiClient>(std::make_unique<LiveClient>(state, kBase));
  };
  Pipeline pipeline(run.repository, run.change, with, options);
  outcome = pipeline.run();
  return outcome.exit_code;
}

// leaf1's interfaces (each UP, with its carrier-transitions) and its session to 10.0.1.0, in
// one notification.
gnmi::GnmiNotification leaf1_links(const std::vector<std::pair<std::string, int>>& interfaces) {
  gnmi::GnmiNotification notification;
  for (const auto& [name, carrier_transitions] : interfaces)
    notification.updates.push_back(
        {gnmi::parse_path("/interfaces/interface[name=" + name + "]/state").value(),
         nlohmann::json{
             {"oper-status", "UP"},
             {"counters", {{"carrier-transitions", std::to_string(carrier_transitions)}}}}
             .dump()});
  notification.updates.push_back(
      {gnmi::parse_path("/network-instances/network-instance[name=default]/protocols/"
                        "protocol[identifier=BGP][name=bgp]/bgp/neighbors/"
                        "neighbor[neighbor-address=10.0.1.0]/state/session-state")
           .value(),
       nlohmann::json("ESTABLISHED").dump()});
  return notification;
}

// Each step flaps leaf1's uplink so fast that every sample shows it UP: only its
// carrier-transitions counter (+2 a step) tells.
ExitCode run_hidden_flap(std::vector<std::string> expected_flaps, RunOutcome& outcome) {
  CountingRemote remote;
  return run_streamed(
      remote,
      [&remote] {
        return leaf1_links({{"to-spine1", 1 + 2 * remote.steps.load()}});
      },
      std::move(expected_flaps), outcome);
}

// The step removes leaf1's to-host2: the target no longer sends it, to-spine1 keeps coming.
ExitCode run_removing_to_host2(std::vector<std::string> expected_flaps, RunOutcome& outcome) {
  CountingRemote remote;
  return run_streamed(
      remote,
      [&remote] {
        if (remote.steps > 0) return leaf1_links({{"to-spine1", 1}});
        return leaf1_links({{"to-spine1", 1}, {"to-host2", 1}});
      },
      std::move(expected_flaps), outcome);
}

// The telemetry gate and the during layer failed, a detail starting with `start` and ending
// with `end`.
void expect_telemetry_failed_naming(const RunOutcome& outcome, const std::string& start,
                                    const std::string& end) {
  const GateRecord* telemetry = nullptr;
  for (const auto& gate : outcome.gates)
    if (gate.name == "telemetry") telemetry = &gate;
  ASSERT_NE(telemetry, nullptr);
  EXPECT_EQ(telemetry->verdict, Verdict::fail) << telemetry->summary;
  bool named = false;
  for (const auto& line : telemetry->details)
    named |= line.starts_with(start) && line.ends_with(end);
  EXPECT_TRUE(named) << ::testing::PrintToString(telemetry->details);
  EXPECT_EQ(outcome.layers.at("during").at("telemetry"), "fail");
}

TEST(TelemetryGates, AFlapSeenOnlyInTheCounterRollsTheChangeBack) {
  // Given a change whose step flaps leaf1's uplink between two samples (UP in both, its
  // carrier-transitions +2) and whose probes pass, then the telemetry gate fails naming the
  // flap, the during layer is fail, and the change is rolled back (exit 4).
  RunOutcome outcome;
  EXPECT_EQ(run_hidden_flap({}, outcome), ExitCode::rolled_back);
  expect_telemetry_failed_naming(outcome,
                                 "leaf1: to-spine1: carrier-transitions +2 since the sample at ",
                                 ": flapped (not in acceptance.expected_flaps)");
}

TEST(TelemetryGates, AFlapTheChangeDeclaresIsAccepted) {
  // Given the same flap and a change that lists "leaf1:to-spine1" in expected_flaps, then the
  // change is accepted (exit 0) and the gate passes.
  RunOutcome outcome;
  EXPECT_EQ(run_hidden_flap({"leaf1:to-spine1"}, outcome), ExitCode::accepted);
  EXPECT_EQ(outcome.layers["during"]["telemetry"], "pass");
}

TEST(TelemetryGates, AnInterfaceThatVanishesDuringTheChangeRollsItBack) {
  // Given a change whose step removes leaf1's to-host2 (its target stops sending it while
  // to-spine1 keeps coming) and whose probes pass, then the telemetry gate fails naming the
  // disappearance, and the change is rolled back (exit 4).
  RunOutcome outcome;
  EXPECT_EQ(run_removing_to_host2({}, outcome), ExitCode::rolled_back);
  expect_telemetry_failed_naming(outcome, "leaf1: interface to-host2 disappeared at ",
                                 "; no longer in the samples) (not in acceptance.expected_flaps)");
}

TEST(TelemetryGates, AnInterfaceTheChangeDeclaresMayVanish) {
  // Given the same removal and a change that lists "leaf1:to-host2" in expected_flaps, then the
  // change is accepted (exit 0), the gate passes and still reports the disappearance.
  RunOutcome outcome;
  EXPECT_EQ(run_removing_to_host2({"leaf1:to-host2"}, outcome), ExitCode::accepted);
  EXPECT_EQ(outcome.layers["during"]["telemetry"], "pass");
  bool reported = false;
  for (const auto& gate : outcome.gates)
    if (gate.name == "telemetry")
      for (const auto& line : gate.details)
        reported |= line.starts_with("leaf1 to-host2 ") &&
                    line.find(" disappeared (last seen UP at ") != std::string::npos &&
                    line.ends_with("(expected by the change)");
  EXPECT_TRUE(reported);
}

// A failed change (probes fail while changed) whose target, streaming at the real time, shows
// leaf1's uplink and session down again from `relapse_after` to `relapse_until` after the
// rollback was sent (never, when both are zero); the restore must hold for a 4 s dwell. State
// changes count as departures from two sampling intervals (2 s) after the first round held.
RunOutcome run_with_relapse(Duration relapse_after, Duration relapse_until) {
  TelemetryRun test(false);
  test.run.change.acceptance.restore_dwell = Duration{4'000};
  test.base_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  test.state = [&test, relapse_after, relapse_until] {
    bool down = test.remote.changed;
    if (const std::int64_t at = test.remote.rolled_back_at; at != 0) {
      const auto since_rollback = std::chrono::steady_clock::now().time_since_epoch() -
                                  std::chrono::steady_clock::duration(at);
      down |= since_rollback >= relapse_after && since_rollback < relapse_until;
    }
    return leaf1_state(down);
  };
  test.go(Mode::apply);
  return test.outcome;
}

TEST(TelemetryGates, ALinkThatDropsAfterTheRestoreHeldIsNotRestored) {
  // Given a failed change rolled back, whose restore matches the baseline at once, and a
  // target that shows leaf1's uplink and BGP session down again 2.8 s after the rollback for
  // 400 ms (inside the 4 s dwell; the second round, after it, matches again), then
  // telemetry-restored fails naming the state changes after the restore held, and the run ends
  // NOT RESTORED (exit 5) instead of "baseline verified" on two coincident samples.
  auto outcome = run_with_relapse(Duration{2'800}, Duration{3'200});
  EXPECT_EQ(outcome.exit_code, ExitCode::not_restored) << outcome.device_state;
  const auto* restored = gate_named(outcome, "telemetry-restored");
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->verdict, Verdict::fail) << restored->summary;
  EXPECT_NE(restored->summary.find("after the restore held"), std::string::npos)
      << restored->summary;
  ASSERT_FALSE(restored->details.empty());
  EXPECT_TRUE(restored->details.front().starts_with("leaf1 to-spine1 "))
      << restored->details.front();
  EXPECT_NE(restored->details.front().find("oper-status UP -> DOWN: after the restore held at "),
            std::string::npos)
      << restored->details.front();
  EXPECT_NE(outcome.device_state.find("NOT RESTORED: telemetry-restored: leaf1 to-spine1"),
            std::string::npos)
      << outcome.device_state;
  EXPECT_EQ(outcome.layers["rollback"]["telemetry"], "fail");
}

TEST(TelemetryGates, TheRollbacksOwnReturnIsNotADeparture) {
  // Given the same failed change and target at the real time, with no relapse, then the link
  // and session coming back with the rollback (stamped by the next sample, just after the
  // first round held) are no departure: telemetry-restored passes, exit 4.
  auto outcome = run_with_relapse(Duration::zero(), Duration::zero());
  EXPECT_EQ(outcome.exit_code, ExitCode::rolled_back) << outcome.device_state;
  const auto* restored = gate_named(outcome, "telemetry-restored");
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->verdict, Verdict::pass) << restored->summary;
}

}  // namespace
}  // namespace fabgate::pipeline
