#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

// What one rank of a collective probe reported (fabgate-probe collective's JSON), or that it
// never did.
struct RankTimings {
  int rank = 0;
  std::string host;
  bool reported = false;             // false: no parsable report came back from this rank
  std::string missing_reason;        // why, when not reported
  std::vector<double> iteration_ms;  // completed iterations, in order
  int iterations_planned = 0;
  std::vector<std::string> errors;  // socket errors, timeouts, corrupt chunks
};

struct CollectiveThresholds {
  double max_tail_ratio = 0;  // worst rank's p99 over the median rank's p99
  // The median p99 the ratio divides by is taken as at least this: between sub-millisecond
  // p99s on a shared host (0.4 ms against 1.4 ms) a ratio of 3.5 is scheduling noise.
  Duration tail_floor{5};
  std::optional<Duration> max_p99;  // absolute bound on every rank's p99
};

struct RankSummary {
  int rank = 0;
  std::string host;
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  double mean_ms = 0;
};

struct CollectiveJudgement {
  Verdict verdict = Verdict::no_evidence;
  std::string reason;
  std::vector<RankSummary> ranks;   // every rank that completed all its iterations
  std::optional<int> slowest_rank;  // the rank with the highest p99
  double median_p99_ms = 0;
  double tail_ratio = 0;     // slowest p99 / max(median p99, tail_floor)
  double fleet_mean_ms = 0;  // every iteration of every rank, averaged
                             // What judging the fleet average alone would have said (the mean
                             // iteration time over every
  // rank against max_p99, or without one against the median rank's p99 times max_tail_ratio):
  // printed beside the verdict, because an average is what hides one slow rank.
  Verdict average_verdict = Verdict::no_evidence;
  std::string average_reason;
};

// Nearest-rank percentile (p in 0..100) of an unsorted sample; 0 for an empty one.
double percentile(std::vector<double> values, double p);

// The verdict from every rank: no-evidence when any rank never reported (the probe as a whole,
// never "N-1 ranks passed"); fail when any rank had errors or did not complete its iterations;
// fail when the tail ratio exceeds max_tail_ratio or a rank's p99 exceeds max_p99; pass
// otherwise.
CollectiveJudgement judge_collective(const std::vector<RankTimings>& ranks,
                                     const CollectiveThresholds& thresholds);

}  // namespace fabgate::pipeline
