#pragma once

// What a gated run does with the snapshots it keeps (pre, post, restored, the counters re-read
// after a rollback): each is a document plus route tables held apart (snapshots.h), so a device
// with a million routes costs the run its tables, not a JSON tree of them (docs/benchmarks.md,
// "Route tables in a gated run").

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"
#include "gates/compare/snapshot.h"
#include "gates/pipeline/families/snapshots.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::pipeline {

// The recorded form of a taken snapshot (its `missing` lines go to the gate's record).
HeldSnapshot hold(TakenSnapshot&& taken);

// A snapshot file read back (recover's baseline), its route tables apart from the document. A
// file the snapshot reader refuses is read as plain JSON instead, so the comparison names what
// is wrong with it, as for any document; a missing file or one that is not a JSON object gives
// a null document (no baseline).
HeldSnapshot read_baseline(const std::filesystem::path& path);

// The compare engine's snapshot of `document` with `routes` (each table copied: the run keeps
// its own for later rounds and the report). Where a device has route lists in the document
// instead, they are read from there. A document that is not a snapshot, or tables for a device
// the document does not have, are invalid input naming `file`.
Result<compare::Snapshot> comparable_snapshot(const nlohmann::json& document,
                                              const DeviceRouteTables& routes,
                                              const std::string& file);

// Writes the snapshot into the bundle at `relative` as docs/snapshot-format.md text, the route
// lists written from the tables a megabyte at a time, every value redacted.
Status write_snapshot_evidence(EvidenceBundle& evidence, const std::string& relative,
                               const nlohmann::json& document, const DeviceRouteTables& routes);

// Whether `device` of (document, routes) holds `category`: a member of its document, or, for
// `routes`, its tables.
bool holds_category(const nlohmann::json& document, const DeviceRouteTables& routes,
                    const std::string& device, const std::string& category);

// `into` with `device`'s `category` taken from (document, routes): its value (the tables for
// `routes`) where `from_device` (that device's document in `document`) holds it, else removed;
// the source entry is copied when `with_source`.
void replace_category(HeldSnapshot& into, const std::string& device, const std::string& category,
                      const nlohmann::json& document, const DeviceRouteTables& routes,
                      bool with_source);

}  // namespace fabgate::pipeline
