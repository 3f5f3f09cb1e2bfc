#pragma once

// Load spread as evidence (docs/probes.md, "Load spread"): how the probes' packets divide over
// the members of each equal-cost (ECMP) group they cross, read from the members' own transmit
// counters around a window in which only fabgate's flows probes send. A fabric can deliver
// every packet while one member carries them all (a weight, a hash that lost its entropy): the
// collective that relied on the spread then runs at half speed with every other gate green.
//
// Everything here reads snapshot documents ({"devices": {NAME: {CATEGORY: ...}}}) that came
// from devices: a member, counter or route of the wrong shape is no evidence for its group,
// never a throw.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/intent/model.h"
#include "gates/pipeline/families/snapshots.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

// The window's probes: the udp flows probes among `probes`, each with at least kSpreadFlows
// flows (source ports), to be run with kSpreadPacketsPerFlow packets a flow. Only udp flows
// probes: each flow is one 5-tuple the fabric hashes, sent at a steady rate; a collective's few
// long TCP connections land where their ports hash and would decide the shares alone, and ICMP
// echoes of one host pair share one hash. 64 flows put a member's share of an even two-way group
// within about 6 points of half, where the default 16 would leave 12; and 1,280 packets a probe
// leave the members' own traffic (BFD, BGP keepalives, LLDP) a few percent.
inline constexpr int kSpreadFlows = 64;
inline constexpr int kSpreadPacketsPerFlow = 20;
std::vector<intent::Probe> spread_window_probes(const std::vector<intent::Probe>& probes);

// The devices whose spread `change` declares it moves (compare.expected {device, path: spread};
// device "*" is every one of `group_devices`): reported there, not judged.
std::set<std::string> declared_spread_devices(const intent::Change& change,
                                              const std::set<std::string>& group_devices);

// One equal-cost group of one device: the interfaces its routes' next hops leave by.
struct EcmpGroup {
  std::string device;
  std::vector<std::string> members;   // interface names, sorted; two or more
  std::vector<std::string> prefixes;  // the routes that use exactly these members
  // "leaf1 to-spine1/to-spine2"
  std::string name() const;
};

struct EcmpGroups {
  std::vector<EcmpGroup> groups;
  // Routes with several next hops whose interfaces could not be told (an IPv6 link-local
  // gateway without its device, a gateway in no connected subnet), one line per device.
  std::vector<std::string> unresolved;
  // Devices whose routes were collected (their groups, none included, are as they stand).
  std::set<std::string> routes_read;
};

// The groups of every device in `snapshot` (routes.ipv4 and routes.ipv6 with two or more next
// hops; a gateway next hop is the interface whose connected subnet holds it). A device's routes
// are read from `routes` where it has tables there (kept apart from the document), else from
// the document's lists.
EcmpGroups ecmp_groups(const nlohmann::json& snapshot, const DeviceRouteTables& routes = {});

// The packets each member of a group sent between two reads of the interface counters.
struct GroupSpread {
  EcmpGroup group;
  std::vector<std::int64_t> packets;  // per member, in group.members order
  std::int64_t total = 0;
  std::string missing;  // not empty: no evidence for this group, and why
  // The member's share of the total, 0..1 (0 when nothing crossed the group).
  double share(std::size_t member) const;
  // "97 % on to-spine1, 3 % on to-spine2"
  std::string shares_text() const;
};

// tx_packets deltas of every group's members between `before` and `after` (snapshot documents
// holding the interfaces category); a device that did not answer, a member without counters,
// or a counter that went backwards (reset) leaves the group missing.
std::vector<GroupSpread> measure_spread(const std::vector<EcmpGroup>& groups,
                                        const nlohmann::json& before, const nlohmann::json& after);

// When a group's spread is judged, and when it fails (docs/probes.md).
struct SpreadLimits {
  // A group that carried fewer packets in a window is not judged: the probes did not cross it
  // (what remains is BFD, BGP and LLDP, a few packets per second per link).
  std::int64_t min_packets = 320;
  // Concentrated: one member carries at least this share now ...
  double concentrated = 0.9;
  // ... of a group no member of which carried more than this before the change.
  double spread_before = 0.8;
  // Moved: a member's share differs from the baseline's by at least this much (with 64 flows
  // per window over two members the difference of two fair samples has a deviation of about
  // 9 points: 35 is four of them).
  double max_shift = 0.35;
};

struct SpreadJudgement {
  // fail: a group concentrated or moved; no_evidence: a group's counters could not be read;
  // pass: at least one group judged and none failed; skipped: no group carried the probes.
  Verdict verdict = Verdict::skipped;
  std::vector<std::string> failures;  // one per failed group, first the worst
  std::vector<std::string> lines;     // one per group, for the record's details
  std::size_t judged = 0;
};

// Judges the acceptance window's spread against the baseline window's, group by group (same
// device, same members). A group on a device in `declared` (compare.expected: {device, path:
// spread}) is reported, not judged. Without a baseline nothing is judged: an unequal spread
// may be the fabric's design (weights), which only the baseline shows.
SpreadJudgement judge_spread(const std::vector<GroupSpread>& baseline,
                             const std::vector<GroupSpread>& acceptance,
                             const std::set<std::string>& declared, const SpreadLimits& limits);

// The window's evidence: every group, its members' packets and shares.
nlohmann::json to_json(const std::vector<GroupSpread>& spreads);

}  // namespace fabgate::pipeline
