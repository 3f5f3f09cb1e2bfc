#include <gtest/gtest.h>

#include "adapters/flows/flow_probe.h"
#include "adapters/flows/watch.h"

namespace fabgate::flows {
namespace {

using std::chrono::milliseconds;

FlowResult completed() {
  return FlowResult{1000, true, 5, 5, 0.0, LatencySummary{1, 1, 1}};
}
FlowResult failed(FlowError error) {
  return FlowResult{1001, false, 5, 0, 1.0, std::nullopt, error};
}
// A flow of `sent` messages, `corrupted` of them came back with a wrong byte at `offset` first.
FlowResult corrupted(int sent, int corrupted, std::size_t offset) {
  FlowResult flow{
      1002, false, sent, sent - corrupted, 0.0, LatencySummary{1, 1, 1}, FlowError::corrupted};
  flow.corrupted = corrupted;
  flow.first_corrupt_offset = offset;
  return flow;
}
FlowResult completed(int sent) {
  FlowResult flow = completed();
  flow.sent = flow.received = sent;
  return flow;
}
FlowProbeOptions toward(Protocol protocol) {
  FlowProbeOptions options;
  options.target = "10.1.2.13";
  options.port = 7447;
  options.protocol = protocol;
  return options;
}

TEST(FlowVerdict, EveryFlowCompletedPasses) {
  // Given all flows completed, then the probe passes.
  std::string reason;
  EXPECT_EQ(judge({completed(), completed()}, toward(Protocol::udp), reason), Verdict::pass);
}

TEST(FlowVerdict, OneSilentlyDroppedFlowAmongManyFails) {
  // Given 15 flows through and one timed out (a silent drop on one ECMP path), then the probe
  // fails: a partial forwarding failure is a failure, not a pass with a warning.
  std::vector<FlowResult> flows(15, completed());
  flows.push_back(failed(FlowError::timed_out));
  std::string reason;
  EXPECT_EQ(judge(flows, toward(Protocol::udp), reason), Verdict::fail);
  EXPECT_EQ(reason, "1 of 16 flows did not complete");
}

TEST(FlowVerdict, EveryFlowRefusedIsNoEvidence) {
  // Given the far host refused every flow (no responder listening), then the path was never
  // observed: no evidence, never a pass and not a forwarding failure either.
  std::string reason;
  EXPECT_EQ(judge({failed(FlowError::refused), failed(FlowError::refused)}, toward(Protocol::udp),
                  reason),
            Verdict::no_evidence);
}

TEST(FlowVerdict, EveryFlowBlackholedFails) {
  // Given every flow timed out or was unreachable (a blackholed subnet), then the probe fails.
  std::string reason;
  EXPECT_EQ(judge({failed(FlowError::timed_out), failed(FlowError::unreachable)},
                  toward(Protocol::udp), reason),
            Verdict::fail);
}

TEST(FlowVerdict, MessageTooLongIsAFailureNamedAsSuch) {
  // Given flows whose full-size packets were refused with EMSGSIZE (DF set, bigger than the
  // MTU) while the rest completed, then the probe fails and says EMSGSIZE: a packet that never
  // left is not a pass, and the path was observed (small packets crossed), so not no-evidence.
  std::vector<FlowResult> flows(3, completed());
  flows.push_back(failed(FlowError::too_big));
  std::string reason;
  EXPECT_EQ(judge(flows, toward(Protocol::udp), reason), Verdict::fail);
  EXPECT_NE(reason.find("EMSGSIZE"), std::string::npos) << reason;
  EXPECT_STREQ(to_string(FlowError::too_big), "message-too-long");
  // Even when every flow was refused for its size.
  EXPECT_EQ(judge({failed(FlowError::too_big), failed(FlowError::too_big)}, toward(Protocol::udp),
                  reason),
            Verdict::fail);
}

TEST(FlowOptions, SizeIsUdpOnlyAndWithinAUdpDatagram) {
  // Given a size on TCP, a size below the probe message or above a UDP datagram, or a source
  // that is no address, then each is refused; a full-size 1472-byte UDP payload is accepted.
  FlowProbeOptions options;
  options.target = "10.100.0.13";
  options.port = 7447;
  options.size = 1472;
  EXPECT_TRUE(validate(options).empty());
  options.protocol = Protocol::tcp;
  EXPECT_EQ(validate(options).size(), 1u);
  options.protocol = Protocol::udp;
  options.size = 15;
  EXPECT_EQ(validate(options).size(), 1u);
  options.size = 65508;
  EXPECT_EQ(validate(options).size(), 1u);
  options.size = 0;
  options.source = "host1";
  EXPECT_EQ(validate(options).size(), 1u);
}

TEST(FlowOptions, OutOfRangeOptionsAreAllReported) {
  // Given a bad address, no port, zero flows and no deadline, then each problem is listed.
  FlowProbeOptions options;
  options.target = "spine1";
  options.count = 0;
  options.timeout = milliseconds(0);
  EXPECT_EQ(validate(options).size(), 4u);
}

TEST(FlowVerdict, CorruptionFailsAndLeadsTheReasonWithFlowCountAndOffset) {
  // Given 16 flows of 100 datagrams each, all answered, but flow 7 saw 3 echoes with a wrong
  // byte (the first at byte 812), then the probe fails and the reason says exactly that: how
  // many of all sent, which flow to where, and the first differing byte.
  std::vector<FlowResult> flows(16, completed(100));
  flows[7] = corrupted(100, 3, 812);
  std::string reason;
  EXPECT_EQ(judge(flows, toward(Protocol::udp), reason), Verdict::fail);
  EXPECT_EQ(reason,
            "3 of 1600 datagrams corrupted on flow 7 (to 10.1.2.13:7447), first at byte 812");
  EXPECT_STREQ(to_string(FlowError::corrupted), "corrupted");
}

TEST(FlowVerdict, CorruptionComesFirstThenTheFlowsThatFailedOtherwise) {
  // Given corruption on flows 2 and 5 and flow 9 timed out, then the reason names the first
  // corrupted flow, how many more saw corruption, and then the existing wording for the flows
  // that did not complete (EMSGSIZE too when a flow was refused for its size).
  std::vector<FlowResult> flows(12, completed(5));
  flows[2] = corrupted(5, 1, 16);
  flows[5] = corrupted(5, 2, 30);
  flows[9] = failed(FlowError::timed_out);
  flows[10] = failed(FlowError::too_big);
  std::string reason;
  EXPECT_EQ(judge(flows, toward(Protocol::udp), reason), Verdict::fail);
  EXPECT_EQ(reason,
            "3 of 60 datagrams corrupted on flow 2 (to 10.1.2.13:7447), first at byte 16, and on "
            "1 more flow; 4 of 12 flows did not complete (1 with EMSGSIZE: message too long for "
            "the MTU with don't-fragment set)");
}

TEST(FlowVerdict, CorruptionIsCountedInTheProtocolsOwnUnits) {
  // Given one corrupted message over tcp and one corrupted echo reply over icmp, then the
  // reason counts "messages" and "echo replies", and an icmp target has no port.
  std::vector<FlowResult> flows{completed(5), corrupted(5, 1, 20)};
  std::string reason;
  EXPECT_EQ(judge(flows, toward(Protocol::tcp), reason), Verdict::fail);
  EXPECT_EQ(reason, "1 of 10 messages corrupted on flow 1 (to 10.1.2.13:7447), first at byte 20");
  EXPECT_EQ(judge(flows, toward(Protocol::icmp), reason), Verdict::fail);
  EXPECT_EQ(reason, "1 of 10 echo replies corrupted on flow 1 (to 10.1.2.13), first at byte 20");
}

TEST(FlowVerdict, CorruptionIsAFailureEvenWhenEveryOtherFlowWasRefused) {
  // Given one flow that got a corrupted echo and every other flow refused, then the path was
  // observed delivering wrong bytes: a failure, never no-evidence.
  std::vector<FlowResult> flows{failed(FlowError::refused), corrupted(5, 5, 0)};
  flows[1].received = 0;
  std::string reason;
  EXPECT_EQ(judge(flows, toward(Protocol::udp), reason), Verdict::fail);
}

TEST(FlowOptions, IcmpNeedsNoPortAndTakesASize) {
  // Given icmp without a port, with a full-size 1472-byte payload, then the options are
  // usable; udp without a port is still refused.
  FlowProbeOptions options = toward(Protocol::icmp);
  options.port = 0;
  options.size = 1472;
  EXPECT_TRUE(validate(options).empty());
  EXPECT_EQ(parse_protocol("icmp"), std::optional<Protocol>(Protocol::icmp));
  options.protocol = Protocol::udp;
  EXPECT_EQ(validate(options).size(), 1u);
}

WatchOptions allowing(milliseconds max_interruption) {
  WatchOptions options;
  options.interval = milliseconds(10);
  options.max_interruption = max_interruption;
  return options;
}

constexpr milliseconds kTwentySeconds{20'000};

StallSummary one_stall(milliseconds length) {
  StallSummary stalls;
  Stall stall{TimePoint(milliseconds(1'800'000'000'000LL)), length};
  stalls.stalls.push_back(stall);
  stalls.count = 1;
  stalls.longest = stall;
  stalls.total = length;
  return stalls;
}

WatchFlowResult answered_flow() {
  return WatchFlowResult{1000, 2000, 2000, 0, {}};
}

TEST(WatchVerdict, InterruptionLongerThanAllowedFails) {
  // Given one flow interrupted for 400 ms and a 200 ms allowance, then the watch fails; with a
  // 500 ms allowance it passes.
  WatchFlowResult flow{
      1000,
      50,
      46,
      0,
      {Interruption{milliseconds(400), TimePoint{}, false, 4}, 1, milliseconds(400)}};
  std::string reason;
  EXPECT_EQ(judge({flow}, {}, allowing(milliseconds(200)), kTwentySeconds, reason), Verdict::fail);
  EXPECT_EQ(judge({flow}, {}, allowing(milliseconds(500)), kTwentySeconds, reason), Verdict::pass);
}

TEST(WatchVerdict, NoReplyEverIsNoEvidence) {
  // Given no flow ever answered, then the watch has no baseline: no evidence.
  WatchFlowResult flow{1000, 50, 0, 0, {}};
  std::string reason;
  EXPECT_EQ(judge({flow}, {}, allowing(milliseconds(0)), kTwentySeconds, reason),
            Verdict::no_evidence);
}

TEST(WatchVerdict, ShortSamplerStallsPassAndAreNamed) {
  // Given every flow answered throughout and the sampler stalled once for 25 ms, with 300 ms
  // allowed, then the watch passes and its reason names the stall: lost resolution shorter
  // than the allowance hides nothing that would have failed.
  std::string reason;
  EXPECT_EQ(judge({answered_flow()}, one_stall(milliseconds(25)), allowing(milliseconds(300)),
                  kTwentySeconds, reason),
            Verdict::pass);
  EXPECT_NE(reason.find("stalled (longest 25 ms from 2027-01-15T08:00:00.000Z"), std::string::npos)
      << reason;
}

TEST(WatchVerdict, StallLongerThanTheAllowanceIsNoEvidenceNeverFail) {
  // Given every flow answered and the sampler stalled for 450 ms with 300 ms allowed, then the
  // watch cannot say whether a 400 ms outage passed unseen: no evidence naming the stall, not
  // a pass and not a failure blamed on the network.
  std::string reason;
  EXPECT_EQ(judge({answered_flow()}, one_stall(milliseconds(450)), allowing(milliseconds(300)),
                  kTwentySeconds, reason),
            Verdict::no_evidence);
  EXPECT_NE(reason.find("no evidence for 450 ms from 2027-01-15T08:00:00.000Z"), std::string::npos)
      << reason;
}

TEST(WatchVerdict, StallsCoveringMuchOfTheRunAreNoEvidence) {
  // Given stalls of 40 ms each (within the 300 ms allowance) adding up to 3 s of a 20 s run,
  // then the watch sampled too little of the change to vouch for it: no evidence.
  StallSummary stalls = one_stall(milliseconds(40));
  stalls.count = 75;
  stalls.total = milliseconds(3000);
  std::string reason;
  EXPECT_EQ(judge({answered_flow()}, stalls, allowing(milliseconds(300)), kTwentySeconds, reason),
            Verdict::no_evidence);
  EXPECT_NE(reason.find("no evidence for 3000 ms of 20000 ms sampled"), std::string::npos)
      << reason;
}

TEST(WatchVerdict, InterruptionThatMayHaveExceededTheAllowanceAcrossAStallIsNoEvidence) {
  // Given a flow observed interrupted for 250 ms right after a 100 ms stall (it may have begun
  // anywhere in the stall) and 300 ms allowed, then the watch cannot tell: no evidence; with
  // 400 ms allowed it passes.
  Interruption seen{milliseconds(250), TimePoint{}, false, 80, milliseconds(100)};
  WatchFlowResult flow{1000, 2000, 1920, 0, {seen, 1, milliseconds(350)}};
  std::string reason;
  EXPECT_EQ(judge({flow}, one_stall(milliseconds(100)), allowing(milliseconds(300)), kTwentySeconds,
                  reason),
            Verdict::no_evidence);
  EXPECT_NE(reason.find("interrupted for up to 350 ms"), std::string::npos) << reason;
  EXPECT_EQ(judge({flow}, one_stall(milliseconds(100)), allowing(milliseconds(400)), kTwentySeconds,
                  reason),
            Verdict::pass);
}

TEST(WatchOptions, SamplingSlowerThan100msIsRejected) {
  // Given a 250 ms interval, then the options are rejected: the contract is ≤ 100 ms sampling.
  WatchOptions options;
  options.target = "127.0.0.1";
  options.port = 7000;
  options.interval = milliseconds(250);
  EXPECT_EQ(validate(options).size(), 1u);
}

}  // namespace
}  // namespace fabgate::flows
