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

// What a fleet dashboard would have said: the mean iteration time over every rank against the
// absolute bound (max_p99, or without one the median rank's p99 times max_tail_ratio).
void judge_average(CollectiveJudgement& judgement, const CollectiveThresholds& thresholds) {
  const double limit = thresholds.max_p99 ? static_cast<double>(thresholds.max_p99->count())
                                          : judgement.median_p99_ms * thresholds.max_tail_ratio;
  const std::string against =
      thresholds.max_p99 ? "max_p99 " + ms(limit) : "median p99 x max_tail_ratio " + ms(limit);
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
  double total = 0;
  std::size_t count = 0;
  for (const auto& rank : ranks) {
    if (!rank.reported) {
      missing.push_back(rank_name(rank.rank, rank.host) +
                        (rank.missing_reason.empty() ? "" : ": " + rank.missing_reason));
      continue;
    }
    const int done = static_cast<int>(rank.iteration_ms.size());
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
  if (!judgement.ranks.empty()) {
    std::vector<double> p99s;
    for (const auto& rank : judgement.ranks) p99s.push_back(rank.p99_ms);
    judgement.median_p99_ms = median(p99s);
    auto slowest = std::max_element(
        judgement.ranks.begin(), judgement.ranks.end(),
        [](const RankSummary& a, const RankSummary& b) { return a.p99_ms < b.p99_ms; });
    judgement.slowest_rank = slowest->rank;
    const double divisor =
        std::max(judgement.median_p99_ms, static_cast<double>(thresholds.tail_floor.count()));
    judgement.tail_ratio = divisor > 0 ? slowest->p99_ms / divisor : 0;
    judge_average(judgement, thresholds);
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
  if (!failing.empty()) {
    judgement.verdict = Verdict::fail;
    judgement.reason = std::to_string(failing.size()) + of_n + " had errors or timeouts (" +
                       failing.front() + (failing.size() > 1 ? "; ..." : "") + ")";
    return judgement;
  }
  const auto& slowest =
      *std::find_if(judgement.ranks.begin(), judgement.ranks.end(),
                    [&](const RankSummary& r) { return r.rank == *judgement.slowest_rank; });
  const std::string tail = rank_name(slowest.rank, slowest.host) + " p99 " + ms(slowest.p99_ms) +
                           " vs median p99 " + ms(judgement.median_p99_ms) + " (tail ratio " +
                           ratio(judgement.tail_ratio) + ")";
  std::vector<std::string> over;
  if (thresholds.max_tail_ratio > 0 && judgement.tail_ratio > thresholds.max_tail_ratio)
    over.push_back("tail ratio over " + ratio(thresholds.max_tail_ratio));
  if (thresholds.max_p99 && slowest.p99_ms > static_cast<double>(thresholds.max_p99->count()))
    over.push_back("p99 over max_p99 " + ms(static_cast<double>(thresholds.max_p99->count())));
  if (!over.empty()) {
    judgement.verdict = Verdict::fail;
    std::string joined = over.front();
    for (std::size_t i = 1; i < over.size(); ++i) joined += ", " + over[i];
    judgement.reason = "slow rank: " + tail + ": " + joined;
    return judgement;
  }
  judgement.verdict = Verdict::pass;
  judgement.reason = "every rank within bounds; slowest " + tail;
  return judgement;
}

}  // namespace fabgate::pipeline
