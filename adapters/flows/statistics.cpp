#include "adapters/flows/statistics.h"

#include <algorithm>

namespace fabgate::flows {

std::optional<LatencySummary> summarize_latency(std::vector<double> samples_ms) {
  if (samples_ms.empty()) return std::nullopt;
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  double median = n % 2 == 1 ? samples_ms[n / 2] : (samples_ms[n / 2 - 1] + samples_ms[n / 2]) / 2;
  return LatencySummary{samples_ms.front(), median, samples_ms.back()};
}

InterruptionSummary find_interruptions(const std::vector<Sample>& samples, TimePoint ended_at) {
  InterruptionSummary summary;
  std::size_t i = 0;
  while (i < samples.size()) {
    if (samples[i].received) {
      ++i;
      continue;
    }
    std::size_t first_lost = i;
    while (i < samples.size() && !samples[i].received) ++i;
    Interruption current;
    current.started_at = samples[first_lost].sent_at;
    current.ongoing = i == samples.size();
    TimePoint end = current.ongoing ? ended_at : samples[i].sent_at;
    current.length =
        std::max(std::chrono::milliseconds(0),
                 std::chrono::duration_cast<std::chrono::milliseconds>(end - current.started_at));
    current.lost_samples = static_cast<int>(i - first_lost);
    ++summary.interruptions;
    if (!summary.longest || current.length > summary.longest->length) summary.longest = current;
  }
  return summary;
}

}  // namespace fabgate::flows
