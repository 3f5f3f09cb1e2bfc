#include "adapters/rdma/device_scan.h"

#include <cerrno>
#include <cstring>

#include "adapters/core/text.h"
#include "adapters/rdma/verbs_handles.h"

namespace fabgate::rdma {

namespace {
int mtu_bytes(ibv_mtu mtu) {
  return mtu >= IBV_MTU_256 ? 128 << static_cast<int>(mtu) : 0;
}

const char* link_layer_name(std::uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    default:
      return "unspecified";
  }
}
}  // namespace

DeviceScan scan_devices() {
  DeviceScan scan;
  int count = 0;
  errno = 0;
  DeviceList list(ibv_get_device_list(&count));
  if (!list) {
    scan.problem = std::string("ibv_get_device_list: ") + std::strerror(errno);
    return scan;
  }
  scan.device_count = count;
  for (int i = 0; i < count; ++i) {
    ibv_device* device = list.get()[i];
    std::string name = ibv_get_device_name(device);
    DeviceContext context(ibv_open_device(device));
    if (!context) {
      scan.ports.push_back(
          {name, 0, std::string("cannot open: ") + std::strerror(errno), false, "", 0});
      continue;
    }
    ibv_device_attr attributes{};
    if (ibv_query_device(context.get(), &attributes) != 0) continue;
    for (int port = 1; port <= attributes.phys_port_cnt; ++port) {
      ibv_port_attr port_attributes{};
      if (ibv_query_port(context.get(), static_cast<std::uint8_t>(port), &port_attributes) != 0)
        continue;
      PortStatus status;
      status.device = name;
      status.port = port;
      status.state = ibv_port_state_str(port_attributes.state);
      status.active = port_attributes.state == IBV_PORT_ACTIVE;
      status.link_layer = link_layer_name(port_attributes.link_layer);
      status.active_mtu = mtu_bytes(port_attributes.active_mtu);
      scan.ports.push_back(status);
    }
  }
  return scan;
}

std::optional<std::string> no_usable_port_reason(const DeviceScan& scan, const std::string& device,
                                                 int port) {
  if (!scan.problem.empty()) return "no RDMA device on this host (" + scan.problem + ")";
  if (scan.device_count == 0)
    return std::string("no RDMA device on this host (ibv_get_device_list found none)");
  std::vector<std::string> seen;
  bool device_found = device.empty();
  for (const auto& status : scan.ports) {
    if (!device.empty() && status.device != device) continue;
    device_found = true;
    if (port != 0 && status.port != port) continue;
    if (status.active) return std::nullopt;
    seen.push_back(status.device + " port " + std::to_string(status.port) + " " + status.state);
  }
  if (!device_found) return "RDMA device " + device + " not found on this host";
  if (seen.empty()) {
    return "RDMA device " + (device.empty() ? std::string("(any)") : device) + " has no port " +
           std::to_string(port);
  }
  return "no RDMA port is active: " + join(seen, ", ");
}

}  // namespace fabgate::rdma
