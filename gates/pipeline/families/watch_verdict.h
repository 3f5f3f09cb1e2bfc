#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/duration.h"
#include "adapters/core/time.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

// One span in which the watch's own sampler sent nothing for longer than its resolution: no
// evidence about the paths for that span, never an outage.
struct WatchStall {
  TimePoint started_at;
  Duration length{0};
};

// The figures of a `fabgate-probe watch` report the disruption gate judges, read with typed
// lookups: a report from a watch that does not measure itself (no stall fields) or with a
// field of the wrong type is no evidence naming the field, never an exception and never a
// default that reads as healthy.
struct WatchFigures {
  std::string verdict;  // the probe's own: pass, fail, no-evidence
  std::string reason;
  Duration resolution{0};
  Duration longest_interruption{0};  // observed: probes sent and not answered
  // With the sampler's own lateness at its ends, the most it may have lasted.
  Duration longest_possible_interruption{0};
  TimePoint started_at;
  TimePoint ended_at;
  std::vector<WatchStall> stalls;  // as listed (the first 100)
  int stall_count = 0;
  Duration longest_stall{0};
  Duration stalled{0};  // all stalls together
};

// The figures, or why the report cannot be read (naming the field).
struct WatchReading {
  std::optional<WatchFigures> figures;
  std::string problem;
};
WatchReading read_watch_report(const nlohmann::json& document);

struct WatchJudgement {
  Verdict verdict = Verdict::no_evidence;
  std::string reason;
};

// The disruption gate's verdict against `allowed` (acceptance.during.max_disruption):
// - no evidence when the report cannot be read, or the probe itself had none;
// - fail when the observed longest interruption exceeds `allowed`;
// - no evidence when the sampler's stalls leave it open: an interruption that with the
//   sampler's lateness at its ends may have exceeded `allowed`, a stall longer than
//   max(allowed, resolution) (an outage that long could have passed unseen in it), or stalls
//   covering more than a tenth of the watch;
// - pass otherwise (fail too if the probe said fail: it saw something these figures do not).
// Every reason states the resolution and the allowance next to the figure, and names the
// longest stall when there was one.
WatchJudgement judge_watch(const WatchReading& reading, Duration allowed);

}  // namespace fabgate::pipeline
