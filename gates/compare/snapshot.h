#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "gates/compare/route_table.h"

namespace fabgate::compare {

inline constexpr std::string_view kSnapshotFormat = "fabgate.snapshot/1";

// How one fact category was collected (docs/snapshot-format.md, `sources.<category>`).
struct SourceInfo {
  bool ok = true;
  std::string reason;  // why there is no evidence; empty when ok
};

// One device of a snapshot. Everything except the route tables is a small JSON tree; routes
// are compact typed tables because a fabric device carries up to millions of them.
struct DeviceSnapshot {
  nlohmann::json identity = nlohmann::json::object();
  std::map<std::string, SourceInfo> sources;
  nlohmann::json facts = nlohmann::json::object();  // category -> tree, without `routes`
  bool has_routes = false;                          // the `routes` category is present
  std::map<std::string, RouteTable> routes;         // "ipv4" / "ipv6"

  // Whether the category was collected at all (a source entry or facts for it exist).
  bool collects(const std::string& category) const;
  const SourceInfo* source(const std::string& category) const;
};

struct Snapshot {
  std::string file;  // where it was read from, for messages
  TimePoint taken_at;
  std::string intent_commit;
  std::map<std::string, DeviceSnapshot> devices;
};

// Limits on a snapshot file, so that hostile input is refused in bounded time and memory
// (docs/snapshot-format.md "Limits"). Real snapshots are far inside both: a device with 1.2
// million routes is 130 MB, and the deepest path of the format is about ten levels.
inline constexpr std::uintmax_t kMaxSnapshotBytes = 1ull << 30;  // 1 GiB
inline constexpr std::size_t kMaxSnapshotDepth = 64;             // nested objects and arrays

// Parses a snapshot document with simdjson's On-Demand parser. Route lists are read straight
// into RouteTables, their strings taken from the text without copying, never into a JSON tree.
// A malformed document is invalid input naming the file and the byte, line and column
// (`byte 41 (line 3, column 7): ...`) or the element (`devices.leaf1.routes.ipv4[12]: ...`); so
// are strings that are not UTF-8 and nesting deeper than kMaxSnapshotDepth (refused as the
// walk meets it, before any tree that deep exists). `text` is copied once into a padded buffer.
Result<Snapshot> parse_snapshot(std::string_view text, const std::string& file_name);
// Reads and parses a snapshot file, read straight into simdjson's padded buffer (no copy).
// Anything but a regular file (a folder, a FIFO, a device) and files over kMaxSnapshotBytes are
// invalid input naming the path, refused before reading. Peak memory while loading is the file
// plus about 0.8 times its size of parser index (freed on return) plus the route tables.
Result<Snapshot> load_snapshot_file(const std::string& path);
// Loads two snapshots for a comparison (`fabgate diff`, the compare gate's bench). One file at a
// time with one parser, so the peak is one file's buffers plus both tables (docs/benchmarks.md).
struct SnapshotPair {
  Snapshot pre;
  Snapshot post;
};
Result<SnapshotPair> load_snapshot_pair(const std::string& pre_path, const std::string& post_path);

namespace detail {
// What a parser hands over before the format is checked: the document without its route
// lists, and the route tables per device and family. Shared with the reference (nlohmann SAX)
// parser in the tests, so both are judged by the same rules.
struct ParsedDocument {
  nlohmann::json root;
  std::map<std::string, std::map<std::string, RouteTable>> route_tables;
};
Result<Snapshot> assemble_snapshot(ParsedDocument& parsed, const std::string& file_name);
// parse_snapshot, building route tables on a second thread from `threaded_from` bytes on
// (parse_snapshot uses 4 MiB); tests run small documents through both paths.
Result<Snapshot> parse_snapshot_threaded_from(std::string_view text, const std::string& file_name,
                                              std::size_t threaded_from);
}  // namespace detail

// Reads a snapshot file as its parts, the way the parser hands them over: the document with each
// device's `routes` an empty object, and the route tables. Refuses what load_snapshot_file
// refuses while reading (not a file, too large, malformed, too deep, a bad route) but does not
// check the format's fields: for a holder that keeps the tables apart and checks the snapshot
// when it compares (a gated run's recover, reading back its baseline).
Result<detail::ParsedDocument> load_snapshot_parts(const std::string& path);

}  // namespace fabgate::compare
