#pragma once

#include <filesystem>
#include <string_view>

#include "gates/hostfacts/facts_failure.h"

namespace fabgate::hostfacts {

// The `rdma` fact category, built from three sources because none has everything:
//   sysfs (/sys/class/infiniband/<dev>/...): firmware, port state, phys state, link layer,
//     rate, GIDs with their RoCE type and netdev, counters/ and hw_counters/;
//   `rdma -j link`: the port's netdev (also when sysfs gid_attrs/ndevs is unreadable);
//   `ibv_devinfo -v`: active_mtu, which sysfs does not expose for every driver.
// Shape: {"devices": {"mlx5_0": {"fw_ver": ..., "ports": {"1": {"state": "ACTIVE", ...}}}}}.

// Reads the tree under `root` (the real one is /sys/class/infiniband; tests build one in a
// temporary directory). Missing root or no device -> unavailable; a port without a readable
// state or link_layer -> unparsable. A counter file that cannot be read as an integer is
// left out and named under the port's "unreadable_counters".
Facts read_rdma_sysfs(const std::filesystem::path& root);

// The same category from a dump of the tree taken on a remote host: the output of
// `cd /sys/class/infiniband && grep -rsH . FILES...`, one "mlx5_0/ports/1/state:4: ACTIVE" line
// per non-empty file line (paths may also be absolute under /sys/class/infiniband/). Files
// absent from the dump read as missing; counters that failed to read are therefore left out
// rather than named. Empty dump -> unavailable; a line that is not PATH:VALUE -> unparsable.
Facts read_rdma_sysfs_dump(std::string_view dump);

// `rdma -j link`: [{"ifindex":0,"port":1,"ifname":"mlx5_0/1","state":"ACTIVE",
// "physical_state":"LINK_UP","netdev":"eth1","netdev_index":4}, ...]
// -> {"mlx5_0": {"1": {"state": "ACTIVE", "physical_state": "LINK_UP", "netdev": "eth1"}}}.
Facts parse_rdma_link_json(std::string_view text);

// `ibv_devinfo -v` text -> {"mlx5_0": {"fw_ver": ..., "ports": {"1": {"state": "PORT_ACTIVE",
// "active_mtu": 4096, "max_mtu": 4096, "link_layer": "Ethernet"}}}}.
Facts parse_ibv_devinfo(std::string_view text);

// Adds netdev/physical_state from `rdma -j link` and active_mtu/max_mtu from ibv_devinfo to
// the sysfs category. Ports the sysfs tree does not know are not invented.
void merge_rdma_link(nlohmann::json& category, const nlohmann::json& links);
void merge_ibv_devinfo(nlohmann::json& category, const nlohmann::json& devinfo);

}  // namespace fabgate::hostfacts
