#pragma once

// The OpenConfig view fabgate-gnmid serves, built from the node on each request:
//   /system/state                                  hostname, software-version
//   /interfaces/interface[name=*]/state            admin/oper status, mtu, counters
//   /interfaces/interface[name=*]/config           enabled, mtu (Set changes these)
//   /interfaces/interface[name=*]/subinterfaces    addresses (subinterface 0)
//   /components/component[name=*]/state            NIC driver and firmware versions
//   /network-instances/network-instance[name=default]/protocols/
//     protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=*]/state
//   /network-instances/network-instance[name=default]/afts   ipv4-unicast and ipv6-unicast
//     entries of the kernel's main tables, with their next-hop-groups and next-hops
//   /lldp/interfaces/interface[name=*]             the LLDP agent's ports and the neighbours
//     /neighbors/neighbor[id=*]/state              heard there (lldpd, through lldpcli)
// The BGP subtree exists only while FRR answers, the LLDP one only while an agent is
// configured and answers.

#include <string>

#include <nlohmann/json.hpp>

#include "adapters/gnmi/client.h"
#include "adapters/gnmi/data_tree.h"
#include "adapters/gnmi/path.h"
#include "adapters/gnmi/target/node.h"

namespace fabgate::gnmi::target {

// The parts of the tree that `path` can reach (all of it for the root). Fails with not_found
// when the path's subtree is not served (the BGP subtree without FRR, /lldp without an LLDP
// agent), with the reason; /lldp with an agent that does not answer fails as unavailable.
NodeResult<nlohmann::json> build_tree(Node& node, const GnmiPath& path);

// The part of a whole tree that a Get of `type` returns (see DataType in client.h): CONFIG
// keeps config containers, STATE state containers, OPERATIONAL the leaves of state
// containers that their sibling config container does not have. List keys stay with their
// entries; entries and containers left without data of the type are dropped.
nlohmann::json select_data_type(const nlohmann::json& tree, DataType type);

// The JSON text of a matched node. For JSON_IETF, 64-bit counters and timestamps become
// strings as RFC 7951 requires; JSON keeps them numbers.
std::string encode_value(const TreeMatch& match, bool json_ietf);

}  // namespace fabgate::gnmi::target
