#pragma once

// During-change telemetry: interface oper-status and error counters, and the BGP neighbours'
// session state and received prefix counts, sampled over a gNMI STREAM subscription (SAMPLE,
// every second or faster), turned into a timeline of what happened, stamped with the device's
// own timestamps. A stream that stopped delivering is no-evidence for the time it was silent,
// never "nothing happened", unless monotonic counters on both sides of the silence show what
// happened inside it (carrier-transitions per interface, established-transitions per BGP
// session): such a silence costs time resolution, not detection.

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/gnmi/client.h"

namespace fabgate::gnmi {

// The paths a telemetry stream subscribes to on each device.
inline constexpr const char* kInterfaceStatePath = "/interfaces/interface[name=*]/state";
inline constexpr const char* kBgpSessionStatePath =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=*]/state/"
    "session-state";
inline constexpr const char* kBgpPrefixesReceivedPath =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=*]/afi-safis/"
    "afi-safi[afi-safi-name=*]/state/prefixes/received";
// openconfig-bgp's neighbour counter of transitions to ESTABLISHED: with it a session that
// dropped and came back between two samples (or inside a silence) still shows.
inline constexpr const char* kBgpEstablishedTransitionsPath =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=*]/state/"
    "established-transitions";
// The interface counters a silence is covered by (inside kInterfaceStatePath's counters).
inline constexpr const char* kCarrierTransitions = "carrier-transitions";
inline constexpr const char* kEstablishedTransitions = "established-transitions";

// What a sample is about. Each source is covered (or not) on its own: a stream that delivers
// interface state but no BGP state has not shown that no session dropped.
enum class TelemetrySource { interfaces, bgp_neighbors };
std::string_view to_string(TelemetrySource source);  // "interface", "bgp"

// Whether a notification samples `source`: it carries a value of an interface (of a BGP
// neighbour). Deletes alone show no value and sample nothing.
bool samples_source(const GnmiNotification& notification, TelemetrySource source);

struct TelemetryEvent {
  std::int64_t timestamp_ns = 0;  // the device's timestamp of the sample that showed it
  TelemetrySource source = TelemetrySource::interfaces;
  std::string subject;  // the interface ("to-spine1") or the BGP neighbour's address
  std::string what;     // "oper-status UP -> DOWN", "in-errors +3",
                        // "session-state ESTABLISHED -> IDLE", "IPV4_UNICAST received 4 -> 0"
  // The subject left UP (ESTABLISHED) and came back within the window: seen in the samples
  // (UP -> DOWN -> UP) or only in its transitions counter (between two samples or across a
  // silence). A session that goes down and stays down is not a flap.
  bool flap = false;
  // The subject was there and is no longer: a delete named it, or a complete sample of its
  // source left it out (device_timeline). Its return is an event without this flag.
  bool disappeared = false;
};

struct TelemetryTimeline {
  std::vector<TelemetryEvent> events;  // in device time order
  // Silences longer than the allowed gap that nothing covers, each "no bgp sample from T1 to
  // T2 (4.2 s), not covered: why" (or a source never sampled, a counter reset across the
  // silence, a sample in the window whose value cannot be read). Non-empty: the window is not
  // covered, the stream is no-evidence.
  std::vector<std::string> gaps;
  // Silences longer than the allowed gap that the counters cover: every subject of the source
  // carried its transitions counter on both sides (no reset, none appeared or went away), so
  // a flap inside shows as a counter increase (an event). They cost time resolution only:
  // "no bgp sample from T1 to T2 (4.2 s), covered by established-transitions on 2 sessions".
  std::vector<std::string> covered_gaps;
  std::size_t samples = 0;  // notifications read
  std::int64_t first_ns = 0, last_ns = 0;

  bool covered() const { return gaps.empty() && samples > 0; }
};

struct TimelineWindow {
  std::int64_t start_ns = 0, end_ns = 0;
  Duration max_gap{3000};
  // Sources that must each be sampled across the window (a silence of one is a gap too).
  std::vector<TelemetrySource> expected = {TelemetrySource::interfaces};
};

// Reads interface state notifications (updates under interface[name=X]/state, or leaves of
// it) and BGP neighbour notifications (neighbor[neighbor-address=A]/state/session-state and
// afi-safis/afi-safi[afi-safi-name=F]/state/prefixes/received, or containers above them), and
// reports oper-status changes, increases of in/out-errors and in/out-discards, session-state
// changes and received-prefix count changes between consecutive samples. A delete of the BGP
// neighbours (the target no longer serves them: FRR not answering) is an event but not a
// sample: only values cover a source's time. A subject that goes away is an event with
// `disappeared` set: a delete naming it (interface[name=X], neighbor[neighbor-address=A]), or
// a complete sample of its source without it. A sample lists a source when it carries the
// state leaf (oper-status, session-state) of some subject, and is complete when it comes after
// the source's last listing and still names one of that listing's subjects: fabgate-gnmid
// sends each source's subjects in one notification at one timestamp, so the missing one went
// away; a target sending one subject per notification at its own timestamp never gives one.
// A subject listed by a complete sample that no earlier sample listed, or that had gone,
// appeared (an event, not a disappearance). `before` holds the samples preceding the window: they
// only give the state the window's first samples are compared with (a second window continues the
// first). Every expected source must be sampled with no silence longer than `max_gap` at the
// window's start, between samples and at its end; a silence between samples is covered instead when
// the samples at its two edges (the notifications of that source at the last timestamp before it
// and at the first after it) carry the transitions counter of every interface (every
// neighbour), with none missing, reset, new or gone. A transitions counter that rose more
// than the states on both sides explain is a flap (an event with `flap` set), between
// samples as across a silence; so is a subject seen leaving UP and coming back in the window.
TelemetryTimeline device_timeline(const std::vector<GnmiNotification>& before,
                                  const std::vector<GnmiNotification>& window,
                                  const TimelineWindow& bounds);

// device_timeline() of interface samples alone, with nothing before the window.
TelemetryTimeline interface_timeline(const std::vector<GnmiNotification>& notifications,
                                     std::int64_t window_start_ns, std::int64_t window_end_ns,
                                     Duration max_gap);

}  // namespace fabgate::gnmi
