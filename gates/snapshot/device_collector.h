#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "adapters/ssh/connection_cache.h"
#include "gates/snapshot/collector_profile.h"
#include "gates/snapshot/command_record.h"
#include "gates/snapshot/gnmi_source.h"
#include "gates/snapshot/route_output.h"

namespace fabgate::snapshot {

// One source that yielded no evidence, and why ("vtysh -c '...': timed out after 10 s").
struct MissingSource {
  std::string category;
  std::string reason;
};

// What collecting one device produced.
struct DeviceSnapshot {
  std::string device;
  // The SSH session opened (when a source needs it) and no gNMI Get found nothing listening.
  bool reachable = false;
  nlohmann::json document;  // identity, sources and the fact categories that were collected
  std::vector<std::string> collected;       // categories with status ok
  std::vector<MissingSource> missing;       // categories with status no-evidence
  std::vector<CommandRecord> records;       // every command, in the order it was (to be) sent
  std::vector<GnmiGetRecord> gnmi_records;  // every gNMI Get, in profile order
  // The `routes` category read into compact tables (ip -j route), when kept apart from
  // `document` (RouteLists::apart); empty otherwise.
  RouteTables route_tables;
};

// Where a device's route tables go: into `document` as the snapshot's lists, or kept apart as
// compact tables, from which the lists are written (snapshot.h write_snapshot): a million routes
// cost the table's 28 bytes each instead of a JSON tree's ~700. `apart` keeps no copy of a gNMI
// routes Get's reply (`fabgate snapshot` writes no commands.jsonl); `apart_keeping_replies` does,
// for the evidence of a gated run.
enum class RouteLists { in_document, apart, apart_keeping_replies };

// Runs `profile` on `device` with its read login through `cache`: every SSH command in one
// framed exec (RemoteShell::run_batch) or, with `ssh_commands: channel-each`, at once on one
// channel each of the device's session (RemoteShell::run_each); with `vtysh_commands:
// together`, its `vtysh -c '…'` commands as one vtysh invocation among them, split back per
// command (vtysh_together.h; a failed invocation falls back to each command as written; that
// invocation's record comes first in `records`); the gNMI sources alongside, and normalizes the
// outputs in profile order. A missing command, a non-zero exit, a
// timeout, truncated or unparsable output makes that source no-evidence and its category
// absent: never an empty healthy value. gNMI sources go through `gnmi` (collect_gnmi_source);
// a profile with gNMI sources only opens no SSH session.
DeviceSnapshot collect_device(const ssh::SshDevice& device, const CollectorProfile& profile,
                              ssh::ConnectionCache& cache, GnmiFetcher* gnmi = nullptr,
                              RouteLists routes = RouteLists::in_document);

}  // namespace fabgate::snapshot
