#include "adapters/rdma/latency_summary.h"

#include <algorithm>
#include <cmath>

namespace fabgate::rdma {

namespace {
// Nearest rank: the smallest sample with at least `fraction` of the samples at or below it.
double nearest_rank(const std::vector<double>& sorted, double fraction) {
  auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}
}  // namespace

std::optional<LatencySummary> summarize_latencies(std::vector<double> samples_us) {
  if (samples_us.empty()) return std::nullopt;
  std::sort(samples_us.begin(), samples_us.end());
  LatencySummary summary;
  summary.samples = samples_us.size();
  summary.median_us = nearest_rank(samples_us, 0.5);
  summary.p99_us = nearest_rank(samples_us, 0.99);
  summary.max_us = samples_us.back();
  return summary;
}

}  // namespace fabgate::rdma
