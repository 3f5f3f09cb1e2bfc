#include "gates/snapshot/gnmi_source.h"

#include <chrono>

#include "adapters/core/text.h"
#include "adapters/gnmi/data_tree.h"
#include "adapters/gnmi/snapshot_facts.h"
#include "gates/snapshot/aft_routes.h"

namespace fabgate::snapshot {

namespace {

using nlohmann::json;

// The member of `facts` that fills `category`; the profile parser allows no other category.
std::optional<json>* category_of(gnmi::SnapshotFacts& facts, const std::string& category) {
  if (category == "identity") return &facts.identity;
  if (category == "interfaces") return &facts.interfaces;
  if (category == "bgp") return &facts.bgp;
  if (category == "lldp") return &facts.lldp;
  if (category == "routes") return &facts.routes;
  return nullptr;
}

// "gnmi: leaf1: Get /a /b: " — how reasons produced here start, matching the adapter's own.
std::string reason_prefix(const std::string& device, const std::vector<std::string>& paths) {
  return "gnmi: " + device + ": Get " + join(paths, " ") + ": ";
}

}  // namespace

std::string_view encoding_name(gnmi::Encoding encoding) {
  return encoding == gnmi::Encoding::json ? "json" : "json_ietf";
}

std::string describe_gnmi_get(const std::vector<std::string>& paths) {
  return "gnmi get " + join(paths, " ");
}

json notifications_json(const std::vector<gnmi::GnmiNotification>& notifications) {
  json out = json::array();
  for (const auto& notification : notifications) {
    json updates = json::array();
    for (const auto& update : notification.updates) {
      // Kept as text when it is not JSON, or nests deeper than the evidence can copy and dump.
      auto value = gnmi::parse_target_value(update.path, update.json);
      updates.push_back({{"path", update.path.to_string()},
                         {"value", value ? std::move(*value) : json(update.json)}});
    }
    json deletes = json::array();
    for (const auto& path : notification.deletes) deletes.push_back(path.to_string());
    out.push_back({{"timestamp_ns", notification.timestamp_ns},
                   {"updates", std::move(updates)},
                   {"deletes", std::move(deletes)}});
  }
  return out;
}

GnmiSourceResult collect_gnmi_source(const std::string& device, const CollectorSource& source,
                                     GnmiFetcher* fetcher, RoutesFrom routes) {
  GnmiSourceResult result;
  GnmiGetRecord& record = result.record;
  record.device = device;
  record.category = source.category;
  record.paths = source.gnmi->paths;
  record.encoding = source.gnmi->encoding;
  record.type = source.gnmi->type;
  record.deadline = source.timeout;
  record.parse = "skipped";
  if (fetcher == nullptr) {
    // Only a caller that wires no gNMI at all gets here; it must not pass as collected.
    record.failure = gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::internal,
                                       "this run has no gNMI client; nothing was sent"};
    result.reason = reason_prefix(device, record.paths) + record.failure->message;
    return result;
  }
  record.sent = true;
  record.started_at = now_utc();
  const auto started = std::chrono::steady_clock::now();
  auto reply =
      fetcher->get_typed(device, record.paths, record.encoding, record.type, source.timeout);
  record.duration =
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - started);
  if (!reply) {
    record.failure = reply.error();
    result.reason = reply.error().message;
    return result;
  }
  // The facts first, then the evidence's copy of the reply: the document the facts were read
  // from is gone by then, so a whole route table is never held as two documents at once.
  if (source.category == "config") {
    auto config = gnmi::config_facts(*reply);
    record.reply = notifications_json(*reply);
    if (!config) {
      record.parse = "error: " + config.error();
      result.reason = reason_prefix(device, record.paths) + config.error();
      return result;
    }
    record.parse = "ok";
    result.facts = std::move(config.value());
    return result;
  }
  // `fabgate snapshot`: a whole AFT straight from the reply's text into tables; any other
  // shape of reply goes through the tree below.
  if (source.category == "routes" && routes != RoutesFrom::tree) {
    if (auto tables = read_aft_routes(*reply)) {
      if (routes == RoutesFrom::tables_keeping_reply) record.reply = notifications_json(*reply);
      if (!*tables) {
        record.parse = "error: " + tables->error();
        result.reason = reason_prefix(device, record.paths) + "unreadable reply: " + tables->error();
        return result;
      }
      record.parse = "ok";
      result.facts = json::object();
      result.route_tables = std::move(tables->value());
      return result;
    }
  }
  auto facts = gnmi::snapshot_facts(*reply, now_utc());
  record.reply = notifications_json(*reply);
  if (!facts) {
    record.parse = "error: " + facts.error();
    result.reason = reason_prefix(device, record.paths) + "unreadable reply: " + facts.error();
    return result;
  }
  std::optional<json>* value = category_of(*facts, source.category);
  if (value == nullptr || !value->has_value()) {
    // An empty reply is not an empty healthy category: the target did not say anything.
    record.parse = "error: no " + source.category + " data in the reply";
    result.reason =
        reason_prefix(device, record.paths) + "the reply has no " + source.category + " data";
    return result;
  }
  record.parse = "ok";
  result.facts = std::move(**value);
  return result;
}

json source_entries(const GnmiGetRecord& record) {
  json entries = json::array();
  for (const auto& path : record.paths) {
    json entry = {{"path", path},
                  {"transport", "gnmi"},
                  {"encoding", std::string(encoding_name(record.encoding))},
                  {"status", record.failure ? std::string(gnmi::to_string(record.failure->kind))
                                            : std::string("ok")}};
    if (record.sent) {
      entry["started_at"] = format_utc(record.started_at);
      entry["duration_ms"] = record.duration.count();
    }
    if (record.failure) entry["failure"] = record.failure->message;
    entry["parse"] = record.parse;
    entries.push_back(std::move(entry));
  }
  return entries;
}

json evidence_entry(const GnmiGetRecord& record) {
  json entry = {{"device", record.device},
                {"role", "read"},
                {"transport", "gnmi"},
                {"rpc", "get"},
                {"category", record.category},
                {"command", describe_gnmi_get(record.paths)},
                {"paths", record.paths},
                {"encoding", std::string(encoding_name(record.encoding))},
                {"type", std::string(gnmi::to_string(record.type))},
                {"sent", record.sent},
                {"deadline_ms", record.deadline.count()}};
  if (record.sent) {
    entry["started_at"] = format_utc(record.started_at);
    entry["duration_ms"] = record.duration.count();
  }
  entry["status"] =
      record.failure ? std::string(gnmi::to_string(record.failure->kind)) : std::string("ok");
  if (record.failure) {
    entry["failure"] = std::string(gnmi::to_string(record.failure->kind));
    entry["message"] = record.failure->message;
  }
  entry["parse"] = record.parse;
  entry["reply"] = record.reply;
  return entry;
}

}  // namespace fabgate::snapshot
