#pragma once

// The during-change telemetry timeline of one device kept as it streams, for changes that run
// for many minutes over many devices: what gnmi::device_timeline() judges, without keeping
// the notifications (issue 30: 64 devices x 10 minutes of SAMPLE every second would otherwise
// be held whole and copied at each window's end; docs/benchmarks-history.md "Telemetry memory").

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/gnmi/client.h"
#include "adapters/gnmi/telemetry.h"

namespace fabgate::gnmi {

// What a TimelineTracker keeps of one device at most. Past a limit the window is not covered
// (a gap names what was left out, "... (truncated)"), never silently short.
struct TrackerLimits {
  std::size_t subjects = 4096;  // interfaces, and BGP neighbours, followed per device
  std::size_t events = 4096;    // events kept per window
  // A notification waits to be folded, so that samples are folded in device-time order,
  // until the newest timestamp taken is more than this ahead of it (unset: until the window
  // ends, as device_timeline() does), or while at most `held` timestamps wait.
  std::optional<Duration> reorder = Duration{3000};
  std::size_t held = 64;
};

// device_timeline() fed one notification at a time, for a stream that runs through several
// windows: it keeps per subject the last state, transitions counter and sample times, per
// source the last sample (a silence's edge), and the current window's events and gaps, never
// the notifications themselves (beyond the few timestamps that wait to be put in order).
// Given the same notifications in device-time order, its windows are device_timeline()'s
// with each window's notifications as `window` and all earlier ones as `before`. A
// notification that arrives after a later-stamped one has been folded (beyond `reorder`) is
// folded where it arrives, as device_timeline() folds one that arrived in a later window.
class TimelineTracker {
 public:
  TimelineTracker(const std::vector<TelemetrySource>& expected, Duration max_gap,
                  TrackerLimits limits = {});
  ~TimelineTracker();
  TimelineTracker(const TimelineTracker&) = delete;
  TimelineTracker& operator=(const TimelineTracker&) = delete;

  // Which sources a notification carries values of (samples_source()).
  struct Carried {
    bool interfaces = false, bgp = false;
  };
  Carried add(const GnmiNotification& notification);
  // What was added so far only gives the state the window starts from (device_timeline()'s
  // `before`); the window starts at `start_ns`, or at its first sample when unset.
  void begin_window(std::optional<std::int64_t> start_ns);
  // Ends the window: its timeline up to `end_ns` (unset: its last sample). The next window
  // begins at once and starts at its first sample.
  TelemetryTimeline end_window(std::optional<std::int64_t> end_ns);
  // About how many bytes the tracker holds (subjects, waiting samples, the window's events).
  std::size_t retained_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace fabgate::gnmi
