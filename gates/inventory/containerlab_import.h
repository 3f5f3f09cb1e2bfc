#pragma once

#include <string>
#include <string_view>

#include "adapters/core/result.h"
#include "gates/inventory/imported_inventory.h"

namespace fabgate::inventory {

// The devices of a containerlab topology (TOPO.clab.yml): one per node under topology.nodes.
// Platform from the node's kind (topology.defaults and topology.kinds fill in what a node
// leaves out): nokia_srlinux/srl -> srlinux, arista_ceos/ceos -> eos, juniper_* and crpd ->
// junos, cisco_n9kv -> nxos, sonic-vs/sonic-vm -> sonic, linux -> frr when its image is an FRR
// image, else linux. A node label `fabgate-platform` or `fabgate-role` overrides. Role from the
// node's `group`, else its name without trailing digits. Management address from mgmt-ipv4,
// else the container name containerlab gives it (clab-LAB-NODE, or as `prefix` says).
// Nodes that are not devices (bridge, ovs-bridge, host, ext-container) are skipped and listed.
// Every problem is invalid input naming file:line:column.
Result<ImportedInventory> import_containerlab(std::string_view text, const std::string& file);

}  // namespace fabgate::inventory
