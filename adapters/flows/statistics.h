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

// The longest stretch of consecutive lost samples in one flow of a continuous probe.
struct Interruption {
  std::chrono::milliseconds length{0};
  TimePoint started_at;  // send time of the first lost sample (UTC)
  bool ongoing = false;  // still lost when the probe stopped
  int lost_samples = 0;
};

// One sample of a continuous probe: when it was sent and whether its echo came back.
struct Sample {
  TimePoint sent_at;
  bool received = false;
};

struct InterruptionSummary {
  std::optional<Interruption> longest;  // none when no sample was lost
  int interruptions = 0;                // number of separate lost stretches
};

// An interruption lasts from the send time of its first lost sample to the send time of the
// next received sample, or to `ended_at` when the probe stopped during it. Measuring from send
// times makes the figure independent of the reply timeout.
InterruptionSummary find_interruptions(const std::vector<Sample>& samples, TimePoint ended_at);

}  // namespace fabgate::flows
