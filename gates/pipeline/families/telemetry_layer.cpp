#include "gates/pipeline/families/telemetry_layer.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "adapters/core/text.h"
#include "adapters/core/thread_entry.h"
#include "adapters/core/time.h"
#include "adapters/gnmi/telemetry_tracker.h"

namespace fabgate::pipeline {

namespace {

using Steady = std::chrono::steady_clock;

std::string address_only(const std::string& with_prefix) {
  return with_prefix.substr(0, with_prefix.find('/'));
}

std::set<std::string> interface_addresses(const nlohmann::json& device) {
  std::set<std::string> out;
  if (!device.contains("interfaces") || !device["interfaces"].is_object()) return out;
  for (const auto& [name, facts] : device["interfaces"].items()) {
    if (!facts.is_object() || !facts.contains("addresses") || !facts["addresses"].is_array())
      continue;
    for (const auto& address : facts["addresses"])
      if (address.is_string()) out.insert(address_only(address.get<std::string>()));
  }
  return out;
}

std::set<std::string> bgp_peers(const nlohmann::json& device) {
  std::set<std::string> out;
  if (!device.contains("bgp") || !device["bgp"].is_object()) return out;
  const auto& bgp = device["bgp"];
  if (!bgp.contains("peers") || !bgp["peers"].is_object()) return out;
  for (const auto& [peer, facts] : bgp["peers"].items()) out.insert(peer);
  return out;
}

std::set<std::string> lldp_names(const nlohmann::json& device) {
  std::set<std::string> out;
  if (!device.contains("lldp") || !device["lldp"].is_object()) return out;
  const auto& lldp = device["lldp"];
  if (!lldp.contains("neighbors") || !lldp["neighbors"].is_object()) return out;
  for (const auto& [interface, neighbours] : lldp["neighbors"].items()) {
    if (!neighbours.is_array()) continue;
    for (const auto& neighbour : neighbours)
      if (neighbour.is_object() && neighbour.contains("system_name") &&
          neighbour["system_name"].is_string())
        out.insert(neighbour["system_name"].get<std::string>());
  }
  return out;
}

bool intersects(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) { return b.count(x) > 0; });
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

double seconds_between(Steady::time_point from, Steady::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Adds the keys of `element` (interface names, neighbour addresses) that a notification names
// to `names`, up to `limit` of them.
void add_keys_named(const gnmi::GnmiNotification& notification, const std::string& element,
                    const std::string& key, std::set<std::string>& names, std::size_t limit) {
  for (const auto& update : notification.updates)
    for (const auto& named : update.path.elements)
      if (auto found = named.keys.find(key); found != named.keys.end())
        if (named.name == element || named.name.ends_with(":" + element))
          if (names.size() < limit || names.count(found->second)) names.insert(found->second);
}

}  // namespace

std::vector<TelemetrySubject> telemetry_subjects(const intent::Inventory& inventory,
                                                 const std::vector<std::string>& targets,
                                                 const nlohmann::json& pre_snapshot) {
  std::vector<TelemetrySubject> subjects;
  std::set<std::string> named;
  for (const auto& target : targets) {
    const intent::Device* device = inventory.find(target);
    if (device && named.insert(target).second) subjects.push_back({device, "target"});
  }
  const nlohmann::json empty = nlohmann::json::object();
  auto snapshot_of = [&](const std::string& name) -> const nlohmann::json& {
    if (pre_snapshot.is_object() && pre_snapshot.contains("devices") &&
        pre_snapshot["devices"].contains(name) && pre_snapshot["devices"][name].is_object())
      return pre_snapshot["devices"][name];
    return empty;
  };
  for (const auto& device : inventory.devices) {
    if (named.count(device.name)) continue;
    const auto& facts = snapshot_of(device.name);
    std::set<std::string> addresses = interface_addresses(facts);
    std::set<std::string> peers = bgp_peers(facts);
    std::string hostname;
    if (facts.contains("identity") && facts["identity"].is_object() &&
        facts["identity"].contains("hostname") && facts["identity"]["hostname"].is_string())
      hostname = facts["identity"]["hostname"].get<std::string>();
    for (const auto& target : targets) {
      const auto& target_facts = snapshot_of(target);
      std::string how;
      if (intersects(bgp_peers(target_facts), addresses) ||
          intersects(peers, interface_addresses(target_facts)))
        how = "BGP";
      else if (auto names = lldp_names(target_facts);
               names.count(device.name) || (!hostname.empty() && names.count(hostname)))
        how = "LLDP";
      if (how.empty()) continue;
      named.insert(device.name);
      subjects.push_back({&device, "neighbour of " + target + " (" + how + ")"});
      break;
    }
  }
  return subjects;
}

std::string format_device_time(std::int64_t timestamp_ns) {
  std::time_t seconds = static_cast<std::time_t>(timestamp_ns / 1'000'000'000);
  int millis = static_cast<int>((timestamp_ns / 1'000'000) % 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return text;
}

const std::vector<std::string>& telemetry_paths() {
  static const std::vector<std::string> paths = {
      gnmi::kInterfaceStatePath, gnmi::kBgpSessionStatePath, gnmi::kBgpPrefixesReceivedPath,
      gnmi::kBgpEstablishedTransitionsPath};
  return paths;
}

std::string event_subject(const gnmi::TelemetryEvent& event) {
  return event.source == gnmi::TelemetrySource::bgp_neighbors ? "bgp " + event.subject
                                                              : event.subject;
}

std::string flap_subject(const std::string& device, const gnmi::TelemetryEvent& event) {
  return device + ":" + event_subject(event);
}

static bool judged_event(const gnmi::TelemetryEvent& event) {
  return event.flap || event.disappeared;
}

static bool expected_by_change(const std::vector<std::string>& expected_flaps,
                               const std::string& device, const gnmi::TelemetryEvent& event) {
  return std::find(expected_flaps.begin(), expected_flaps.end(), flap_subject(device, event)) !=
         expected_flaps.end();
}

std::string flap_note(const TelemetryOutcome& outcome, const std::string& device,
                      const gnmi::TelemetryEvent& event) {
  if (!judged_event(event) || !outcome.flaps_judged) return "";
  return expected_by_change(outcome.expected_flaps, device, event)
             ? " (expected by the change)"
             : " (not expected: fails the window)";
}

// How an event the change does not expect is named in the window's failures: "to-host2:
// carrier-transitions +2 ...: flapped", "interface to-host2 disappeared at T (last seen UP at
// T0; no longer in the samples)".
static std::string unexpected_text(const gnmi::TelemetryEvent& event) {
  if (!event.disappeared) return event_subject(event) + ": " + event.what;
  const std::string_view disappeared = "disappeared";
  std::string details = event.what.starts_with(disappeared) ? event.what.substr(disappeared.size())
                                                            : " (" + event.what + ")";
  return (event.source == gnmi::TelemetrySource::bgp_neighbors ? "BGP neighbour " : "interface ") +
         event.subject + " disappeared at " + format_device_time(event.timestamp_ns) + details;
}

std::vector<std::string> event_lines(const TelemetryOutcome& outcome) {
  std::vector<std::string> lines;
  for (const auto& device : outcome.devices)
    for (const auto& event : device.events)
      lines.push_back(device.device + " " + event_subject(event) + " " +
                      format_device_time(event.timestamp_ns) + " " + event.what +
                      flap_note(outcome, device.device, event));
  return lines;
}

std::string modes_text(const TelemetryOutcome& outcome) {
  std::map<std::string, std::vector<std::string>> fallbacks;  // mode -> devices
  for (const auto& device : outcome.devices)
    if (!device.mode.empty() && device.mode != to_string(TelemetryMode::stream))
      fallbacks[device.mode].push_back(device.device);
  std::string text(to_string(TelemetryMode::stream));
  for (const auto& [mode, devices] : fallbacks) text += "; " + mode + " for " + join(devices, ", ");
  return text;
}

nlohmann::json to_json(const TelemetryOutcome& outcome) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& device : outcome.devices) {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& event : device.events) {
      bool bgp = event.source == gnmi::TelemetrySource::bgp_neighbors;
      events.push_back({{"timestamp_ns", event.timestamp_ns},
                        {"time", format_device_time(event.timestamp_ns)},
                        {"source", std::string(gnmi::to_string(event.source))},
                        {bgp ? "bgp_neighbor" : "interface", event.subject},
                        {"event", event.what}});
      if (event.flap) events.back()["flap"] = true;
      if (event.disappeared) events.back()["disappeared"] = true;
      if (judged_event(event))
        events.back()["expected"] =
            expected_by_change(outcome.expected_flaps, device.device, event);
    }
    nlohmann::json entry = {{"device", device.device},
                            {"why", device.why},
                            {"verdict", std::string(to_string(device.verdict))},
                            {"samples", device.samples},
                            {"interfaces", device.interfaces},
                            {"bgp_neighbors", device.bgp_neighbours},
                            {"events", events},
                            {"gaps", device.gaps},
                            {"covered_gaps", device.covered_gaps},
                            {"unexpected_flaps", device.unexpected_flaps}};
    if (device.samples > 0) {
      entry["first_sample"] = format_device_time(device.first_ns);
      entry["last_sample"] = format_device_time(device.last_ns);
    }
    if (!device.stream_failure.empty()) entry["stream_failure"] = device.stream_failure;
    if (!device.mode.empty()) {
      entry["mode"] = device.mode;
      entry["mode_cost"] = device.mode_cost;
    }
    if (!device.modes_refused.empty()) entry["modes_refused"] = device.modes_refused;
    if (device.mode == "POLL" || device.mode == "ONCE") {
      entry["rounds"] = device.rounds;
      entry["failed_rounds"] = device.failed_rounds;
      entry["round_failures"] = device.round_failures;
      entry["longest_round_ms"] = device.longest_round.count();
    }
    devices.push_back(std::move(entry));
  }
  nlohmann::json document = {{"phase", outcome.phase},
                             {"verdict", std::string(to_string(outcome.verdict))},
                             {"summary", outcome.summary},
                             {"path", gnmi::kInterfaceStatePath},
                             {"paths", telemetry_paths()},
                             {"mode", modes_text(outcome)},
                             {"interval_ms", outcome.interval.count()},
                             {"max_gap_ms", outcome.max_gap.count()},
                             {"flaps_judged", outcome.flaps_judged},
                             {"expected_flaps", outcome.expected_flaps},
                             {"window_start", format_utc(outcome.window_start)},
                             {"window_end", format_utc(outcome.window_end)},
                             {"devices", devices},
                             {"not_streamed", outcome.not_streamed}};
  if (outcome.rollback_started)
    document["rollback_started"] = format_utc(*outcome.rollback_started);
  return document;
}

// One device's subscription: a thread runs it and folds every notification into the device's
// timeline as it arrives (gnmi::TimelineTracker: per subject state and the window's events,
// never the notifications themselves), noting the controller's time of the window's first and
// last arrival (for the edges of the window, whatever the device clock says).
struct TelemetrySession::Stream {
  TelemetrySubject subject;
  std::unique_ptr<gnmi::GnmiClient> client;
  std::unique_ptr<TelemetrySubscription> subscription;
  std::thread runner;
  std::mutex mutex;
  std::condition_variable first_sample;
  // Each source sampled at least once: a window whose first BGP sample is still to come has no
  // edge a silence at its start could be covered from.
  bool interfaces_sampled = false, bgp_sampled = false;
  std::unique_ptr<gnmi::TimelineTracker> tracker;
  std::size_t delivered = 0;  // notifications since the subscription opened
  // The current window's: notifications, first and last arrival, subjects named.
  std::size_t window_notifications = 0;
  Steady::time_point first_arrival, last_arrival;
  std::set<std::string> interfaces, bgp_neighbours;
  std::string failure;  // opening failed, or the stream ended by itself
  bool ended = false;
  Steady::time_point ended_at;
  std::optional<TelemetryMode> mode;  // the mode that delivers
  std::vector<std::string> modes_refused;
  // POLL and ONCE rounds of the current window (reset at each window's end).
  std::size_t rounds = 0, failed_rounds = 0;
  std::vector<std::string> round_failures;
  Duration longest_round{0};
};

TelemetrySession::TelemetrySession(GnmiConnector connect, std::vector<TelemetrySubject> subjects,
                                   Duration interval, TelemetryRules rules)
    : connect_(std::move(connect)),
      subjects_(std::move(subjects)),
      interval_(interval),
      rules_(std::move(rules)) {}

TelemetrySession::~TelemetrySession() {
  if (stopped_) return;  // stop() already ended and joined every stream
  for (auto& stream : streams_) {
    if (stream->subscription) stream->subscription->stop();
    if (stream->runner.joinable()) stream->runner.join();
  }
}

TelemetrySession::Started TelemetrySession::start(Duration longest, Duration first_sample_wait) {
  Started started;
  window_start_ = now_utc();
  window_start_steady_ = Steady::now();
  for (const auto& subject : subjects_) {
    if (!subject.device->gnmi) {
      not_streamed_.push_back(subject.device->name + " (" + subject.why +
                              "): no gnmi endpoint in the inventory");
      continue;
    }
    auto stream = std::make_unique<Stream>();
    stream->subject = subject;
    auto client = connect_(*subject.device);
    if (!client.ok()) {
      stream->failure = client.error().message;
      stream->ended = true;
      streams_.push_back(std::move(stream));
      continue;
    }
    stream->client = std::move(client.value());
    // A POLL or ONCE round that takes longer than the allowed silence is a silence anyway.
    stream->subscription = std::make_unique<TelemetrySubscription>(
        *stream->client, telemetry_paths(), interval_, max_gap(), longest);
    stream->tracker = std::make_unique<gnmi::TimelineTracker>(
        std::vector<gnmi::TelemetrySource>{gnmi::TelemetrySource::interfaces,
                                           gnmi::TelemetrySource::bgp_neighbors},
        max_gap(), gnmi::TrackerLimits{.reorder = max_gap()});
    stream->tracker->begin_window(std::nullopt);
    Stream* raw = stream.get();
    raw->runner = std::thread([raw] {
      SubscriptionEvents events;
      events.mode = [raw](TelemetryMode mode, const std::vector<std::string>& refused) {
        std::lock_guard lock(raw->mutex);
        raw->mode = mode;
        raw->modes_refused = refused;
      };
      events.round = [raw](Duration took, const std::string& failure) {
        std::lock_guard lock(raw->mutex);
        ++raw->rounds;
        raw->longest_round = std::max(raw->longest_round, took);
        if (failure.empty()) return;
        ++raw->failed_rounds;
        if (raw->round_failures.size() < 3) raw->round_failures.push_back(failure);
      };
      events.notification = [raw](const gnmi::GnmiNotification& notification) {
        const auto arrived = Steady::now();
        std::lock_guard lock(raw->mutex);
        const auto carried = raw->tracker->add(notification);
        raw->interfaces_sampled |= carried.interfaces;
        raw->bgp_sampled |= carried.bgp;
        if (raw->window_notifications++ == 0) raw->first_arrival = arrived;
        raw->last_arrival = arrived;
        ++raw->delivered;
        const std::size_t limit = gnmi::TrackerLimits{}.subjects;
        add_keys_named(notification, "interface", "name", raw->interfaces, limit);
        add_keys_named(notification, "neighbor", "neighbor-address", raw->bgp_neighbours, limit);
        raw->first_sample.notify_all();
      };
      // The stream's thread entry: a throw ends this stream with its cause as the failure
      // (its window is then judged without evidence), never the process.
      std::string failure;
      if (auto what = what_escaped([&] {
            auto ran = raw->subscription->run(events);
            if (!ran.ok()) failure = ran.error().message;
          }))
        failure = "internal error in the stream: " + *what;
      std::lock_guard lock(raw->mutex);
      if (!failure.empty()) raw->failure = failure;
      raw->ended = true;
      raw->ended_at = Steady::now();
      raw->first_sample.notify_all();
    });
    streams_.push_back(std::move(stream));
  }
  if (streams_.empty()) {
    started.summary = "no target or neighbour has a gnmi endpoint";
    started.details = not_streamed_;
    return started;
  }
  auto wait_until = Steady::now() + first_sample_wait;
  std::vector<std::string> fallbacks;  // "leaf2 by ONCE"
  std::size_t delivering = 0;
  for (auto& stream : streams_) {
    std::unique_lock lock(stream->mutex);
    // Both sources, so that the first step starts after an edge of each (a target that never
    // sends BGP is judged by the window, after this wait).
    stream->first_sample.wait_until(lock, wait_until, [&] {
      return (stream->interfaces_sampled && stream->bgp_sampled) || stream->ended;
    });
    const std::string& name = stream->subject.device->name;
    if (stream->delivered > 0) {
      ++delivering;
      if (stream->mode && *stream->mode != TelemetryMode::stream) {
        fallbacks.push_back(name + " by " + std::string(to_string(*stream->mode)));
        started.details.push_back(
            name + ": subscribed by " + std::string(to_string(*stream->mode)) +
            " (the target does not "
            "implement the modes before it: " +
            join(stream->modes_refused, "; ") +
            "): " + mode_cost(*stream->mode, interval_, stream->longest_round));
      }
    } else if (!stream->failure.empty()) {
      started.details.push_back(name + ": " + stream->failure);
    } else {
      started.details.push_back(name + ": no sample within " + format_duration(first_sample_wait) +
                                " of subscribing");
    }
  }
  for (const auto& line : not_streamed_) started.details.push_back("not streamed: " + line);
  started.verdict = delivering == streams_.size() ? Verdict::pass : Verdict::no_evidence;
  started.summary = std::to_string(delivering) + " of " + std::to_string(streams_.size()) +
                    " devices streaming interface state and BGP neighbours every " +
                    format_duration(interval_);
  if (!fallbacks.empty())
    started.summary += " (" + join(fallbacks, ", ") + ": the target does not implement STREAM)";
  return started;
}

TelemetryOutcome TelemetrySession::cut(Flaps flaps) {
  return end_window(flaps);
}

TelemetryOutcome TelemetrySession::stop(Flaps flaps) {
  TelemetryOutcome outcome = end_window(flaps);
  for (auto& stream : streams_) {
    if (stream->subscription) stream->subscription->stop();
    if (stream->runner.joinable()) stream->runner.join();
  }
  stopped_ = true;
  return outcome;
}

TelemetrySession::DeliveryMark TelemetrySession::mark() const {
  DeliveryMark delivered;
  for (const auto& stream : streams_) {
    std::lock_guard lock(stream->mutex);
    delivered.push_back(stream->delivered);
  }
  return delivered;
}

TelemetryOutcome TelemetrySession::stop_after_sample_since(const DeliveryMark& since, Flaps flaps) {
  const auto wait_until = Steady::now() + 2 * interval_;
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    Stream& stream = *streams_[i];
    // A stream the mark does not know (none before start()) waits for its first sample.
    const std::size_t marked = i < since.size() ? since[i] : 0;
    std::unique_lock lock(stream.mutex);
    stream.first_sample.wait_until(lock, wait_until,
                                   [&] { return stream.delivered > marked || stream.ended; });
  }
  return stop(flaps);
}

TelemetryOutcome TelemetrySession::end_window(Flaps flaps) {
  TelemetryOutcome outcome;
  outcome.interval = interval_;
  outcome.max_gap = max_gap();
  outcome.flaps_judged = flaps == Flaps::judged;
  outcome.expected_flaps = rules_.expected_flaps;
  outcome.window_start = window_start_;
  outcome.not_streamed = not_streamed_;
  const auto window_end_steady = Steady::now();
  outcome.window_end = now_utc();
  const double max_gap_s = std::chrono::duration<double>(outcome.max_gap).count();
  std::size_t covered = 0, interface_events = 0, bgp_events = 0, flap_count = 0, covered_gaps = 0,
              failed = 0, disappeared_count = 0;
  for (auto& stream : streams_) {
    DeviceTelemetry device;
    device.device = stream->subject.device->name;
    device.why = stream->subject.why;
    Steady::time_point first_arrival, last_arrival;
    std::optional<gnmi::TelemetryTimeline> timeline;
    {
      // The runner keeps adding: end this window's timeline (events and silences between
      // samples at the device's timestamps) under the lock; the next one starts at once.
      std::lock_guard lock(stream->mutex);
      device.stream_failure = stream->failure;
      if (stream->mode) {
        device.mode = to_string(*stream->mode);
        device.mode_cost = mode_cost(*stream->mode, interval_, stream->longest_round);
      }
      device.modes_refused = stream->modes_refused;
      device.rounds = std::exchange(stream->rounds, 0);
      device.failed_rounds = std::exchange(stream->failed_rounds, 0);
      device.round_failures = std::exchange(stream->round_failures, {});
      device.longest_round = std::exchange(stream->longest_round, Duration{0});
      if (stream->tracker) {
        auto ended = stream->tracker->end_window(std::nullopt);
        if (std::exchange(stream->window_notifications, 0) > 0) timeline = std::move(ended);
        first_arrival = stream->first_arrival;
        last_arrival = stream->last_arrival;
        device.interfaces.assign(stream->interfaces.begin(), stream->interfaces.end());
        device.bgp_neighbours.assign(stream->bgp_neighbours.begin(), stream->bgp_neighbours.end());
        stream->interfaces.clear();
        stream->bgp_neighbours.clear();
      }
    }
    if (timeline) {
      device.events = std::move(timeline->events);
      device.gaps = std::move(timeline->gaps);
      device.covered_gaps = std::move(timeline->covered_gaps);
      device.samples = timeline->samples;
      device.first_ns = timeline->first_ns;
      device.last_ns = timeline->last_ns;
      // The window's edges by the controller's clock (the arrival times), so a skewed device
      // clock is not a gap.
      double head = seconds_between(window_start_steady_, first_arrival);
      if (head > max_gap_s)
        device.gaps.insert(device.gaps.begin(),
                           "no sample in the first " + seconds_text(head) + " of the window");
      double tail = seconds_between(last_arrival, window_end_steady);
      if (tail > max_gap_s)
        device.gaps.push_back("no sample in the last " + seconds_text(tail) +
                              " of the window (the stream stopped delivering)");
    } else {
      device.gaps.push_back("no sample in the whole window");
    }
    for (const auto& event : device.events) {
      if (!judged_event(event)) continue;
      ++(event.disappeared ? disappeared_count : flap_count);
      if (flaps == Flaps::judged &&
          !expected_by_change(rules_.expected_flaps, device.device, event))
        device.unexpected_flaps.push_back(unexpected_text(event));
    }
    // Missing evidence first: a flap seen in a window with holes is reported, but the reader
    // must first learn that the window has holes (both block alike).
    device.verdict = !device.gaps.empty() || device.samples == 0 ? Verdict::no_evidence
                     : flaps == Flaps::judged && !device.unexpected_flaps.empty() ? Verdict::fail
                                                                                  : Verdict::pass;
    if (device.gaps.empty() && device.samples > 0) ++covered;
    if (device.verdict == Verdict::fail) ++failed;
    covered_gaps += device.covered_gaps.size();
    for (const auto& event : device.events)
      ++(event.source == gnmi::TelemetrySource::bgp_neighbors ? bgp_events : interface_events);
    outcome.devices.push_back(std::move(device));
  }
  outcome.verdict = streams_.empty() || covered < streams_.size() ? Verdict::no_evidence
                    : failed > 0                                  ? Verdict::fail
                                                                  : Verdict::pass;
  double window_s = seconds_between(window_start_steady_, window_end_steady);
  auto count = [](std::size_t n, const char* what) {
    return std::to_string(n) + " " + what + " event" + (n == 1 ? "" : "s");
  };
  std::string seen = interface_events + bgp_events == 0
                         ? std::string("no flap, error increase or BGP session change")
                         : count(interface_events, "interface") + ", " + count(bgp_events, "BGP");
  outcome.summary = std::to_string(covered) + " of " + std::to_string(streams_.size()) +
                    " devices covered " + seconds_text(window_s) + " at " +
                    format_duration(interval_) + ": " + seen;
  if (flap_count > 0)
    outcome.summary += "; " + std::to_string(flap_count) + " flap" + (flap_count == 1 ? "" : "s") +
                       (flaps == Flaps::reported ? ""
                        : failed > 0             ? ", not all expected by the change"
                                                 : ", all expected by the change");
  if (disappeared_count > 0)
    outcome.summary += "; " + std::to_string(disappeared_count) +
                       (disappeared_count == 1 ? " subject" : " subjects") + " disappeared" +
                       (flaps == Flaps::reported ? ""
                        : failed > 0             ? ", not all expected by the change"
                                                 : ", all expected by the change");
  if (covered_gaps > 0)
    outcome.summary += "; " + std::to_string(covered_gaps) + " silence" +
                       (covered_gaps == 1 ? "" : "s") + " covered by transitions counters";
  // The next window starts where this one ended.
  window_start_ = outcome.window_end;
  window_start_steady_ = window_end_steady;
  return outcome;
}

}  // namespace fabgate::pipeline
