#pragma once

// A gNMI target for telemetry tests whose state the test changes at will: LiveStream delivers
// whatever `current()` returns every 50 ms, stamped with `base_ns` plus the time elapsed since
// the stream began, until stopped; LiveClient opens one per subscribe_stream() and refuses
// everything else.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/gnmi/client.h"

namespace fabgate::pipeline {

class LiveStream final : public gnmi::GnmiStream {
 public:
  LiveStream(std::function<gnmi::GnmiNotification()> current, std::int64_t base_ns)
      : current_(std::move(current)), base_ns_(base_ns) {}
  gnmi::GnmiResult<Ok> run(
      const std::function<void(const gnmi::GnmiNotification&)>& on_notification) override {
    const auto began = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      auto notification = current_();
      notification.timestamp_ns = base_ns_ + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now() - began)
                                                 .count();
      on_notification(notification);
      stop_.wait_for(lock, std::chrono::milliseconds(50));
    }
    return Ok{};
  }
  void stop() override {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    stop_.notify_all();
  }

 private:
  std::function<gnmi::GnmiNotification()> current_;
  std::int64_t base_ns_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopped_ = false;
};

// A client that only streams: every other call is refused, so a test whose code under test
// reaches for Get, Set or another subscription mode fails loudly instead of reading nothing.
class StreamOnlyClient : public gnmi::GnmiClient {
 public:
  gnmi::GnmiResult<gnmi::Capabilities> capabilities(Duration) override { return refuse(); }
  gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> get(const std::vector<std::string>&,
                                                            gnmi::Encoding, gnmi::DataType,
                                                            Duration) override {
    return refuse();
  }
  gnmi::GnmiResult<gnmi::SetResult> set(const std::vector<gnmi::SetOperation>&, Duration) override {
    return refuse();
  }
  gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> subscribe_once(
      const std::vector<std::string>&, gnmi::Encoding, Duration) override {
    return refuse();
  }
  gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiPollSession>> subscribe_poll(
      const std::vector<std::string>&, gnmi::Encoding, Duration) override {
    return refuse();
  }

 protected:
  static gnmi::GnmiFailure refuse() { return {gnmi::GnmiFailure::Kind::rejected, "not scripted"}; }
};

class LiveClient final : public StreamOnlyClient {
 public:
  LiveClient(std::function<gnmi::GnmiNotification()> current, std::int64_t base_ns,
             std::function<void()> on_subscribe = {})
      : current_(std::move(current)), base_ns_(base_ns), on_subscribe_(std::move(on_subscribe)) {}
  gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiStream>> subscribe_stream(
      const std::vector<std::string>&, gnmi::Encoding, Duration, Duration) override {
    if (on_subscribe_) on_subscribe_();
    return std::unique_ptr<gnmi::GnmiStream>(std::make_unique<LiveStream>(current_, base_ns_));
  }

 private:
  std::function<gnmi::GnmiNotification()> current_;
  std::int64_t base_ns_;
  std::function<void()> on_subscribe_;
};

}  // namespace fabgate::pipeline
