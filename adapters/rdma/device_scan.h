#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fabgate::rdma {

// What libibverbs reports about the host's RDMA ports, read before any connection is tried so
// that "this host has no RDMA" is reported as such and never as a network failure.
struct PortStatus {
  std::string device;
  int port = 0;
  std::string state;  // ibv_port_state_str: "PORT_ACTIVE", "PORT_DOWN", ...
  bool active = false;
  std::string link_layer;  // "Ethernet" or "InfiniBand"
  int active_mtu = 0;      // bytes
};

struct DeviceScan {
  int device_count = 0;
  std::vector<PortStatus> ports;
  std::string problem;  // set when the scan itself failed (e.g. ibv_get_device_list errno)
};

// Enumerates devices with ibv_get_device_list and queries every port.
DeviceScan scan_devices();

// Why the probe cannot produce evidence on this host, or nullopt when a usable port exists.
// `device`/`port` narrow the search when the user asked for them (empty / 0 = any).
std::optional<std::string> no_usable_port_reason(const DeviceScan& scan, const std::string& device,
                                                 int port);

}  // namespace fabgate::rdma
