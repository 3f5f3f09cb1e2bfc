#pragma once

#include <string>
#include <string_view>

#include "adapters/core/result.h"
#include "gates/inventory/imported_inventory.h"

namespace fabgate::inventory {

// The hosts of an Ansible inventory: YAML when the file name ends in .yml, .yaml or .json,
// else INI ([group], [group:vars], [group:children], `host key=value ...`, host ranges such
// as leaf[01:04]). A variable of a host comes from the host, else from its groups in the order
// the file lists them, then their parent groups, then `all`.
//
// Platform from fabgate_platform, else ansible_network_os (its last dotted part: frr.frr.frr
// -> frr, arista.eos.eos -> eos, cisco.nxos.nxos -> nxos, junipernetworks.junos.junos ->
// junos, nokia.srlinux.srlinux -> srlinux, dellemc.enterprise_sonic.sonic -> sonic), else
// linux for a host without one. Role from fabgate_role, else the first group that lists the
// host (not all or ungrouped), else its name without trailing digits. Management address from
// ansible_host, else the inventory name; port from ansible_port. Every problem is invalid
// input naming file:line (and column in YAML).
Result<ImportedInventory> import_ansible(std::string_view text, const std::string& file);

}  // namespace fabgate::inventory
