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

void InterruptionTracker::answered_on_time(Offset sent, Offset arrived) {
  if (in_interruption_) {
    close(arrived, false, closed_);
    in_interruption_ = false;
  }
  last_on_time_sent_ = sent;
}

void InterruptionTracker::not_on_time(Offset sent) {
  if (!in_interruption_) {
    in_interruption_ = true;
    // Before the first answer there is no proof the path ever worked: the interruption then
    // starts with the first sample (the watch's baseline never established).
    interruption_start_ = last_on_time_sent_.value_or(sent);
    lost_samples_ = 0;
  }
  ++lost_samples_;
}

void InterruptionTracker::close(Offset end, bool ongoing, InterruptionSummary& into) const {
  Interruption current;
  current.started_at =
      origin_ + std::chrono::duration_cast<std::chrono::milliseconds>(interruption_start_);
  current.ongoing = ongoing;
  current.lost_samples = lost_samples_;
  // Rounded up: the figure must never be less than the outage it measures.
  current.length =
      std::max(std::chrono::milliseconds(0),
               std::chrono::ceil<std::chrono::milliseconds>(end - interruption_start_));
  ++into.interruptions;
  if (!into.longest || current.length > into.longest->length) into.longest = current;
}

InterruptionSummary InterruptionTracker::summary(Offset ended) const {
  InterruptionSummary result = closed_;
  if (in_interruption_) close(ended, true, result);
  return result;
}

InterruptionSummary find_interruptions(const std::vector<Sample>& samples, TimePoint ended_at) {
  const TimePoint origin = samples.empty() ? ended_at : samples.front().sent_at;
  InterruptionTracker tracker(origin);
  auto offset = [&](TimePoint when) {
    return std::chrono::duration_cast<InterruptionTracker::Offset>(when - origin);
  };
  for (const auto& sample : samples) {
    if (sample.on_time) {
      tracker.answered_on_time(offset(sample.sent_at), offset(sample.arrived_at));
    } else {
      tracker.not_on_time(offset(sample.sent_at));
    }
  }
  return tracker.summary(offset(ended_at));
}

}  // namespace fabgate::flows
