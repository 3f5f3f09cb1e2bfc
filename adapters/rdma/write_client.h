#pragma once

#include "adapters/rdma/write_options.h"
#include "adapters/rdma/write_result.h"

namespace fabgate::rdma {

// The connecting side: resolves HOST, opens plan.qps RC connections through rdma_cm, writes
// plan.message_size bytes per work request into the listener's buffer and measures bandwidth
// and post-to-completion latency. When `existing` is given and the run fails, the failed QPs
// are probed once more (one signaled write each) before teardown and the outcome is stored
// there: that is the "did the existing QP recover" fact of --reconnect.
RdmaWriteResult run_write_client(const WritePlan& plan, ReconnectOutcome* existing);

}  // namespace fabgate::rdma
