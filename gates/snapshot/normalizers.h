#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/result.h"
#include "gates/snapshot/route_output.h"

namespace fabgate::snapshot {

// A normalizer turns one command's output into part of the snapshot model
// (docs/snapshot-format.md). `target` is "identity" or the fact category it fills; a collector
// profile may only use a normalizer under the source of that category. Normalizers throw
// nothing: malformed output is an error string that makes the source no-evidence.
struct Normalizer {
  std::string_view name;    // as written in collector profiles: "ip-link"
  std::string_view target;  // "identity" or a category: "interfaces", "bgp", "rdma", "gpu", ...
  Expected<Ok, std::string> (*parse)(std::string_view output, nlohmann::json& into);
  // For a route table (target "routes"): the same reading straight into the compact table of its
  // family, which a collector keeps instead of `parse`'s JSON list (route_output.h).
  Expected<Ok, std::string> (*read_routes)(const std::string& output,
                                           RouteTables& into) = nullptr;
};

const Normalizer* find_normalizer(std::string_view name);
std::vector<std::string> normalizer_names();

// Runs `normalizer` on `output`, merging into `into`; a JSON error becomes an error string.
Expected<Ok, std::string> normalize(const Normalizer& normalizer, std::string_view output,
                                    nlohmann::json& into);

// The individual normalizers, exposed for tests. Linux (iproute2, ethtool, /etc/os-release):
Expected<Ok, std::string> parse_hostname(std::string_view output, nlohmann::json& identity);
Expected<Ok, std::string> parse_os_release(std::string_view output, nlohmann::json& identity);
Expected<Ok, std::string> parse_kernel_release(std::string_view output, nlohmann::json& identity);
Expected<Ok, std::string> parse_ethtool_drivers(std::string_view output, nlohmann::json& identity);
// `serial VALUE` (the DMI product serial, possibly empty) and `iface IFINDEX NAME MAC
// ADDR_ASSIGN_TYPE` lines: identity.serial and identity.system_mac (the permanent address of
// the Ethernet interface with the lowest ifindex, else that interface's address), each with
// `<field>_source`, or `<field>_unavailable` saying why it is absent.
Expected<Ok, std::string> parse_system_identity(std::string_view output, nlohmann::json& identity);
Expected<Ok, std::string> parse_ip_link(std::string_view output, nlohmann::json& interfaces);
Expected<Ok, std::string> parse_ip_addr(std::string_view output, nlohmann::json& interfaces);
Expected<Ok, std::string> parse_ip_route_v4(std::string_view output, nlohmann::json& routes);
Expected<Ok, std::string> parse_ip_route_v6(std::string_view output, nlohmann::json& routes);
Expected<Ok, std::string> read_ip_route_v4(const std::string& output, RouteTables& tables);
Expected<Ok, std::string> read_ip_route_v6(const std::string& output, RouteTables& tables);
// nftables (`nft -j list ruleset`, iptables-nft's rules included): tables, chains with their
// rules as canonical texts, sets; rule handles and counters apart (docs/snapshot-format.md).
Expected<Ok, std::string> parse_nft_ruleset(std::string_view output, nlohmann::json& packet_filter);
// The kernel's ECMP hash: net.ipv4.fib_multipath_hash_policy (required), IPv6's and the
// _fields settings where the kernel has them, as `grep -H . /proc/sys/...` or `sysctl` prints them.
Expected<Ok, std::string> parse_multipath_hash(std::string_view output, nlohmann::json& multipath);
// /proc/net/snmp: the receive errors of the IP, ICMP and UDP layers.
Expected<Ok, std::string> parse_proc_net_snmp(std::string_view output, nlohmann::json& ip_stack);
// FRR (vtysh):
Expected<Ok, std::string> parse_frr_version(std::string_view output, nlohmann::json& identity);
Expected<Ok, std::string> parse_bgp_summary(std::string_view output, nlohmann::json& bgp);
Expected<Ok, std::string> parse_bfd_peers(std::string_view output, nlohmann::json& bfd);
Expected<Ok, std::string> parse_evpn_vni(std::string_view output, nlohmann::json& evpn);
Expected<Ok, std::string> parse_bfd_counters(std::string_view output, nlohmann::json& bfd);
Expected<Ok, std::string> parse_evpn_vni_detail(std::string_view output, nlohmann::json& evpn);
Expected<Ok, std::string> parse_evpn_mac(std::string_view output, nlohmann::json& evpn);
Expected<Ok, std::string> parse_bgp_evpn_summary(std::string_view output, nlohmann::json& evpn);
Expected<Ok, std::string> parse_vxlan_links(std::string_view output, nlohmann::json& evpn);
// LLDP (lldpd's `lldpcli -f json`): `show interfaces` lists every port the agent runs on (an
// empty neighbour list each), `show neighbors details` adds what is heard there.
Expected<Ok, std::string> parse_lldp_interfaces(std::string_view output, nlohmann::json& lldp);
Expected<Ok, std::string> parse_lldp_neighbors(std::string_view output, nlohmann::json& lldp);
// Any `show running-config`: the text as it is ({"format": "text", "text": ...}), for the
// configuration diffs of report.md and review.md. Empty output is an error.
Expected<Ok, std::string> parse_running_config(std::string_view output, nlohmann::json& config);
// RoCE/GPU hosts (fabgate_hostfacts parsers; layout in docs/rdma.md):
Expected<Ok, std::string> parse_rdma_sysfs(std::string_view output, nlohmann::json& rdma);
Expected<Ok, std::string> parse_rdma_link(std::string_view output, nlohmann::json& rdma);
Expected<Ok, std::string> parse_ibv_devinfo(std::string_view output, nlohmann::json& rdma);
Expected<Ok, std::string> parse_ethtool_stats(std::string_view output, nlohmann::json& congestion);
Expected<Ok, std::string> parse_nvidia_smi(std::string_view output, nlohmann::json& gpu);
Expected<Ok, std::string> parse_nvidia_smi_driver(std::string_view output,
                                                  nlohmann::json& identity);
Expected<Ok, std::string> parse_xid(std::string_view output, nlohmann::json& xid);

}  // namespace fabgate::snapshot
