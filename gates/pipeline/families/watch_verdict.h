#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/duration.h"
#include "adapters/core/time.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

// One span in which the watch itself could not observe the paths at its resolution (its
// sampler sent nothing, or its responder held the probes, for longer than that): no evidence
// about the paths for that span, never an outage.
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
  TimePoint ended_at;  // the end of the window it observed, on its host's clock
  // "signal": it ran until it was asked to stop; anything else ("max-duration") it stopped by
  // itself, however much of the window was left.
  std::string stopped_by;
  std::vector<WatchStall> stalls;  // as listed (the first 100)
  int stall_count = 0;
  // Of which the responder's (a report from a watch that does not measure its responder has
  // none: 0).
  int responder_stall_count = 0;
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

// What the disruption gate asked of the watch: the allowance (acceptance.during.max_disruption)
// and how long the watch had been sampling when the gate asked it to stop, on fabgate's clock
// from the moment the watch said it was sampling (so the hosts' clocks need not agree with
// fabgate's: the report's own window, ended_at - started_at, is at least this long when the
// watch ran until it was asked to stop).
struct WatchRequest {
  Duration allowed{0};
  Duration until_stop{0};
};

// The disruption gate's verdict:
// - no evidence when the report cannot be read, or the probe itself had none;
// - fail when the observed longest interruption exceeds `allowed`;
// - no evidence when the watch did not observe the whole window up to the stop request: it
//   stopped by itself (`stopped_by` other than "signal"), or its window is shorter than
//   `until_stop` by more than its resolution; the reason says when it stopped and that the
//   window after it was not watched;
// - no evidence when the watch's stalls (its sampler's or its responder's) leave it open: an
//   interruption that with the spans the watch did not see at its ends may have exceeded
//   `allowed`, a stall longer than
//   max(allowed, resolution) (an outage that long could have passed unseen in it), or stalls
//   covering more than a tenth of the watch;
// - pass otherwise (fail too if the probe said fail: it saw something these figures do not).
// Every reason states the resolution and the allowance next to the figure, and names the
// longest stall when there was one.
WatchJudgement judge_watch(const WatchReading& reading, const WatchRequest& request);

}  // namespace fabgate::pipeline
