#include "gates/snapshot/snapshot.h"

#include <map>

#include "adapters/core/time.h"
#include "adapters/ssh/fan_out.h"

namespace fabgate::snapshot {

namespace {

DeviceSnapshot collection_failed(const std::string& device, const CollectorProfile& profile,
                                 const std::string& reason) {
  DeviceSnapshot snapshot;
  snapshot.device = device;
  nlohmann::json sources = nlohmann::json::object();
  for (const auto& source : profile.sources) {
    if (sources.contains(source.category)) continue;
    sources[source.category] = {
        {"status", "no-evidence"}, {"reason", reason}, {"commands", nlohmann::json::array()}};
    snapshot.missing.push_back({source.category, reason});
  }
  if (snapshot.missing.empty()) snapshot.missing.push_back({"snapshot", reason});
  snapshot.document = {{"identity", nlohmann::json::object()}, {"sources", std::move(sources)}};
  return snapshot;
}

}  // namespace

bool Snapshot::complete() const {
  for (const auto& device : devices) {
    if (!device.missing.empty()) return false;
  }
  return true;
}

Snapshot take_snapshot(const std::vector<SnapshotTarget>& targets, ssh::ConnectionCache& cache,
                       int parallelism, const std::string& intent_commit, GnmiFetcher* gnmi,
                       SessionsAfter after, ProgressSink* progress, RouteLists routes) {
  Snapshot snapshot;
  const TimePoint taken_at = now_utc();
  snapshot.devices.resize(targets.size());
  ProgressCounter devices_done(progress, targets.size(), "devices");
  auto failed = ssh::for_each_bounded(targets.size(), parallelism, [&](std::size_t index) {
    snapshot.devices[index] =
        collect_device(targets[index].device, *targets[index].profile, cache, gnmi, routes);
    if (after == SessionsAfter::close)
      cache.close(targets[index].device.name, ssh::CredentialRole::read);
    devices_done.one_done();
  });
  // A device whose collection threw has no evidence at all (every source of its profile), and
  // the other devices keep theirs.
  for (const auto& failure : failed)
    snapshot.devices[failure.index] =
        collection_failed(targets[failure.index].device.name, *targets[failure.index].profile,
                          "internal error while collecting: " + failure.what);
  nlohmann::json devices = nlohmann::json::object();
  for (auto& device : snapshot.devices) devices[device.device] = std::move(device.document);
  snapshot.document = {{"format", "fabgate.snapshot/1"},
                       {"taken_at", format_utc(taken_at)},
                       {"intent_commit", intent_commit},
                       {"devices", std::move(devices)}};
  return snapshot;
}

namespace {

// `text` (a value dumped with indent 2 at the top) as it reads `depth` levels down.
std::string indented(const std::string& text, std::size_t depth) {
  const std::string pad(2 * depth, ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

// A device's document with its route tables: the document's members, then `routes`.
bool write_device(const nlohmann::json& document, const RouteTables& tables,
                  const Redactor& redactor, const std::function<bool(std::string_view)>& write) {
  std::string text = indented(redactor.dump(document, 2), 2);
  if (tables.empty()) return write(text);
  // The dump ends with the object's closing brace; `routes` goes before it.
  const auto close = text.rfind('}');
  const bool empty = text.find_first_not_of("{} \n") == std::string::npos;
  text.resize(close);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  text += empty ? "\n      \"routes\": {" : ",\n      \"routes\": {";
  if (!write(text)) return false;
  bool first = true;
  auto redact = [&redactor](const std::string& line) { return redactor.redact(line); };
  for (const auto& [family, table] : tables) {
    if (!write(std::string(first ? "\n" : ",\n") + "        \"" + family + "\": ")) return false;
    first = false;
    if (!write_route_list(table, "          ", write, redact)) return false;
  }
  return write("\n      }\n    }");
}

}  // namespace

bool write_snapshot(const Snapshot& snapshot, const Redactor& redactor,
                    const std::function<bool(std::string_view)>& write) {
  std::map<std::string, const RouteTables*> tables;
  for (const auto& device : snapshot.devices)
    if (!device.route_tables.empty()) tables[device.device] = &device.route_tables;
  return write_snapshot_document(snapshot.document, tables, redactor, write);
}

bool write_snapshot_document(const nlohmann::json& document,
                             const std::map<std::string, const RouteTables*>& tables,
                             const Redactor& redactor,
                             const std::function<bool(std::string_view)>& write) {
  if (!write("{")) return false;
  bool first = true;
  for (const auto& [key, value] : document.items()) {
    const std::string name = redactor.dump(nlohmann::json(key));
    if (!write(std::string(first ? "\n  " : ",\n  ") + name + ": ")) return false;
    first = false;
    if (key != "devices" || !value.is_object()) {
      if (!write(indented(redactor.dump(value, 2), 1))) return false;
      continue;
    }
    if (value.empty()) {
      if (!write("{}")) return false;
      continue;
    }
    if (!write("{")) return false;
    bool first_device = true;
    for (const auto& [device, tree] : value.items()) {
      if (!write(std::string(first_device ? "\n    " : ",\n    ") +
                 redactor.dump(nlohmann::json(device)) + ": "))
        return false;
      first_device = false;
      auto found = tables.find(device);
      static const RouteTables kNone;
      if (!write_device(tree, found == tables.end() || !found->second ? kNone : *found->second,
                        redactor, write))
        return false;
    }
    if (!write("\n  }")) return false;
  }
  return write(first ? "}" : "\n}");
}

}  // namespace fabgate::snapshot
