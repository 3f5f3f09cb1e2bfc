// Gates spread-baseline and spread: how the probes' packets divide over each equal-cost group
// they cross, before and after the change (load_spread.h, docs/probes.md "Load spread").

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "adapters/core/text.h"
#include "gates/pipeline/controller/pipeline.h"
#include "gates/pipeline/families/load_spread.h"

namespace fabgate::pipeline {

std::vector<intent::Probe> Pipeline::spread_probes() const {
  return spread_window_probes(host_probes());
}

bool Pipeline::spread_applies() const {
  // Measured where it can say something: a udp flows probe to carry the window, and an
  // equal-cost group on a device in scope.
  return !spread_probes().empty() && !ecmp_groups(pre_.document, pre_.routes).groups.empty();
}

void Pipeline::measure_spread(GateRecord& record, const std::string& phase) {
  const bool baseline = phase == "baseline";
  if (!baseline && !spread_baseline_) {
    record.verdict = Verdict::skipped;
    record.summary = "no baseline spread to compare with (see spread-baseline), so nothing is judged";
    return;
  }
  // The groups and their devices, from the baseline's routes; the counters are read only there.
  auto before_change = ecmp_groups(pre_.document, pre_.routes);
  std::set<std::string> group_devices;
  for (const auto& group : before_change.groups) group_devices.insert(group.device);
  std::vector<const intent::Device*> devices;
  for (const auto* device : scope_)
    if (group_devices.contains(device->name)) devices.push_back(device);

  // The window: counters, only fabgate's udp flows probes, counters. The continuous probe
  // (watch) is not running in either window: it starts after spread-baseline and stops before
  // spread.
  const std::set<std::string> categories = {"interfaces", "routes"};
  auto read_before = with_.snapshotter.take_counters(devices, categories, repository_.commit.id);
  ProbeContext context = probe_context_;
  context.flows_packets = kSpreadPacketsPerFlow;
  auto outcomes = run_probes(with_.remote, context, spread_probes(), "spread-" + phase);
  auto read_after = with_.snapshotter.take_counters(devices, categories, repository_.commit.id);

  nlohmann::json window_probes = nlohmann::json::array();
  for (const auto& outcome : outcomes) window_probes.push_back(to_json(outcome));
  for (const auto& [file, document] :
       {std::pair<std::string, const nlohmann::json*>{"spread/" + phase + "-before.json",
                                                      read_before ? &read_before->document : nullptr},
        {"spread/" + phase + "-after.json", read_after ? &read_after->document : nullptr},
        {"spread/" + phase + "-probes.json", &window_probes}})
    if (document)
      if (auto written = with_.evidence.write_json(file, *document); !written.ok())
        record.details.push_back("evidence: " + written.error().message);

  auto no_reference = [&](const std::string& why) {
    // Without a usable baseline window the acceptance one has nothing to be judged against:
    // skipped, never passed, and said so there.
    record.verdict = baseline ? Verdict::skipped : Verdict::no_evidence;
    record.summary = why;
  };
  if (!read_before || !read_after)
    return no_reference("the interface counters could not be read " +
                        std::string(!read_before ? "before" : "after") + " the window");
  std::vector<std::string> failed;
  for (const auto& outcome : outcomes)
    if (outcome.verdict != Verdict::pass)
      failed.push_back(outcome.name + " on " + outcome.host + ": " +
                       std::string(to_string(outcome.verdict)) + ": " + outcome.reason);
  if (!failed.empty()) {
    for (const auto& line : failed) record.details.push_back("[spread window] " + line);
    if (!baseline) {
      // The same probes passed in acceptance moments ago: a loss now is the change's too.
      record.verdict = Verdict::fail;
      record.summary = "a flows probe of the spread window did not pass: " + failed.front();
      return;
    }
    return no_reference("a flows probe of the window did not pass, so its spread is no baseline: " +
                        failed.front());
  }

  // The groups as the routes stand at the end of the window (a drained member has left its
  // group, so the rest carrying everything is no concentration); a device whose routes were not
  // read keeps its baseline groups.
  auto now_groups = ecmp_groups(read_after->document, read_after->routes);
  for (const auto& group : before_change.groups)
    if (!now_groups.routes_read.contains(group.device)) now_groups.groups.push_back(group);
  auto spreads = pipeline::measure_spread(baseline ? before_change.groups : now_groups.groups,
                                read_before->document, read_after->document);
  if (auto written = with_.evidence.write_json("spread/" + phase + ".json", to_json(spreads));
      !written.ok())
    record.details.push_back("evidence: " + written.error().message);
  for (const auto& line : now_groups.unresolved) record.details.push_back("not measured: " + line);

  if (baseline) {
    // The baseline is recorded, not judged: an uneven spread may be the fabric's design.
    std::size_t usable = 0;
    for (const auto& spread : spreads) {
      if (!spread.missing.empty())
        record.details.push_back(spread.group.name() + ": no evidence: " + spread.missing);
      else
        record.details.push_back(spread.group.name() + ": " + spread.shares_text() + " (" +
                                 std::to_string(spread.total) + " packets)");
      usable += spread.missing.empty() && spread.total >= SpreadLimits{}.min_packets;
    }
    if (usable == 0)
      return no_reference("no equal-cost group carried the probes' packets in the window");
    spread_baseline_ = std::move(spreads);
    record.verdict = Verdict::pass;
    record.summary = std::to_string(usable) + " equal-cost group(s) measured with " +
                     std::to_string(outcomes.size()) + " flows probe(s)";
    return;
  }

  auto declared = declared_spread_devices(change_, group_devices);
  auto judgement = judge_spread(*spread_baseline_, spreads, declared, SpreadLimits{});
  record.details.insert(record.details.end(), judgement.lines.begin(), judgement.lines.end());
  record.verdict = judgement.verdict;
  switch (judgement.verdict) {
    case Verdict::fail:
      record.summary = judgement.failures.front();
      break;
    case Verdict::no_evidence:
      record.summary = "the counters of an equal-cost group could not be read (details)";
      break;
    case Verdict::pass:
      record.summary = std::to_string(judgement.judged) +
                       " equal-cost group(s) spread as before the change";
      break;
    case Verdict::skipped:
      record.summary = "no equal-cost group with a baseline carried the probes' packets";
      break;
  }
}

}  // namespace fabgate::pipeline
