#pragma once

// The during-change telemetry layer: a gNMI STREAM subscription (SAMPLE, every second) to the
// interface state (oper-status, counters) and the BGP neighbours (session state, received
// prefixes) of each target and of its neighbours, opened before the first step, turned into a
// timeline per device at the devices' own timestamps (gnmi::device_timeline). The session is
// cut into windows: "during" ends after acceptance; when the run goes the rollback way the
// streams keep running and a "rollback" window covers the rollback and the restore
// verification. Its verdict judges the evidence: a device whose stream did not deliver across
// the whole window is no-evidence, never "nothing happened", unless the transitions counters
// on both sides of a silence cover it (then the silence is reported and costs time resolution
// only). In the during window a flap (a link or session that left UP and came back, seen in
// the samples or only in a counter) and a disappearance (a subject deleted, or left out of a
// complete sample: gnmi::device_timeline) fail the window unless the change expects them
// (acceptance.expected_flaps names the subject); error increases, appearances and session
// changes that stay are reported as they were seen, and the other layers judge what they did
// to the service.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/duration.h"
#include "adapters/gnmi/client.h"
#include "adapters/gnmi/telemetry.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/telemetry_subscription.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

// Opens a gNMI client to a device's inventory endpoint. The seam lets gate tests use a fake
// target; the real one is connect_gnmi() (gnmi_steps.h).
using GnmiConnector =
    std::function<gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>>(const intent::Device&)>;

// A device to stream and why it is streamed ("target", "neighbour of spine1 (BGP)").
struct TelemetrySubject {
  const intent::Device* device = nullptr;
  std::string why;
};

// The targets, then every device the pre snapshot shows as their neighbour: a BGP peer
// address of a target is one of its interface addresses, a target's interface address is one
// of its BGP peers, or a target's LLDP neighbour names it. Devices named once, in inventory
// order after the targets.
std::vector<TelemetrySubject> telemetry_subjects(const intent::Inventory& inventory,
                                                 const std::vector<std::string>& targets,
                                                 const nlohmann::json& pre_snapshot);

struct DeviceTelemetry {
  std::string device;
  std::string why;
  std::string stream_failure;  // how the stream failed to open or ended early; empty: it ran
  std::vector<gnmi::TelemetryEvent> events;
  std::vector<std::string> gaps;  // silences longer than the allowed gap, uncovered, in words
  // Silences the transitions counters cover ("..., covered by carrier-transitions on 7
  // interfaces"): reported, not no-evidence.
  std::vector<std::string> covered_gaps;
  // In a window whose flaps are judged (during), the flaps and disappearances the change does
  // not expect, "to-host2: carrier-transitions +2 ...: flapped", "interface to-host2
  // disappeared at T (last seen UP at T0; no longer in the samples)": each fails the window.
  std::vector<std::string> unexpected_flaps;
  std::size_t samples = 0;
  std::int64_t first_ns = 0, last_ns = 0;   // device timestamps of the first and last sample
  std::vector<std::string> interfaces;      // interfaces the samples named
  std::vector<std::string> bgp_neighbours;  // BGP neighbour addresses the samples named
  // How the device was subscribed ("STREAM/SAMPLE", "POLL", "ONCE"; empty: no mode delivered),
  // what that costs (mode_cost()), and the modes before it the target does not implement
  // ("STREAM: ... UNIMPLEMENTED ...").
  std::string mode;
  std::string mode_cost;
  std::vector<std::string> modes_refused;
  // POLL and ONCE: the rounds in this window, those that failed (silences, judged by the gap
  // rules like any other), the first few failures in words, and the longest round.
  std::size_t rounds = 0, failed_rounds = 0;
  std::vector<std::string> round_failures;
  Duration longest_round{0};
  Verdict verdict = Verdict::no_evidence;
};

struct TelemetryOutcome {
  std::string phase = "during";  // "during" (the change) or "rollback" (rollback and restore)
  Verdict verdict = Verdict::no_evidence;
  std::string summary;
  Duration interval{1000};
  Duration max_gap{3000};
  bool flaps_judged = false;                // during: an unexpected flap fails the window
  std::vector<std::string> expected_flaps;  // acceptance.expected_flaps
  TimePoint window_start, window_end;       // the controller's clock
  // Rollback window only: when the rollback gate began. A window that continues the during
  // window starts at acceptance, so what it shows before this moment happened before the
  // rollback (while the post snapshot was taken).
  std::optional<TimePoint> rollback_started;
  std::vector<DeviceTelemetry> devices;
  std::vector<std::string> not_streamed;  // "host1: no gnmi endpoint in the inventory"
};

// The paths every stream subscribes to (gnmi::kInterfaceStatePath and the BGP paths).
const std::vector<std::string>& telemetry_paths();

nlohmann::json to_json(const TelemetryOutcome& outcome);
// The subscription modes of a window's devices: "STREAM/SAMPLE", or "STREAM/SAMPLE; ONCE for
// leaf2" when some device was not streamed.
std::string modes_text(const TelemetryOutcome& outcome);
// "2026-12-01T06:40:01.234Z" from a device timestamp in nanoseconds since the epoch.
std::string format_device_time(std::int64_t timestamp_ns);
// One line per event, "leaf1 to-spine1 2026-12-01T06:40:01.234Z oper-status UP -> DOWN",
// "spine1 bgp 10.0.1.1 2026-12-01T06:40:01.234Z session-state ESTABLISHED -> IDLE".
std::vector<std::string> event_lines(const TelemetryOutcome& outcome);
// Where an event happened: "to-spine1" for an interface, "bgp 10.0.1.1" for a BGP neighbour.
std::string event_subject(const gnmi::TelemetryEvent& event);

// What the change says about its telemetry (acceptance.telemetry_max_gap and
// acceptance.expected_flaps).
struct TelemetryRules {
  std::optional<Duration> max_gap;          // unset: 3 intervals, at least 2 s
  std::vector<std::string> expected_flaps;  // "leaf1:to-host2", "spine1:bgp 10.0.1.1"
};

// Whether a window's flaps decide its verdict (the during window) or are only reported (the
// rollback window: the restore is judged by snapshots and probes).
enum class Flaps { reported, judged };

// "leaf1:to-host2", "spine1:bgp 10.0.1.1": how acceptance.expected_flaps names a flap.
std::string flap_subject(const std::string& device, const gnmi::TelemetryEvent& event);
// What the reports add to a flap's (a disappearance's) event: " (expected by the change)", " (not
// expected: fails the window)" or, where flaps are only reported, "".
std::string flap_note(const TelemetryOutcome& outcome, const std::string& device,
                      const gnmi::TelemetryEvent& event);

class TelemetrySession {
 public:
  TelemetrySession(GnmiConnector connect, std::vector<TelemetrySubject> subjects,
                   Duration interval = Duration{1000}, TelemetryRules rules = {});
  ~TelemetrySession();  // stops and joins every stream still running
  TelemetrySession(const TelemetrySession&) = delete;
  TelemetrySession& operator=(const TelemetrySession&) = delete;

  // Opens one subscription per subject with a gNMI endpoint (STREAM, else POLL, else ONCE:
  // telemetry_subscription.h; each POLL or ONCE round within the allowed gap) and waits (at most
  // `first_sample_wait`) until each has delivered a sample of interface state and one of BGP, so
  // the window provably starts before the first step with an edge of each source (a silence right
  // after the start can then be covered by the counters). Streams end by themselves after
  // `longest`. Returns the gate's verdict and summary lines: pass when every stream delivered; a
  // stream that did not is no-evidence (named, with why).
  struct Started {
    Verdict verdict = Verdict::no_evidence;
    std::string summary;
    std::vector<std::string> details;
  };
  Started start(Duration longest, Duration first_sample_wait);
  // Ends the current window now and starts the next one; the streams keep running. Each
  // window's events are judged against the samples before it, so a state that changed across
  // the cut is reported in the window whose sample showed it.
  TelemetryOutcome cut(Flaps flaps = Flaps::reported);
  // Ends the current window and every stream.
  TelemetryOutcome stop(Flaps flaps = Flaps::reported);
  // How many notifications each stream has delivered so far: a point in the window that
  // stop_after_sample_since() can wait past. Empty before start().
  using DeliveryMark = std::vector<std::size_t>;
  DeliveryMark mark() const;
  // stop(), once every stream still running has delivered a sample that arrived after `since`
  // was marked, or two sampling intervals have passed since this call: the window's last samples
  // then show the state the caller verified from that mark on (the restore), not the one a
  // sample before it showed. A stream that already delivered one since the mark is not waited
  // for: the restore's verifying round marks its start, and a round that lasts longer than a
  // sampling interval has its samples already.
  TelemetryOutcome stop_after_sample_since(const DeliveryMark& since,
                                           Flaps flaps = Flaps::reported);
  // The same from a mark taken now.
  TelemetryOutcome stop_after_next_sample(Flaps flaps = Flaps::reported) {
    return stop_after_sample_since(mark(), flaps);
  }

 private:
  struct Stream;
  TelemetryOutcome end_window(Flaps flaps);
  // The silence allowed between samples: the change's, else 3 intervals, at least 2 s.
  Duration max_gap() const {
    return rules_.max_gap.value_or(std::max(3 * interval_, Duration{2000}));
  }
  GnmiConnector connect_;
  std::vector<TelemetrySubject> subjects_;
  Duration interval_;
  TelemetryRules rules_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::string> not_streamed_;
  TimePoint window_start_;
  std::chrono::steady_clock::time_point window_start_steady_;
  bool stopped_ = false;
};

}  // namespace fabgate::pipeline
