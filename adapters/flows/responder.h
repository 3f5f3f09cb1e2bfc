#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "adapters/core/result.h"
#include "adapters/flows/socket.h"

namespace fabgate::flows {

struct ResponderOptions {
  std::string listen;                         // IPv4 address to bind
  std::uint16_t port = 0;                     // 0: any free port (tests)
  std::chrono::milliseconds lifetime{60000};  // exits by itself after this long
  int max_connections = 1024;
};

struct ResponderStats {
  std::uint64_t tcp_connections = 0;
  std::uint64_t tcp_bytes_echoed = 0;
  std::uint64_t udp_datagrams_echoed = 0;
  std::chrono::milliseconds ran_for{0};
  bool stopped = false;  // by the stop flag (a signal) rather than by its lifetime
};

// The far end of the flow probe: echoes every TCP byte and every UDP datagram back on the
// same port, for a bounded lifetime so that a forgotten responder never outlives its change.
// fabgate starts it on the far host over SSH before the probe and stops it afterwards.
class Responder {
 public:
  static Expected<Responder, SocketError> open(const ResponderOptions& options);

  std::uint16_t port() const { return port_; }
  std::string endpoint() const;

  // Serves until the lifetime ends or `stop` becomes true (checked at least every 100 ms).
  ResponderStats serve(const std::atomic<bool>& stop);

 private:
  Responder(ResponderOptions options, Fd listener, Fd datagrams, std::uint16_t port)
      : options_(std::move(options)),
        listener_(std::move(listener)),
        datagrams_(std::move(datagrams)),
        port_(port) {}

  ResponderOptions options_;
  Fd listener_;
  Fd datagrams_;
  std::uint16_t port_;
};

}  // namespace fabgate::flows
