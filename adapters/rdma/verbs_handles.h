#pragma once

// RAII over every rdma-core object the probe creates. Each handle frees its object with the
// library's own destroy call; a failing destroy is logged to stderr and never throws, because
// destructors run during unwinding and a leak is better than a crash in a probe.
//
// rdma-core requires children to be released before their parents:
//   QP -> CQ -> MR -> PD -> completion channel -> device context / rdma_cm id -> event channel.
// Owners in this library declare their members in the reverse of that order (C++ destroys
// members bottom-up), and each owner's header says so next to the members.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace fabgate::rdma {

namespace detail {
inline void log_destroy_failure(const char* what, int result) {
  if (result == 0) return;
  // verbs destroy calls return an errno value; rdma_cm ones return -1 and set errno.
  int code = result > 0 ? result : errno;
  std::fprintf(stderr, "fabgate-probe: warning: %s failed: %s\n", what, std::strerror(code));
}
}  // namespace detail

// Deleter<free_function, "name">: calls the rdma-core destroy function and logs its failure.
template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* object) const {
    if (object != nullptr) detail::log_destroy_failure(name(), Free(object));
  }
  static const char* name();
};

template <>
inline const char* Deleter<ibv_destroy_qp>::name() {
  return "ibv_destroy_qp";
}
template <>
inline const char* Deleter<ibv_destroy_cq>::name() {
  return "ibv_destroy_cq";
}
template <>
inline const char* Deleter<ibv_dereg_mr>::name() {
  return "ibv_dereg_mr";
}
template <>
inline const char* Deleter<ibv_dealloc_pd>::name() {
  return "ibv_dealloc_pd";
}
template <>
inline const char* Deleter<ibv_destroy_comp_channel>::name() {
  return "ibv_destroy_comp_channel";
}
template <>
inline const char* Deleter<ibv_close_device>::name() {
  return "ibv_close_device";
}
template <>
inline const char* Deleter<rdma_destroy_id>::name() {
  return "rdma_destroy_id";
}

// rdma_destroy_event_channel and ibv_free_device_list return void, so they get their own
// deleters instead of the logging template.
struct EventChannelDeleter {
  void operator()(rdma_event_channel* channel) const {
    if (channel != nullptr) rdma_destroy_event_channel(channel);
  }
};
struct DeviceListDeleter {
  void operator()(ibv_device** list) const {
    if (list != nullptr) ibv_free_device_list(list);
  }
};

using CompletionQueue = std::unique_ptr<ibv_cq, Deleter<ibv_destroy_cq>>;
using MemoryRegion = std::unique_ptr<ibv_mr, Deleter<ibv_dereg_mr>>;
using ProtectionDomain = std::unique_ptr<ibv_pd, Deleter<ibv_dealloc_pd>>;
using DeviceContext = std::unique_ptr<ibv_context, Deleter<ibv_close_device>>;
using CmId = std::unique_ptr<rdma_cm_id, Deleter<rdma_destroy_id>>;
using EventChannel = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;
using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;

// A QP created with rdma_create_qp belongs to its rdma_cm id and is destroyed through it
// (rdma_destroy_qp), which also clears id->qp. The id must outlive this handle.
class CmQueuePair {
 public:
  CmQueuePair() = default;
  explicit CmQueuePair(rdma_cm_id* id) : id_(id) {}
  CmQueuePair(CmQueuePair&& other) noexcept : id_(other.id_) { other.id_ = nullptr; }
  CmQueuePair& operator=(CmQueuePair&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      other.id_ = nullptr;
    }
    return *this;
  }
  CmQueuePair(const CmQueuePair&) = delete;
  CmQueuePair& operator=(const CmQueuePair&) = delete;
  ~CmQueuePair() { reset(); }

  ibv_qp* get() const { return id_ != nullptr ? id_->qp : nullptr; }
  void reset() {
    if (id_ != nullptr && id_->qp != nullptr) rdma_destroy_qp(id_);
    id_ = nullptr;
  }

 private:
  rdma_cm_id* id_ = nullptr;
};

// A received rdma_cm event must be acknowledged before its id can be destroyed; this makes
// the acknowledgement impossible to forget on an early return.
class CmEvent {
 public:
  CmEvent() = default;
  explicit CmEvent(rdma_cm_event* event) : event_(event) {}
  CmEvent(CmEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  CmEvent& operator=(CmEvent&& other) noexcept {
    if (this != &other) {
      ack();
      event_ = other.event_;
      other.event_ = nullptr;
    }
    return *this;
  }
  CmEvent(const CmEvent&) = delete;
  CmEvent& operator=(const CmEvent&) = delete;
  ~CmEvent() { ack(); }

  explicit operator bool() const { return event_ != nullptr; }
  rdma_cm_event* operator->() const { return event_; }
  rdma_cm_event* get() const { return event_; }
  void ack() {
    if (event_ != nullptr)
      detail::log_destroy_failure("rdma_ack_cm_event", rdma_ack_cm_event(event_));
    event_ = nullptr;
  }

 private:
  rdma_cm_event* event_ = nullptr;
};

}  // namespace fabgate::rdma
