#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/flows/socket.h"
#include "adapters/flows/statistics.h"

namespace fabgate::flows {

using std::chrono::milliseconds;

enum class Protocol { tcp, udp, icmp };
const char* to_string(Protocol protocol);
std::optional<Protocol> parse_protocol(std::string_view text);

// The three outcomes every fabgate check has. no_evidence is never a pass.
enum class Verdict { pass, fail, no_evidence };
const char* to_string(Verdict verdict);

struct FlowProbeOptions {
  std::string target;
  std::uint16_t port = 0;  // ignored for icmp: the far host's kernel answers echo requests
  int count = 16;          // distinct 5-tuples: one socket (source port) each
  Protocol protocol = Protocol::udp;
  milliseconds timeout{5000};  // hard deadline for the whole probe
  int packets_per_flow = 5;
  milliseconds spacing{20};          // between two packets of one flow
  milliseconds reply_timeout{1000};  // a packet unanswered this long after sending is lost
  // Bytes per message, sent with the don't-fragment bit set: the UDP payload, or for icmp the
  // ICMP payload (after the 8-byte ICMP header); 0: FlowMessage::kDefaultSize bytes without
  // DF. With 1472 on a 1500-byte MTU a packet is a full-size frame. Not for tcp, whose
  // messages are always kDefaultSize bytes of the stream.
  int size = 0;
  // Which ICMP socket to use; none: a ping socket where allowed, else a raw one (socket.h).
  std::optional<IcmpSocketKind> icmp_socket;
  std::string source;  // IPv4 address to send from (an overlay address); empty: the route's
};

// Problems in the options, one line each; empty when they are usable.
std::vector<std::string> validate(const FlowProbeOptions& options);

// Why one flow did not complete.
enum class FlowError {
  none,
  refused,      // the far host answered "nothing listens here" (RST or ICMP port unreachable)
  unreachable,  // a router or this host said there is no route (ICMP or local route lookup)
  reset,        // an established TCP flow was reset or closed by the far end
  timed_out,    // no answer at all before the deadline: the silent-drop signature
  too_big,      // EMSGSIZE: the packet does not fit the MTU with DF set (refused here, or an
                // ICMP "fragmentation needed" came back): full-size frames do not cross
  corrupted,    // an echo came back with a wrong byte or at a wrong size: delivered, not intact
};
const char* to_string(FlowError error);

struct FlowResult {
  std::uint16_t src_port = 0;
  bool completed = false;  // every packet of the flow came back
  int sent = 0;
  int received = 0;
  double loss = 1.0;  // (sent - received) / sent; 1.0 when nothing could be sent
  std::optional<LatencySummary> latency;
  FlowError error = FlowError::none;
  std::string detail;
  // Echoes that came back with any byte other than the one sent, or at another size: never
  // counted as received. The offset is the first differing byte of the first such echo.
  int corrupted = 0;
  std::optional<std::size_t> first_corrupt_offset;
  std::optional<double> connect_ms;  // tcp: from connect() to the handshake's end
};

struct FlowProbeReport {
  FlowProbeOptions options;
  TimePoint started_at;
  milliseconds duration{0};
  std::vector<FlowResult> flows;
  std::uint32_t probe_id = 0;                 // the run's pattern key (wire.h FlowMessage)
  std::optional<IcmpSocketKind> icmp_socket;  // icmp: the kind of socket the flows used
  Verdict verdict = Verdict::no_evidence;
  std::string reason;
};

// The bytes each message of a probe with these options carries.
std::size_t message_size(const FlowProbeOptions& options);

// The verdict rule (docs/lab.md, docs/probes.md): fail when any echo came back corrupted, the
// reason leading with it (`3 of 1600 datagrams corrupted on flow 7 (to 10.1.2.13:7447), first
// at byte 812`); pass when every flow completed; no_evidence when no flow completed and every
// flow was refused (the responder is not there, so the path was never observed); fail
// otherwise, including when every flow timed out or was unreachable: that is exactly the
// blackhole a forwarding probe exists to catch. `options` name the target and the protocol.
Verdict judge(const std::vector<FlowResult>& flows, const FlowProbeOptions& options,
              std::string& reason);

// Sends `count` flows concurrently, each from its own source port (icmp: its own echo
// identifier), and waits for the echoes, verifying every byte of each. Returns within
// options.timeout (plus scheduling noise). A socket that cannot be created on this host (for
// icmp: neither a ping nor a raw socket) is a SocketError: the probe observed nothing.
Expected<FlowProbeReport, SocketError> run_flow_probe(const FlowProbeOptions& options);

}  // namespace fabgate::flows
