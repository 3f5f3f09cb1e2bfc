#include "adapters/flows/statistics.h"

#include <algorithm>
#include <iterator>

namespace fabgate::flows {

std::optional<LatencySummary> summarize_latency(std::vector<double> samples_ms) {
  if (samples_ms.empty()) return std::nullopt;
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  double median = n % 2 == 1 ? samples_ms[n / 2] : (samples_ms[n / 2 - 1] + samples_ms[n / 2]) / 2;
  return LatencySummary{samples_ms.front(), median, samples_ms.back()};
}

InterruptionTracker::Offset InterruptionTracker::lateness_before(Offset sent) const {
  if (!period_ || !last_sent_) return Offset(0);
  return std::max(Offset(0), sent - *last_sent_ - *period_);
}

void InterruptionTracker::answered_on_time(Offset sent, Offset arrived) {
  if (in_interruption_) {
    // Lost, then answered: the path healed somewhere between the last lost send and this
    // echo. Whatever this send left later than its schedule is the sampler's lateness, not
    // the path's: the observed end is the arrival as if it had left on time.
    const Offset late = lateness_before(sent);
    unobserved_ += late;
    close(arrived - late, false, closed_);
    in_interruption_ = false;
  }
  last_on_time_sent_ = sent;
  last_sent_ = sent;
}

void InterruptionTracker::not_on_time(Offset sent) {
  if (!in_interruption_) {
    in_interruption_ = true;
    lost_samples_ = 0;
    if (last_on_time_sent_) {
      // Answered, then lost: the path failed somewhere between the two sends. A send later
      // than its schedule widened that span by the sampler's lateness, which is no evidence of
      // the path either way: the observed start is as if it had left on time.
      unobserved_ = lateness_before(sent);
      interruption_start_ = *last_on_time_sent_ + unobserved_;
    } else {
      // Before the first answer there is no proof the path ever worked: the interruption then
      // starts with the first sample (the watch's baseline never established).
      unobserved_ = Offset(0);
      interruption_start_ = sent;
    }
  }
  // Lateness between two lost samples is bridged: the path was down on both sides of it.
  ++lost_samples_;
  last_sent_ = sent;
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
  current.unobserved = std::chrono::ceil<std::chrono::milliseconds>(unobserved_);
  ++into.interruptions;
  if (!into.longest || current.length > into.longest->length) into.longest = current;
  const auto possible = current.length + current.unobserved;
  if (!into.longest_possible || possible > *into.longest_possible) into.longest_possible = possible;
}

InterruptionSummary InterruptionTracker::summary(Offset ended) const {
  InterruptionSummary result = closed_;
  if (!in_interruption_) return result;
  // Ongoing: a sampler that stopped sending before the stop did not observe the end either.
  InterruptionTracker copy = *this;
  const Offset late = copy.lateness_before(ended);
  copy.unobserved_ += late;
  copy.close(ended - late, true, result);
  return result;
}

InterruptionSummary find_interruptions(const std::vector<Sample>& samples, TimePoint ended_at,
                                       std::optional<std::chrono::milliseconds> period) {
  const TimePoint origin = samples.empty() ? ended_at : samples.front().sent_at;
  std::optional<InterruptionTracker::Offset> every;
  if (period) every = *period;
  InterruptionTracker tracker(origin, every);
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

namespace {

// Adds [from, to] to a set of disjoint spans, merging it with every span it touches.
void add_span(std::map<InterruptionTracker::Offset, InterruptionTracker::Offset>& spans,
              InterruptionTracker::Offset from, InterruptionTracker::Offset to) {
  auto next = spans.upper_bound(from);
  if (next != spans.begin()) {
    auto before = std::prev(next);
    if (before->second >= from) {
      from = before->first;
      to = std::max(to, before->second);
      next = spans.erase(before);
    }
  }
  while (next != spans.end() && next->first <= to) {
    to = std::max(to, next->second);
    next = spans.erase(next);
  }
  spans.emplace(from, to);
}

}  // namespace

void StallRecorder::sent(Offset previous, Offset next) {
  if (next - previous <= stall_after_) return;
  if (open_) {
    open_start_ = std::min(open_start_, previous);
    open_end_ = std::max(open_end_, next);
    return;
  }
  open_ = true;
  open_start_ = previous;
  open_end_ = next;
}

void StallRecorder::end_tick() {
  if (!open_) return;
  open_ = false;
  record(open_start_, open_end_, StallSource::sampler);
}

void StallRecorder::held(Offset arrived, Offset residence) {
  if (residence <= stall_after_) return;
  const Offset from = arrived - residence;
  add_span(holds_, from, arrived);
  if (hold_open_ && from <= hold_end_ && arrived >= hold_start_) {
    hold_start_ = std::min(hold_start_, from);
    hold_end_ = std::max(hold_end_, arrived);
    return;
  }
  if (hold_open_) record(hold_start_, hold_end_, StallSource::responder);
  hold_open_ = true;
  hold_start_ = from;
  hold_end_ = arrived;
}

bool StallRecorder::inside_hold(Offset sent, Offset reach) const {
  // The holds are disjoint and in order: only the last one starting by `sent` can contain it,
  // and only the next one can begin within `reach` after it.
  auto next = holds_.upper_bound(sent);
  if (next != holds_.begin() && std::prev(next)->second >= sent) return true;
  return next != holds_.end() && next->first - reach <= sent;
}

void StallRecorder::record(Offset start, Offset end, StallSource by) {
  Stall stall{origin_ + std::chrono::duration_cast<std::chrono::milliseconds>(start),
              std::chrono::ceil<std::chrono::milliseconds>(end - start), by};
  ++closed_.count;
  if (by == StallSource::responder) ++closed_.responder_count;
  add_span(union_, start, end);
  if (!closed_.longest || stall.length > closed_.longest->length) closed_.longest = stall;
  if (closed_.stalls.size() < kMaxListedStalls) closed_.stalls.push_back(stall);
}

StallSummary StallRecorder::summary() const {
  StallRecorder copy = *this;
  copy.end_tick();
  if (copy.hold_open_) copy.record(copy.hold_start_, copy.hold_end_, StallSource::responder);
  StallSummary result = copy.closed_;
  Offset total{0};
  for (const auto& [start, end] : copy.union_) total += end - start;
  result.total = std::chrono::ceil<std::chrono::milliseconds>(total);
  // A hold is recorded when its echoes come back, after the sampler's stalls inside it.
  std::stable_sort(result.stalls.begin(), result.stalls.end(),
                   [](const Stall& a, const Stall& b) { return a.started_at < b.started_at; });
  return result;
}

}  // namespace fabgate::flows
