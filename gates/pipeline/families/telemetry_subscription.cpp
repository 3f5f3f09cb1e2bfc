#include "gates/pipeline/families/telemetry_subscription.h"

#include <algorithm>

namespace fabgate::pipeline {

namespace {

using Steady = std::chrono::steady_clock;

const char* mode_word(TelemetryMode mode) {
  return mode == TelemetryMode::stream ? "STREAM" : mode == TelemetryMode::poll ? "POLL" : "ONCE";
}

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

// The failure of the last mode tried, after the ones the target does not implement.
gnmi::GnmiFailure after_refusals(gnmi::GnmiFailure failure, TelemetryMode mode,
                                 const std::vector<std::string>& refused) {
  if (refused.empty()) return failure;
  std::vector<std::string> tried = refused;
  tried.push_back(std::string(mode_word(mode)) + ": " + failure.message);
  failure.message = "no subscription mode works: " + joined(tried);
  return failure;
}

}  // namespace

std::string_view to_string(TelemetryMode mode) {
  return mode == TelemetryMode::stream ? "STREAM/SAMPLE" : mode_word(mode);
}

std::string mode_cost(TelemetryMode mode, Duration interval, Duration longest_round) {
  const std::string every = format_duration(interval);
  const std::string between =
      "a link or session that goes and comes back between two samples shows only through its "
      "transitions counter (carrier-transitions, established-transitions)";
  if (mode == TelemetryMode::stream)
    return "STREAM/SAMPLE every " + every + ": the target sends a sample every interval; " +
           between;
  const std::string round = mode == TelemetryMode::poll
                                ? "fabgate asks for each sample (a Poll on one subscription)"
                                : "each sample is a fresh subscription (one RPC per round, every "
                                  "path read anew)";
  return std::string(mode_word(mode)) + " every " + every + ": " + round +
         ", so an event is placed within the interval plus a round's duration (longest round " +
         format_duration(longest_round) +
         "), and rounds longer than the interval run back to back; " + between +
         "; a round that fails or passes its deadline is a silence";
}

bool mode_unimplemented(const gnmi::GnmiFailure& failure) {
  return failure.unimplemented;
}

TelemetrySubscription::TelemetrySubscription(gnmi::GnmiClient& client,
                                             std::vector<std::string> paths, Duration interval,
                                             Duration round_deadline, Duration longest)
    : client_(client),
      paths_(std::move(paths)),
      interval_(interval),
      round_deadline_(round_deadline),
      longest_(longest) {}

void TelemetrySubscription::stop() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  if (stream_) stream_->stop();
  wake_.notify_all();
}

gnmi::GnmiResult<Ok> TelemetrySubscription::run(const SubscriptionEvents& events) {
  const auto ends = Steady::now() + longest_;
  std::vector<std::string> refused;
  auto opened = client_.subscribe_stream(paths_, gnmi::Encoding::json_ietf, interval_, longest_);
  if (opened) {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return Ok{};
      stream_ = opened->get();
    }
    bool delivered = false;
    auto ran = (*opened)->run([&](const gnmi::GnmiNotification& notification) {
      if (!delivered) events.mode(TelemetryMode::stream, refused);
      delivered = true;
      events.notification(notification);
    });
    {
      std::lock_guard lock(mutex_);
      stream_ = nullptr;
    }
    // A stream that delivered and then failed ended early: that is a silence, not a mode the
    // target lacks.
    if (ran || delivered || !mode_unimplemented(ran.error())) return ran;
    refused.push_back("STREAM: " + ran.error().message);
  } else if (!mode_unimplemented(opened.error())) {
    return opened.error();
  } else {
    refused.push_back("STREAM: " + opened.error().message);
  }
  for (TelemetryMode mode : {TelemetryMode::poll, TelemetryMode::once}) {
    auto ran = rounds(mode, events, refused, ends);
    if (ran) return ran;
    if (!mode_unimplemented(ran.error())) return after_refusals(ran.error(), mode, refused);
    refused.push_back(std::string(mode_word(mode)) + ": " + ran.error().message);
  }
  return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                           "no subscription mode works: " + joined(refused), true};
}

gnmi::GnmiResult<Ok> TelemetrySubscription::rounds(TelemetryMode mode,
                                                   const SubscriptionEvents& events,
                                                   const std::vector<std::string>& refused,
                                                   Steady::time_point ends) {
  std::unique_ptr<gnmi::GnmiPollSession> session;
  bool delivered = false;
  auto next_at = Steady::now();
  while (true) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_until(lock, std::min(next_at, ends), [&] { return stopped_; });
      if (stopped_) return Ok{};
    }
    const auto began = Steady::now();
    if (began >= ends) return Ok{};
    next_at = began + interval_;
    const Duration left = std::chrono::duration_cast<Duration>(ends - began);
    gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> answered =
        std::vector<gnmi::GnmiNotification>{};
    if (mode == TelemetryMode::once) {
      answered = client_.subscribe_once(paths_, gnmi::Encoding::json_ietf,
                                        std::min(round_deadline_, left));
    } else {
      if (!session) {
        auto opened = client_.subscribe_poll(paths_, gnmi::Encoding::json_ietf, left);
        if (opened)
          session = std::move(opened.value());
        else
          answered = opened.error();
      }
      if (session) {
        answered = session->next(round_deadline_);
        if (!answered) session.reset();  // a failed round ends the subscription: open anew
      }
    }
    const auto took = std::chrono::duration_cast<Duration>(Steady::now() - began);
    if (!answered) {
      if (!delivered) return answered.error();
      events.round(took, answered.error().message);
      continue;
    }
    if (!delivered) events.mode(mode, refused);
    delivered = true;
    events.round(took, "");
    for (const auto& notification : *answered) events.notification(notification);
  }
}

}  // namespace fabgate::pipeline
