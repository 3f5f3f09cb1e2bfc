#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/flows/flow_probe.h"
#include "adapters/flows/socket.h"
#include "adapters/flows/statistics.h"

namespace fabgate::flows {

// A continuous UDP probe: started before a change executes and stopped after acceptance, it
// samples every flow every `interval` and reports how long each flow was interrupted. UDP only:
// TCP's retransmissions would hide a short outage inside one late segment.
struct WatchOptions {
  std::string target;
  std::uint16_t port = 0;
  int count = 16;
  milliseconds interval{100};
  milliseconds max_duration{10 * 60 * 1000};  // stops by itself even if nobody stops it
  milliseconds reply_timeout{1000};           // a sample unanswered this long is lost
  milliseconds max_interruption{0};           // longest tolerated interruption per flow
};

std::vector<std::string> validate(const WatchOptions& options);

struct WatchFlowResult {
  std::uint16_t src_port = 0;
  int sent = 0;
  int received = 0;
  int send_errors = 0;  // ICMP errors reported on send/receive (counted as lost samples)
  InterruptionSummary interruptions;
};

struct WatchReport {
  WatchOptions options;
  TimePoint started_at;
  TimePoint ended_at;
  bool stopped = false;  // by the stop flag (SIGTERM/SIGINT), not by max_duration
  std::vector<WatchFlowResult> flows;
  Verdict verdict = Verdict::no_evidence;
  std::string reason;
};

// The verdict rule: no_evidence when no flow ever received a reply (the baseline was never
// established); fail when some flow's longest interruption exceeds max_interruption (an
// interruption still ongoing at the end counts to the end); pass otherwise.
Verdict judge(const std::vector<WatchFlowResult>& flows, milliseconds max_interruption,
              std::string& reason);

// Runs until `stop` becomes true or max_duration passes, then waits at most reply_timeout for
// the last echoes.
Expected<WatchReport, SocketError> run_watch(const WatchOptions& options,
                                             const std::atomic<bool>& stop);

}  // namespace fabgate::flows
