#include "adapters/rdma/write_client.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "adapters/core/text.h"
#include "adapters/rdma/cm_events.h"
#include "adapters/rdma/wire_format.h"

namespace fabgate::rdma {

namespace {

// Latency samples are capped so a long --duration run cannot grow without bound; the summary
// then covers the first kMaxLatencySamples signaled writes.
constexpr std::size_t kMaxLatencySamples = 1u << 22;
constexpr int kPollBatch = 32;
// rdma_cm reports its own resolution timeout as an event; the hard deadline leaves it a
// little room so the reported reason is the CM's, not ours.
constexpr std::chrono::milliseconds kCmSlack{500};

struct Failure {
  Verdict verdict;
  std::string reason;
};

// One RC connection. The CQ is declared before the QP so that the QP is destroyed first.
struct QueuePairRun {
  CompletionQueue cq;
  CmQueuePair qp;
  rdma_cm_id* id = nullptr;  // owned by ClientResources::ids
  ServerHello remote;
  std::uint64_t target = 0;
  std::uint64_t posted = 0;
  std::uint64_t retired = 0;
  std::uint64_t succeeded_through = 0;
  bool failed = false;
  bool timed_out = false;
  Clock::time_point last_progress;
  std::vector<Clock::time_point> post_times;  // slot seq % outstanding, signaled WRs only
};

// Members in the reverse of rdma-core's release order (verbs_handles.h): the QPs go first,
// then MR, PD, the rdma_cm ids and finally the event channel. The buffer outlives its MR.
struct ClientResources {
  EventChannel channel;
  std::vector<CmId> ids;
  std::vector<std::uint8_t> buffer;
  ProtectionDomain pd;
  MemoryRegion mr;
  std::vector<QueuePairRun> qps;
};

std::string gid_text(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof text);
  return text;
}

const char* qp_state_name(ibv_qp_state state) {
  switch (state) {
    case IBV_QPS_RESET:
      return "RESET";
    case IBV_QPS_INIT:
      return "INIT";
    case IBV_QPS_RTR:
      return "RTR";
    case IBV_QPS_RTS:
      return "RTS";
    case IBV_QPS_SQD:
      return "SQD";
    case IBV_QPS_SQE:
      return "SQE";
    case IBV_QPS_ERR:
      return "ERR";
    default:
      return "UNKNOWN";
  }
}

// The first connection decides the device; the user's --device/--port/--gid-index are checked
// against what rdma_cm actually chose, because traffic on another port is no evidence about
// the one that was asked for.
std::optional<Failure> check_selection(const WritePlan& plan, RdmaWriteResult& result) {
  if (!plan.device.empty() && result.device != plan.device) {
    return Failure{Verdict::no_evidence, "traffic to " + result.peer + " would use " +
                                             result.device + ", not --device " + plan.device +
                                             " (use --bind to pick it)"};
  }
  if (plan.port != 0 && result.port && *result.port != plan.port) {
    return Failure{Verdict::no_evidence, "traffic to " + result.peer + " would use port " +
                                             std::to_string(*result.port) + ", not --port " +
                                             std::to_string(plan.port)};
  }
  return std::nullopt;
}

std::optional<Failure> resolve(ClientResources& resources, const WritePlan& plan, rdma_cm_id* id,
                               const addrinfo* destination, const addrinfo* source,
                               const std::string& peer) {
  int resolve_ms = static_cast<int>(plan.resolve_timeout.count());
  if (rdma_resolve_addr(id, source != nullptr ? source->ai_addr : nullptr, destination->ai_addr,
                        resolve_ms) != 0) {
    return Failure{Verdict::no_evidence, "rdma_resolve_addr " + peer + ": " + std::strerror(errno) +
                                             " (no RDMA device reaches this address?)"};
  }
  auto address = await_cm_event(resources.channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED,
                                Clock::now() + plan.resolve_timeout + kCmSlack);
  if (!address) {
    const auto& failure = address.error();
    // An address that no RDMA device can reach says nothing about the fabric: no evidence.
    // A timeout means the neighbour did not answer on an RDMA-capable path: that is a failure.
    if (failure.timed_out) {
      return Failure{Verdict::fail, "address resolution of " + peer + " timed out after " +
                                        std::to_string(plan.resolve_timeout.count()) + " ms"};
    }
    return Failure{Verdict::no_evidence, "address resolution of " + peer + ": " + failure.message};
  }
  address.value().ack();
  if (rdma_resolve_route(id, resolve_ms) != 0) {
    return Failure{Verdict::fail, "rdma_resolve_route " + peer + ": " + std::strerror(errno)};
  }
  auto route = await_cm_event(resources.channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED,
                              Clock::now() + plan.resolve_timeout + kCmSlack);
  if (!route) {
    return Failure{Verdict::fail, "route resolution of " + peer + ": " + route.error().message};
  }
  return std::nullopt;
}

std::optional<Failure> prepare_memory(ClientResources& resources, const WritePlan& plan,
                                      ibv_context* context) {
  resources.pd.reset(ibv_alloc_pd(context));
  if (!resources.pd) return Failure{Verdict::fail, errno_text("ibv_alloc_pd")};
  resources.buffer.assign(plan.message_size, 0x5a);
  resources.mr.reset(ibv_reg_mr(resources.pd.get(), resources.buffer.data(),
                                resources.buffer.size(), IBV_ACCESS_LOCAL_WRITE));
  if (!resources.mr) return Failure{Verdict::fail, errno_text("ibv_reg_mr")};
  return std::nullopt;
}

std::optional<Failure> connect_queue_pair(ClientResources& resources, const WritePlan& plan,
                                          int index, const addrinfo* destination,
                                          const addrinfo* source, RdmaWriteResult& result) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(resources.channel.get(), &id, nullptr, RDMA_PS_TCP) != 0) {
    return Failure{Verdict::no_evidence, errno_text("rdma_create_id")};
  }
  resources.ids.emplace_back(id);
  if (auto failure = resolve(resources, plan, id, destination, source, result.peer)) return failure;

  if (index == 0) {
    result.device = ibv_get_device_name(id->verbs->device);
    result.port = id->port_num;
    if (auto failure = check_selection(plan, result)) return failure;
    if (auto failure = prepare_memory(resources, plan, id->verbs)) return failure;
  } else if (id->verbs != resources.pd->context) {
    return Failure{Verdict::fail, "QP " + std::to_string(index) +
                                      " resolved to a different RDMA device than QP 0"};
  }

  QueuePairRun run;
  run.id = id;
  run.cq.reset(ibv_create_cq(id->verbs, plan.outstanding + 1, nullptr, nullptr, 0));
  if (!run.cq) return Failure{Verdict::fail, errno_text("ibv_create_cq")};
  ibv_qp_init_attr attributes{};
  attributes.send_cq = run.cq.get();
  attributes.recv_cq = run.cq.get();
  attributes.qp_type = IBV_QPT_RC;
  attributes.sq_sig_all = 0;  // completion moderation: only WRs flagged IBV_SEND_SIGNALED complete
  attributes.cap.max_send_wr = static_cast<std::uint32_t>(plan.outstanding);
  attributes.cap.max_recv_wr = 1;
  attributes.cap.max_send_sge = 1;
  attributes.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, resources.pd.get(), &attributes) != 0) {
    return Failure{Verdict::fail, errno_text("rdma_create_qp")};
  }
  run.qp = CmQueuePair(id);

  auto hello = encode(ClientHello{static_cast<std::uint32_t>(index), plan.message_size});
  rdma_conn_param parameters{};
  parameters.private_data = hello.data();
  parameters.private_data_len = static_cast<std::uint8_t>(hello.size());
  parameters.initiator_depth = 1;
  parameters.responder_resources = 1;
  parameters.retry_count = 7;
  parameters.rnr_retry_count = 7;
  if (rdma_connect(id, &parameters) != 0) return Failure{Verdict::fail, errno_text("rdma_connect")};
  auto established = await_cm_event(resources.channel.get(), RDMA_CM_EVENT_ESTABLISHED,
                                    Clock::now() + plan.connect_timeout);
  if (!established) {
    const auto& failure = established.error();
    if (failure.timed_out) {
      return Failure{Verdict::fail, "connect to " + result.peer + " timed out after " +
                                        std::to_string(plan.connect_timeout.count()) + " ms"};
    }
    if (failure.event == RDMA_CM_EVENT_REJECTED) {
      // Nothing listens there (or it refused us): the fabric was never exercised.
      return Failure{Verdict::no_evidence,
                     "connect to " + result.peer + " rejected (status " +
                         std::to_string(failure.status) +
                         "): is fabgate-probe rdma-write --listen running there?"};
    }
    return Failure{Verdict::fail, "connect to " + result.peer + ": " + failure.message};
  }
  const auto& connection = established.value()->param.conn;
  auto remote = decode_server_hello(
      {static_cast<const std::uint8_t*>(connection.private_data), connection.private_data_len});
  if (!remote)
    return Failure{Verdict::fail,
                   result.peer + " is not a fabgate-probe listener (no valid reply)"};
  if (remote->size < plan.message_size) {
    return Failure{Verdict::fail, "listener buffer is " + std::to_string(remote->size) +
                                      " bytes, smaller than --size " +
                                      std::to_string(plan.message_size) +
                                      " (start the listener with a larger --size)"};
  }
  run.remote = *remote;
  run.post_times.resize(static_cast<std::size_t>(plan.outstanding));

  if (index == 0) {
    ibv_qp_attr qp_attributes{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(run.qp.get(), &qp_attributes, IBV_QP_AV, &init) == 0 &&
        qp_attributes.ah_attr.is_global) {
      int gid_index = qp_attributes.ah_attr.grh.sgid_index;
      result.gid_index = gid_index;
      ibv_gid gid{};
      if (ibv_query_gid(id->verbs, id->port_num, gid_index, &gid) == 0) result.gid = gid_text(gid);
      if (plan.gid_index >= 0 && gid_index != plan.gid_index) {
        resources.qps.push_back(std::move(run));
        return Failure{Verdict::no_evidence, "traffic used GID index " + std::to_string(gid_index) +
                                                 ", not --gid-index " +
                                                 std::to_string(plan.gid_index) +
                                                 " (use --bind with that GID's address)"};
      }
    }
  }
  resources.qps.push_back(std::move(run));
  return std::nullopt;
}

bool post_write(QueuePairRun& run, const ClientResources& resources, std::uint64_t sequence,
                bool signaled) {
  ibv_sge segment{};
  segment.addr = reinterpret_cast<std::uintptr_t>(resources.buffer.data());
  segment.length = static_cast<std::uint32_t>(resources.buffer.size());
  segment.lkey = resources.mr->lkey;
  ibv_send_wr request{};
  request.wr_id = sequence;
  request.sg_list = &segment;
  request.num_sge = 1;
  request.opcode = IBV_WR_RDMA_WRITE;
  request.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  request.wr.rdma.remote_addr = run.remote.address;
  request.wr.rdma.rkey = run.remote.rkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(run.qp.get(), &request, &bad) == 0;
}

std::string describe(const CompletionError& error) {
  return "QP " + std::to_string(error.qp_index) + " wr " + std::to_string(error.wr_id) +
         ": status " + std::to_string(error.status) + " (" + error.status_name + "), vendor_err " +
         hex(error.vendor_err);
}

// The measured phase: keeps `outstanding` writes in flight on every QP, signals every Nth,
// and stops at the target, on the first error of a QP (then drains its flushed requests), or
// when a QP makes no progress for completion_timeout.
void transfer(ClientResources& resources, const WritePlan& plan, RdmaWriteResult& result) {
  const auto outstanding = static_cast<std::uint64_t>(plan.outstanding);
  const auto every = static_cast<std::uint64_t>(plan.signal_every);
  const auto unbounded = std::numeric_limits<std::uint64_t>::max();
  const auto start = Clock::now();
  const auto end = plan.duration ? start + *plan.duration : Clock::time_point::max();
  for (auto& run : resources.qps) {
    run.target = plan.iterations.value_or(unbounded);
    run.last_progress = start;
  }
  std::vector<double> latencies;
  std::string first_problem;
  auto last_completion = start;
  ibv_wc completions[kPollBatch];

  while (true) {
    bool all_done = true;
    for (std::size_t index = 0; index < resources.qps.size(); ++index) {
      auto& run = resources.qps[index];
      auto now = Clock::now();
      if (!run.failed) {
        // Duration mode ends on a signaling boundary, so the last WR posted is signaled and
        // its completion retires every unsignaled WR before it.
        if (run.target == unbounded && now >= end)
          run.target = (run.posted + every - 1) / every * every;
        while (run.posted < run.target && run.posted - run.retired < outstanding) {
          std::uint64_t sequence = run.posted;
          bool signaled = sequence % every == every - 1 || sequence + 1 == run.target;
          if (signaled) run.post_times[sequence % outstanding] = Clock::now();
          if (!post_write(run, resources, sequence, signaled)) {
            if (first_problem.empty())
              first_problem = "QP " + std::to_string(index) + ": " + errno_text("ibv_post_send");
            run.failed = true;
            break;
          }
          if (run.posted == run.retired) run.last_progress = Clock::now();
          ++run.posted;
        }
      }
      int count = ibv_poll_cq(run.cq.get(), kPollBatch, completions);
      if (count < 0) {
        if (first_problem.empty())
          first_problem = "QP " + std::to_string(index) + ": ibv_poll_cq failed";
        run.failed = true;
        run.timed_out = true;  // the CQ can no longer be read, so nothing more will drain
      }
      now = Clock::now();
      for (int k = 0; k < count; ++k) {
        const ibv_wc& completion = completions[k];
        run.last_progress = now;
        last_completion = now;
        run.retired = std::max(run.retired, completion.wr_id + 1);
        if (completion.status == IBV_WC_SUCCESS) {
          run.succeeded_through = std::max(run.succeeded_through, completion.wr_id + 1);
          if (latencies.size() < kMaxLatencySamples) {
            latencies.push_back(std::chrono::duration<double, std::micro>(
                                    now - run.post_times[completion.wr_id % outstanding])
                                    .count());
          }
        } else if (completion.status == IBV_WC_WR_FLUSH_ERR) {
          ++result.flushed;
          run.failed = true;
        } else {
          // RC completes in order: everything before the failed WR was written.
          run.succeeded_through = std::max(run.succeeded_through, completion.wr_id);
          auto error =
              describe_completion(static_cast<int>(index), completion.qp_num, completion.wr_id,
                                  completion.status, completion.vendor_err);
          if (first_problem.empty()) first_problem = describe(error);
          record_error(result, std::move(error));
          run.failed = true;
        }
      }
      bool done =
          run.timed_out || (run.failed ? run.retired >= run.posted
                                       : run.posted >= run.target && run.retired >= run.posted);
      if (done) continue;
      if (run.retired < run.posted && now - run.last_progress > plan.completion_timeout) {
        run.timed_out = true;
        run.failed = true;
        if (first_problem.empty()) {
          first_problem = "QP " + std::to_string(index) + ": no completion for " +
                          std::to_string(plan.completion_timeout.count()) + " ms with " +
                          std::to_string(run.posted - run.retired) + " requests outstanding";
        }
        continue;
      }
      all_done = false;
    }
    if (all_done) break;
  }

  double seconds = std::chrono::duration<double>(last_completion - start).count();
  for (const auto& run : resources.qps) {
    result.writes_completed += run.succeeded_through;
    if (run.failed && run.retired < run.posted) result.drained = false;
  }
  result.bytes_written = result.writes_completed * plan.message_size;
  if (seconds > 0 && result.bytes_written > 0) {
    result.bandwidth_gbps = static_cast<double>(result.bytes_written) * 8.0 / seconds / 1e9;
  }
  result.latency = summarize_latencies(std::move(latencies));
  bool any_failed = std::any_of(resources.qps.begin(), resources.qps.end(),
                                [](const auto& run) { return run.failed; });
  result.verdict = any_failed ? Verdict::fail : Verdict::pass;
  result.reason = first_problem;
}

// --reconnect, first fact: one more signaled write on every QP that failed. An RC QP in the
// error state flushes it, so "recovered" can only be true if the QP really works again.
void check_existing_queue_pairs(ClientResources& resources, const WritePlan& plan,
                                ReconnectOutcome& outcome) {
  bool all_recovered = true;
  std::vector<std::string> details;
  for (std::size_t index = 0; index < resources.qps.size(); ++index) {
    auto& run = resources.qps[index];
    if (!run.failed) continue;
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    std::string state = ibv_query_qp(run.qp.get(), &attributes, IBV_QP_STATE, &init) == 0
                            ? qp_state_name(attributes.qp_state)
                            : "unknown";
    std::string detail = "QP " + std::to_string(index) + ": state " + state + ", probe write ";
    bool recovered = false;
    std::uint64_t sequence = run.posted;
    if (!post_write(run, resources, sequence, true)) {
      detail += "not posted (" + errno_text("ibv_post_send") + ")";
    } else {
      auto deadline = Clock::now() + plan.completion_timeout;
      bool seen = false;
      while (!seen && Clock::now() < deadline) {
        ibv_wc completion{};
        int count = ibv_poll_cq(run.cq.get(), 1, &completion);
        if (count < 0) break;
        if (count == 0 || completion.wr_id != sequence) continue;  // leftovers of the drain
        seen = true;
        recovered = completion.status == IBV_WC_SUCCESS;
        detail += "status " + std::to_string(completion.status) + " (" +
                  ibv_wc_status_str(completion.status) + ")";
      }
      if (!seen)
        detail +=
            "got no completion within " + std::to_string(plan.completion_timeout.count()) + " ms";
    }
    all_recovered = all_recovered && recovered;
    details.push_back(detail);
  }
  outcome.existing_qp_recovered = all_recovered;
  outcome.existing_qp_detail = join(details, "; ");
}

// Bounded, best-effort teardown of the connections; the RAII members release the rest.
void disconnect(ClientResources& resources, const WritePlan& plan) {
  int expected = 0;
  for (auto& run : resources.qps) {
    if (rdma_disconnect(run.id) == 0) ++expected;
  }
  auto deadline = Clock::now() + plan.connect_timeout;
  while (expected > 0) {
    auto event = next_cm_event(resources.channel.get(), deadline);
    if (!event) break;
    if (event.value()->event == RDMA_CM_EVENT_DISCONNECTED) --expected;
  }
}

}  // namespace

RdmaWriteResult run_write_client(const WritePlan& plan, ReconnectOutcome* existing) {
  RdmaWriteResult result;
  result.role = "connect";
  result.peer = plan.host + ":" + plan.service;

  auto destination = resolve_socket_address(plan.host, plan.service, false);
  if (!destination) {
    result.verdict = Verdict::no_evidence;
    result.reason = "resolve " + destination.error();
    return result;
  }
  AddrInfo source;
  if (!plan.bind_address.empty()) {
    auto bound = resolve_socket_address(plan.bind_address, "", false);
    if (!bound) {
      result.verdict = Verdict::no_evidence;
      result.reason = "resolve --bind " + bound.error();
      return result;
    }
    source = std::move(bound).value();
  }

  ClientResources resources;
  auto channel = open_event_channel();
  if (!channel) {
    result.verdict = Verdict::no_evidence;
    result.reason = channel.error();
    return result;
  }
  resources.channel = std::move(channel).value();

  auto phase_start = Clock::now();
  for (int index = 0; index < plan.qps; ++index) {
    if (auto failure = connect_queue_pair(resources, plan, index, destination.value().get(),
                                          source.get(), result)) {
      result.verdict = failure->verdict;
      result.reason = failure->reason;
      result.timings.push_back({"connect", milliseconds_since(phase_start)});
      disconnect(resources, plan);
      return result;
    }
  }
  result.timings.push_back({"connect", milliseconds_since(phase_start)});

  phase_start = Clock::now();
  transfer(resources, plan, result);
  result.timings.push_back({"transfer", milliseconds_since(phase_start)});

  if (existing != nullptr && result.verdict == Verdict::fail) {
    phase_start = Clock::now();
    check_existing_queue_pairs(resources, plan, *existing);
    result.timings.push_back({"existing_qp_check", milliseconds_since(phase_start)});
  }

  phase_start = Clock::now();
  disconnect(resources, plan);
  result.timings.push_back({"disconnect", milliseconds_since(phase_start)});
  return result;
}

}  // namespace fabgate::rdma
