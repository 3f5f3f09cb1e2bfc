#pragma once

// The during-change telemetry layer: a gNMI STREAM subscription (SAMPLE, every second) to the
// interface state (oper-status, counters) of each target and of its neighbours, opened before
// the first step and closed after acceptance, turned into a per-interface timeline at the
// devices' own timestamps (gnmi::interface_timeline). Its verdict judges the evidence only: a
// device whose stream did not deliver across the whole window is no-evidence, never "nothing
// happened". Flaps and error increases are reported as they were seen; the other layers judge
// what they did to the service.

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
  std::vector<std::string> gaps;  // silences longer than the allowed gap, in words
  std::size_t samples = 0;
  std::int64_t first_ns = 0, last_ns = 0;  // device timestamps of the first and last sample
  std::vector<std::string> interfaces;     // interfaces the samples named
  Verdict verdict = Verdict::no_evidence;
};

struct TelemetryOutcome {
  Verdict verdict = Verdict::no_evidence;
  std::string summary;
  Duration interval{1000};
  Duration max_gap{3000};
  TimePoint window_start, window_end;  // the controller's clock
  std::vector<DeviceTelemetry> devices;
  std::vector<std::string> not_streamed;  // "host1: no gnmi endpoint in the inventory"
};

nlohmann::json to_json(const TelemetryOutcome& outcome);
// "2026-12-01T06:40:01.234Z" from a device timestamp in nanoseconds since the epoch.
std::string format_device_time(std::int64_t timestamp_ns);
// One line per event, "leaf1 to-spine1 2026-12-01T06:40:01.234Z oper-status UP -> DOWN".
std::vector<std::string> event_lines(const TelemetryOutcome& outcome);

class TelemetrySession {
 public:
  TelemetrySession(GnmiConnector connect, std::vector<TelemetrySubject> subjects,
                   Duration interval = Duration{1000});
  ~TelemetrySession();  // stops and joins every stream still running
  TelemetrySession(const TelemetrySession&) = delete;
  TelemetrySession& operator=(const TelemetrySession&) = delete;

  // Opens one stream per subject with a gNMI endpoint and waits (at most `first_sample_wait`)
  // until each has delivered a sample, so the window provably starts before the first step.
  // Streams end by themselves after `longest`. Returns the gate's verdict and summary lines:
  // pass when every stream delivered; a stream that did not is no-evidence (named, with why).
  struct Started {
    Verdict verdict = Verdict::no_evidence;
    std::string summary;
    std::vector<std::string> details;
  };
  Started start(Duration longest, Duration first_sample_wait);
  TelemetryOutcome stop();

 private:
  struct Stream;
  GnmiConnector connect_;
  std::vector<TelemetrySubject> subjects_;
  Duration interval_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::string> not_streamed_;
  TimePoint window_start_;
  std::chrono::steady_clock::time_point window_start_steady_;
  bool stopped_ = false;
};

}  // namespace fabgate::pipeline
