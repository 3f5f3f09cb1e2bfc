#pragma once

// A network instance's whole AFT, as one gNMI Get answers it, read straight from the reply's
// JSON text into the compact route tables (route_output.h), never into a JSON tree: the tree
// path (gnmi::snapshot_facts) holds a million-route reply as about 2.5 GiB of documents.

#include <optional>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/gnmi/client.h"
#include "gates/snapshot/route_output.h"

namespace fabgate::snapshot {

// Reads the route tables of a reply that is one update of
// /network-instances/network-instance[name=NAME]/afts (module prefixes allowed, the value the
// afts container or wrapped in a module-qualified `afts` member): every ipv4-entry and
// ipv6-entry a route with its prefix, its origin protocol in the SSH collector's words
// (gnmi::aft_route_protocol), no metric, and the addresses (else `dev:INTERFACE`) of its
// next-hop group's next hops; a family only when the reply has its list; VRF NAME unless
// `default`. The same facts as gnmi::snapshot_facts' `routes`, read in batches of about 1 MB.
// nullopt: the reply has another shape (several updates, deletes, another path, no entry
// list), for the tree path to read. An error names the place ("…/ipv4-entry[3]/state/
// next-hop-group: 7 is not in /afts/next-hop-groups").
std::optional<Expected<RouteTables, std::string>> read_aft_routes(
    const std::vector<gnmi::GnmiNotification>& notifications);

}  // namespace fabgate::snapshot
