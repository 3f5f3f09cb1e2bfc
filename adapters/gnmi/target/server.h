#pragma once

// fabgate-gnmid: a gNMI target for a Linux/FRR node. cmd/fabgate-gnmid parses flags into
// TargetOptions and calls run_target().

#include <cstddef>
#include <optional>
#include <set>
#include <string>

#include "adapters/core/duration.h"
#include "adapters/gnmi/client.h"
#include "adapters/gnmi/target/linux_node.h"

namespace fabgate::gnmi::target {

inline constexpr std::size_t kDefaultMaxStreams = 64;
inline constexpr Duration kDefaultPollIdleTimeout{300'000};

struct TargetOptions {
  std::string listen;               // "ADDR:PORT" (port 0: any free port) or "unix:PATH"
  bool insecure_plaintext = false;  // must be asked for explicitly
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;           // set: clients must present a certificate it signed
  std::optional<GnmiLogin> expected_login;  // set: every RPC must carry these credentials
  // Serve clients without any authentication (no credentials, no client certificates): refused
  // unless asked for, and announced on stderr at startup. Lab and tests only.
  bool no_auth = false;
  // Accept expected_login over plaintext (insecure_plaintext), where it crosses the network in
  // clear text: refused unless asked for, and announced on stderr at startup. Lab only.
  bool lab_insecure_plaintext_credentials = false;
  // Subscribe streams served at once; one more is refused with RESOURCE_EXHAUSTED.
  std::size_t max_streams = kDefaultMaxStreams;
  // A POLL subscription that receives no poll request for this long is ended (0: never).
  Duration poll_idle_timeout = kDefaultPollIdleTimeout;
  LinuxNodeOptions node;
  Duration debug_delay{0};  // tests only: each RPC waits this long before answering
  // Tests only: Subscribe modes ("STREAM", "POLL", "ONCE") answered UNIMPLEMENTED, as by a
  // target that implements only some of them.
  std::set<std::string> unimplemented_modes;
  // Tests and benchmarks only: > 0 serves this many synthetic IPv4 routes (and no IPv6 ones)
  // as the main table (adapters/gnmi/target/synthetic_routes.h).
  std::size_t debug_synthetic_ipv4_routes = 0;
};

// Serves until SIGINT or SIGTERM. The first line on stdout is the bound TCP port, or the
// socket path for unix:, printed once the server accepts calls (tests bind port 0 and read it).
// Returns the process exit status; errors go to stderr as "fabgate-gnmid: error: ...".
int run_target(const TargetOptions& options);

}  // namespace fabgate::gnmi::target
