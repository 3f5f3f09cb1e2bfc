#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "adapters/core/time.h"

namespace fabgate::flows {

struct LatencySummary {
  double min_ms = 0;
  double median_ms = 0;
  double max_ms = 0;
};

// None when there is no sample: an empty flow has no latency, not a latency of zero.
std::optional<LatencySummary> summarize_latency(std::vector<double> samples_ms);

// The longest stretch of one flow of a continuous probe during which its path carried nothing
// on time.
struct Interruption {
  // What was observed: probes sent and not answered on time, bracketed by answers, without
  // the sampler's own lateness at its two ends (see `unobserved`).
  std::chrono::milliseconds length{0};
  TimePoint started_at;  // send time of the last sample answered on time before it (UTC)
  bool ongoing = false;  // still interrupted when the probe stopped
  int lost_samples = 0;  // samples in it that were never answered, or answered late
  // How much later than scheduled the sampler sent at its two ends (the last answer before
  // and the first lost sample, the last lost sample and the first answer after): a span with
  // no probe in it, in which the path may have failed or healed. The outage lasted at most
  // `length + unobserved`; a flow sampled on schedule has 0 here.
  std::chrono::milliseconds unobserved{0};
};

struct InterruptionSummary {
  std::optional<Interruption> longest;  // none when every sample was answered on time
  int interruptions = 0;                // number of separate stretches
  // The most any one interruption may have lasted (length + unobserved); none as above.
  std::optional<std::chrono::milliseconds> longest_possible;
};

// Follows one flow's samples in send order and measures its interruptions. A sample is either
// answered on time (its echo came back within the late bound) or not: never answered, answered
// after the bound, or refused by the local stack. Late counts as not answered because a path
// that parks packets (a neighbour queue waiting for ARP while the far side has no carrier)
// hands them over in one burst when it heals: counting those echoes as answers hides the
// outage they sat through.
//
// An interruption lasts from the send time of the last sample answered on time before it to
// the arrival of the first echo answered on time after it (or to the stop time while still
// ongoing). Both ends are on the side of the truth: the path worked when that last sample went
// out, and it worked again only once an echo arrived. With each flow sampled every P, the
// figure is never less than the outage and at most about 2 P more.
//
// Send times are those of each probe as it left, so the gap between two consecutive sends is
// what the sampler really did. Given the sampling `period`, a gap longer than that at either
// end of an interruption is the sampler's lateness (its process was not scheduled), which is
// no evidence of the path either way: it is moved out of `length` into `unobserved`, so the
// observed figure keeps the precision above (at most 2 P and one round trip over the outage)
// however late the sampler ran, and `length + unobserved` is the old bracket, never less than
// the outage. Lateness between two lost samples stays in `length`: the path was down on both
// sides of it, so the outage contains it.
class InterruptionTracker {
 public:
  using Offset = std::chrono::microseconds;  // since `origin`

  // Without `period` every gap between sends counts as on schedule (series built by hand).
  explicit InterruptionTracker(TimePoint origin, std::optional<Offset> period = std::nullopt)
      : origin_(origin), period_(period) {}

  // Samples must be given in send order.
  void answered_on_time(Offset sent, Offset arrived);
  void not_on_time(Offset sent);

  // The summary with an ongoing interruption closed at `ended`.
  InterruptionSummary summary(Offset ended) const;

 private:
  // How much later than one period after the previous send `sent` is (0 without a period).
  Offset lateness_before(Offset sent) const;
  void close(Offset end, bool ongoing, InterruptionSummary& into) const;

  TimePoint origin_;
  std::optional<Offset> period_;
  InterruptionSummary closed_;
  std::optional<Offset> last_sent_;
  std::optional<Offset> last_on_time_sent_;
  bool in_interruption_ = false;
  Offset interruption_start_{0};
  Offset unobserved_{0};
  int lost_samples_ = 0;
};

// One sample of a continuous probe, for callers holding a whole series (tests, reports).
struct Sample {
  TimePoint sent_at;
  bool on_time = false;
  TimePoint arrived_at{};  // when on_time
};

// The tracker over a whole series; `ended_at` closes an interruption still ongoing.
InterruptionSummary find_interruptions(
    const std::vector<Sample>& samples, TimePoint ended_at,
    std::optional<std::chrono::milliseconds> period = std::nullopt);

// Whose stall a span is: the watch's own apparatus, never the path.
enum class StallSource {
  sampler,    // sent nothing on some flow for longer than it may (its process not scheduled)
  responder,  // held probes longer than that before echoing them (its process not scheduled)
};

// A span in which the watch could not observe the paths at its resolution: lost resolution,
// no evidence about the paths either way.
struct Stall {
  TimePoint started_at;  // the sampler's last send before it; the responder's first held probe
  std::chrono::milliseconds length{0};
  StallSource by = StallSource::sampler;
};

struct StallSummary {
  std::vector<Stall> stalls;  // in time order; the first kMaxListedStalls recorded only
  int count = 0;              // all of them, both sources
  int responder_count = 0;    // of which the responder's
  std::optional<Stall> longest;
  std::chrono::milliseconds total{0};  // their union's length: overlaps counted once
};

// Listed in a report; the count, the longest and the total still cover all of them.
constexpr std::size_t kMaxListedStalls = 100;

// Collects the watch's stalls.
//
// The sampler's come from the gaps between consecutive sends of each flow. The gaps of one
// tick (one round of sends over every flow) that are stalls make one stall: one stalled
// process delays every flow, and the figure is what the sampler missed, not that times the
// number of flows. Ticks stay separate, so a sampler that runs slow for a while (every tick
// 15 ms after the last at a 10 ms interval) shows as many short stalls, not one long one.
//
// The responder's come from the residence its echoes report (wire.h): a probe held there
// longer than `stall_after` spans, in the prober's time, from its echo's arrival less the
// residence to the arrival. Holds that overlap (the probes of every flow queued behind one
// descheduled responder) make one stall. While the responder holds probes the return path
// carries none, and probes that arrive when its receive buffer is full are dropped there: a
// sample lost inside a hold (`inside_hold`) is the responder's, not the path's.
//
// The total is the length of the union of both kinds.
class StallRecorder {
 public:
  using Offset = InterruptionTracker::Offset;

  StallRecorder(TimePoint origin, Offset stall_after)
      : origin_(origin), stall_after_(stall_after) {}

  // A flow sent at `previous` and next at `next`, in the current tick.
  void sent(Offset previous, Offset next);
  // The current tick's sends are all given.
  void end_tick();
  // An echo that arrived at `arrived` after the responder held its probe for `residence`.
  void held(Offset arrived, Offset residence);
  // Whether a probe sent at `sent` reached the responder while it held probes: within one of
  // its holds or at most `reach` before one began (the probe's way there).
  bool inside_hold(Offset sent, Offset reach) const;
  StallSummary summary() const;

 private:
  void record(Offset start, Offset end, StallSource by);

  TimePoint origin_;
  Offset stall_after_;
  StallSummary closed_;
  std::map<Offset, Offset> union_;  // every stall so far, merged: start -> end
  std::map<Offset, Offset> holds_;  // the responder's holds, merged: start -> end
  bool open_ = false;
  Offset open_start_{0};
  Offset open_end_{0};
  bool hold_open_ = false;
  Offset hold_start_{0};
  Offset hold_end_{0};
};

}  // namespace fabgate::flows
