#pragma once

// How the telemetry layer subscribes to one device: STREAM (every path SAMPLE at the interval)
// where the target implements it, else POLL (fabgate asks for a fresh snapshot every interval
// on one subscription), else ONCE (a fresh one-snapshot subscription every interval). Only a
// target that answers UNIMPLEMENTED for a mode is tried with the next one; any other failure
// (unreachable, timeout, credentials, TLS, a path or encoding refused, an unreadable reply)
// would fail every mode alike and ends the subscription as it is. Each POLL or ONCE round has
// a hard deadline; once the mode has delivered, a round that fails or passes its deadline is a
// silence (no sample), judged by the same gap rules as a stream that went quiet.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/gnmi/client.h"

namespace fabgate::pipeline {

enum class TelemetryMode { stream, poll, once };
std::string_view to_string(TelemetryMode mode);  // "STREAM/SAMPLE", "POLL", "ONCE"

// What a mode costs against STREAM/SAMPLE at the same interval, in words for the report:
// the spacing of the samples, and what a change between two of them leaves to be seen by.
// `longest_round`: the longest POLL or ONCE round seen (ignored for STREAM).
std::string mode_cost(TelemetryMode mode, Duration interval, Duration longest_round);

// Whether a refusal says the target does not implement the subscription mode (gRPC
// UNIMPLEMENTED), so that the next mode may work.
bool mode_unimplemented(const gnmi::GnmiFailure& failure);

// What a subscription reports while it runs; each callback runs on the subscribing thread.
struct SubscriptionEvents {
  // The mode that delivers, once, before its first notification; `refused`: "STREAM: why" for
  // each mode before it that the target does not implement.
  std::function<void(TelemetryMode mode, const std::vector<std::string>& refused)> mode;
  std::function<void(const gnmi::GnmiNotification&)> notification;
  // Each POLL or ONCE round from the first one that delivered on: how long it took and, when
  // it failed (a silence), why; empty when it was answered.
  std::function<void(Duration took, const std::string& failure)> round;
};

class TelemetrySubscription {
 public:
  // `round_deadline` bounds each POLL or ONCE round; `longest` the whole subscription.
  TelemetrySubscription(gnmi::GnmiClient& client, std::vector<std::string> paths, Duration interval,
                        Duration round_deadline, Duration longest);

  // Blocks, handing over every notification, until stop() (from any thread), `longest`, or a
  // failure. Ending by stop() or by `longest` is success. A failure before any mode delivered
  // names each mode tried and why it failed ("no subscription mode works: STREAM: ...;
  // POLL: ...; ONCE: ..."); a failure of the first mode alone is its own message.
  gnmi::GnmiResult<Ok> run(const SubscriptionEvents& events);
  void stop();

 private:
  // POLL or ONCE rounds until stop() or `ends`. Fails only when the first round does.
  gnmi::GnmiResult<Ok> rounds(TelemetryMode mode, const SubscriptionEvents& events,
                              const std::vector<std::string>& refused,
                              std::chrono::steady_clock::time_point ends);

  gnmi::GnmiClient& client_;
  std::vector<std::string> paths_;
  Duration interval_, round_deadline_, longest_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;
  gnmi::GnmiStream* stream_ = nullptr;  // the STREAM running, for stop()
};

}  // namespace fabgate::pipeline
