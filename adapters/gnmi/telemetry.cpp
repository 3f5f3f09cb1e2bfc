#include "adapters/gnmi/telemetry.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "adapters/core/time.h"
#include "adapters/gnmi/data_tree.h"
#include "adapters/gnmi/telemetry_tracker.h"

namespace fabgate::gnmi {

namespace {

using nlohmann::json;

// What is known of one subject's transitions counter and of when it was sampled.
struct Tracked {
  std::optional<std::uint64_t> transitions;  // carrier-transitions or established-transitions
  std::int64_t transitions_at = 0;           // the sample that carried it
  std::int64_t seen_at = 0;                  // the last sample that named the subject
  std::int64_t left_up_at = 0;               // in this window it left UP (ESTABLISHED) then
  bool gone = false;                         // deleted, or missing from a complete sample
};

struct InterfaceState : Tracked {
  std::optional<std::string> oper;
  std::map<std::string, std::uint64_t> counters;
};

struct NeighborState : Tracked {
  std::optional<std::string> session;
  std::map<std::string, std::uint64_t> received;  // afi-safi name -> prefixes received
};

// What the samples so far say about one device, or what one sample says.
struct DeviceState {
  std::map<std::string, InterfaceState> interfaces;
  std::map<std::string, NeighborState> neighbors;
  // Subjects a gNMI delete named by key (interface[name=X], neighbor[neighbor-address=A]).
  std::set<std::string> deleted_interfaces, deleted_neighbors;
  std::optional<bool> bgp_served;  // false: the target deleted the BGP neighbours
  // Values the sample carried that could not be read ("value at PATH is not JSON"): the
  // sample does not show what they would have, so the window is not covered.
  std::vector<std::string> unreadable;
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
// the value in its name (a keyed one as a one-entry list holding its keys). An unreadable
// value (not JSON, nested too deep) is noted in `state` instead.
std::optional<json> value_at(const GnmiUpdate& update, std::size_t at, DeviceState& state) {
  auto parsed = parse_target_value(update.path, update.json);
  if (!parsed) {
    state.unreadable.push_back(parsed.error());
    return std::nullopt;
  }
  json value = strip_module_prefixes(*parsed);
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
  auto value = value_at(update, at, state);
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
    if (auto found = counters->find(kCarrierTransitions); found != counters->end())
      if (auto count = as_count(*found)) interface.transitions = *count;
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
  auto value = value_at(update, at, state);
  if (!value || !value->is_object()) return true;
  NeighborState& neighbor = state.neighbors[update.path.elements[at].keys.at("neighbor-address")];
  if (auto fields = value->find("state"); fields != value->end() && fields->is_object()) {
    if (auto session = fields->find("session-state"); session != fields->end())
      neighbor.session = enum_word(*session);
    if (auto found = fields->find(kEstablishedTransitions); found != fields->end())
      if (auto count = as_count(*found)) neighbor.transitions = *count;
  }
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

// The subject a delete names by its key (one interface, one neighbour); none for a wildcard
// or a path above the subjects.
std::optional<std::string> deleted_key(const GnmiPath& path, const char* name, const char* key) {
  const std::size_t at = keyed_element(path, name, key);
  if (at == path.elements.size()) return std::nullopt;
  const std::string& value = path.elements[at].keys.at(key);
  if (value.empty() || value == "*") return std::nullopt;
  return value;
}

// What one notification samples and says.
struct Sample {
  DeviceState said;
};

// Folds one notification into `sample` (the notifications of one timestamp make one sample).
void read_notification(const GnmiNotification& notification, Sample& sample) {
  for (const auto& update : notification.updates) {
    if (!read_interface_update(update, sample.said)) read_bgp_update(update, sample.said);
  }
  for (const auto& deleted : notification.deletes) {
    if (under_bgp(deleted)) {
      if (auto address = deleted_key(deleted, "neighbor", "neighbor-address"))
        sample.said.deleted_neighbors.insert(*address);
      else  // The target says the neighbours are not there now (fabgate-gnmid: FRR silent).
        sample.said.bgp_served = false;
    } else if (!deleted.elements.empty() &&
               strip_module_prefix(deleted.elements.front().name) == "interfaces") {
      if (auto name = deleted_key(deleted, "interface", "name"))
        sample.said.deleted_interfaces.insert(*name);
    }
  }
}

// Whether a sample carries values of `source` (a subject read from an update), not only
// deletes: only values cover a source's time.
bool carries_values(const Sample& sample, TelemetrySource source) {
  return source == TelemetrySource::interfaces ? !sample.said.interfaces.empty()
                                               : !sample.said.neighbors.empty();
}

std::string seconds(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

// "2026-12-01T06:40:01.234Z": a device timestamp as the reports write it.
std::string device_time(std::int64_t ns) {
  return format_utc(TimePoint{std::chrono::milliseconds{ns / 1'000'000}});
}

// How many times a subject left UP (ESTABLISHED) and came back, by its transitions counter:
// carrier-transitions counts both directions (a flap adds 2), established-transitions only the
// arrivals (a flap adds 1). A subject UP on both sides whose counter moved at all flapped.
std::uint64_t flaps_counted(std::uint64_t rise, bool up_before, bool up_after, bool both_ways) {
  std::uint64_t returns = both_ways ? (up_before ? rise / 2 : (rise > 0 ? (rise - 1) / 2 : 0))
                                    : (up_before ? rise : (rise > 0 ? rise - 1 : 0));
  if (up_before && up_after && rise > 0) returns = std::max<std::uint64_t>(returns, 1);
  return returns;
}

// The silence a sample ends, when it ends one: from the source's previous sample.
struct Silence {
  std::int64_t from = 0, to = 0;
};

std::string silence_words(const Silence& silence) {
  return "from " + device_time(silence.from) + " to " + device_time(silence.to) + " (" +
         seconds(silence.to - silence.from) + ")";
}

// Compares one subject's sample with what was known of it (events when `events` is given):
// its state, and its transitions counter (a rise beyond what the states explain is a flap,
// a fall a reset). Then folds the sample in. Returns false when the counter went backwards.
template <class State>
bool fold_subject(const State& said, std::optional<std::string> State::*state_of,
                  const char* state_name, const char* up, const char* counter, bool both_ways,
                  std::int64_t at, const std::optional<Silence>& silence, State& known,
                  const std::function<void(std::string, bool)>& report, bool in_window) {
  const std::optional<std::string>& before = known.*state_of;
  const std::optional<std::string>& now = said.*state_of;
  bool counted = true;
  if (now && before && *now != *before)
    report(std::string(state_name) + " " + *before + " -> " + *now, false);
  if (said.transitions && known.transitions) {
    if (*said.transitions < *known.transitions) {
      counted = false;
      report(std::string(counter) + " went back from " + std::to_string(*known.transitions) +
                 " to " + std::to_string(*said.transitions) + " (a counter reset)",
             false);
    } else if (std::uint64_t rise = *said.transitions - *known.transitions; rise > 0) {
      const std::optional<std::string>& after = now ? now : before;
      bool up_before = before && *before == up, up_after = after && *after == up;
      std::uint64_t flaps = flaps_counted(rise, up_before, up_after, both_ways);
      std::string where = silence ? " within the silence " + silence_words(*silence)
                                  : " since the sample at " + device_time(known.transitions_at);
      if (flaps > 0)
        report(std::string(counter) + " +" + std::to_string(rise) + where + ": flapped" +
                   (flaps > 1 ? " " + std::to_string(flaps) + " times" : std::string()),
               true);
    }
  }
  // Seen in the samples: it left UP in this window and is UP again.
  if (now && in_window) {
    if (*now != up && before && *before == up) known.left_up_at = at;
    if (*now == up && before && *before != up && known.left_up_at != 0) {
      report(std::string(state_name) + " " + up + " again " + seconds(at - known.left_up_at) +
                 " after leaving it at " + device_time(known.left_up_at) + ": flapped",
             true);
      known.left_up_at = 0;
    }
  }
  if (now) known.*state_of = now;
  if (said.transitions) {
    known.transitions = said.transitions;
    known.transitions_at = at;
  }
  known.seen_at = at;
  return counted;
}

// What a sample ending a silence must show for the counters to cover it: every subject the
// sample before the silence named, with its counter on both edges, none reset, none new.
// Returns the reasons it does not (empty: covered).
template <class State>
std::vector<std::string> uncovered_because(const std::map<std::string, State>& before,
                                           const std::map<std::string, State>& after,
                                           const std::set<std::string>& reset, std::int64_t from,
                                           const char* counter, const char* kind) {
  std::vector<std::string> why;
  for (const auto& [name, known] : before) {
    if (known.seen_at != from) continue;  // not in the sample before the silence
    auto found = after.find(name);
    if (known.transitions_at != from)
      why.push_back(name + " has no " + counter + " before it");
    else if (found == after.end())
      why.push_back(name + " is not in the sample after it");
    else if (!found->second.transitions)
      why.push_back(name + " has no " + counter + " after it");
    else if (reset.count(name))
      why.push_back(name + "'s " + counter + " was reset");
  }
  for (const auto& [name, state] : after) {
    auto found = before.find(name);
    if (found == before.end() || found->second.seen_at != from)
      why.push_back(name + " was not in the sample before it");
  }
  if (before.empty() && after.empty()) why.push_back(std::string("no ") + kind + " on either side");
  return why;
}

std::string some_of(const std::vector<std::string>& reasons) {
  std::string text;
  for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) text += (i ? "; " : "") + reasons[i];
  if (reasons.size() > 3) text += "; and " + std::to_string(reasons.size() - 3) + " more";
  return text;
}

// The subjects of one source the last sample listing them named with their state leaf
// (oper-status, session-state): what a later complete sample is compared with.
struct Listing {
  std::set<std::string> subjects;
  std::int64_t at = 0;
};

// Which subjects of one source a sample shows going away or arriving. A subject named by a
// delete disappeared. A sample that lists the source (carries the state leaf of some subject)
// is complete when it is later than the last listing and still names one of the subjects that
// listing named (the others keep coming): a subject of that listing it does not name
// disappeared, a subject it names that was never listed (or had disappeared) appeared. A
// sample that lists nothing (only prefixes, only deletes) or shares no subject with the last
// listing (a target sending one subject per notification) judges no absence. `known` is what
// the samples before this one said; `gone` receives the subjects that went.
template <class State>
void judge_presence(const std::map<std::string, State>& said, const std::set<std::string>& deleted,
                    std::optional<std::string> State::*state_of,
                    const std::map<std::string, State>& known, std::int64_t at, Listing& listing,
                    std::map<std::string, bool>& gone,
                    const std::function<void(const std::string&, std::string, bool)>& report) {
  std::set<std::string> listed;
  for (const auto& [name, state] : said)
    if (state.*state_of) listed.insert(name);
  const bool complete = !listed.empty() && at > listing.at &&
                        std::any_of(listed.begin(), listed.end(), [&](const std::string& name) {
                          return listing.subjects.count(name) > 0;
                        });
  auto disappear = [&](const std::string& name, const char* how) {
    auto found = known.find(name);
    if (found == known.end() || found->second.gone || gone.count(name)) return;
    const auto& last = found->second.*state_of;
    report(name,
           "disappeared (last seen " + (last ? *last + " " : std::string()) + "at " +
               device_time(found->second.seen_at) + "; " + how + ")",
           true);
    gone[name] = true;
  };
  for (const auto& name : deleted)
    if (!said.count(name)) disappear(name, "deleted by the target");
  if (complete)
    for (const auto& name : listing.subjects)
      if (!listed.count(name)) disappear(name, "no longer in the samples");
  for (const auto& name : listed) {
    auto found = known.find(name);
    const bool again = found != known.end() && found->second.gone;
    const bool arrived = found == known.end() || !(found->second.*state_of);
    if (again || (complete && arrived))
      report(
          name,
          std::string(again ? "appeared again (" : "appeared (") + *(said.at(name).*state_of) + ")",
          false);
  }
  for (const auto& [name, state] : said) gone[name] = false;
  if (!listed.empty()) listing = {std::move(listed), at};
}

// Folds what `from` says over what `into` says, as reading its notification after the others
// of its timestamp would have: the values it carries replace, its deletes and unreadable
// values add up.
void merge_sample(DeviceState& into, DeviceState&& from) {
  for (auto& [name, said] : from.interfaces) {
    InterfaceState& state = into.interfaces[name];
    if (said.oper) state.oper = std::move(said.oper);
    if (said.transitions) state.transitions = said.transitions;
    for (const auto& [counter, value] : said.counters) state.counters[counter] = value;
  }
  for (auto& [address, said] : from.neighbors) {
    NeighborState& state = into.neighbors[address];
    if (said.session) state.session = std::move(said.session);
    if (said.transitions) state.transitions = said.transitions;
    for (const auto& [family, count] : said.received) state.received[family] = count;
  }
  into.deleted_interfaces.merge(from.deleted_interfaces);
  into.deleted_neighbors.merge(from.deleted_neighbors);
  if (from.bgp_served) into.bgp_served = from.bgp_served;
  for (auto& why : from.unreadable) into.unreadable.push_back(std::move(why));
}

std::int64_t nanoseconds(Duration duration) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
}

}  // namespace

struct TimelineTracker::State {
  struct Coverage {
    TelemetrySource source;
    // The source's last sample (a silence's edge), else the window's start; unset until the
    // window's first sample when its start was not given.
    std::optional<std::int64_t> last_seen;
    bool sampled = false;  // in the window
    bool edge = false;     // a sample (in the window or before it) a silence can start from
  };

  std::int64_t gap_ns = 0;
  TrackerLimits limits;
  DeviceState known;
  Listing interface_listing, neighbor_listing;
  std::vector<Coverage> coverage;
  std::map<std::int64_t, Sample> held;  // read, not yet folded: by timestamp
  std::optional<std::int64_t> newest;   // the newest timestamp taken
  bool in_window = false;
  bool window_started = false;  // the window's start is known (given, or its first sample)
  TelemetryTimeline timeline;   // the current window's, so far
  std::size_t events_left_out = 0;
  // Subjects past limits.subjects: not followed from then on, so no window of the device is
  // covered any more.
  std::size_t interfaces_left_out = 0, neighbors_left_out = 0;

  void emit(TelemetryEvent event) {
    if (!in_window) return;
    if (timeline.events.size() < limits.events)
      timeline.events.push_back(std::move(event));
    else
      ++events_left_out;
  }

  template <class State>
  void keep_within_limit(std::map<std::string, State>& said,
                         const std::map<std::string, State>& followed, std::size_t& left_out) {
    std::size_t count = followed.size();
    for (auto it = said.begin(); it != said.end();) {
      if (followed.count(it->first)) {
        ++it;
      } else if (count < limits.subjects) {
        ++count;
        ++it;
      } else {
        ++left_out;
        it = said.erase(it);
      }
    }
  }

  // Folds the held samples in time order: those the newest is more than the reorder horizon
  // ahead of, those past the held limit, or (`all`) every one.
  void fold_held(bool all) {
    while (!held.empty()) {
      auto oldest = held.begin();
      const bool due = all || held.size() > limits.held ||
                       (limits.reorder && *newest - oldest->first > nanoseconds(*limits.reorder));
      if (!due) break;
      Sample sample = std::move(oldest->second);
      const std::int64_t at = oldest->first;
      held.erase(oldest);
      fold(sample, at);
    }
  }

  // One sample: the notifications of one timestamp (fabgate-gnmid sends each BGP path of a
  // reading, and the interfaces, as notifications of their own). In the window it is judged
  // and reported; before it, it only gives the state the window starts from.
  void fold(Sample& sample, std::int64_t at);
  TelemetryTimeline end(std::optional<std::int64_t> end_ns);
};

void TimelineTracker::State::fold(Sample& sample, std::int64_t at) {
  keep_within_limit(sample.said.interfaces, known.interfaces, interfaces_left_out);
  keep_within_limit(sample.said.neighbors, known.neighbors, neighbors_left_out);
  if (in_window && !window_started) {
    // The window starts at its first sample.
    window_started = true;
    for (auto& covered : coverage)
      if (!covered.last_seen) covered.last_seen = at;
  }
  std::optional<Silence> silence[2];  // per source, the silence this sample ends
  for (auto& covered : coverage) {
    // A sample of deletes only shows no value: it covers nothing.
    if (!carries_values(sample, covered.source)) continue;
    if (!in_window) {  // the source's last sample before the window: a silence's edge
      covered.last_seen = at;
      covered.edge = true;
      continue;
    }
    if (at - *covered.last_seen > gap_ns) {
      // Only a silence after a sample can be covered: the window's head has no edge.
      if (covered.edge)
        silence[covered.source == TelemetrySource::interfaces ? 0 : 1] =
            Silence{*covered.last_seen, at};
      else
        timeline.gaps.push_back("no " + std::string(to_string(covered.source)) + " sample " +
                                silence_words({*covered.last_seen, at}) +
                                ", the start of the window");
    }
    covered.last_seen = std::max(*covered.last_seen, at);
    covered.sampled = covered.edge = true;
  }
  if (in_window)
    for (const auto& why : sample.said.unreadable)
      timeline.gaps.push_back("a sample at " + device_time(at) + " cannot be read: " + why);
  const DeviceState edge = known;  // what the samples before this one said
  std::set<std::string> reset_interfaces, reset_neighbors;
  auto reporter = [&](TelemetrySource source, const std::string& subject) {
    return std::function<void(std::string, bool)>(
        [&, source, subject](std::string what, bool flap) {
          emit({at, source, subject, std::move(what), flap});
        });
  };
  for (const auto& [name, said] : sample.said.interfaces) {
    InterfaceState& state = known.interfaces[name];
    auto report = reporter(TelemetrySource::interfaces, name);
    if (!fold_subject(said, &InterfaceState::oper, "oper-status", "UP", kCarrierTransitions,
                      /*both_ways=*/true, at, silence[0], state, report, in_window))
      reset_interfaces.insert(name);
    for (const auto& [counter, value] : said.counters) {
      auto old = state.counters.find(counter);
      if (old != state.counters.end() && value > old->second)
        report(counter + " +" + std::to_string(value - old->second), false);
    }
    for (const auto& [counter, value] : said.counters) state.counters[counter] = value;
  }
  if (sample.said.bgp_served && known.bgp_served && *sample.said.bgp_served != *known.bgp_served)
    emit({at, TelemetrySource::bgp_neighbors, "neighbours",
          *sample.said.bgp_served ? "served again" : "no longer served (the target deleted them)"});
  if (sample.said.bgp_served) known.bgp_served = sample.said.bgp_served;
  for (const auto& [address, said] : sample.said.neighbors) {
    NeighborState& state = known.neighbors[address];
    auto report = reporter(TelemetrySource::bgp_neighbors, address);
    if (!fold_subject(said, &NeighborState::session, "session-state", "ESTABLISHED",
                      kEstablishedTransitions, /*both_ways=*/false, at, silence[1], state, report,
                      in_window))
      reset_neighbors.insert(address);
    for (const auto& [family, count] : said.received) {
      auto old = state.received.find(family);
      if (old != state.received.end() && count != old->second)
        report("received-prefixes " + family + " " + std::to_string(old->second) + " -> " +
                   std::to_string(count),
               false);
    }
    for (const auto& [family, count] : said.received) state.received[family] = count;
  }
  // Subjects that went away or arrived, against what the samples before this one said.
  auto presence = [&](TelemetrySource source) {
    return std::function<void(const std::string&, std::string, bool)>(
        [&, source](const std::string& subject, std::string what, bool disappeared) {
          emit({at, source, subject, std::move(what), /*flap=*/false, disappeared});
        });
  };
  std::map<std::string, bool> gone_interfaces, gone_neighbors;
  judge_presence(sample.said.interfaces, sample.said.deleted_interfaces, &InterfaceState::oper,
                 edge.interfaces, at, interface_listing, gone_interfaces,
                 presence(TelemetrySource::interfaces));
  judge_presence(sample.said.neighbors, sample.said.deleted_neighbors, &NeighborState::session,
                 edge.neighbors, at, neighbor_listing, gone_neighbors,
                 presence(TelemetrySource::bgp_neighbors));
  for (const auto& [name, gone] : gone_interfaces) known.interfaces[name].gone = gone;
  for (const auto& [name, gone] : gone_neighbors) known.neighbors[name].gone = gone;
  // A silence is covered when the counters on its two edges account for everything in it.
  for (int i = 0; i < 2; ++i) {
    if (!silence[i]) continue;
    bool interfaces = i == 0;
    auto why = interfaces
                   ? uncovered_because(edge.interfaces, sample.said.interfaces, reset_interfaces,
                                       silence[i]->from, kCarrierTransitions, "interfaces")
                   : uncovered_because(edge.neighbors, sample.said.neighbors, reset_neighbors,
                                       silence[i]->from, kEstablishedTransitions, "BGP neighbours");
    std::string text = "no " + std::string(interfaces ? "interface" : "bgp") + " sample " +
                       silence_words(*silence[i]);
    if (why.empty()) {
      std::size_t subjects =
          interfaces ? sample.said.interfaces.size() : sample.said.neighbors.size();
      timeline.covered_gaps.push_back(text + ", covered by " +
                                      (interfaces ? kCarrierTransitions : kEstablishedTransitions) +
                                      " on " + std::to_string(subjects) +
                                      (interfaces ? (subjects == 1 ? " interface" : " interfaces")
                                                  : (subjects == 1 ? " session" : " sessions")));
    } else {
      timeline.gaps.push_back(text + ", not covered: " + some_of(why));
    }
  }
}

bool samples_source(const GnmiNotification& notification, TelemetrySource source) {
  Sample sample;
  read_notification(notification, sample);
  return carries_values(sample, source);
}

std::string_view to_string(TelemetrySource source) {
  return source == TelemetrySource::bgp_neighbors ? "bgp" : "interface";
}

TelemetryTimeline TimelineTracker::State::end(std::optional<std::int64_t> end_ns) {
  fold_held(/*all=*/true);
  const std::int64_t end = end_ns.value_or(timeline.last_ns);
  for (const auto& covered : coverage) {
    if (!covered.sampled)
      timeline.gaps.push_back("no " + std::string(to_string(covered.source)) +
                              " sample in the whole window");
    else if (end - *covered.last_seen > gap_ns)
      timeline.gaps.push_back("no " + std::string(to_string(covered.source)) + " sample " +
                              silence_words({*covered.last_seen, end}) + ", the end of the window");
  }
  // What was not kept is not a pass: the window is not covered.
  if (events_left_out > 0)
    timeline.gaps.push_back(std::to_string(events_left_out) + " events after the first " +
                            std::to_string(limits.events) +
                            " of the window were not kept (truncated)");
  for (auto [left_out, kind] : {std::pair{interfaces_left_out, "interfaces"},
                                std::pair{neighbors_left_out, "BGP neighbours"}})
    if (left_out > 0)
      timeline.gaps.push_back(std::string("more ") + kind + " than the " +
                              std::to_string(limits.subjects) +
                              " followed per device: the others are not followed (truncated)");
  TelemetryTimeline ended = std::move(timeline);
  // The next window: its flaps are its own, and it starts at its first sample.
  timeline = {};
  events_left_out = 0;
  for (auto& [name, state] : known.interfaces) state.left_up_at = 0;
  for (auto& [address, state] : known.neighbors) state.left_up_at = 0;
  window_started = false;
  for (auto& covered : coverage) {
    covered.sampled = false;
    if (!covered.edge) covered.last_seen.reset();
  }
  return ended;
}

TimelineTracker::TimelineTracker(const std::vector<TelemetrySource>& expected, Duration max_gap,
                                 TrackerLimits limits)
    : state_(std::make_unique<State>()) {
  state_->gap_ns = nanoseconds(max_gap);
  state_->limits = limits;
  for (auto source : expected) state_->coverage.push_back({source, std::nullopt});
}

TimelineTracker::~TimelineTracker() = default;

TimelineTracker::Carried TimelineTracker::add(const GnmiNotification& notification) {
  Sample read;
  read_notification(notification, read);
  const std::int64_t at = notification.timestamp_ns;
  Carried carried{carries_values(read, TelemetrySource::interfaces),
                  carries_values(read, TelemetrySource::bgp_neighbors)};
  State& state = *state_;
  if (state.in_window) {
    TelemetryTimeline& timeline = state.timeline;
    if (timeline.samples++ == 0) {
      timeline.first_ns = timeline.last_ns = at;
    } else {
      timeline.first_ns = std::min(timeline.first_ns, at);
      timeline.last_ns = std::max(timeline.last_ns, at);
    }
  }
  state.newest = std::max(state.newest.value_or(at), at);
  merge_sample(state.held[at].said, std::move(read.said));
  state.fold_held(/*all=*/false);
  return carried;
}

void TimelineTracker::begin_window(std::optional<std::int64_t> start_ns) {
  state_->fold_held(/*all=*/true);
  state_->in_window = true;
  state_->window_started = start_ns.has_value();
  if (start_ns)
    for (auto& covered : state_->coverage)
      if (!covered.edge) covered.last_seen = start_ns;
}

TelemetryTimeline TimelineTracker::end_window(std::optional<std::int64_t> end_ns) {
  return state_->end(end_ns);
}

std::size_t TimelineTracker::retained_bytes() const {
  // std::map nodes and std::string heap buffers, roughly as libstdc++ lays them out.
  constexpr std::size_t kNode = 48;
  const auto text = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; };
  const State& state = *state_;
  std::size_t bytes = sizeof(State);
  const auto subjects = [&](const auto& map, auto extra) {
    for (const auto& [name, subject] : map)
      bytes += kNode + sizeof(subject) + text(name) + extra(subject);
  };
  const auto interface = [&](const InterfaceState& s) {
    return (s.oper ? text(*s.oper) : 0) + s.counters.size() * (kNode + 32);
  };
  const auto neighbor = [&](const NeighborState& s) {
    return (s.session ? text(*s.session) : 0) + s.received.size() * (kNode + 32);
  };
  subjects(state.known.interfaces, interface);
  subjects(state.known.neighbors, neighbor);
  for (const auto& [at, sample] : state.held) {
    bytes += kNode + sizeof(sample);
    subjects(sample.said.interfaces, interface);
    subjects(sample.said.neighbors, neighbor);
  }
  for (const auto* listing : {&state.interface_listing, &state.neighbor_listing})
    for (const auto& name : listing->subjects) bytes += kNode + text(name);
  for (const auto& event : state.timeline.events)
    bytes += sizeof(event) + text(event.subject) + text(event.what);
  for (const auto* lines : {&state.timeline.gaps, &state.timeline.covered_gaps})
    for (const auto& line : *lines) bytes += sizeof(line) + text(line);
  return bytes;
}

TelemetryTimeline device_timeline(const std::vector<GnmiNotification>& before,
                                  const std::vector<GnmiNotification>& window,
                                  const TimelineWindow& bounds) {
  // Everything held until the window ends: folded in device time order, as given.
  constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
  TimelineTracker tracker(
      bounds.expected, bounds.max_gap,
      {.subjects = kAll, .events = kAll, .reorder = std::nullopt, .held = kAll});
  for (const auto& notification : before) tracker.add(notification);
  tracker.begin_window(bounds.start_ns);
  for (const auto& notification : window) tracker.add(notification);
  return tracker.end_window(bounds.end_ns);
}

TelemetryTimeline interface_timeline(const std::vector<GnmiNotification>& notifications,
                                     std::int64_t window_start_ns, std::int64_t window_end_ns,
                                     Duration max_gap) {
  return device_timeline({}, notifications,
                         {window_start_ns, window_end_ns, max_gap, {TelemetrySource::interfaces}});
}

}  // namespace fabgate::gnmi
