#pragma once

// During-change telemetry: interface oper-status and error counters sampled over a gNMI STREAM
// subscription (SAMPLE, every second or faster), turned into a per-interface timeline of what
// happened, stamped with the device's own timestamps. A stream that stopped delivering is
// no-evidence for the time it was silent, never "nothing happened".

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/gnmi/client.h"

namespace fabgate::gnmi {

// The paths a telemetry stream subscribes to on each device.
inline constexpr const char* kInterfaceStatePath = "/interfaces/interface[name=*]/state";

struct TelemetryEvent {
  std::int64_t timestamp_ns = 0;  // the device's timestamp of the sample that showed it
  std::string interface;
  std::string what;  // "oper-status UP -> DOWN", "in-errors +3"
};

struct TelemetryTimeline {
  std::vector<TelemetryEvent> events;  // in device time order
  // Silences longer than the allowed gap, each "no sample from T1 to T2 (4.2 s)". Non-empty:
  // the window is not covered, the stream is no-evidence.
  std::vector<std::string> gaps;
  std::size_t samples = 0;  // notifications read
  std::int64_t first_ns = 0, last_ns = 0;

  bool covered() const { return gaps.empty() && samples > 0; }
};

// Reads interface state notifications (updates under interface[name=X]/state, or leaves of
// it) and reports oper-status changes and increases of in/out-errors and in/out-discards
// between consecutive samples of an interface. The window [window_start_ns, window_end_ns]
// must be covered with no silence longer than `max_gap` (e.g. three sample intervals) at its
// start, between samples and at its end.
TelemetryTimeline interface_timeline(const std::vector<GnmiNotification>& notifications,
                                     std::int64_t window_start_ns, std::int64_t window_end_ns,
                                     Duration max_gap);

}  // namespace fabgate::gnmi
