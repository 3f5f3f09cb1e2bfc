#pragma once

#include <atomic>
#include <csignal>

namespace fabgate::probe {

// Set by SIGTERM or SIGINT; long-running probes (watch, the flows responder) poll it at least
// every 100 ms and then print their report. fabgate stops them with `kill -TERM`.
inline std::atomic<bool> stop_requested{false};

inline void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = [](int) { stop_requested.store(true); };
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

}  // namespace fabgate::probe
