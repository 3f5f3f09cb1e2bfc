#pragma once

// What a twin of the fabric around one change is made of (docs/twin.md, "The model"): which
// devices, their interfaces, the links between them and the configuration each one runs, all
// read from a pre snapshot. Pure logic: building it is twin_fabric.h's job.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/intent/model.h"
#include "gates/pipeline/families/snapshots.h"

namespace fabgate::pipeline::twin {

// How a node is emulated: FRR's daemons with the device's running configuration, or a Linux
// host (addresses and its static routes, no routing daemon).
enum class Emulator { frr, linux_host };

struct TwinInterface {
  enum class Kind { veth, bridge, vxlan, dummy };
  std::string name;
  Kind kind = Kind::dummy;
  int mtu = 1500;
  bool admin_up = true;
  std::vector<std::string> addresses;  // "10.0.1.1/31"
  std::string master;                  // the bridge it is a port of; empty: none
  // vxlan: the VNI, the local VTEP address and UDP port, learning on or off.
  std::int64_t vni = 0;
  std::string vxlan_local;
  int vxlan_port = 4789;
  bool vxlan_learning = false;
};

struct TwinNode {
  std::string name;  // the inventory name
  std::string platform;
  Emulator emulator = Emulator::linux_host;
  std::string hostname;
  std::string frr_config;                  // frr: the captured running configuration
  std::vector<std::string> loopback_addresses;
  std::vector<TwinInterface> interfaces;   // every interface but lo, masters before their ports
  std::vector<std::string> static_routes;  // linux_host: "default via 10.1.1.1"
  std::optional<int> ipv4_hash_policy;     // net.ipv4.fib_multipath_hash_policy
  // The captured nftables ruleset (category packet_filter) as `nft -f` lines: its tables, sets
  // and chains, then its rules, each given to nft on its own, so one the twin's nft refuses is
  // left out and named rather than losing the rest.
  std::vector<std::string> nft_objects;
  std::vector<std::string> nft_rules;
};

// One veth pair: a's `interface_a` is b's `interface_b`.
struct TwinLink {
  std::string node_a, interface_a, node_b, interface_b;
  int mtu = 1500;
};

struct TwinPlan {
  std::vector<TwinNode> nodes;
  std::vector<TwinLink> links;
  // What the twin does not reproduce (docs/twin.md, "Fidelity"), one line each: kept in the
  // report, never a reason to pass or to refuse by itself.
  std::vector<std::string> fidelity_gaps;
  // Why no twin can be built at all (a platform without emulator, a device whose interfaces
  // or configuration were not captured): the twin gate is then no-evidence with these reasons.
  std::vector<std::string> cannot_build;

  const TwinNode* find(const std::string& name) const;
};

struct PlanRequest {
  const intent::Inventory& inventory;
  const intent::Change& change;
  const HeldSnapshot& pre;
  int radius = 1;  // LLDP hops out from the targets
};

// The devices in the twin: the change's targets and every device within `radius` hops of them,
// and every host its probes use (probe hosts, the owners of their targets, the continuous
// probe's) with every device within `radius` + 1 hops of those hosts (their attachment switches
// and the switches beyond, the paths around the target). Hops are LLDP neighbours, and where
// LLDP is silent, interfaces in one /30 or /31, and hosts in a switch bridge's subnet. Sorted.
std::vector<std::string> twin_scope(const PlanRequest& request);

TwinPlan plan_twin(const PlanRequest& request);

// A Linux interface name the twin will create: 1-15 characters of [A-Za-z0-9_.@+-], not "." or
// "..". Names come from devices (foreign data) and end up in `ip` arguments.
bool valid_interface_name(const std::string& name);

nlohmann::json to_json(const TwinPlan& plan);

}  // namespace fabgate::pipeline::twin
