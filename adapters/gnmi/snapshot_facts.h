#pragma once

// Turns a Get (or Subscribe ONCE) of OpenConfig paths into the fact categories of
// docs/snapshot-format.md, so that a collector can read a device over gNMI instead of SSH and
// feed the same snapshot model.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/gnmi/client.h"

namespace fabgate::gnmi {

// The paths a gNMI collector asks for, one per category.
inline constexpr const char* kSystemStatePath = "/system/state";
inline constexpr const char* kInterfacesPath = "/interfaces/interface[name=*]/state";
inline constexpr const char* kBgpNeighborsPath =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=*]";
// The default instance's AFT: ipv4-unicast and ipv6-unicast entries, next-hop-groups and
// next hops in one Get.
inline constexpr const char* kAftPath = "/network-instances/network-instance[name=default]/afts";
// kAftPath under its earlier name, from when only ipv4-unicast was read.
inline constexpr const char* kIpv4AftPath = kAftPath;

// A category is set only when some update addressed it; a category that was asked for and is
// missing must be recorded as no-evidence by the caller, never as an empty healthy value.
struct SnapshotFacts {
  // hostname, os, kernel, frr_version (those the target reported).
  std::optional<nlohmann::json> identity;
  // { "eth1": { "oper", "admin", "mtu", "counters": {...} } }
  std::optional<nlohmann::json> interfaces;
  // { "peers": { "10.0.1.0": { "state", "remote_as", "prefixes_received", "uptime_ms" } } }
  std::optional<nlohmann::json> bgp;
  // { "neighbors": { "eth1": [ { "system_name", "port_id", "chassis_id" } ] } }
  std::optional<nlohmann::json> lldp;
  // { "ipv4": [ { "prefix", "protocol", "nexthops": [...] } ], "ipv6": [ ... ] } from the AFT
  // (no metric); a family is present only when the reply has its list
  std::optional<nlohmann::json> routes;
};

// The route protocol the snapshot writes for an AFT entry's origin-protocol leaf, as the SSH
// route collector words it: "openconfig-policy-types:BGP" is "bgp", DIRECTLY_CONNECTED "kernel".
std::string aft_route_protocol(const std::string& origin_protocol);

// Fails (the caller's no-evidence) when a value is not JSON or a leaf has the wrong type.
// `now` turns last-established timestamps into uptimes.
Expected<SnapshotFacts, std::string> snapshot_facts(
    const std::vector<GnmiNotification>& notifications, TimePoint now);

// The configuration a Get of type CONFIG returned, merged into one tree (member names without
// module prefixes) and written as indented JSON with sorted keys, so two captures diff line by
// line: {"format": "openconfig-json", "text": ...}. Fails when the reply holds no update.
Expected<nlohmann::json, std::string> config_facts(
    const std::vector<GnmiNotification>& notifications);

}  // namespace fabgate::gnmi
