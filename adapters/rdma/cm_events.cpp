#include "adapters/rdma/cm_events.h"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace fabgate::rdma {

Status make_nonblocking(rdma_event_channel* channel) {
  int flags = fcntl(channel->fd, F_GETFL);
  if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Error::internal(std::string("rdma_cm: make event channel non-blocking: ") +
                           std::strerror(errno));
  }
  return Ok{};
}

std::string errno_text(const char* call) {
  return std::string(call) + ": " + std::strerror(errno);
}

Expected<EventChannel, std::string> open_event_channel() {
  EventChannel channel(rdma_create_event_channel());
  if (!channel) return errno_text("rdma_create_event_channel") + " (is rdma_ucm loaded?)";
  if (auto status = make_nonblocking(channel.get()); !status) return status.error().message;
  return channel;
}

Expected<CmEvent, CmWaitFailure> next_cm_event(rdma_event_channel* channel,
                                               Clock::time_point deadline) {
  while (true) {
    rdma_cm_event* raw = nullptr;
    if (rdma_get_cm_event(channel, &raw) == 0) return CmEvent(raw);
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return CmWaitFailure{false, -1, 0, std::string("rdma_get_cm_event: ") + std::strerror(errno)};
    }
    auto now = Clock::now();
    if (now >= deadline) return CmWaitFailure{true, -1, 0, "timed out"};
    auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    pollfd descriptor{channel->fd, POLLIN, 0};
    int ready = poll(&descriptor, 1, static_cast<int>(std::min<long long>(remaining, 1000)));
    if (ready < 0 && errno != EINTR) {
      return CmWaitFailure{false, -1, 0,
                           std::string("poll on rdma_cm channel: ") + std::strerror(errno)};
    }
  }
}

Expected<CmEvent, CmWaitFailure> await_cm_event(rdma_event_channel* channel,
                                                rdma_cm_event_type expected,
                                                Clock::time_point deadline) {
  auto event = next_cm_event(channel, deadline);
  if (!event) return std::move(event).error();
  if (event.value()->event == expected) return event;
  CmWaitFailure failure;
  failure.event = event.value()->event;
  failure.status = event.value()->status;
  failure.message = std::string("got ") + rdma_event_str(event.value()->event) + " (status " +
                    std::to_string(failure.status) + ")";
  return failure;
}

Expected<AddrInfo, std::string> resolve_socket_address(const std::string& host,
                                                       const std::string& service, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* raw = nullptr;
  int status = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                           service.empty() ? nullptr : service.c_str(), &hints, &raw);
  if (status != 0) {
    return (host.empty() ? std::string("*") : host) + ":" + service + ": " + gai_strerror(status);
  }
  return AddrInfo(raw);
}

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace fabgate::rdma
