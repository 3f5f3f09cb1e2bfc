#include "gates/snapshot/normalizers.h"

#include <array>

namespace fabgate::snapshot {

namespace {

constexpr std::array<Normalizer, 31> kNormalizers = {{
    {"hostname", "identity", parse_hostname},
    {"os-release", "identity", parse_os_release},
    {"kernel-release", "identity", parse_kernel_release},
    {"ethtool-drivers", "identity", parse_ethtool_drivers},
    {"system-identity", "identity", parse_system_identity},
    {"frr-version", "identity", parse_frr_version},
    {"nvidia-smi-driver", "identity", parse_nvidia_smi_driver},
    {"ip-link", "interfaces", parse_ip_link},
    {"ip-addr", "interfaces", parse_ip_addr},
    {"ip-route-v4", "routes", parse_ip_route_v4, read_ip_route_v4},
    {"ip-route-v6", "routes", parse_ip_route_v6, read_ip_route_v6},
    {"nft-ruleset", "packet_filter", parse_nft_ruleset},
    {"multipath-hash", "multipath", parse_multipath_hash},
    {"proc-net-snmp", "ip_stack", parse_proc_net_snmp},
    {"bgp-summary", "bgp", parse_bgp_summary},
    {"running-config", "config", parse_running_config},
    {"bfd-peers", "bfd", parse_bfd_peers},
    {"bfd-counters", "bfd", parse_bfd_counters},
    {"evpn-vni", "evpn", parse_evpn_vni},
    {"evpn-vni-detail", "evpn", parse_evpn_vni_detail},
    {"evpn-mac", "evpn", parse_evpn_mac},
    {"bgp-evpn-summary", "evpn", parse_bgp_evpn_summary},
    {"vxlan-links", "evpn", parse_vxlan_links},
    {"lldp-interfaces", "lldp", parse_lldp_interfaces},
    {"lldp-neighbors", "lldp", parse_lldp_neighbors},
    {"rdma-sysfs", "rdma", parse_rdma_sysfs},
    {"rdma-link", "rdma", parse_rdma_link},
    {"ibv-devinfo", "rdma", parse_ibv_devinfo},
    {"ethtool-stats", "congestion", parse_ethtool_stats},
    {"nvidia-smi", "gpu", parse_nvidia_smi},
    {"xid", "xid", parse_xid},
}};

}  // namespace

const Normalizer* find_normalizer(std::string_view name) {
  for (const auto& normalizer : kNormalizers) {
    if (normalizer.name == name) return &normalizer;
  }
  return nullptr;
}

std::vector<std::string> normalizer_names() {
  std::vector<std::string> names;
  for (const auto& normalizer : kNormalizers) names.emplace_back(normalizer.name);
  return names;
}

Expected<Ok, std::string> normalize(const Normalizer& normalizer, std::string_view output,
                                    nlohmann::json& into) {
  try {
    return normalizer.parse(output, into);
  } catch (const nlohmann::json::exception& e) {
    return std::string("unexpected JSON shape: ") + e.what();
  }
}

}  // namespace fabgate::snapshot
