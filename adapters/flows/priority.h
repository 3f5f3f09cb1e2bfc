#pragma once

// The scheduling priority of a probe's own process. A probe that measures a path in
// milliseconds must not measure its host's CPU instead: a sampler or a responder that waits
// behind other work for tens of ms reads (or makes the other end read) as an interruption of
// the path. Where the process may (root or CAP_SYS_NICE), the watch and the responder run at a
// real-time priority, as a switch's BFD runs on a CPU of its own; where it may not, they run as
// they are and the watch measures its own stalls (watch.h), so the cost is lost resolution,
// never a false outage. The outcome is reported either way.

#include <string>

namespace fabgate::flows {

// Asks for SCHED_RR at `priority` (1-99) for the calling thread, and so for every thread it
// starts afterwards. Returns what the process runs at: "SCHED_RR 40", or "normal (why)".
std::string request_realtime_priority(int priority = 40);

}  // namespace fabgate::flows
