#pragma once

#include <optional>
#include <vector>

namespace fabgate::rdma {

// Post-to-completion latency of signaled RDMA WRITEs, in microseconds.
struct LatencySummary {
  double median_us = 0;
  double p99_us = 0;
  double max_us = 0;
  std::size_t samples = 0;
};

// Nearest-rank percentiles (no interpolation, so every figure is a latency that was observed).
// No samples -> nullopt: an empty run has no latency, not a latency of zero.
std::optional<LatencySummary> summarize_latencies(std::vector<double> samples_us);

}  // namespace fabgate::rdma
