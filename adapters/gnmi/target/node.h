#pragma once

// What fabgate-gnmid knows about the node it runs on, and the two changes it can make. An
// abstract seam so that the OpenConfig tree and the Set transaction do not care where data
// comes from; the real implementation is LinuxNode (sysfs, iproute2, FRR's vtysh).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"

namespace fabgate::gnmi::target {

struct InterfaceAddress {
  std::string ip;  // "10.0.1.1", "2001:db8::1"
  int prefix_length = 0;
  bool ipv6 = false;
};

struct InterfaceState {
  std::string name;
  int ifindex = 0;
  int mtu = 0;
  bool admin_up = false;    // IFF_UP
  std::string oper_status;  // OpenConfig enum: UP, DOWN, UNKNOWN, DORMANT, ...
  // OpenConfig counter names; carrier-transitions is the kernel's carrier_changes, which
  // counts every carrier change (a flap adds 2), so a flap between two samples still shows.
  std::map<std::string, std::uint64_t> counters;
  std::vector<InterfaceAddress> addresses;  // every address, link-local ones included
};

// What ethtool -i reports for an interface with a driver (served under /components).
struct NicInfo {
  std::string interface;
  std::string driver;
  std::string driver_version;
  std::string firmware;
  std::string bus;
};

struct BgpNeighborState {
  std::string address;
  std::uint64_t peer_as = 0;
  std::uint64_t local_as = 0;
  std::string session_state;  // OpenConfig enum: IDLE ... ESTABLISHED
  std::optional<std::uint64_t> last_established_ns;
  // How many times the session reached ESTABLISHED (FRR's connectionsEstablished): a session
  // that dropped and came back between two readings shows here even when both say ESTABLISHED.
  std::optional<std::uint64_t> established_transitions;
  std::map<std::string, std::uint64_t> prefixes_received;  // afi-safi name -> count
  std::map<std::string, std::uint64_t> prefixes_sent;      // afi-safi name -> count
};

// One unicast route of the main table, as the AFT serves it (ipv4-entry or ipv6-entry).
struct UnicastRoute {
  // "10.0.2.0/24", "2001:db8:2::/64"; the default route is "0.0.0.0/0" or "::/0", a host
  // route has its /32 or /128.
  std::string prefix;
  // OpenConfig origin-protocol identity name (BGP, DIRECTLY_CONNECTED, STATIC, OSPF, ISIS);
  // empty when the kernel's protocol has no OpenConfig counterpart (the leaf is then left out).
  std::string origin_protocol;
  struct NextHop {
    std::string ip;         // empty for a directly connected route
    std::string interface;  // empty when the kernel names none
  };
  std::vector<NextHop> next_hops;
};
using Ipv4Route = UnicastRoute;
using Ipv6Route = UnicastRoute;

// One neighbour the node's LLDP agent heard on a local port. Empty strings are leaves the
// neighbour did not advertise (they are left out of the tree).
struct LldpNeighbor {
  std::string id;  // the agent's index for the neighbour, unique on the port
  std::string system_name;
  std::string system_description;
  std::string chassis_id;
  std::string chassis_id_type;  // openconfig-lldp-types chassis-id-type: MAC_ADDRESS, LOCAL, ...
  std::string port_id;
  std::string port_id_type;  // port-id-type: INTERFACE_NAME, MAC_ADDRESS, LOCAL, ...
  std::string port_description;
  std::string management_address;
};

// A port the LLDP agent runs on, with what it hears there (an empty list: nobody).
struct LldpInterface {
  std::string name;
  std::vector<LldpNeighbor> neighbors;
};

// A failure of the node, as the target reports it to the client.
struct NodeFailure {
  enum class Kind { not_found, rejected, unavailable };
  Kind kind = Kind::unavailable;
  std::string message;
  // The node did not answer in time: says nothing about its state (FRR busy converging is
  // slow, not gone), so a stream stays silent rather than reporting what vanished.
  bool timed_out = false;
};

template <class T>
using NodeResult = Expected<T, NodeFailure>;

class Node {
 public:
  virtual ~Node() = default;
  virtual std::string hostname() = 0;
  // "<OS pretty name>; Linux <release>[; FRRouting <version>]"
  // The OS release and kernel, and FRR's version where FRR is installed; unavailable when FRR
  // is installed but does not answer (never a version with FRR silently left out).
  virtual NodeResult<std::string> software_version() = 0;
  virtual NodeResult<std::vector<InterfaceState>> interfaces() = 0;
  virtual NodeResult<InterfaceState> interface(const std::string& name) = 0;
  // Interfaces with driver information (the loopback has none).
  virtual NodeResult<std::vector<NicInfo>> nics() = 0;
  // unavailable when FRR is not there: the BGP subtree is then not served at all.
  virtual NodeResult<std::vector<BgpNeighborState>> bgp_neighbors() = 0;
  // The IPv4 unicast routes of the main table (`ip -j -4 route show table main`).
  virtual NodeResult<std::vector<Ipv4Route>> ipv4_routes() = 0;
  // The IPv6 unicast routes of the main table (`ip -j -6 route show table main`), without the
  // per-interface link-local and multicast routes.
  virtual NodeResult<std::vector<Ipv6Route>> ipv6_routes() = 0;

  // The LLDP agent's ports and neighbours. not_found when no agent is configured (the /lldp
  // subtree is then not served), unavailable when it is configured but does not answer: never
  // an empty list in either case, which would read as "no neighbours".
  virtual NodeResult<std::vector<LldpInterface>> lldp_interfaces() = 0;
  virtual NodeResult<Ok> set_mtu(const std::string& interface, int mtu) = 0;
  virtual NodeResult<Ok> set_enabled(const std::string& interface, bool enabled) = 0;
};

}  // namespace fabgate::gnmi::target
