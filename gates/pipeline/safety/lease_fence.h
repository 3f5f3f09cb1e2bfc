#pragma once

// The fence of a run that holds a lease in the fabric's coordination store (docs/coordination.md
// "Lease loss"). Other controllers judge a run dead when its lease has expired, and may then
// recover its devices (`fabgate recover`) or take its budget. So a run whose lease may have
// expired must not send anything more to any device: it can no longer tell whether another
// controller is already acting on the same devices.
//
// The lease was certainly alive until `ttl` after the last renewal etcd granted, counted from
// when that renewal was SENT (etcd starts the TTL when it receives the request, which is
// later). The fence closes `margin` before that instant, or at once when etcd answers that the
// lease has expired, and never opens again: a lease that comes back proves nothing about what
// other controllers did while it was gone.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "adapters/core/boot_clock.h"
#include "adapters/core/duration.h"
#include "adapters/core/time.h"

namespace fabgate::pipeline {

class LeaseFence {
 public:
  // CLOCK_BOOTTIME, not steady_clock: a suspended controller's lease keeps expiring in etcd.
  using Clock = BootClock;

  // The lease `lease` of `ttl` was granted by a request sent at `sent`; the fence closes
  // `margin` before the TTL from the last renewal sent has passed.
  void arm(std::int64_t lease, Duration ttl, Duration margin, Clock::time_point sent);
  // A renewal sent at `sent` was granted.
  void renewed(Clock::time_point sent);
  // A renewal failed; remembered for the message of a fence that closes later.
  void renewal_failed(const std::string& problem);
  // etcd answered that the lease is gone: close now.
  void expired(const std::string& why);
  // Ends the fence's watch (the run released its lease on purpose): it stays as it is.
  void disarm();

  // Why nothing may be sent any more; nullopt while the lease is certainly held (or the run
  // holds none). Once it has said why, it always does.
  std::optional<std::string> closed() const;

  nlohmann::json to_json() const;

 private:
  std::optional<std::string> closed_locked(Clock::time_point now) const;

  mutable std::mutex mutex_;
  bool armed_ = false;
  std::int64_t lease_ = 0;
  Duration ttl_{0};
  Duration margin_{0};
  Clock::time_point last_sent_{};
  TimePoint last_renewed_at_{};  // wall clock of last_sent_, for messages
  std::string last_problem_;
  mutable std::optional<std::string> why_;  // sticky once set
  mutable std::optional<TimePoint> closed_at_;
};

}  // namespace fabgate::pipeline
