#pragma once

// gNMI collector sources: one Get per source, normalized by gnmi::snapshot_facts() into the same
// categories the SSH normalizers fill. gates/snapshot sees gNMI only through GnmiFetcher, so it
// neither links gRPC nor knows about inventory endpoints; the real fetcher lives in
// gates/pipeline (EndpointGnmiFetcher).

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/time.h"
#include "adapters/gnmi/client.h"
#include "gates/snapshot/collector_profile.h"
#include "gates/snapshot/route_output.h"

namespace fabgate::snapshot {

// Sends one gNMI Get to a device's gNMI endpoint. Called from several collector threads at
// once, so implementations must be thread-safe. A failure's message names the device, the Get
// and its paths ("gnmi: leaf1 (10.255.0.21:9339): Get /system/state: timed out after 10s"):
// it becomes the source's no-evidence reason as it is.
class GnmiFetcher {
 public:
  virtual ~GnmiFetcher() = default;
  virtual gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> get(
      const std::string& device, const std::vector<std::string>& paths, gnmi::Encoding encoding,
      Duration deadline) = 0;
  // A Get of one data type (CONFIG for configuration sources). A fetcher that cannot ask for
  // one refuses every type but `all`, so nothing passes for configuration that was not.
  virtual gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> get_typed(
      const std::string& device, const std::vector<std::string>& paths, gnmi::Encoding encoding,
      gnmi::DataType type, Duration deadline) {
    if (type == gnmi::DataType::all) return get(device, paths, encoding, deadline);
    return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                             "gnmi: " + device + ": this run cannot send a Get of type " +
                                 std::string(gnmi::to_string(type))};
  }
};

// Everything known about one Get fabgate meant to send, the gNMI counterpart of CommandRecord:
// the snapshot's sources carry its metadata, commands.jsonl the whole record with the reply.
struct GnmiGetRecord {
  std::string device;
  std::string category;
  std::vector<std::string> paths;
  gnmi::Encoding encoding = gnmi::Encoding::json_ietf;
  gnmi::DataType type = gnmi::DataType::all;
  Duration deadline{0};
  bool sent = false;  // false: this run has no gNMI fetcher, nothing was sent
  TimePoint started_at;
  Duration duration{0};
  std::optional<gnmi::GnmiFailure> failure;
  nlohmann::json reply;  // the notifications as JSON; null unless the Get answered
  std::string parse;     // "ok", "skipped" or "error: ..."
};

// What one gNMI source yielded: the category's value when it is evidence, else the reason.
struct GnmiSourceResult {
  GnmiGetRecord record;
  std::optional<nlohmann::json> facts;
  std::string reason;  // empty when `facts` is set
  // The `routes` category read as compact tables (RoutesFrom::tables); `facts` is then an
  // empty object.
  RouteTables route_tables;
};

// How a `routes` source's reply is read: into the snapshot's JSON lists through the merged
// tree (gnmi::snapshot_facts), its reply kept in the record for commands.jsonl; or, where the
// reply is one update of a whole AFT, straight into compact tables (aft_routes.h), the record's
// `reply` left null (`tables`: the caller writes no commands.jsonl, `fabgate snapshot`) or kept
// (`tables_keeping_reply`: a gated run's evidence).
enum class RoutesFrom { tree, tables, tables_keeping_reply };

// Runs `source` (which must have `gnmi` set) for `device` through `fetcher` (nullptr: a run
// without gNMI, every gNMI source is no-evidence). A failed Get, an unreadable reply or a reply
// without the source's category is no-evidence with a reason naming device, Get and paths.
GnmiSourceResult collect_gnmi_source(const std::string& device, const CollectorSource& source,
                                     GnmiFetcher* fetcher, RoutesFrom routes = RoutesFrom::tree);

// "json_ietf" | "json", as written in profiles.
std::string_view encoding_name(gnmi::Encoding encoding);
// "gnmi get /a /b": what a Get stands for in reports and commands.jsonl.
std::string describe_gnmi_get(const std::vector<std::string>& paths);
// Notifications as JSON: [{timestamp_ns, updates: [{path, value}], deletes: [path]}]; a value
// that is not JSON text is kept as a string.
nlohmann::json notifications_json(const std::vector<gnmi::GnmiNotification>& notifications);

// The metadata kept in a snapshot's sources.<category>.commands[]: one entry per path, each
// with the Get's status, start, duration and parse result.
nlohmann::json source_entries(const GnmiGetRecord& record);
// A commands.jsonl line: the metadata plus device, transport, deadline and the reply.
nlohmann::json evidence_entry(const GnmiGetRecord& record);

}  // namespace fabgate::snapshot
