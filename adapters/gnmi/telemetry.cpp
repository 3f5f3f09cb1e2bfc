#include "adapters/gnmi/telemetry.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "adapters/gnmi/data_tree.h"

namespace fabgate::gnmi {

namespace {

using nlohmann::json;

struct InterfaceState {
  std::optional<std::string> oper;
  std::map<std::string, std::uint64_t> counters;
};

struct NeighborState {
  std::optional<std::string> session;
  std::map<std::string, std::uint64_t> received;  // afi-safi name -> prefixes received
};

// What the samples so far say about one device, or what one sample says.
struct DeviceState {
  std::map<std::string, InterfaceState> interfaces;
  std::map<std::string, NeighborState> neighbors;
  std::optional<bool> bgp_served;  // false: the target deleted the BGP neighbours
};

constexpr const char* kCounters[] = {"in-errors", "out-errors", "in-discards", "out-discards"};

std::optional<std::uint64_t> as_count(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  if (value.is_string()) {
    try {
      std::size_t used = 0;
      auto text = value.get<std::string>();
      std::uint64_t parsed = std::stoull(text, &used);
      if (used == text.size()) return parsed;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

// An enum or identity value without its module: "openconfig-bgp-types:IPV4_UNICAST" gives
// "IPV4_UNICAST".
std::string enum_word(const json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  auto colon = text.find(':');
  return colon == std::string::npos ? text : text.substr(colon + 1);
}

std::size_t keyed_element(const GnmiPath& path, const char* name, const char* key) {
  const auto& elements = path.elements;
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (strip_module_prefix(elements[i].name) == name && elements[i].keys.count(key)) return i;
  return elements.size();
}

// The update's value brought up to the level of elements[at]: each element below it wraps
// the value in its name (a keyed one as a one-entry list holding its keys).
std::optional<json> value_at(const GnmiUpdate& update, std::size_t at) {
  json value = json::parse(update.json, nullptr, false);
  if (value.is_discarded()) return std::nullopt;
  value = strip_module_prefixes(value);
  const auto& elements = update.path.elements;
  for (std::size_t i = elements.size(); i-- > at + 1;) {
    std::string name = strip_module_prefix(elements[i].name);
    if (elements[i].keys.empty()) {
      value = json{{name, value}};
      continue;
    }
    if (!value.is_object()) value = json::object();
    for (const auto& [key, key_value] : elements[i].keys) value[key] = key_value;
    value = json{{name, json::array({value})}};
  }
  return value;
}

// Folds an update under interface[name=X]/state (the entry, the state container, a container
// below it or a leaf) into `state`. False: not an interface update.
bool read_interface_update(const GnmiUpdate& update, DeviceState& state) {
  const std::size_t at = keyed_element(update.path, "interface", "name");
  if (at == update.path.elements.size()) return false;
  if (strip_module_prefix(update.path.elements.front().name) != "interfaces") return false;
  auto value = value_at(update, at);
  if (!value || !value->contains("state") || !(*value)["state"].is_object()) return true;
  const json& fields = (*value)["state"];
  InterfaceState& interface = state.interfaces[update.path.elements[at].keys.at("name")];
  if (auto oper = fields.find("oper-status"); oper != fields.end())
    interface.oper = enum_word(*oper);
  if (auto counters = fields.find("counters"); counters != fields.end() && counters->is_object()) {
    for (const char* counter : kCounters) {
      if (auto found = counters->find(counter); found != counters->end()) {
        if (auto count = as_count(*found)) interface.counters[counter] = *count;
      }
    }
  }
  return true;
}

bool under_bgp(const GnmiPath& path) {
  return std::any_of(path.elements.begin(), path.elements.end(), [](const PathElement& element) {
    auto name = strip_module_prefix(element.name);
    return name == "bgp" || name == "neighbors" || name == "neighbor";
  });
}

// Folds an update under neighbor[neighbor-address=A] (the entry, its state or afi-safis, or a
// leaf below them) into `state`. False: not a BGP neighbour update.
bool read_bgp_update(const GnmiUpdate& update, DeviceState& state) {
  if (!under_bgp(update.path)) return false;
  const std::size_t at = keyed_element(update.path, "neighbor", "neighbor-address");
  if (at == update.path.elements.size()) return true;  // above the neighbours: nothing to read
  state.bgp_served = true;
  auto value = value_at(update, at);
  if (!value || !value->is_object()) return true;
  NeighborState& neighbor = state.neighbors[update.path.elements[at].keys.at("neighbor-address")];
  if (auto fields = value->find("state"); fields != value->end() && fields->is_object())
    if (auto session = fields->find("session-state"); session != fields->end())
      neighbor.session = enum_word(*session);
  auto families = value->find("afi-safis");
  if (families == value->end() || !families->is_object() || !families->contains("afi-safi") ||
      !(*families)["afi-safi"].is_array())
    return true;
  for (const auto& family : (*families)["afi-safi"]) {
    if (!family.is_object() || !family.contains("afi-safi-name")) continue;
    const json* received = &family;
    for (const char* step : {"state", "prefixes", "received"}) {
      if (!received->is_object() || !received->contains(step)) {
        received = nullptr;
        break;
      }
      received = &received->at(step);
    }
    if (received == nullptr) continue;
    if (auto count = as_count(*received))
      neighbor.received[enum_word(family["afi-safi-name"])] = *count;
  }
  return true;
}

// What one notification samples and says.
struct Sample {
  DeviceState said;
  bool interfaces = false, bgp = false;
};

Sample read_notification(const GnmiNotification& notification) {
  Sample sample;
  for (const auto& update : notification.updates) {
    if (read_interface_update(update, sample.said))
      sample.interfaces = true;
    else if (read_bgp_update(update, sample.said))
      sample.bgp = true;
  }
  for (const auto& deleted : notification.deletes) {
    if (under_bgp(deleted)) {
      // The target says the neighbours are not there now (fabgate-gnmid: FRR not answering).
      sample.bgp = true;
      sample.said.bgp_served = false;
    } else if (!deleted.elements.empty() &&
               strip_module_prefix(deleted.elements.front().name) == "interfaces") {
      sample.interfaces = true;
    }
  }
  return sample;
}

// Compares what a sample says with what was known, appending the differences as events when
// `events` is given, then folds the sample into what is known.
void fold(const Sample& sample, std::int64_t at, DeviceState& known,
          std::vector<TelemetryEvent>* events) {
  auto report = [&](TelemetrySource source, const std::string& subject, std::string what) {
    if (events) events->push_back({at, source, subject, std::move(what)});
  };
  for (const auto& [name, state] : sample.said.interfaces) {
    InterfaceState& before = known.interfaces[name];
    if (state.oper && before.oper && *state.oper != *before.oper)
      report(TelemetrySource::interfaces, name,
             "oper-status " + *before.oper + " -> " + *state.oper);
    for (const auto& [counter, value] : state.counters) {
      auto old = before.counters.find(counter);
      if (old != before.counters.end() && value > old->second)
        report(TelemetrySource::interfaces, name,
               counter + " +" + std::to_string(value - old->second));
    }
    if (state.oper) before.oper = state.oper;
    for (const auto& [counter, value] : state.counters) before.counters[counter] = value;
  }
  if (sample.said.bgp_served && known.bgp_served && *sample.said.bgp_served != *known.bgp_served)
    report(TelemetrySource::bgp_neighbors, "neighbours",
           *sample.said.bgp_served ? "served again" : "no longer served (the target deleted them)");
  if (sample.said.bgp_served) known.bgp_served = sample.said.bgp_served;
  for (const auto& [address, state] : sample.said.neighbors) {
    NeighborState& before = known.neighbors[address];
    if (state.session && before.session && *state.session != *before.session)
      report(TelemetrySource::bgp_neighbors, address,
             "session-state " + *before.session + " -> " + *state.session);
    for (const auto& [family, count] : state.received) {
      auto old = before.received.find(family);
      if (old != before.received.end() && count != old->second)
        report(TelemetrySource::bgp_neighbors, address,
               "received-prefixes " + family + " " + std::to_string(old->second) + " -> " +
                   std::to_string(count));
    }
    if (state.session) before.session = state.session;
    for (const auto& [family, count] : state.received) before.received[family] = count;
  }
}

std::string seconds(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

std::vector<const GnmiNotification*> in_time_order(const std::vector<GnmiNotification>& all) {
  std::vector<const GnmiNotification*> ordered;
  for (const auto& notification : all) ordered.push_back(&notification);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto* a, const auto* b) { return a->timestamp_ns < b->timestamp_ns; });
  return ordered;
}

}  // namespace

std::string_view to_string(TelemetrySource source) {
  return source == TelemetrySource::bgp_neighbors ? "bgp" : "interface";
}

TelemetryTimeline device_timeline(const std::vector<GnmiNotification>& before,
                                  const std::vector<GnmiNotification>& window,
                                  const TimelineWindow& bounds) {
  TelemetryTimeline timeline;
  const std::int64_t gap_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(bounds.max_gap).count();
  DeviceState known;
  for (const GnmiNotification* notification : in_time_order(before))
    fold(read_notification(*notification), notification->timestamp_ns, known, nullptr);

  struct Coverage {
    TelemetrySource source;
    std::int64_t last_seen;
    bool sampled = false;
  };
  std::vector<Coverage> coverage;
  for (auto source : bounds.expected) coverage.push_back({source, bounds.start_ns});
  auto silence = [&](const Coverage& covered, std::int64_t from, std::int64_t to, const char* why) {
    timeline.gaps.push_back("no " + std::string(to_string(covered.source)) + " sample from " +
                            std::to_string(from) + " to " + std::to_string(to) + " ns (" +
                            seconds(to - from) + why + ")");
  };
  for (const GnmiNotification* notification : in_time_order(window)) {
    const std::int64_t at = notification->timestamp_ns;
    Sample sample = read_notification(*notification);
    for (auto& covered : coverage) {
      bool sampled = covered.source == TelemetrySource::interfaces ? sample.interfaces : sample.bgp;
      if (!sampled) continue;
      if (at - covered.last_seen > gap_ns) silence(covered, covered.last_seen, at, "");
      covered.last_seen = std::max(covered.last_seen, at);
      covered.sampled = true;
    }
    if (timeline.samples++ == 0) timeline.first_ns = at;
    timeline.last_ns = at;
    fold(sample, at, known, &timeline.events);
  }
  for (const auto& covered : coverage) {
    if (!covered.sampled)
      timeline.gaps.push_back("no " + std::string(to_string(covered.source)) +
                              " sample in the whole window");
    else if (bounds.end_ns - covered.last_seen > gap_ns)
      silence(covered, covered.last_seen, bounds.end_ns, ", the end of the window");
  }
  return timeline;
}

TelemetryTimeline interface_timeline(const std::vector<GnmiNotification>& notifications,
                                     std::int64_t window_start_ns, std::int64_t window_end_ns,
                                     Duration max_gap) {
  return device_timeline({}, notifications,
                         {window_start_ns, window_end_ns, max_gap, {TelemetrySource::interfaces}});
}

}  // namespace fabgate::gnmi
