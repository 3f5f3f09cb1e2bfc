#pragma once

#include <chrono>
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
  std::chrono::milliseconds length{0};
  TimePoint started_at;  // send time of the last sample answered on time before it (UTC)
  bool ongoing = false;  // still interrupted when the probe stopped
  int lost_samples = 0;  // samples in it that were never answered, or answered late
};

struct InterruptionSummary {
  std::optional<Interruption> longest;  // none when every sample was answered on time
  int interruptions = 0;                // number of separate stretches
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
class InterruptionTracker {
 public:
  using Offset = std::chrono::microseconds;  // since `origin`

  explicit InterruptionTracker(TimePoint origin) : origin_(origin) {}

  // Samples must be given in send order.
  void answered_on_time(Offset sent, Offset arrived);
  void not_on_time(Offset sent);

  // The summary with an ongoing interruption closed at `ended`.
  InterruptionSummary summary(Offset ended) const;

 private:
  void close(Offset end, bool ongoing, InterruptionSummary& into) const;

  TimePoint origin_;
  InterruptionSummary closed_;
  std::optional<Offset> last_on_time_sent_;
  bool in_interruption_ = false;
  Offset interruption_start_{0};
  int lost_samples_ = 0;
};

// One sample of a continuous probe, for callers holding a whole series (tests, reports).
struct Sample {
  TimePoint sent_at;
  bool on_time = false;
  TimePoint arrived_at{};  // when on_time
};

// The tracker over a whole series; `ended_at` closes an interruption still ongoing.
InterruptionSummary find_interruptions(const std::vector<Sample>& samples, TimePoint ended_at);

}  // namespace fabgate::flows
