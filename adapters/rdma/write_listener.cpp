#include "adapters/rdma/write_listener.h"

#include <cerrno>
#include <cstring>

#include "adapters/core/text.h"
#include "adapters/rdma/cm_events.h"
#include "adapters/rdma/wire_format.h"

namespace fabgate::rdma {

namespace {

// One accepted connection. The CQ is declared before the QP so that the QP is destroyed first.
struct AcceptedConnection {
  CompletionQueue cq;
  CmQueuePair qp;
};

// Members in the reverse of rdma-core's release order (verbs_handles.h): connections (QP, CQ)
// first, then MR, PD, the accepted ids, the listening id and last the event channel.
struct ListenerResources {
  EventChannel channel;
  CmId listen_id;
  std::vector<CmId> ids;
  std::vector<std::uint8_t> buffer;
  ProtectionDomain pd;
  MemoryRegion mr;
  std::vector<AcceptedConnection> connections;
};

void reject(rdma_cm_id* id, const std::string& why, std::vector<std::string>& problems) {
  problems.push_back("rejected a connection: " + why);
  rdma_reject(id, nullptr, 0);
}

// Accepts one CONNECT_REQUEST: allocates the shared buffer on the first one, a CQ and QP per
// connection, and replies with where the client may write.
void accept_connection(ListenerResources& resources, const WritePlan& plan,
                       const rdma_cm_event& event, RdmaWriteResult& result,
                       std::vector<std::string>& problems) {
  rdma_cm_id* id = event.id;
  resources.ids.emplace_back(id);  // a request's id belongs to the listener from now on
  auto hello = decode_client_hello({static_cast<const std::uint8_t*>(event.param.conn.private_data),
                                    event.param.conn.private_data_len});
  if (!hello) return reject(id, "peer is not fabgate-probe (no valid hello)", problems);
  if (hello->message_size > plan.message_size) {
    return reject(id,
                  "client --size " + std::to_string(hello->message_size) +
                      " exceeds listener --size " + std::to_string(plan.message_size),
                  problems);
  }
  if (!resources.pd) {
    result.device = ibv_get_device_name(id->verbs->device);
    result.port = id->port_num;
    if (!plan.device.empty() && result.device != plan.device) {
      return reject(id, "arrived on " + result.device + ", not --device " + plan.device, problems);
    }
    resources.pd.reset(ibv_alloc_pd(id->verbs));
    if (!resources.pd) return reject(id, errno_text("ibv_alloc_pd"), problems);
    resources.buffer.assign(plan.message_size, 0);
    resources.mr.reset(ibv_reg_mr(resources.pd.get(), resources.buffer.data(),
                                  resources.buffer.size(),
                                  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
    if (!resources.mr) return reject(id, errno_text("ibv_reg_mr"), problems);
  } else if (id->verbs != resources.pd->context) {
    return reject(id, "arrived on a different RDMA device than the first connection", problems);
  }

  AcceptedConnection connection;
  connection.cq.reset(ibv_create_cq(id->verbs, 2, nullptr, nullptr, 0));
  if (!connection.cq) return reject(id, errno_text("ibv_create_cq"), problems);
  ibv_qp_init_attr attributes{};
  attributes.send_cq = connection.cq.get();
  attributes.recv_cq = connection.cq.get();
  attributes.qp_type = IBV_QPT_RC;
  attributes.cap.max_send_wr = 1;
  attributes.cap.max_recv_wr = 1;
  attributes.cap.max_send_sge = 1;
  attributes.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, resources.pd.get(), &attributes) != 0) {
    return reject(id, errno_text("rdma_create_qp"), problems);
  }
  connection.qp = CmQueuePair(id);

  auto reply = encode(ServerHello{resources.mr->rkey,
                                  reinterpret_cast<std::uintptr_t>(resources.buffer.data()),
                                  resources.buffer.size()});
  rdma_conn_param parameters{};
  parameters.private_data = reply.data();
  parameters.private_data_len = static_cast<std::uint8_t>(reply.size());
  parameters.responder_resources = 1;
  parameters.initiator_depth = 1;
  parameters.rnr_retry_count = 7;
  if (rdma_accept(id, &parameters) != 0) {
    problems.push_back(errno_text("rdma_accept"));
    return;
  }
  resources.connections.push_back(std::move(connection));
}

}  // namespace

RdmaWriteResult run_write_listener(const WritePlan& plan, const ListenerReady& on_listening) {
  RdmaWriteResult result;
  result.role = "listen";
  result.peer =
      (plan.bind_address.empty() ? std::string("*") : plan.bind_address) + ":" + plan.service;
  auto start = Clock::now();

  auto address = resolve_socket_address(plan.bind_address, plan.service, true);
  if (!address) {
    result.verdict = Verdict::no_evidence;
    result.reason = "resolve listen address " + address.error();
    return result;
  }
  ListenerResources resources;
  auto channel = open_event_channel();
  if (!channel) {
    result.verdict = Verdict::no_evidence;
    result.reason = channel.error();
    return result;
  }
  resources.channel = std::move(channel).value();
  rdma_cm_id* listen_id = nullptr;
  if (rdma_create_id(resources.channel.get(), &listen_id, nullptr, RDMA_PS_TCP) != 0) {
    result.verdict = Verdict::no_evidence;
    result.reason = errno_text("rdma_create_id");
    return result;
  }
  resources.listen_id.reset(listen_id);
  if (rdma_bind_addr(listen_id, address.value()->ai_addr) != 0 || rdma_listen(listen_id, 64) != 0) {
    // EADDRNOTAVAIL/ENODEV here means no RDMA device owns that address: no evidence.
    result.verdict = Verdict::no_evidence;
    result.reason = "listen on " + result.peer + ": " + std::strerror(errno);
    return result;
  }
  if (on_listening) on_listening(result.peer);

  std::vector<std::string> problems;
  int served = 0;
  int active = 0;
  const auto deadline = start + plan.listen_timeout;
  auto linger_until = Clock::time_point::max();
  while (true) {
    auto event = next_cm_event(resources.channel.get(), std::min(deadline, linger_until));
    if (!event) {
      if (!event.error().timed_out) problems.push_back(event.error().message);
      break;
    }
    const rdma_cm_event& current = *event.value().get();
    switch (current.event) {
      case RDMA_CM_EVENT_CONNECT_REQUEST:
        linger_until = Clock::time_point::max();
        accept_connection(resources, plan, current, result, problems);
        break;
      case RDMA_CM_EVENT_ESTABLISHED:
        ++served;
        ++active;
        break;
      case RDMA_CM_EVENT_DISCONNECTED:
        --active;
        if (active <= 0 && served >= plan.qps) linger_until = Clock::now() + plan.connect_timeout;
        break;
      case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        break;
      default:
        problems.push_back(std::string(rdma_event_str(current.event)) + " (status " +
                           std::to_string(current.status) + ")");
        break;
    }
    if (current.event == RDMA_CM_EVENT_DEVICE_REMOVAL) break;
  }

  result.connections_served = served;
  result.timings.push_back({"listen", milliseconds_since(start)});
  if (!problems.empty()) {
    result.verdict = Verdict::fail;
    result.reason = join(problems, "; ");
  } else if (served == 0) {
    result.verdict = Verdict::no_evidence;
    result.reason =
        "no client connected within " + std::to_string(plan.listen_timeout.count()) + " ms";
  } else {
    result.verdict = Verdict::pass;
  }
  return result;
}

}  // namespace fabgate::rdma
