#pragma once

// A node whose main IPv4 table is a synthetic one of N routes, everything else read from the
// node it wraps: lets tests and benchmarks ask a real fabgate-gnmid for an AFT the size of a
// real switch's (hundreds of thousands of entries) without installing them in a kernel.
// fabgate-gnmid serves it behind the hidden --debug-synthetic-ipv4-routes flag.

#include <cstddef>
#include <string>
#include <vector>

#include "adapters/gnmi/target/node.h"

namespace fabgate::gnmi::target {

// `count` distinct /24 BGP routes from 16.0.0.0/24 upwards, each over two of four next hops
// (10.255.0.1..4 on eth1..eth4), so the AFT has four next hops and four next-hop groups.
// At most kMaxSyntheticRoutes (the /24s below 224.0.0.0).
inline constexpr std::size_t kMaxSyntheticRoutes = (224 - 16) * 65536;
std::vector<Ipv4Route> synthetic_ipv4_routes(std::size_t count);
// "16.0.0.0/24" for index 0, "16.0.1.0/24" for 1, ...: the prefix synthetic_ipv4_routes()
// gives route `index`, so a reader can check what it received.
std::string synthetic_ipv4_prefix(std::size_t index);

class SyntheticRoutesNode final : public Node {
 public:
  SyntheticRoutesNode(Node& node, std::size_t ipv4_routes) : node_(node), count_(ipv4_routes) {}
  std::string hostname() override { return node_.hostname(); }
  NodeResult<std::string> software_version() override { return node_.software_version(); }
  NodeResult<std::vector<InterfaceState>> interfaces() override { return node_.interfaces(); }
  NodeResult<InterfaceState> interface(const std::string& name) override {
    return node_.interface(name);
  }
  NodeResult<std::vector<NicInfo>> nics() override { return node_.nics(); }
  NodeResult<std::vector<BgpNeighborState>> bgp_neighbors() override {
    return node_.bgp_neighbors();
  }
  NodeResult<std::vector<Ipv4Route>> ipv4_routes() override {
    return synthetic_ipv4_routes(count_);
  }
  // No IPv6 table: the host's own routes would make the AFT depend on the machine.
  NodeResult<std::vector<Ipv6Route>> ipv6_routes() override { return std::vector<Ipv6Route>{}; }
  NodeResult<std::vector<LldpInterface>> lldp_interfaces() override {
    return node_.lldp_interfaces();
  }
  NodeResult<Ok> set_mtu(const std::string& interface, int mtu) override {
    return node_.set_mtu(interface, mtu);
  }
  NodeResult<Ok> set_enabled(const std::string& interface, bool enabled) override {
    return node_.set_enabled(interface, enabled);
  }

 private:
  Node& node_;
  std::size_t count_;
};

}  // namespace fabgate::gnmi::target
