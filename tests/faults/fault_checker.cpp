#include "tests/faults/fault_checker.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace fabgate::faults {
namespace {

struct Line {
  std::int64_t at_ns = 0;
  std::string kind;  // step, rollback
  std::int64_t token = 0;
  std::string run;
  long generation = 0;
  std::string change;
  std::string sent;  // the sender's token, "?" when unknown
  std::string raw;   // "d1: <the line>", for evidence
};

std::optional<Line> parse(const std::string& device, const std::string& text) {
  std::istringstream in(text);
  Line line;
  std::string sent;
  if (!(in >> line.at_ns >> line.kind >> line.token >> line.run >> line.generation >>
        line.change >> sent))
    return std::nullopt;
  if ((line.kind != "step" && line.kind != "rollback") || sent.rfind("sent=", 0) != 0)
    return std::nullopt;
  line.sent = sent.substr(5);
  line.raw = device + ": " + text;
  return line;
}

const RunObservation* find_run(const Observation& observed, const std::string& run) {
  for (const auto& r : observed.runs)
    if (r.run == run) return &r;
  return nullptr;
}

std::string exit_text(const RunObservation* run) {
  if (run == nullptr) return "a run no controller of the schedule started";
  std::string text = "run " + run->run + " (" + run->controller + ", change " + run->change +
                     ") ended " +
                     (run->exit_code == -1    ? std::string("hung (killed by the harness)")
                      : run->exit_code == 137 ? std::string("SIGKILLed by the schedule")
                                              : "exit " + std::to_string(run->exit_code));
  if (run->recover_exit) text += "; its recover exited " + std::to_string(*run->recover_exit);
  return text;
}

// When the run let go of its devices: when its journal says its claims were released in etcd;
// without such a record, its own end when it ended refused, rolled back or accepted, or the end
// of the recover that took it over, whichever came first; never while neither happened
// (killed, NOT RESTORED and not recovered, hung).
std::int64_t released_at(const RunObservation* run) {
  if (run == nullptr) return kNever;
  if (run->released_ns != kNever) return run->released_ns;
  std::int64_t at = kNever;
  if (run->exit_code == 0 || run->exit_code == 3 || run->exit_code == 4) at = run->ended_ns;
  if (run->recover_exit && (*run->recover_exit == 4 || *run->recover_exit == 3 ||
                            *run->recover_exit == 0))
    at = std::min(at, run->recover_ended_ns);
  return at;
}

// The configuration a device's log implies: each step appends "<change> <run>" after keeping a
// copy of what was there (once per run), each rollback restores that run's copy.
std::vector<std::string> replay(const DeviceObservation& device, const std::vector<Line>& lines) {
  std::vector<std::string> state = device.baseline;
  std::map<std::string, std::vector<std::string>> copies;
  for (const auto& line : lines) {
    if (line.kind == "step") {
      copies.emplace(line.run, state);
      state.push_back(line.change + " " + line.run);
    } else if (auto copy = copies.find(line.run); copy != copies.end()) {
      state = copy->second;
    }
  }
  return state;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += (text.empty() ? "" : " | ") + line;
  return text.empty() ? "(empty)" : text;
}

// Invariant 2: tokens never go back on a device, one token is one holder, and the sender's
// token is the one the device held.
void check_tokens(const DeviceObservation& device, const std::vector<Line>& lines,
                  std::vector<Violation>& out) {
  const Line* newest = nullptr;
  std::map<std::int64_t, const Line*> holder_of;
  for (const auto& line : lines) {
    if (newest != nullptr && line.token < newest->token)
      out.push_back({2,
                     device.name + " accepted a command with token " + std::to_string(line.token) +
                         " after one with the newer token " + std::to_string(newest->token),
                     {newest->raw, line.raw}});
    if (auto seen = holder_of.find(line.token); seen != holder_of.end()) {
      if (seen->second->run != line.run)
        out.push_back({2,
                       device.name + ": token " + std::to_string(line.token) +
                           " held by two runs, " + seen->second->run + " and " + line.run,
                       {seen->second->raw, line.raw}});
    } else {
      holder_of[line.token] = &line;
    }
    if (line.sent != "?" && line.sent != std::to_string(line.token))
      out.push_back({2,
                     device.name + " ran a command sent with token " + line.sent +
                         " while its fence held " + std::to_string(line.token),
                     {line.raw}});
    if (newest == nullptr || line.token > newest->token) newest = &line;
  }
}

// Invariant 1: in each group, no more devices in change at once than its budget. A device is
// in change for a run from the first command of that run it accepted until the run let go
// (released_at) or its last command, whichever is later.
void check_budgets(const Observation& observed,
                   const std::map<std::string, std::vector<Line>>& lines_of,
                   std::vector<Violation>& out) {
  struct Interval {
    std::string device;
    std::string run;
    std::int64_t from = 0;
    std::int64_t to = 0;
    std::string first;  // its first line
  };
  std::map<std::string, std::vector<Interval>> by_group;
  for (const auto& device : observed.devices) {
    std::map<std::string, Interval> of_run;
    for (const auto& line : lines_of.at(device.name)) {
      auto [it, fresh] = of_run.try_emplace(line.run);
      if (fresh) it->second = {device.name, line.run, line.at_ns, line.at_ns, line.raw};
      it->second.to = std::max(it->second.to, line.at_ns);
    }
    for (auto& [run, interval] : of_run) {
      std::int64_t released = released_at(find_run(observed, run));
      interval.to = released == kNever ? kNever : std::max(interval.to, released);
      by_group[device.group].push_back(interval);
    }
  }
  for (const auto& [group, intervals] : by_group) {
    auto budget = observed.budget_of_group.find(group);
    if (budget == observed.budget_of_group.end()) continue;
    // At each interval's start, the devices in change are those of the intervals open then.
    std::set<std::string> reported;
    for (const auto& at : intervals) {
      std::set<std::string> devices;
      std::vector<std::string> evidence;
      for (const auto& other : intervals)
        if (other.from <= at.from && at.from <= other.to) {
          devices.insert(other.device);
          evidence.push_back(other.first + "  (in change until " +
                             (other.to == kNever ? std::string("the end: never released")
                                                 : std::to_string(other.to)) +
                             ")");
        }
      if (static_cast<int>(devices.size()) <= budget->second) continue;
      std::string key;
      for (const auto& d : devices) key += d + ",";
      if (!reported.insert(key).second) continue;
      out.push_back({1,
                     group + ": " + std::to_string(devices.size()) +
                         " devices in change at once, budget " + std::to_string(budget->second),
                     evidence});
    }
  }
}

}  // namespace

std::vector<Violation> check(const Observation& observed) {
  std::vector<Violation> out;
  std::map<std::string, std::vector<Line>> lines_of;
  for (const auto& device : observed.devices) {
    auto& lines = lines_of[device.name];
    for (const auto& text : device.log) {
      if (auto line = parse(device.name, text)) {
        lines.push_back(*line);
      } else {
        out.push_back({0, device.name + ": a log line the checker cannot read", {text}});
      }
    }
    check_tokens(device, lines, out);
  }
  check_budgets(observed, lines_of, out);

  for (const auto& device : observed.devices) {
    const auto& lines = lines_of[device.name];
    std::vector<std::string> history;
    for (const auto& line : lines) history.push_back(line.raw);
    // The device's state must be what its accepted commands made it: anything else is a
    // command that ran without its line, or a change made behind the checker's back.
    auto expected = replay(device, lines);
    if (expected != device.final_config) {
      auto evidence = history;
      evidence.push_back(device.name + " holds: " + joined(device.final_config));
      evidence.push_back("its log implies: " + joined(expected));
      out.push_back({3, device.name + "'s configuration is not what the commands it logged made it",
                     evidence});
    }
    // Invariant 3: every change left on a device belongs to a run that exited 0.
    for (const auto& config_line : device.final_config) {
      if (std::find(device.baseline.begin(), device.baseline.end(), config_line) !=
          device.baseline.end())
        continue;
      std::istringstream in(config_line);
      std::string change, run;
      in >> change >> run;
      const RunObservation* owner = find_run(observed, run);
      if (owner != nullptr && owner->exit_code == 0) continue;
      std::vector<std::string> evidence;
      for (const auto& line : lines)
        if (line.run == run) evidence.push_back(line.raw);
      evidence.push_back(exit_text(owner));
      const bool handed_off =
          owner != nullptr &&
          std::find(owner->exit_5_devices.begin(), owner->exit_5_devices.end(), device.name) !=
              owner->exit_5_devices.end();
      out.push_back({3,
                     device.name + " still holds the change of run " + run +
                         (handed_off ? ", named in its exit-5 hand-off and not restored by recover"
                                     : ", which was not accepted (exit 0) and not rolled back"),
                     evidence});
    }
  }

  // Invariant 4: a run that exited 0 kept its change: no rollback of it reached any device, and
  // its change is on every target.
  for (const auto& run : observed.runs) {
    if (run.exit_code != 0) continue;
    for (const auto& device : observed.devices) {
      const auto& lines = lines_of[device.name];
      for (const auto& line : lines)
        if (line.run == run.run && line.kind == "rollback")
          out.push_back({4,
                         "run " + run.run + " exited 0 but " + device.name +
                             " accepted a rollback of it",
                         {line.raw, exit_text(&run)}});
      if (std::find(run.targets.begin(), run.targets.end(), device.name) == run.targets.end())
        continue;
      const std::string mine = run.change + " " + run.run;
      if (std::find(device.final_config.begin(), device.final_config.end(), mine) ==
          device.final_config.end()) {
        std::vector<std::string> evidence;
        for (const auto& line : lines)
          if (line.run == run.run) evidence.push_back(line.raw);
        evidence.push_back(device.name + " holds: " + joined(device.final_config));
        evidence.push_back(exit_text(&run));
        out.push_back(
            {4, "run " + run.run + " exited 0 but its change is not on " + device.name, evidence});
      }
    }
    if (run.recover_exit && *run.recover_exit == 4)
      out.push_back({4, "run " + run.run + " exited 0 and a recover rolled it back (exit 4)",
                     {exit_text(&run)}});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Violation& a, const Violation& b) { return a.invariant < b.invariant; });
  return out;
}

std::string describe(const Violation& violation) {
  std::string text = (violation.invariant == 0 ? std::string("evidence")
                                               : "invariant " + std::to_string(violation.invariant)) +
                     ": " + violation.what + "\n";
  for (const auto& line : violation.evidence) text += "    " + line + "\n";
  return text;
}

}  // namespace fabgate::faults
