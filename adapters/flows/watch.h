#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/flows/flow_probe.h"
#include "adapters/flows/socket.h"
#include "adapters/flows/statistics.h"

namespace fabgate::flows {

// A continuous UDP probe: started before a change executes and stopped after acceptance, it
// reports how long each flow was interrupted, to a resolution of `interval`: each flow is
// sampled kSamplesPerInterval times per interval, an echo slower than one interval counts as
// not answered, and each interruption is bracketed by the last answer before it and the first
// after it, so a figure is never less than the outage and at most about one interval more
// (statistics.h, docs/probes.md). UDP only: TCP's retransmissions would hide a short outage
// inside one late segment.
//
// The watch also measures itself, so that only what the path did is judged as the path:
// - every probe is stamped as it leaves, and a span in which the sampler sent nothing on a
//   flow for longer than one interval (its process was not scheduled) is a stall of the
//   sampler;
// - the responder reports how long each probe sat on its host before the echo left (its
//   residence, wire.h), which is taken out of the round trip before the late bound is
//   applied, and a residence longer than one interval is a stall of the responder; a probe
//   never answered that reached the responder during such a stall (dropped from its full
//   receive buffer) is unjudged, not lost.
// A stall is lost resolution, no evidence about the paths either way: reported with its source,
// start and length, never counted as an interruption, and no-evidence when it could hide one
// longer than allowed (judge, below).
constexpr int kSamplesPerInterval = 3;

struct WatchOptions {
  std::string target;
  std::uint16_t port = 0;
  int count = 16;
  milliseconds interval{20};                  // the resolution of every interruption figure
  milliseconds max_duration{10 * 60 * 1000};  // stops by itself even if nobody stops it
  milliseconds reply_timeout{1000};  // echoes later than this are not even counted as received
  milliseconds max_interruption{0};  // longest tolerated interruption per flow
};

std::vector<std::string> validate(const WatchOptions& options);

// How often each flow is sampled: a third of the interval, so that the two ends of an
// interruption together add at most about one interval.
milliseconds sample_period(const WatchOptions& options);

struct WatchFlowResult {
  std::uint16_t src_port = 0;
  int sent = 0;
  int received = 0;     // echoes back within the reply timeout, late ones included
  int send_errors = 0;  // ICMP errors reported on send/receive (counted as lost samples)
  InterruptionSummary interruptions;
  int late = 0;  // echoes received but slower than one interval: not answers
  // Samples never answered that reached the responder while it held probes (a stall of the
  // responder): no evidence about the path either way, left out of the interruptions.
  int unjudged = 0;
};

struct WatchReport {
  WatchOptions options;
  TimePoint started_at;
  TimePoint ended_at;
  // The sampler's own record: where it did not sample (merged over flows), and the most any
  // tick started after its schedule.
  StallSummary stalls;  // the sampler's and the responder's
  // Echoes that carried the responder's residence and echoes that did not (a responder that
  // does not report it: their whole round trip is then the path's).
  int echoes_with_residence = 0;
  int echoes_without_residence = 0;
  milliseconds stall_after{0};
  milliseconds max_tick_lateness{0};
  bool stopped = false;  // by the stop flag (SIGTERM/SIGINT), not by max_duration
  // When every flow first had a sample answered within the late bound (see WatchSampling); a
  // late echo is not an answer, so a path slow from the start is not announced as a working
  // baseline. nullopt: never, so the watch never observed one on every flow.
  std::optional<TimePoint> sampling_since;
  std::vector<WatchFlowResult> flows;
  Verdict verdict = Verdict::no_evidence;
  std::string reason;
};

// Beyond this share of the run in stalls the watch did not watch the change: it samples only
// here and there, whatever the figures in between say.
constexpr double kMaxStalledShare = 0.1;

// The verdict rule, in this order:
// - no_evidence when no flow ever received a reply (the baseline was never established);
// - fail when some flow's observed interruption (probes sent and not answered) exceeds
//   max_interruption (an interruption still ongoing at the end counts to the end);
// - no_evidence when the watch's stalls (the sampler's or the responder's) leave the answer
//   open: an interruption that with the spans the watch could not see at its ends (the
//   sampler's lateness, unjudged samples) may have exceeded max_interruption, a stall longer than
//   max(max_interruption, interval) (an outage that long could have passed unseen inside it),
//   or stalls covering more than kMaxStalledShare of `sampled`; the reason names the longest;
// - pass otherwise, naming the stalls it saw if any.
Verdict judge(const std::vector<WatchFlowResult>& flows, const StallSummary& stalls,
              const WatchOptions& options, milliseconds sampled, std::string& reason);

// Called once, on run_watch's thread, as soon as every flow has had a sample answered: only
// then does the watch observe each flow's path against a working baseline. Sockets set up or
// samples sent prove neither that the responder answers nor that each path works, and a flow
// never answered would later blame an outage older than the change on the change. Whoever
// starts the watch waits for this before changing anything.
using WatchSampling = std::function<void()>;

// Runs until `stop` becomes true or max_duration passes, then waits at most reply_timeout for
// the last echoes. `on_sampling` (optional) is called as described above.
Expected<WatchReport, SocketError> run_watch(const WatchOptions& options,
                                             const std::atomic<bool>& stop,
                                             const WatchSampling& on_sampling = {});

}  // namespace fabgate::flows
