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
  // Chunks that arrived with a wrong byte (fabgate-probe checks every byte), and the rank that
  // sent the first of them: a workload's data damaged on the way, whatever the timings say.
  int corrupted_chunks = 0;
  std::optional<int> corrupted_from;
};

struct CollectiveThresholds {
  // Every rank's p99 over the reference p99 (the median p99 of the faster half of the ranks).
  double max_tail_ratio = 0;
  // The reference is taken as at least this: between sub-millisecond p99s on a shared host
  // (0.4 ms against 1.4 ms) a ratio of 3.5 is scheduling noise.
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

// A rank whose p99 is over a bound: its own figure and its ratio to the reference.
struct RankOverBound {
  int rank = 0;
  std::string host;
  double p99_ms = 0;
  double ratio = 0;  // p99 / max(reference p99, tail_floor)
};

struct CollectiveJudgement {
  Verdict verdict = Verdict::no_evidence;
  std::string reason;
  std::vector<RankSummary> ranks;   // every rank that completed all its iterations
  std::optional<int> slowest_rank;  // the rank with the highest p99
  double median_p99_ms = 0;         // over every rank; shown, not judged against
  // The median p99 of the faster ceil(n/2) ranks: what each rank is judged against.
  double reference_p99_ms = 0;
  double tail_ratio = 0;                    // slowest p99 / max(reference p99, tail_floor)
  std::vector<RankOverBound> slow_ranks;    // over max_tail_ratio, in rank order
  std::vector<RankOverBound> over_max_p99;  // over max_p99, in rank order
  double fleet_mean_ms = 0;                 // every iteration of every rank, averaged
  int corrupted_chunks = 0;                 // over every rank
  // What judging the fleet average alone would have said (the mean iteration time over every
  // rank against max_p99, or without one against the tail bound every rank is judged by):
  // printed beside the verdict, because an average is what hides one slow rank.
  Verdict average_verdict = Verdict::no_evidence;
  std::string average_reason;
};

// Nearest-rank percentile (p in 0..100) of an unsorted sample; 0 for an empty one.
double percentile(std::vector<double> values, double p);

// The verdict from every rank: no-evidence when any rank never reported (the probe as a whole,
// never "N-1 ranks passed"); fail when any rank had errors or did not complete its iterations;
// fail naming every rank whose p99 exceeds max(reference, tail_floor) x max_tail_ratio or
// max_p99; pass otherwise.
CollectiveJudgement judge_collective(const std::vector<RankTimings>& ranks,
                                     const CollectiveThresholds& thresholds);

}  // namespace fabgate::pipeline
