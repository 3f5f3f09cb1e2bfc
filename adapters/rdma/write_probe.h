#pragma once

#include "adapters/rdma/device_scan.h"
#include "adapters/rdma/write_listener.h"
#include "adapters/rdma/write_options.h"
#include "adapters/rdma/write_result.h"

namespace fabgate::rdma {

// Where the probe looks for RDMA ports. The seam exists so tests can hand in a host with (or
// without) active ports; the real one is scan_devices() over libibverbs.
using DeviceScanner = DeviceScan (*)();

// `fabgate-probe rdma-write`: checks that the host has an active RDMA port (none ->
// no-evidence with the reason), then runs the listener or the client. With --reconnect and a
// failed run, it also reports whether the failed QPs work again and whether one fresh QP pair
// to the same listener succeeds.
// `on_listening` is handed to the listener (write_listener.h); the client ignores it.
RdmaWriteResult run_rdma_write(const WritePlan& plan, DeviceScanner scanner = scan_devices,
                               const ListenerReady& on_listening = {});

}  // namespace fabgate::rdma
