#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/gnmi/target/node.h"

namespace fabgate::gnmi::target {

struct LinuxNodeOptions {
  std::string hostname;                        // empty: gethostname()
  std::vector<std::string> vtysh = {"vtysh"};  // argv prefix; "-c CMD" is appended
  std::string ip = "ip";                       // iproute2, for Set and routes
  std::string sysfs_net =
      "/sys/class/net";  // the namespace's interfaces (ip netns exec remounts /sys)
  // The LLDP agent (lldpd) through its control socket; empty: no agent, /lldp is not served.
  std::string lldp_socket;
  std::string lldpcli = "lldpcli";
  // FRR's pid files (zebra.pid, bgpd.pid, ...); with `vtysh -N NAME`, NAME's folder under it.
  // What proves a remembered FRR version still true (see software_version).
  std::string frr_run_dir = "/var/run/frr";
  Duration command_timeout{5'000};
};

// The node as Linux and FRR see it: interface state from sysfs, changes with `ip link set`,
// BGP from `vtysh -c 'show bgp neighbors json'`, LLDP from lldpd's `lldpcli -f json`.
class LinuxNode final : public Node {
 public:
  explicit LinuxNode(LinuxNodeOptions options) : options_(std::move(options)) {}

  std::string hostname() override;
  NodeResult<std::string> software_version() override;
  NodeResult<std::vector<InterfaceState>> interfaces() override;
  NodeResult<InterfaceState> interface(const std::string& name) override;
  NodeResult<std::vector<NicInfo>> nics() override;
  NodeResult<std::vector<BgpNeighborState>> bgp_neighbors() override;
  NodeResult<std::vector<Ipv4Route>> ipv4_routes() override;
  NodeResult<std::vector<Ipv6Route>> ipv6_routes() override;
  NodeResult<std::vector<LldpInterface>> lldp_interfaces() override;
  NodeResult<Ok> set_mtu(const std::string& interface, int mtu) override;
  NodeResult<Ok> set_enabled(const std::string& interface, bool enabled) override;

 private:
  // name -> addresses, from `ip -j addr show`.
  NodeResult<std::map<std::string, std::vector<InterfaceAddress>>> addresses();
  // `lldpcli -u SOCKET -f json <words>`, parsed; unavailable when it fails.
  NodeResult<nlohmann::json> lldpcli(const std::vector<std::string>& words);
  NodeResult<Ok> ip_link_set(const std::string& interface, std::vector<std::string> what);
  // What FRR's `show version` answer depends on, read without asking FRR: the vtysh program
  // file (device, inode, size, change times) and every daemon FRR's pid files name with its
  // start time. nullopt when any of it cannot be read: then nothing is remembered.
  std::optional<std::string> frr_fingerprint() const;
  LinuxNodeOptions options_;
  // FRR's version as vtysh last answered it, and the fingerprint around that answer.
  std::mutex frr_version_mutex_;
  std::string frr_version_;
  std::string frr_version_fingerprint_;
};

}  // namespace fabgate::gnmi::target
