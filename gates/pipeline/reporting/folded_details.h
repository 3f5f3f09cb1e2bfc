#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fabgate::pipeline {

// Detail lines of a gate with one cause reported once. A line "SUBJECT: CAUSE" whose SUBJECT is
// one word (a device name) and whose CAUSE other subjects share is printed once for the first
// of them, with a count and the next few names:
//
//   leaf1: bgp: ssh: key file /keys/ro missing (same on 51 more devices: leaf2, leaf3, leaf4, …)
//
// and causes that differ only in their first segment (the snapshot category) on the same
// devices are joined: "leaf1: bgp, interfaces: ssh: key file /keys/ro missing (...)". Lines
// that fold with nothing come back unchanged, in their order; a folded line stands where its
// first occurrence stood. For people reading a terminal: the evidence keeps every line.
std::vector<std::string> fold_repeated_details(const std::vector<std::string>& details,
                                               std::size_t names_shown = 3);

}  // namespace fabgate::pipeline
