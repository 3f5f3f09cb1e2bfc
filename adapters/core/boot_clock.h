#pragma once

// A clock that keeps counting while the machine is suspended: CLOCK_BOOTTIME.
// std::chrono::steady_clock is CLOCK_MONOTONIC on Linux, which stands still while the system
// (or a VM, through a guest suspend) sleeps, so a controller suspended past its lease would
// still believe the lease fresh on waking while etcd, on another machine, has long expired it.
// Deadlines that stand for time as another machine counts it (a lease, docs/coordination.md
// "Lease loss") are measured on this clock.

#include <time.h>

#include <chrono>

namespace fabgate {

struct BootClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<BootClock>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_BOOTTIME, &now);
    return time_point(std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec));
  }
};

}  // namespace fabgate
