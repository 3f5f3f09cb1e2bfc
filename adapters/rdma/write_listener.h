#pragma once

#include <functional>
#include <string>

#include "adapters/rdma/write_options.h"
#include "adapters/rdma/write_result.h"

namespace fabgate::rdma {

// The passive side: exposes one buffer of plan.message_size bytes for RDMA WRITE and accepts
// fabgate-probe clients until plan.listen_timeout passes, or until at least plan.qps
// connections have come and gone and no new one arrives within plan.connect_timeout (which
// leaves room for a client's --reconnect attempt). It cannot see the writes themselves: its
// verdict is about connections (none -> no-evidence, a connection error -> fail).
// `on_listening` (optional) is called once the rdma_cm id listens, with "ADDRESS:PORT": from
// then on a client can connect. Whoever starts the listener waits for it instead of guessing
// with a sleep; a listener that cannot listen (no RDMA device owns the address) never calls it.
using ListenerReady = std::function<void(const std::string& endpoint)>;
RdmaWriteResult run_write_listener(const WritePlan& plan, const ListenerReady& on_listening = {});

}  // namespace fabgate::rdma
