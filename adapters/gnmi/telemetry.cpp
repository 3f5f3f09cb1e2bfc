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

std::string oper_word(const json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  auto colon = text.find(':');
  return colon == std::string::npos ? text : text.substr(colon + 1);
}

// Folds one update into `state`: the update addresses interface[name=X]/state, a container
// below it (counters) or a leaf.
std::optional<std::string> read_update(const GnmiUpdate& update,
                                       std::map<std::string, InterfaceState>& states) {
  const auto& elements = update.path.elements;
  std::size_t at = elements.size();
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (strip_module_prefix(elements[i].name) == "interface" && elements[i].keys.count("name")) {
      at = i;
      break;
    }
  }
  if (at == elements.size()) return std::nullopt;
  const std::string name = elements[at].keys.at("name");
  json value = json::parse(update.json, nullptr, false);
  if (value.is_discarded()) return std::nullopt;
  value = strip_module_prefixes(value);
  // Bring the value to the level of the state container: the interface entry itself, the
  // state container, or something below it (a leaf, counters) wrapped in its names.
  if (elements.size() == at + 1) {
    if (!value.contains("state")) return std::nullopt;
    value = value["state"];
  } else {
    if (strip_module_prefix(elements[at + 1].name) != "state") return std::nullopt;
    for (std::size_t i = elements.size(); i-- > at + 2;) {
      value = json{{strip_module_prefix(elements[i].name), value}};
    }
  }
  if (!value.is_object()) return std::nullopt;
  InterfaceState& state = states[name];
  if (auto oper = value.find("oper-status"); oper != value.end()) state.oper = oper_word(*oper);
  if (auto counters = value.find("counters"); counters != value.end() && counters->is_object()) {
    for (const char* counter : kCounters) {
      if (auto found = counters->find(counter); found != counters->end()) {
        if (auto count = as_count(*found)) state.counters[counter] = *count;
      }
    }
  }
  return name;
}

std::string seconds(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

}  // namespace

TelemetryTimeline interface_timeline(const std::vector<GnmiNotification>& notifications,
                                     std::int64_t window_start_ns, std::int64_t window_end_ns,
                                     Duration max_gap) {
  TelemetryTimeline timeline;
  const std::int64_t gap_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(max_gap).count();
  std::vector<const GnmiNotification*> ordered;
  for (const auto& notification : notifications) ordered.push_back(&notification);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto* a, const auto* b) { return a->timestamp_ns < b->timestamp_ns; });
  std::map<std::string, InterfaceState> previous;
  std::int64_t last_seen = window_start_ns;
  for (const GnmiNotification* notification : ordered) {
    const std::int64_t at = notification->timestamp_ns;
    if (at - last_seen > gap_ns) {
      timeline.gaps.push_back("no sample from " + std::to_string(last_seen) + " to " +
                              std::to_string(at) + " ns (" + seconds(at - last_seen) + ")");
    }
    last_seen = std::max(last_seen, at);
    if (timeline.samples++ == 0) timeline.first_ns = at;
    timeline.last_ns = at;
    std::map<std::string, InterfaceState> current;
    for (const auto& update : notification->updates) (void)read_update(update, current);
    for (const auto& [name, state] : current) {
      auto before = previous.find(name);
      if (before != previous.end()) {
        if (state.oper && before->second.oper && *state.oper != *before->second.oper) {
          timeline.events.push_back(
              {at, name, "oper-status " + *before->second.oper + " -> " + *state.oper});
        }
        for (const auto& [counter, value] : state.counters) {
          auto old = before->second.counters.find(counter);
          if (old != before->second.counters.end() && value > old->second) {
            timeline.events.push_back(
                {at, name, counter + " +" + std::to_string(value - old->second)});
          }
        }
      }
      InterfaceState& kept = previous[name];
      if (state.oper) kept.oper = state.oper;
      for (const auto& [counter, value] : state.counters) kept.counters[counter] = value;
    }
  }
  if (window_end_ns - last_seen > gap_ns) {
    timeline.gaps.push_back("no sample from " + std::to_string(last_seen) + " to " +
                            std::to_string(window_end_ns) + " ns (" +
                            seconds(window_end_ns - last_seen) + ", the end of the window)");
  }
  return timeline;
}

}  // namespace fabgate::gnmi
