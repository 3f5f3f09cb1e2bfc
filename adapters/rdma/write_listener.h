#pragma once

#include "adapters/rdma/write_options.h"
#include "adapters/rdma/write_result.h"

namespace fabgate::rdma {

// The passive side: exposes one buffer of plan.message_size bytes for RDMA WRITE and accepts
// fabgate-probe clients until plan.listen_timeout passes, or until at least plan.qps
// connections have come and gone and no new one arrives within plan.connect_timeout (which
// leaves room for a client's --reconnect attempt). It cannot see the writes themselves: its
// verdict is about connections (none -> no-evidence, a connection error -> fail).
RdmaWriteResult run_write_listener(const WritePlan& plan);

}  // namespace fabgate::rdma
