#include "gates/pipeline/families/collective_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace fabgate::pipeline {

namespace {

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value < 10 ? "%.2f ms" : "%.1f ms", value);
  return text;
}

std::string ratio(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

std::string rank_name(int rank, const std::string& host) {
  return "rank " + std::to_string(rank) + (host.empty() ? "" : " (" + host + ")");
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The p99 every rank is judged against: the median p99 of the faster ceil(n/2) ranks. Up to
// floor(n/2) ranks can be arbitrarily slow without moving it, so neither one slow rank of two
// (whose own p99 pulled the median of all ranks halfway up, capping the ratio at 2) nor the
// half of the fabric behind one bad spine (10, 10, 100, 100: a median of 55) can hide. Taking
// the median of that half rather than its fastest rank keeps one unusually fast rank (a short
// path, an idle host) from failing every other; tail_floor bounds how low it can go anyway.
double reference_p99(std::vector<double> p99s) {
  std::sort(p99s.begin(), p99s.end());
  p99s.resize((p99s.size() + 1) / 2);
  return median(std::move(p99s));
}

// "1 of 4 ranks over <bound>: rank 2 (host3) p99 100.0 ms (ratio 9.9), ..."; at most eight
// named, the rest counted (the probe detail lists them all).
std::string name_over(const std::vector<RankOverBound>& over, std::size_t rank_count,
                      const std::string& bound) {
  constexpr std::size_t kNamed = 8;
  std::string text = std::to_string(over.size()) + " of " + std::to_string(rank_count) +
                     " ranks over " + bound + ": ";
  for (std::size_t i = 0; i < over.size() && i < kNamed; ++i)
    text += (i > 0 ? ", " : "") + rank_name(over[i].rank, over[i].host) + " p99 " +
            ms(over[i].p99_ms) + " (ratio " + ratio(over[i].ratio) + ")";
  if (over.size() > kNamed) text += " and " + std::to_string(over.size() - kNamed) + " more";
  return text;
}

// What a fleet dashboard would have said: the mean iteration time over every rank against the
// absolute bound (max_p99, or without one the tail bound every rank is judged by).
void judge_average(CollectiveJudgement& judgement, double tail_bound_ms,
                   const CollectiveThresholds& thresholds) {
  const double limit =
      thresholds.max_p99 ? static_cast<double>(thresholds.max_p99->count()) : tail_bound_ms;
  const std::string against =
      thresholds.max_p99 ? "max_p99 " + ms(limit) : "reference p99 x max_tail_ratio " + ms(limit);
  const bool over = judgement.fleet_mean_ms > limit;
  judgement.average_verdict = over ? Verdict::fail : Verdict::pass;
  judgement.average_reason =
      "fleet average " + ms(judgement.fleet_mean_ms) + " per iteration " +
      (over ? "over " : "within ") + against +
      (over ? ": an average would have failed too" : ": an average alone would have passed");
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  auto index = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  index = std::clamp<std::size_t>(index, 1, values.size());
  return values[index - 1];
}

CollectiveJudgement judge_collective(const std::vector<RankTimings>& ranks,
                                     const CollectiveThresholds& thresholds) {
  CollectiveJudgement judgement;
  if (ranks.empty()) {
    judgement.reason = "no ranks";
    return judgement;
  }
  std::vector<std::string> missing;
  std::vector<std::string> failing;
  std::vector<std::string> corrupted;  // ranks that received damaged data: the headline
  auto host_of = [&](int rank) {
    for (const auto& other : ranks)
      if (other.rank == rank) return rank_name(rank, other.host);
    return rank_name(rank, "");
  };
  double total = 0;
  std::size_t count = 0;
  for (const auto& rank : ranks) {
    if (!rank.reported) {
      missing.push_back(rank_name(rank.rank, rank.host) +
                        (rank.missing_reason.empty() ? "" : ": " + rank.missing_reason));
      continue;
    }
    const int done = static_cast<int>(rank.iteration_ms.size());
    judgement.corrupted_chunks += rank.corrupted_chunks;
    if (rank.corrupted_chunks > 0)
      corrupted.push_back(rank_name(rank.rank, rank.host) + " received " +
                          std::to_string(rank.corrupted_chunks) + " corrupted chunk" +
                          (rank.corrupted_chunks == 1 ? "" : "s") +
                          (rank.corrupted_from ? " (the first from " +
                                                     host_of(*rank.corrupted_from) + ")"
                                               : "") +
                          (rank.errors.empty() ? "" : ": " + rank.errors.front()));
    if (!rank.errors.empty()) {
      failing.push_back(rank_name(rank.rank, rank.host) + ": " + rank.errors.front() +
                        (rank.errors.size() > 1
                             ? " (+" + std::to_string(rank.errors.size() - 1) + " more)"
                             : ""));
    } else if (done < rank.iterations_planned || done == 0) {
      failing.push_back(rank_name(rank.rank, rank.host) + ": completed " + std::to_string(done) +
                        " of " + std::to_string(rank.iterations_planned) + " iterations");
    }
    if (done == 0) continue;
    RankSummary summary;
    summary.rank = rank.rank;
    summary.host = rank.host;
    summary.p50_ms = percentile(rank.iteration_ms, 50);
    summary.p99_ms = percentile(rank.iteration_ms, 99);
    summary.max_ms = *std::max_element(rank.iteration_ms.begin(), rank.iteration_ms.end());
    const double sum = std::accumulate(rank.iteration_ms.begin(), rank.iteration_ms.end(), 0.0);
    summary.mean_ms = sum / static_cast<double>(done);
    total += sum;
    count += rank.iteration_ms.size();
    judgement.ranks.push_back(summary);
  }
  if (count > 0) judgement.fleet_mean_ms = total / static_cast<double>(count);
  // Where the reference is from, for the reason: "median p99 of the faster 2 of 4 ranks".
  std::string reference;
  if (!judgement.ranks.empty()) {
    std::vector<double> p99s;
    for (const auto& rank : judgement.ranks) p99s.push_back(rank.p99_ms);
    judgement.median_p99_ms = median(p99s);
    judgement.reference_p99_ms = reference_p99(p99s);
    const double floor_ms = static_cast<double>(thresholds.tail_floor.count());
    const double divisor = std::max(judgement.reference_p99_ms, floor_ms);
    reference =
        "reference p99 " + ms(judgement.reference_p99_ms) + " (median p99 of the faster " +
        std::to_string((p99s.size() + 1) / 2) + " of " + std::to_string(p99s.size()) + " ranks" +
        (judgement.reference_p99_ms < floor_ms ? "; taken as tail_floor " + ms(floor_ms) : "") +
        ")";
    auto slowest = std::max_element(
        judgement.ranks.begin(), judgement.ranks.end(),
        [](const RankSummary& a, const RankSummary& b) { return a.p99_ms < b.p99_ms; });
    judgement.slowest_rank = slowest->rank;
    judgement.tail_ratio = divisor > 0 ? slowest->p99_ms / divisor : 0;
    for (const auto& rank : judgement.ranks) {
      const RankOverBound over{rank.rank, rank.host, rank.p99_ms,
                               divisor > 0 ? rank.p99_ms / divisor : 0};
      if (thresholds.max_tail_ratio > 0 && over.ratio > thresholds.max_tail_ratio)
        judgement.slow_ranks.push_back(over);
      if (thresholds.max_p99 && rank.p99_ms > static_cast<double>(thresholds.max_p99->count()))
        judgement.over_max_p99.push_back(over);
    }
    judge_average(judgement, divisor * thresholds.max_tail_ratio, thresholds);
  }

  const std::string of_n = " of " + std::to_string(ranks.size()) + " ranks";
  if (!missing.empty()) {
    // Peers of a rank that never ran time out too; their errors say nothing about the fabric.
    judgement.verdict = Verdict::no_evidence;
    judgement.reason = std::to_string(missing.size()) + of_n + " never reported (" +
                       missing.front() + (missing.size() > 1 ? ", ..." : "") +
                       "): the collective as a whole has no evidence";
    return judgement;
  }
  if (!corrupted.empty()) {
    // Damaged data fails the workload even when every iteration was fast: named first, with
    // the sender mapped to its host, ahead of any rank that only timed out.
    judgement.verdict = Verdict::fail;
    judgement.reason = std::to_string(corrupted.size()) + of_n + " received corrupted data (" +
                       corrupted.front() + (corrupted.size() > 1 ? "; ..." : "") + ")";
    return judgement;
  }
  if (!failing.empty()) {
    judgement.verdict = Verdict::fail;
    judgement.reason = std::to_string(failing.size()) + of_n + " had errors or timeouts (" +
                       failing.front() + (failing.size() > 1 ? "; ..." : "") + ")";
    return judgement;
  }
  std::vector<std::string> over;
  if (!judgement.slow_ranks.empty())
    over.push_back(
        name_over(judgement.slow_ranks, judgement.ranks.size(),
                  "max_tail_ratio " + ratio(thresholds.max_tail_ratio) + " x " + reference));
  if (!judgement.over_max_p99.empty())
    over.push_back(name_over(judgement.over_max_p99, judgement.ranks.size(),
                             "max_p99 " + ms(static_cast<double>(thresholds.max_p99->count()))));
  if (!over.empty()) {
    judgement.verdict = Verdict::fail;
    judgement.reason = over.front() + (over.size() > 1 ? "; " + over[1] : "");
    return judgement;
  }
  const auto& slowest =
      *std::find_if(judgement.ranks.begin(), judgement.ranks.end(),
                    [&](const RankSummary& r) { return r.rank == *judgement.slowest_rank; });
  judgement.verdict = Verdict::pass;
  judgement.reason = "every rank within bounds; slowest " + rank_name(slowest.rank, slowest.host) +
                     " p99 " + ms(slowest.p99_ms) + " vs " + reference + " (tail ratio " +
                     ratio(judgement.tail_ratio) + ")";
  return judgement;
}

}  // namespace fabgate::pipeline
