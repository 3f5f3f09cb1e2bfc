#include "gates/pipeline/twin/twin_rehearsal.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "adapters/core/foreign_json.h"
#include "adapters/core/text.h"
#include "adapters/core/time.h"
#include "gates/pipeline/families/collector_snapshotter.h"
#include "gates/pipeline/families/execute.h"
#include "gates/pipeline/families/load_spread.h"
#include "gates/pipeline/families/probes.h"
#include "gates/pipeline/families/remote.h"
#include "gates/pipeline/families/secret_substitution.h"

namespace fabgate::pipeline::twin {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string address_of(const std::string& prefix) { return prefix.substr(0, prefix.find('/')); }

// Addresses at which a twin node can be reached from another: its loopbacks and the addresses
// on its wired links.
std::set<std::string> reachable_addresses(const TwinPlan& plan) {
  std::set<std::string> addresses;
  for (const auto& node : plan.nodes) {
    for (const auto& address : node.loopback_addresses) addresses.insert(address_of(address));
    for (const auto& interface : node.interfaces)
      if (interface.kind == TwinInterface::Kind::veth || interface.kind == TwinInterface::Kind::bridge)
        for (const auto& address : interface.addresses) addresses.insert(address_of(address));
  }
  return addresses;
}

const json* peers_of(const json& document, const std::string& device, const char* category) {
  const json* devices = object_member(document, "devices");
  const json* facts = devices ? object_member(*devices, device) : nullptr;
  const json* section = facts ? object_member(*facts, category) : nullptr;
  return section ? object_member(*section, "peers") : nullptr;
}

// Probe kinds a twin can run: what needs a data source outside the twin (Prometheus) or
// hardware it does not emulate (RDMA) is left out, and said so.
bool runs_on_twin(const intent::Probe& probe, std::string& why) {
  if (probe.kind == "promql") {
    why = "reads production's Prometheus";
    return false;
  }
  if (probe.kind == "rdma" || (probe.kind == "collective" && probe.transport == "rdma")) {
    why = "needs RDMA devices, which the twin does not emulate";
    return false;
  }
  return true;
}

// Categories the twin cannot reproduce (no LLDP agent, no RDMA device) are no evidence in its
// own baseline: they are taken out of both twin snapshots, listed, and not compared.
std::vector<std::string> drop_unreproduced(HeldSnapshot& before, HeldSnapshot& after) {
  std::vector<std::string> dropped;
  json* devices = before.document.contains("devices") ? &before.document["devices"] : nullptr;
  if (!devices || !devices->is_object()) return dropped;
  for (auto& [device, facts] : devices->items()) {
    if (!facts.is_object() || !facts.contains("sources") || !facts["sources"].is_object()) continue;
    std::vector<std::string> categories;
    for (const auto& [category, source] : facts["sources"].items())
      if (string_member(source, "status").value_or("") != "ok") categories.push_back(category);
    for (const auto& category : categories) {
      std::string reason = member_text(facts["sources"][category], "reason");
      if (reason.size() > 120) reason = reason.substr(0, 120) + "...";
      dropped.push_back(device + ": " + category + " not reproduced on the twin (" + reason + ")");
      for (HeldSnapshot* snapshot : {&before, &after}) {
        auto& document = snapshot->document;
        if (!document.contains("devices") || !document["devices"].contains(device)) continue;
        auto& entry = document["devices"][device];
        if (!entry.is_object()) continue;
        entry.erase(category);
        if (entry.contains("sources") && entry["sources"].is_object()) entry["sources"].erase(category);
      }
    }
  }
  return dropped;
}

// The peer `peer` of `category` (bgp, bfd) of `device` in a twin snapshot, or null.
const json* twin_peer(const json& document, const std::string& device, const std::string& category,
                      const std::string& peer) {
  const json* at = &document;
  for (const std::string& key :
       {std::string("devices"), device, category, std::string("peers"), peer})
    if (!(at = object_member(*at, key))) return nullptr;
  return at;
}

json* twin_peer(json& document, const std::string& device, const std::string& category,
                const std::string& peer) {
  return const_cast<json*>(twin_peer(std::as_const(document), device, category, peer));
}

// Removes the far ends the twin gave unconnected interfaces (unconnected_peer_names) from both
// snapshots: they are the twin's, and a step that deletes such an interface takes its peer
// along, which would read as a link production never had going missing. Only the names the
// twin made on that node go: a production interface that happens to be called `tw-u1` stays.
// The nftables table the twin adds for its VXLAN devices goes too.
void drop_twin_made(HeldSnapshot& snapshot, const TwinPlan& plan) {
  auto& document = snapshot.document;
  if (!document.contains("devices") || !document["devices"].is_object()) return;
  auto& devices = document["devices"];
  for (const auto& node : plan.nodes) {
    auto facts = devices.find(node.name);
    if (facts == devices.end() || !facts->is_object()) continue;
    auto interfaces = facts->find("interfaces");
    if (interfaces == facts->end() || !interfaces->is_object()) continue;
    for (const auto& name : unconnected_peer_names(node)) interfaces->erase(name);
  }
  // The table that makes the twin's VXLAN devices route each packet (kVxlanSpreadTable).
  const std::string table = "netdev " + std::string(kVxlanSpreadTable);
  for (auto& [device, facts] : devices.items()) {
    if (!facts.is_object()) continue;
    auto filter = facts.find("packet_filter");
    if (filter == facts.end() || !filter->is_object()) continue;
    for (auto& [section, entries] : filter->items()) {
      if (!entries.is_object()) continue;
      std::vector<std::string> made;
      for (const auto& [key, entry] : entries.items())
        if (key == table || key.starts_with(table + " ")) made.push_back(key);
      for (const auto& key : made) entries.erase(key);
    }
  }
}

// One spread window on the twin (load_spread.h, docs/probes.md "Load spread"): the group
// devices' counters, only the window's udp flows probes, the counters again, as production's
// spread gates measure it. The groups are `baseline_groups` for the baseline, and for the
// acceptance window those the routes show at its end (a drained member has left its group).
struct SpreadWindow {
  std::vector<GroupSpread> spreads;
  std::string missing;       // not empty: the window is no evidence, and why
  std::string failed_probe;  // not empty: a window probe did not pass
  std::vector<std::string> unresolved;
};

SpreadWindow spread_window(CollectorSnapshotter& snapshotter, SshRemote& remote,
                           ProbeContext context, const std::vector<intent::Probe>& probes,
                           const EcmpGroups& baseline_groups,
                           const std::vector<const intent::Device*>& devices,
                           const std::string& intent_commit, bool baseline) {
  SpreadWindow window;
  std::set<std::string> group_devices;
  for (const auto& group : baseline_groups.groups) group_devices.insert(group.device);
  std::vector<const intent::Device*> read;
  for (const auto* device : devices)
    if (group_devices.contains(device->name)) read.push_back(device);
  const std::set<std::string> categories = {"interfaces", "routes"};
  auto before = snapshotter.take_counters(read, categories, intent_commit);
  context.flows_packets = kSpreadPacketsPerFlow;
  auto outcomes =
      run_probes(remote, context, probes, baseline ? "twin-spread-baseline" : "twin-spread");
  auto after = snapshotter.take_counters(read, categories, intent_commit);
  if (!before || !after) {
    window.missing = "the interface counters could not be read " +
                     std::string(!before ? "before" : "after") + " the window";
    return window;
  }
  for (const auto& outcome : outcomes)
    if (outcome.verdict != Verdict::pass) {
      window.failed_probe = outcome.name + " on " + outcome.host + ": " +
                            std::string(to_string(outcome.verdict)) + ": " + outcome.reason;
      return window;
    }
  auto groups = baseline_groups;
  if (!baseline) {
    groups = ecmp_groups(after->document, after->routes);
    for (const auto& group : baseline_groups.groups)
      if (!groups.routes_read.contains(group.device)) groups.groups.push_back(group);
  }
  window.unresolved = groups.unresolved;
  window.spreads = measure_spread(groups.groups, before->document, after->document);
  return window;
}

json probe_lines(const std::vector<ProbeOutcome>& outcomes) {
  json lines = json::array();
  for (const auto& outcome : outcomes)
    lines.push_back({{"name", outcome.name},
                     {"verdict", std::string(to_string(outcome.verdict))},
                     {"reason", outcome.reason}});
  return lines;
}

}  // namespace

namespace {
constexpr std::string_view kFewerPrefixes = " [fewer]";

bool is_fewer_line(const std::string& line) {
  return line.size() >= kFewerPrefixes.size() &&
         line.compare(line.size() - kFewerPrefixes.size(), kFewerPrefixes.size(),
                      kFewerPrefixes) == 0;
}
}  // namespace

std::vector<std::string> unconverged(const TwinPlan& plan, const json& production,
                                     const json& twin) {
  std::vector<std::string> missing;
  auto reachable = reachable_addresses(plan);
  for (const auto& node : plan.nodes) {
    if (node.emulator != Emulator::frr) continue;
    // BFD too: a session still coming up when the twin's baseline is taken reads as the
    // change bringing it up.
    struct Up {
      const char* category;
      const char* field;
      const char* value;
    };
    for (const auto& [category, field, up] :
         {Up{"bgp", "state", "Established"}, Up{"evpn", "state", "Established"},
          Up{"bfd", "status", "up"}}) {
      const json* before = peers_of(production, node.name, category);
      if (!before) continue;
      const json* now = peers_of(twin, node.name, category);
      for (const auto& [peer, entry] : before->items()) {
        if (string_member(entry, field).value_or("") != up) continue;
        if (!reachable.count(peer)) continue;  // its far end is outside the twin
        const json* twin_peer = now ? object_member(*now, peer) : nullptr;
        std::string state = twin_peer ? string_member(*twin_peer, field).value_or("?") : "absent";
        if (state != up) {
          missing.push_back(node.name + ": " + category + " peer " + peer + " is " + state +
                            " (production: " + up + ")");
          continue;
        }
        // Up is not enough: its routes must have arrived too. Fewer than production had is
        // what a twin cut at its radius may settle at, so the caller accepts that once the
        // counts stop moving.
        auto wanted = integer_member(entry, "prefixes_received");
        auto got = integer_member(*twin_peer, "prefixes_received");
        if (wanted && got.value_or(-1) < *wanted)
          missing.push_back(node.name + ": " + category + " peer " + peer + " has " +
                            std::to_string(got.value_or(0)) + " prefixes (production: " +
                            std::to_string(*wanted) + ")" + std::string(kFewerPrefixes));
      }
    }
  }
  return missing;
}

std::vector<std::string> sessions_reset(const json& before, const json& after, Duration elapsed,
                                        const std::vector<std::string>& expected_flaps) {
  std::vector<std::string> reset;
  const json* devices = object_member(after, "devices");
  if (!devices) return reset;
  for (const auto& [device, facts] : devices->items()) {
    for (const char* category : {"bgp", "evpn"}) {
      const json* was = peers_of(before, device, category);
      const json* now = peers_of(after, device, category);
      if (!was || !now) continue;
      for (const auto& [peer, entry] : now->items()) {
        const json* earlier = object_member(*was, peer);
        if (!earlier || string_member(*earlier, "state").value_or("") != "Established" ||
            string_member(entry, "state").value_or("") != "Established")
          continue;
        // Without a reset it aged by at least the time between the readings; a second of
        // slack for a daemon that counts uptime in whole seconds.
        auto uptime = integer_member(entry, "uptime_ms");
        auto uptime_before = integer_member(*earlier, "uptime_ms");
        if (!uptime || !uptime_before || *uptime + 1000 >= *uptime_before + elapsed.count())
          continue;
        const std::string subject = device + ":bgp " + peer;
        if (std::find(expected_flaps.begin(), expected_flaps.end(), subject) != expected_flaps.end())
          continue;
        reset.push_back(device + ": " + category + " peer " + peer +
                        " was reset during the change (up " + format_duration(Duration{*uptime}) +
                        " after it, " + format_duration(Duration{*uptime_before}) +
                        " at the twin's baseline)");
      }
    }
  }
  return reset;
}

TwinOutcome rehearse_on_twin(const TwinInputs& inputs, const TwinOptions& options) {
  TwinOutcome outcome;
  const auto started = Clock::now();
  json phases = json::object();
  auto& report = outcome.report;
  report["change"] = inputs.change.id;

  // 1. plan: which devices, links and configurations, from production's pre snapshot.
  PlanRequest request{inputs.inventory, inputs.change, inputs.pre, options.radius};
  TwinPlan plan = plan_twin(request);
  report["plan"] = to_json(plan);
  std::vector<std::string> gaps = plan.fidelity_gaps;
  auto finish = [&](Verdict verdict, std::string summary) {
    outcome.verdict = verdict;
    outcome.summary = std::move(summary);
    phases["total_s"] = seconds_since(started);
    report["phases"] = phases;
    report["verdict"] = std::string(to_string(verdict));
    report["summary"] = outcome.summary;
    report["fidelity_gaps"] = gaps;
    return outcome;
  };
  // Steps the twin cannot send as written: a gNMI Set needs a gNMI target, which no twin node
  // runs.
  for (const auto& step : inputs.change.steps) {
    if (!step.gnmi_set.empty())
      plan.cannot_build.push_back(step.device + ": a step is a gNMI Set, and the twin runs no "
                                                "gNMI target to send it to");
    auto secrets = secret_references(step.run, inputs.secret_names);
    if (!secrets.empty())
      plan.cannot_build.push_back(step.device + ": a step refers to the secret $" +
                                  secrets.front() + ", and the twin is given no secrets");
  }
  if (!plan.cannot_build.empty()) {
    outcome.details = plan.cannot_build;
    return finish(Verdict::no_evidence, "no twin can be built: " + plan.cannot_build.front());
  }

  // 2. build: namespaces, links, addresses, FRR with the captured configurations.
  auto phase = Clock::now();
  auto built = TwinFabric::build(plan, options.fabric);
  phases["build_s"] = seconds_since(phase);
  if (!built.ok()) {
    outcome.details.push_back(built.error());
    return finish(Verdict::no_evidence, "the twin could not be built: " + built.error());
  }
  TwinFabric& fabric = **built;
  for (const auto& gap : fabric.build_gaps()) gaps.push_back(gap);
  report["folder"] = fabric.dir().string();  // gone when the twin is
  NamespaceConnector connector(fabric);
  ssh::ConnectionCache connections(connector);
  SshRemote remote(connections);
  CollectorSnapshotter snapshotter(inputs.profiles, connections, nullptr, options.parallelism);
  std::vector<const intent::Device*> devices;
  for (const auto& node : plan.nodes)
    if (const auto* device = inputs.inventory.find(node.name)) devices.push_back(device);

  auto end = [&](Verdict verdict, std::string summary) {
    report["usage"] = fabric.usage();
    connections.close_all();
    auto left = fabric.tear_down();
    for (const auto& problem : left) outcome.details.push_back("teardown: " + problem);
    return finish(verdict, std::move(summary));
  };

  // 3. converge: every session production had up between twin devices is up on the twin.
  phase = Clock::now();
  std::vector<std::string> behind, before_last;
  int same_polls = 0;
  const auto converge_until = Clock::now() + options.converge_timeout;
  do {
    auto sessions =
        snapshotter.take_categories(devices, {"bgp", "evpn", "bfd"}, inputs.intent_commit);
    behind = unconverged(plan, inputs.pre.document, sessions.document);
    if (behind.empty()) break;
    // Only route counts short of production's, unchanged for three polls (1.5 s or more):
    // settled where a twin cut at its radius settles.
    bool only_fewer = std::all_of(behind.begin(), behind.end(), is_fewer_line);
    same_polls = only_fewer && behind == before_last ? same_polls + 1 : 0;
    before_last = behind;
    if (same_polls >= 3) {
      for (auto& line : behind)
        gaps.push_back(line.substr(0, line.size() - kFewerPrefixes.size()) +
                       ": the twin settled there");
      behind.clear();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } while (Clock::now() < converge_until);
  for (auto& line : behind)
    if (is_fewer_line(line)) line.resize(line.size() - kFewerPrefixes.size());
  phases["converge_s"] = seconds_since(phase);
  if (!behind.empty()) {
    outcome.details = behind;
    return end(Verdict::no_evidence, "the twin did not converge to production's state within " +
                                         format_duration(options.converge_timeout) + ": " +
                                         behind.front());
  }

  // 4. the twin's own baseline: which probes pass on it before the change (a probe that fails
  //    there is a limit of the twin, not the change's fault, and is not judged), and its
  //    snapshot.
  phase = Clock::now();
  std::vector<intent::Probe> probes;
  for (const auto& probe : inputs.change.acceptance.probes) {
    std::string why;
    if (runs_on_twin(probe, why))
      probes.push_back(probe);
    else
      gaps.push_back("probe " + probe.name + " not run on the twin: it " + why);
  }
  ProbeContext context{inputs.inventory, inputs.probe_settings};
  auto baseline = run_probes(remote, context, probes, "twin-baseline");
  report["baseline_probes"] = probe_lines(baseline);
  std::vector<intent::Probe> judged;
  for (std::size_t i = 0; i < probes.size() && i < baseline.size(); ++i) {
    if (baseline[i].verdict == Verdict::pass)
      judged.push_back(probes[i]);
    else
      gaps.push_back("probe " + probes[i].name + " does not pass on the unchanged twin (" +
                     baseline[i].reason + "): not judged there");
  }
  auto before_taken = snapshotter.take(devices, inputs.intent_commit);
  const auto baseline_taken = Clock::now();  // every baseline reading is older than this
  HeldSnapshot before{std::move(before_taken.document), std::move(before_taken.routes)};
  // The spread baseline, from the twin's own equal-cost groups (production's spread gates
  // measure the same way): without a usable one the spread is not judged on the twin.
  const auto window_probes = spread_window_probes(judged);
  const auto groups = ecmp_groups(before.document, before.routes);
  std::optional<std::vector<GroupSpread>> spread_baseline;
  json spread_report = json::object();
  if (!window_probes.empty() && !groups.groups.empty()) {
    auto window = spread_window(snapshotter, remote, context, window_probes, groups, devices,
                                inputs.intent_commit, true);
    spread_report["baseline"] = to_json(window.spreads);
    std::size_t usable = 0;
    for (const auto& spread : window.spreads)
      usable += spread.missing.empty() && spread.total >= SpreadLimits{}.min_packets;
    if (!window.missing.empty() || !window.failed_probe.empty() || usable == 0)
      gaps.push_back("the load spread has no baseline on the twin (" +
                     (!window.missing.empty() ? window.missing
                      : !window.failed_probe.empty()
                          ? "a window probe did not pass: " + window.failed_probe
                          : std::string("no equal-cost group carried the window")) +
                     "): not judged there");
    else
      spread_baseline = std::move(window.spreads);
  }
  phases["baseline_s"] = seconds_since(phase);

  // 5. the continuous probe (acceptance.during), as in production from before the first step
  //    to after acceptance: a session flap that heals by itself shows only there. One that
  //    cannot start or ends without evidence on the twin is a limit of the twin, not judged.
  std::unique_ptr<WatchSession> watch;
  if (inputs.change.acceptance.during) {
    watch = std::make_unique<WatchSession>(remote, context, *inputs.change.acceptance.during);
    if (auto failed = watch->start(std::min(watch_must_outlast(inputs.change), kWatchLimit))) {
      gaps.push_back("the continuous probe did not start on the twin (" + failed->reason +
                     "): not judged there");
      watch.reset();
    }
  }

  // 6. execute: the change's steps as written, in the twin nodes (never journaled: nothing
  //    here touches production, and `fabgate recover` must never think it did).
  phase = Clock::now();
  Executor executor(remote, inputs.inventory, inputs.change, nullptr, options.parallelism);
  auto execution = executor.apply(Clock::now() + inputs.change.bounds.deadline);
  json steps = json::array();
  for (const auto& run : execution.runs) steps.push_back(to_json(run));
  report["steps"] = steps;
  phases["execute_s"] = seconds_since(phase);
  if (execution.failure) {
    watch.reset();  // stops it on the twin's hosts before they go
    outcome.details.push_back(*execution.failure);
    return end(Verdict::fail, "disproven on the twin: " + *execution.failure);
  }

  // 7. settle, probe, snapshot, compare: as production would be judged.
  phase = Clock::now();
  std::this_thread::sleep_for(inputs.change.acceptance.settle);
  auto after_probes = run_probes(remote, context, judged, "twin-acceptance");
  report["acceptance_probes"] = probe_lines(after_probes);
  std::optional<ProbeOutcome> during;
  if (watch) {
    during = watch->stop();
    watch.reset();
    report["during"] = {{"verdict", std::string(to_string(during->verdict))},
                        {"reason", during->reason}};
    if (during->verdict == Verdict::no_evidence) {
      gaps.push_back("the continuous probe has no verdict on the twin (" + during->reason +
                     "): not judged there");
      during.reset();
    }
  }
  // The acceptance spread window, judged against the baseline's as production judges it.
  std::optional<SpreadJudgement> spread;
  std::string spread_failed_probe;
  if (spread_baseline) {
    auto window = spread_window(snapshotter, remote, context, window_probes, groups, devices,
                                inputs.intent_commit, false);
    spread_report["acceptance"] = to_json(window.spreads);
    for (const auto& line : window.unresolved) gaps.push_back("spread not measured: " + line);
    if (!window.failed_probe.empty()) {
      spread_failed_probe = window.failed_probe;  // passed moments ago: the change's doing
    } else if (!window.missing.empty()) {
      gaps.push_back("the load spread after the change: " + window.missing + ": not judged there");
    } else {
      std::set<std::string> group_devices;
      for (const auto& group : groups.groups) group_devices.insert(group.device);
      spread = judge_spread(*spread_baseline, window.spreads,
                            declared_spread_devices(inputs.change, group_devices), SpreadLimits{});
      spread_report["lines"] = spread->lines;
      spread_report["verdict"] = std::string(to_string(spread->verdict));
      if (spread->verdict == Verdict::no_evidence)
        gaps.push_back(
            "the load spread after the change could not be read for a group "
            "(report's spread lines): not judged there");
    }
  }
  report["spread"] = spread_report;
  const auto after_started = Clock::now();  // every later reading is younger than this
  auto after_taken = snapshotter.take(devices, inputs.intent_commit);
  HeldSnapshot after{std::move(after_taken.document), std::move(after_taken.routes)};
  // A session Established in both snapshots that aged less than the time between them went
  // down and came back: the flap production's telemetry gate would see (the twin streams no
  // telemetry), unless the change expects it (acceptance.expected_flaps).
  auto resets = sessions_reset(
      before.document, after.document,
      std::chrono::duration_cast<Duration>(after_started - baseline_taken),
      inputs.change.acceptance.expected_flaps);
  report["sessions_reset"] = resets;
  for (auto& line : drop_unreproduced(before, after)) gaps.push_back(std::move(line));
  for (auto& line : align_cold_start(before, after, inputs.pre.document))
    gaps.push_back(std::move(line));
  drop_twin_made(before, plan);
  drop_twin_made(after, plan);
  TwinComparison comparison = inputs.compare ? inputs.compare(before, after) : TwinComparison{};
  report["compare"] = {{"verdict", std::string(to_string(comparison.verdict))},
                       {"lines", comparison.lines}};
  phases["judge_s"] = seconds_since(phase);

  for (const auto& probe : after_probes)
    if (probe.verdict == Verdict::fail || probe.verdict == Verdict::no_evidence) {
      std::string line = "probe " + probe.name + " (" + probe.host + "): " + probe.reason;
      outcome.details.push_back(line);
      if (probe.verdict == Verdict::fail)
        return end(Verdict::fail, "disproven on the twin: " + line);
    }
  if (!resets.empty()) {
    for (const auto& line : resets) outcome.details.push_back(line);
    return end(Verdict::fail, "disproven on the twin: " + resets.front());
  }
  if (during && during->verdict == Verdict::fail) {
    std::string line = "continuous probe " + inputs.change.acceptance.during->host + " -> " +
                       inputs.change.acceptance.during->target + ": " + during->reason;
    outcome.details.push_back(line);
    return end(Verdict::fail, "disproven on the twin: " + line);
  }
  if (!spread_failed_probe.empty()) {
    std::string line = "a flows probe of the spread window did not pass: " + spread_failed_probe;
    outcome.details.push_back(line);
    return end(Verdict::fail, "disproven on the twin: " + line);
  }
  if (spread && spread->verdict == Verdict::fail) {
    for (const auto& line : spread->failures) outcome.details.push_back(line);
    return end(Verdict::fail, "disproven on the twin: " + spread->failures.front());
  }
  for (const auto& line : comparison.lines) outcome.details.push_back(line);
  if (comparison.verdict == Verdict::fail)
    return end(Verdict::fail, "disproven on the twin: " +
                                  (comparison.lines.empty() ? std::string("the comparison failed")
                                                            : comparison.lines.front()));
  if (!outcome.details.empty() || comparison.verdict != Verdict::pass)
    return end(Verdict::no_evidence,
               "the twin could not judge every check: " +
                   (outcome.details.empty() ? std::string("the comparison did not run")
                                            : outcome.details.front()));
  if (judged.empty() && inputs.change.compare.expected.empty() && !probes.empty())
    return end(Verdict::no_evidence, "no probe of the change passes on the unchanged twin");
  return end(Verdict::pass, "the change held on the twin (" + std::to_string(judged.size()) + " of " +
                                std::to_string(inputs.change.acceptance.probes.size()) +
                                " probes judged there, the comparison as expected)");
}

std::vector<std::string> align_cold_start(HeldSnapshot& before, const HeldSnapshot& after,
                                          const json& production) {
  static const json kNone = json::object();
  std::vector<std::string> aligned;
  const json* devices = object_member(production, "devices");
  if (!devices) return aligned;
  for (const auto& [device, facts] : devices->items()) {
    const json* bgp = object_member(facts, "bgp");
    const json* bgp_peers = bgp ? object_member(*bgp, "peers") : nullptr;
    for (const auto& [peer, production_peer] : (bgp_peers ? *bgp_peers : kNone).items()) {
      auto learned = number_member(production_peer, "remote_as");
      json* twin = twin_peer(before.document, device, "bgp", peer);
      if (!learned || *learned == 0 || !twin || number_member(*twin, "remote_as").value_or(-1) != 0)
        continue;
      (*twin)["remote_as"] = production_peer["remote_as"];
      aligned.push_back(device + ": bgp peer " + peer +
                        " has not come up on the twin (remote_as 0): production's learned AS " +
                        production_peer["remote_as"].dump() + " is its baseline there");
    }
    const json* bfd = object_member(facts, "bfd");
    const json* bfd_peers = bfd ? object_member(*bfd, "peers") : nullptr;
    for (const auto& [peer, production_peer] : (bfd_peers ? *bfd_peers : kNone).items()) {
      auto bound = string_member(production_peer, "interface");
      json* twin = twin_peer(before.document, device, "bfd", peer);
      if (!bound || !twin || twin->contains("interface")) continue;
      // Twin-before takes twin-after's counts: the comparison then sees them unchanged (and
      // still sees the session, its status and timers), and this line says why.
      const json* later = twin_peer(after.document, device, "bfd", peer);
      for (const char* counter : {"session_down_events", "session_up_events"})
        if (later && later->contains(counter)) (*twin)[counter] = (*later)[counter];
      aligned.push_back(device + ": bfd peer " + peer +
                        " is bound to no interface on the twin (production: " + *bound +
                        "): its session events are not judged there");
    }
  }
  return aligned;
}

}  // namespace fabgate::pipeline::twin
