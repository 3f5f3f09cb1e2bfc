// run_probes with ProbeContext::concurrent_flows (settle-restored's rounds): flows probes that
// share no device run at the same time; probes that share a host or a responder never do,
// because each responder listens on the same port of its device. The remote is scripted: every
// command waits up to a second for another one to arrive, so overlap is observed, not timed.

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "gates/pipeline/families/probes.h"
#include "tests/gates/pipeline/probe_hosts.h"

namespace fabgate::pipeline {
namespace {

class OverlapRecordingRemote : public Remote {
 public:
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string&, Duration,
                   std::string_view) override {
    std::unique_lock lock(mutex_);
    ++in_flight_;
    most_in_flight_ = std::max(most_in_flight_, in_flight_);
    arrived_.notify_all();
    arrived_.wait_for(lock, std::chrono::seconds(1), [&] { return in_flight_ > 1; });
    --in_flight_;
    ssh::CommandResult result;
    result.exit_status = 1;  // the responder does not start: the probe ends as no-evidence
    result.stderr_text = "scripted: no responder here";
    return result;
  }
  int most_in_flight() {
    std::lock_guard lock(mutex_);
    return most_in_flight_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  int in_flight_ = 0;
  int most_in_flight_ = 0;
};

intent::Probe flows(const std::string& name, const std::string& from, const std::string& to) {
  intent::Probe probe;
  probe.name = name;
  probe.kind = "flows";
  probe.host = from;
  probe.target = to;
  probe.flows = 4;
  probe.timeout = Duration{5'000};
  return probe;
}

struct Batching : ::testing::Test {
  intent::Inventory inventory{{probe_host("host1", "10.0.0.1"), probe_host("host2", "10.0.0.2"),
                               probe_host("host3", "10.0.0.3"), probe_host("host4", "10.0.0.4")}};
  intent::ProbeSettings settings;
  OverlapRecordingRemote remote;

  std::vector<ProbeOutcome> run(std::vector<intent::Probe> probes, bool concurrent) {
    ProbeContext context{inventory, settings};
    context.concurrent_flows = concurrent;
    return run_probes(remote, context, probes, "restored");
  }
};

TEST_F(Batching, FlowsProbesThatShareNoDeviceRunAtTheSameTime) {
  // Given host1 -> host3 and host2 -> host4 in a restore round, then both responders are
  // started at once, and each probe still has its own outcome, in declared order.
  auto outcomes = run({flows("a", "host1", "host3"), flows("b", "host2", "host4")}, true);
  EXPECT_EQ(remote.most_in_flight(), 2);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].name, "a");
  EXPECT_EQ(outcomes[1].name, "b");
  for (const auto& outcome : outcomes) {
    EXPECT_EQ(outcome.verdict, Verdict::no_evidence) << outcome.reason;
    EXPECT_EQ(outcome.phase, "restored");
  }
}

TEST_F(Batching, FlowsProbesThatShareAHostOrAResponderRunOneAfterTheOther) {
  // Given host1 -> host3 then host1 -> host4 (same host), or host1 -> host3 then host2 ->
  // host3 (same responder), then no two commands ever overlap.
  run({flows("a", "host1", "host3"), flows("b", "host1", "host4")}, true);
  EXPECT_EQ(remote.most_in_flight(), 1);
  run({flows("a", "host1", "host3"), flows("b", "host2", "host3")}, true);
  EXPECT_EQ(remote.most_in_flight(), 1);
}

TEST_F(Batching, WithoutConcurrentFlowsEveryProbeRunsAlone) {
  // Given the same disjoint pair outside a restore round (baseline, acceptance), then they run
  // one after the other, as declared.
  auto outcomes = run({flows("a", "host1", "host3"), flows("b", "host2", "host4")}, false);
  EXPECT_EQ(remote.most_in_flight(), 1);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].name, "a");
}

}  // namespace
}  // namespace fabgate::pipeline
