#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <netdb.h>

#include "adapters/core/result.h"
#include "adapters/rdma/verbs_handles.h"

namespace fabgate::rdma {

using Clock = std::chrono::steady_clock;

// Why waiting for an rdma_cm event ended without the event that was expected.
struct CmWaitFailure {
  bool timed_out = false;
  int event = -1;       // the rdma_cm_event_type that arrived instead, or -1
  int status = 0;       // its status field (a negative errno or a CM reject reason)
  std::string message;  // human text: "got RDMA_CM_EVENT_REJECTED (status 8)", or the errno
};

// rdma_get_cm_event blocks forever by default; the probe must never hang, so the channel is
// switched to non-blocking and every wait is a poll() bounded by `deadline`.
Status make_nonblocking(rdma_event_channel* channel);
// "ibv_reg_mr: Cannot allocate memory": a failed verbs/rdma_cm call and the errno it left.
std::string errno_text(const char* call);
// A new rdma_cm event channel, already non-blocking. Failing here means the host cannot do
// RDMA connection management at all (rdma_ucm not loaded), which is no evidence, not a fault.
Expected<EventChannel, std::string> open_event_channel();
Expected<CmEvent, CmWaitFailure> next_cm_event(rdma_event_channel* channel,
                                               Clock::time_point deadline);
Expected<CmEvent, CmWaitFailure> await_cm_event(rdma_event_channel* channel,
                                                rdma_cm_event_type expected,
                                                Clock::time_point deadline);

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const {
    if (info != nullptr) freeaddrinfo(info);
  }
};
using AddrInfo = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// getaddrinfo with errors as text ("leaf1:18515: Name or service not known").
Expected<AddrInfo, std::string> resolve_socket_address(const std::string& host,
                                                       const std::string& service, bool passive);

double milliseconds_since(Clock::time_point start);

}  // namespace fabgate::rdma
