#include "gates/pipeline/families/probes.h"

#include <future>
#include <limits>
#include <set>

#include "adapters/core/foreign_json.h"
#include "adapters/core/shorten.h"
#include "adapters/core/text.h"
#include "adapters/core/thread_entry.h"
#include "gates/pipeline/families/collective_verdict.h"
#include "gates/pipeline/families/watch_verdict.h"

namespace fabgate::pipeline {
namespace {

// How long the remote shell may take beyond a probe's own hard deadline (session setup,
// output transfer) before fabgate gives up on it.
constexpr Duration kTransportMargin{5'000};

std::string last_line(const std::string& text) {
  auto lines = split_lines(trim(text));
  return lines.empty() ? std::string() : lines.back();
}

std::string seconds_arg(Duration duration) {
  return std::to_string(std::max<long long>(1, duration.count() / 1000)) + "s";
}

void judge_command(const ssh::CommandResult& result, ProbeOutcome& outcome) {
  outcome.exit_status = result.exit_status;
  if (result.exit_status == 0) {
    outcome.verdict = Verdict::pass;
    outcome.reason = "exit 0";
  } else if (result.exit_status == 127 || result.exit_status == 126) {
    // The shell could not find or run the command: nothing was observed.
    outcome.verdict = Verdict::no_evidence;
    outcome.reason = "command could not run (exit " + std::to_string(result.exit_status) +
                     "): " + last_line(result.stderr_text);
  } else if (result.exit_status < 0) {
    outcome.verdict = Verdict::no_evidence;
    outcome.reason = "command ended without an exit status (killed?)";
  } else {
    outcome.verdict = Verdict::fail;
    std::string why = last_line(result.stderr_text);
    if (why.empty()) why = last_line(result.stdout_text);
    outcome.reason = "exit " + std::to_string(result.exit_status) + (why.empty() ? "" : ": " + why);
  }
}

// Reads fabgate-probe's JSON document; its verdict is authoritative.
void judge_builtin(const ssh::CommandResult& result, ProbeOutcome& outcome) {
  outcome.exit_status = result.exit_status;
  // Depth-limited and typed (adapters/core/foreign_json.h): a probe host's output is input like
  // any other, and a document nested 300,000 levels deep would overflow the stack when copied.
  auto parsed = parse_foreign_json(result.stdout_text);
  auto& document = parsed.document;
  if (!parsed.ok() || !document.is_object() || !document.contains("verdict")) {
    outcome.verdict = Verdict::no_evidence;
    outcome.reason = result.exit_status == 127
                         ? "fabgate-probe is not installed on " + outcome.host
                         : "unparsable probe output (exit " + std::to_string(result.exit_status) +
                               (parsed.ok() ? "" : ", " + parsed.problem) +
                               "): " + last_line(result.stderr_text + result.stdout_text);
    return;
  }
  outcome.detail = document;
  auto verdict = string_member(document, "verdict");
  if (!verdict) {
    outcome.verdict = Verdict::no_evidence;
    outcome.reason = "probe output: " + wrong_member(document, "verdict", "a string");
    return;
  }
  outcome.verdict = *verdict == "pass"   ? Verdict::pass
                    : *verdict == "fail" ? Verdict::fail
                                         : Verdict::no_evidence;
  outcome.reason = string_member(document, "reason").value_or(*verdict);
}

// How long a long-running probe (flows responder, watch, RDMA listener) may take to print its
// readiness line, and how long it then gets to stop on SIGTERM before SIGKILL.
constexpr Duration kReadyWait{5'000};
constexpr Duration kStopWait{3'000};

// The readiness lines fabgate-probe prints on stderr (cmd/fabgate-probe, docs/lab.md).
constexpr const char* kResponderReady = "flows responder listening on";
constexpr const char* kWatchReady = "watch sampling";
constexpr const char* kListenerReady = "rdma-write listening on";

// What start_detached's script exits with when the probe did not become ready.
constexpr int kExitedBeforeReady = 1;
constexpr int kStoppedNotReady = 3;

enum class KeepOutput { no, yes };

// A long-running probe started on a device, or why it is not running.
struct Detached {
  std::string pid;
  std::string output_file;  // its stdout on the device, when kept
  std::string failure;      // empty: running, and it said it is ready
};

std::string tenths(Duration duration) {
  return std::to_string(duration.count() / 100);
}

// Why a probe did not become ready, from what the start script passed on: the probe's last
// words on stderr (the shell's "not found", the flag it rejected, the watch's unanswered flows),
// else the reason in the JSON document it printed on exit (no RDMA device).
std::string why_not_ready(const ssh::CommandResult& result) {
  std::vector<std::string> lines;
  for (const auto& line : split_lines(result.stderr_text))
    if (!trim(line).empty()) lines.emplace_back(trim(line));
  if (lines.size() > 3) lines.erase(lines.begin(), lines.end() - 3);
  if (!lines.empty()) return join(lines, "; ");
  if (trim(result.stdout_text).empty()) return "it printed nothing";
  auto parsed = parse_foreign_json(result.stdout_text);
  if (!parsed.ok())
    return "its output is " + parsed.problem + ": " + shorten(last_line(result.stdout_text), 60);
  if (auto reason = string_member(parsed.document, "reason")) return *reason;
  return wrong_member(parsed.document, "reason", "a string");
}

// Starts `command` on `device` detached from the SSH session and waits at most kReadyWait for
// `ready` on its stderr: the line the probe prints once it actually serves or samples. Started
// is not running: a missing binary, a flag the probe rejects, an early exit or no readiness in
// time make `failure` say why, and the process is stopped (TERM, then KILL), so the caller
// refuses rather than proceed with a probe that observes nothing.
Detached start_detached(Remote& remote, const intent::Device& device, const std::string& what,
                        const std::string& command, const std::string& ready, KeepOutput keep) {
  // The probe's stdout goes to $f (kept for the caller with KeepOutput::yes), its stderr to
  // $f.err, where the readiness line appears.
  // Readiness is polled every 20 ms: a responder is usually ready within one or two polls, and
  // each probe of a restore round starts one.
  std::string script =
      "ready=" + shell_quote(ready) + "\nwait_ticks=" + std::to_string(kReadyWait.count() / 20) +
      "\nstop_tenths=" + tenths(kStopWait) + "\nkeep=" + (keep == KeepOutput::yes ? "1" : "0") +
      "\nexited=" + std::to_string(kExitedBeforeReady) +
      "\nstopped=" + std::to_string(kStoppedNotReady) +
      "\nf=$(mktemp /tmp/fabgate-probe.XXXXXX) || exit 2\nsetsid " + command +
      " </dev/null >\"$f\" 2>\"$f.err\" & pid=$!\n" + R"SH(
i=0
while [ $i -lt $wait_ticks ]; do
  grep -qF "$ready" "$f.err" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.02; i=$((i+1))
done
if grep -qF "$ready" "$f.err"; then
  if [ $keep = 1 ]; then echo "$pid $f"; rm -f "$f.err"; else echo "$pid"; rm -f "$f" "$f.err"; fi
  exit 0
fi
code=$exited
if kill -TERM $pid 2>/dev/null; then
  code=$stopped
  i=0
  while kill -0 $pid 2>/dev/null && [ $i -lt $stop_tenths ]; do sleep 0.1; i=$((i+1)); done
  kill -KILL $pid 2>/dev/null
fi
cat "$f"; cat "$f.err" >&2; rm -f "$f" "$f.err"
exit $code
)SH";
  Detached detached;
  auto result = remote.run(device, ssh::CredentialRole::read, script,
                           kReadyWait + kStopWait + kTransportMargin, "probe");
  if (!result.ok()) {
    detached.failure = describe_failure(device, what, result.error());
    return detached;
  }
  if (result->exit_status == 0) {
    auto lines = split_lines(result->stdout_text);
    std::string line = lines.empty() ? "" : std::string(trim(lines.front()));
    auto space = line.find(' ');
    detached.pid = line.substr(0, space);
    if (space != std::string::npos) detached.output_file = line.substr(space + 1);
    if (detached.pid.empty()) detached.failure = what + " on " + device.name + ": no pid";
    return detached;
  }
  std::string how = result->exit_status == kStoppedNotReady
                        ? "was not ready within " + format_duration(kReadyWait)
                    : result->exit_status == kExitedBeforeReady
                        ? "exited before it was ready"
                        : "could not be started (exit " + std::to_string(result->exit_status) + ")";
  detached.failure = what + " on " + device.name + " " + how + ": " + why_not_ready(*result);
  return detached;
}

std::string stop_command(const std::string& pid) {
  return "kill -TERM " + pid + " 2>/dev/null; true";
}

struct Responder {
  const intent::Device* device = nullptr;
  std::string pid;
  std::string failure;  // why it could not start
};

// The during-watch's responder listens on the port after probes.port: it runs through the
// acceptance probes, which may target the same address with their own responder.
int watch_port(const ProbeContext& context) {
  return context.settings.port + 1;
}

Responder start_responder(Remote& remote, const ProbeContext& context, const std::string& address,
                          int port, Duration lifetime) {
  Responder responder;
  responder.device = owner_of(context.inventory, address);
  if (!responder.device) {
    responder.failure =
        "no device in the inventory owns " + address + ", so no responder can be started there";
    return responder;
  }
  std::string command = shell_quote(context.settings.binary) + " flows --respond --listen " +
                        shell_quote(address) + " --port " + std::to_string(port) + " --duration " +
                        seconds_arg(lifetime);
  auto started = start_detached(remote, *responder.device, "flows responder", command,
                                kResponderReady, KeepOutput::no);
  responder.pid = started.pid;
  responder.failure = started.failure;
  return responder;
}

void stop_responder(Remote& remote, const Responder& responder) {
  if (responder.device && !responder.pid.empty())
    (void)remote.run(*responder.device, ssh::CredentialRole::read, stop_command(responder.pid),
                     Duration{10'000}, "probe");
}

// The address a probe sends to: a data address as written, or a device's first data address.
std::string target_address(const intent::Inventory& inventory, const std::string& target) {
  if (const auto* device = inventory.find(target); device && !device->data_addresses.empty())
    return device->data_addresses.front();
  return target;
}

// Appends "(3/4 flows completed)" from the report's summary. A summary whose figures are not
// integers makes a passing report no evidence naming the field: the figures are what a pass
// rests on.
void add_flows_summary(ProbeOutcome& outcome) {
  if (!outcome.detail.contains("summary")) return;
  auto unreadable = [&](const std::string& problem) {
    const std::string named = outcome.host + ": fabgate-probe flows: " + problem;
    if (outcome.verdict != Verdict::pass) {
      outcome.reason += "; " + named;
      return;
    }
    outcome.verdict = Verdict::no_evidence;
    outcome.reason = named;
  };
  const auto* summary = object_member(outcome.detail, "summary");
  if (!summary) return unreadable(wrong_member(outcome.detail, "summary", "an object"));
  auto completed = integer_member(*summary, "completed");
  if (!completed)
    return unreadable(wrong_member(*summary, "completed", "an integer", "summary.completed"));
  auto flows = integer_member(*summary, "flows");
  if (!flows) return unreadable(wrong_member(*summary, "flows", "an integer", "summary.flows"));
  outcome.reason +=
      " (" + std::to_string(*completed) + "/" + std::to_string(*flows) + " flows completed)";
}

void run_flows(Remote& remote, const ProbeContext& context, const intent::Probe& probe,
               const intent::Device& host, ProbeOutcome& outcome) {
  std::string address = target_address(context.inventory, probe.target);
  // The far host's kernel answers ICMP echo itself; udp and tcp need fabgate's echo responder.
  Responder responder;
  if (probe.protocol != "icmp") {
    responder = start_responder(remote, context, address, context.settings.port,
                                probe.timeout + Duration{30'000});
    if (!responder.failure.empty()) {
      outcome.reason = responder.failure;
      return;
    }
  }
  Duration budget = std::max(Duration{1'000}, probe.timeout - Duration{1'000});
  std::string command = shell_quote(context.settings.binary) + " flows --to " +
                        shell_quote(address) + " --port " + std::to_string(context.settings.port) +
                        " --count " + std::to_string(probe.flows) + " --proto " +
                        shell_quote(probe.protocol) + " --timeout " + seconds_arg(budget);
  if (probe.size > 0) command += " --size " + std::to_string(probe.size);
  if (!probe.source.empty()) command += " --from " + shell_quote(probe.source);
  if (context.flows_reply_timeout > Duration::zero())
    command += " --reply-timeout " + std::to_string(context.flows_reply_timeout.count()) + "ms";
  if (context.flows_packets > 0) command += " --packets " + std::to_string(context.flows_packets);
  auto result = remote.run(host, ssh::CredentialRole::read, command,
                           probe.timeout + kTransportMargin, "probe");
  stop_responder(remote, responder);
  if (!result.ok()) {
    outcome.reason = describe_failure(host, command, result.error());
    return;
  }
  outcome.output = result->stdout_text + result->stderr_text;
  judge_builtin(result.value(), outcome);
  add_flows_summary(outcome);
}

void run_rdma(Remote& remote, const ProbeContext& context, const intent::Probe& probe,
              const intent::Device& host, ProbeOutcome& outcome) {
  std::string address = target_address(context.inventory, probe.target);
  const intent::Device* listener = owner_of(context.inventory, address);
  if (!listener) {
    outcome.reason = "no device in the inventory owns " + address + " to run the RDMA listener";
    return;
  }
  // The listener serves one client and exits by itself within its listen timeout. The client
  // starts only once the listener said it listens: a listener that cannot (no RDMA device owns
  // the address) is the probe's no-evidence, named as such, and no client is sent.
  std::string listen = shell_quote(context.settings.binary) + " rdma-write --listen --bind " +
                       shell_quote(address) + " --listen-timeout " + seconds_arg(probe.timeout);
  auto started =
      start_detached(remote, *listener, "RDMA listener", listen, kListenerReady, KeepOutput::no);
  if (!started.failure.empty()) {
    outcome.reason = started.failure;
    return;
  }
  std::string connect = shell_quote(context.settings.binary) + " rdma-write --connect " +
                        shell_quote(address) + " --duration " +
                        seconds_arg(std::max(Duration{1'000}, probe.timeout / 3));
  auto result = remote.run(host, ssh::CredentialRole::read, connect,
                           probe.timeout + kTransportMargin, "probe");
  (void)remote.run(*listener, ssh::CredentialRole::read, stop_command(started.pid),
                   Duration{10'000}, "probe");
  if (!result.ok()) {
    outcome.reason = describe_failure(host, connect, result.error());
    return;
  }
  outcome.output = result->stdout_text + result->stderr_text;
  judge_builtin(result.value(), outcome);
}

// ---- collective ------------------------------------------------------------------------------

constexpr const char* kRankReady = "listening on";

std::string address_only(const std::string& address) {
  return address.substr(0, address.find('/'));
}

// Appends each element of the array member `key` to `into`, or names the member or the first
// element that is of another type.
template <typename T, typename IsT>
std::optional<std::string> read_array(const nlohmann::json& object, const std::string& key,
                                      IsT is_t, const char* expected, std::vector<T>& into) {
  const auto* items = array_member(object, key);
  if (!items) return wrong_member(object, key, "an array");
  for (std::size_t i = 0; i < items->size(); ++i) {
    const auto& item = (*items)[i];
    if (!is_t(item))
      return "field '" + key + "[" + std::to_string(i) + "]' is not " + std::string(expected);
    into.push_back(item.template get<T>());
  }
  return std::nullopt;
}

// One rank's JSON document as the verdict reads it; anything but a collective report with its
// timings, typed as fabgate-probe writes them, is a rank that never reported (the reason names
// the field).
RankTimings parse_rank(int rank, const std::string& host, int iterations, const std::string& text) {
  RankTimings timings;
  timings.rank = rank;
  timings.host = host;
  timings.iterations_planned = iterations;
  auto never_reported = [&](const std::string& problem) {
    timings.missing_reason = "fabgate-probe collective: " + problem;
    return timings;
  };
  if (trim(text).empty()) return never_reported("no report (no output)");
  auto parsed = parse_foreign_json(text);
  if (!parsed.ok())
    return never_reported("no report (" + parsed.problem + ": " + shorten(last_line(text), 60) +
                          ")");
  const auto& document = parsed.document;
  if (!document.is_object()) return never_reported("no report (not a JSON object)");
  auto verdict = string_member(document, "verdict");
  if (!verdict) return never_reported(wrong_member(document, "verdict", "a string"));
  if (*verdict == "no-evidence") {
    auto reason = string_member(document, "reason");
    return reason ? never_reported(*reason)
                  : never_reported(wrong_member(document, "reason", "a string"));
  }
  auto is_number = [](const nlohmann::json& item) { return item.is_number(); };
  auto is_string = [](const nlohmann::json& item) { return item.is_string(); };
  if (auto problem =
          read_array(document, "iteration_ms", is_number, "a number", timings.iteration_ms))
    return never_reported(*problem);
  // A rank without errors may leave them out.
  if (document.contains("errors"))
    if (auto problem = read_array(document, "errors", is_string, "a string", timings.errors))
      return never_reported(*problem);
  // What every byte's check found (absent from an older fabgate-probe: nothing counted).
  if (document.contains("corrupted_chunks")) {
    auto chunks = integer_member(document, "corrupted_chunks");
    if (!chunks || *chunks < 0 || *chunks > std::numeric_limits<int>::max())
      return never_reported(wrong_member(document, "corrupted_chunks", "a count"));
    timings.corrupted_chunks = static_cast<int>(*chunks);
    if (document.contains("corrupted_from") && !document.at("corrupted_from").is_null()) {
      auto sender = integer_member(document, "corrupted_from");
      if (!sender || *sender < 0 || *sender > 65535)
        return never_reported(wrong_member(document, "corrupted_from", "a rank or null"));
      timings.corrupted_from = static_cast<int>(*sender);
    }
  }
  timings.reported = true;
  return timings;
}

nlohmann::json to_json(const std::vector<RankOverBound>& over) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& rank : over)
    out.push_back(
        {{"rank", rank.rank}, {"host", rank.host}, {"p99_ms", rank.p99_ms}, {"ratio", rank.ratio}});
  return out;
}

nlohmann::json to_json(const CollectiveJudgement& judgement, const intent::Probe& probe) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& rank : judgement.ranks)
    ranks.push_back({{"rank", rank.rank},
                     {"host", rank.host},
                     {"p50_ms", rank.p50_ms},
                     {"p99_ms", rank.p99_ms},
                     {"max_ms", rank.max_ms},
                     {"mean_ms", rank.mean_ms}});
  return {{"pattern", probe.pattern},
          {"size", probe.collective_size},
          {"iterations", probe.iterations},
          {"transport", probe.transport},
          {"hosts", probe.hosts},
          {"max_tail_ratio", probe.max_tail_ratio},
          {"max_p99_ms", probe.max_p99 ? nlohmann::json(probe.max_p99->count()) : nullptr},
          {"tail_floor_ms", probe.tail_floor.count()},
          {"verdict", std::string(to_string(judgement.verdict))},
          {"slow_rank", judgement.slowest_rank ? nlohmann::json(*judgement.slowest_rank) : nullptr},
          {"median_p99_ms", judgement.median_p99_ms},
          {"reference_p99_ms", judgement.reference_p99_ms},
          {"tail_ratio", judgement.tail_ratio},
          {"slow_ranks", to_json(judgement.slow_ranks)},
          {"over_max_p99", to_json(judgement.over_max_p99)},
          {"fleet_mean_ms", judgement.fleet_mean_ms},
          {"corrupted_chunks", judgement.corrupted_chunks},
          {"average_verdict", std::string(to_string(judgement.average_verdict))},
          {"average_reason", judgement.average_reason},
          {"ranks", ranks}};
}

// N ranks, one per host: each is started detached and says when it listens; the ranks connect
// a mesh and a barrier releases iteration 1 on all of them together. fabgate then collects
// every rank's report and judges them together (collective_verdict.h).
void run_collective(Remote& remote, const ProbeContext& context, const intent::Probe& probe,
                    ProbeOutcome& outcome) {
  struct RankHost {
    const intent::Device* device = nullptr;
    std::string address;
    Detached started;
  };
  std::vector<RankHost> ranks;
  std::string table;
  const int port = context.settings.port + 2;
  for (const auto& name : probe.hosts) {
    const intent::Device* device = context.inventory.find(name);
    if (!device || device->data_addresses.empty()) {
      outcome.reason = "rank " + std::to_string(ranks.size()) + " (" + name +
                       ") has no data address in the inventory: the collective cannot run";
      return;
    }
    ranks.push_back({device, address_only(device->data_addresses.front()), {}});
    table += (table.empty() ? "" : ",") + ranks.back().address + ":" + std::to_string(port);
  }
  const auto started = now_utc();
  auto stop_started = [&] {
    for (auto& rank : ranks)
      if (!rank.started.pid.empty())
        (void)remote.run(
            *rank.device, ssh::CredentialRole::read,
            stop_command(rank.started.pid) + "; rm -f " + shell_quote(rank.started.output_file),
            Duration{10'000}, "probe");
  };
  const Duration op_timeout{2'000};
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    std::string command = shell_quote(context.settings.binary) + " collective --rank " +
                          std::to_string(i) + " --ranks " + shell_quote(table) + " --pattern " +
                          probe.pattern + " --size " + std::to_string(probe.collective_size) +
                          " --iterations " + std::to_string(probe.iterations) + " --op-timeout " +
                          seconds_arg(op_timeout) + " --setup-timeout 30s --transport " +
                          probe.transport;
    ranks[i].started =
        start_detached(remote, *ranks[i].device, "collective rank " + std::to_string(i), command,
                       kRankReady, KeepOutput::yes);
    if (!ranks[i].started.failure.empty()) {
      // A rank that never ran leaves no evidence for the whole probe (its peers would only time
      // out waiting for it).
      outcome.reason = ranks[i].started.failure + ": the collective has no evidence";
      stop_started();
      return;
    }
  }
  std::vector<RankTimings> timings;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto spent = std::chrono::duration_cast<Duration>(now_utc() - started);
    const auto left = std::max(Duration{1'000}, probe.timeout - spent);
    const std::string& pid = ranks[i].started.pid;
    std::string collect = "i=0; while kill -0 " + pid + " 2>/dev/null && [ $i -lt " + tenths(left) +
                          " ]; do sleep 0.1; i=$((i+1)); done; kill -TERM " + pid +
                          " 2>/dev/null; i=0; while kill -0 " + pid +
                          " 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done; cat " +
                          shell_quote(ranks[i].started.output_file) + "; rm -f " +
                          shell_quote(ranks[i].started.output_file);
    auto result = remote.run(*ranks[i].device, ssh::CredentialRole::read, collect,
                             left + Duration{3'000} + kTransportMargin, "probe");
    if (!result.ok()) {
      RankTimings missing;
      missing.rank = static_cast<int>(i);
      missing.host = ranks[i].device->name;
      missing.missing_reason = describe_failure(*ranks[i].device, "collect", result.error());
      timings.push_back(missing);
      continue;
    }
    outcome.output += result->stdout_text;
    timings.push_back(parse_rank(static_cast<int>(i), ranks[i].device->name, probe.iterations,
                                 result->stdout_text));
  }
  CollectiveThresholds thresholds;
  thresholds.max_tail_ratio = probe.max_tail_ratio;
  thresholds.max_p99 = probe.max_p99;
  thresholds.tail_floor = probe.tail_floor;
  auto judgement = judge_collective(timings, thresholds);
  outcome.verdict = judgement.verdict;
  outcome.detail = to_json(judgement, probe);
  outcome.reason = judgement.reason;
  if (judgement.slowest_rank && judgement.verdict != Verdict::no_evidence) {
    // The path the slow rank used: what its host's routing table says toward its peers (the
    // ECMP choice after the first hop is the fabric's; the collective's compare and snapshots
    // show that side).
    const auto slow = static_cast<std::size_t>(*judgement.slowest_rank);
    std::string lookups;
    for (std::size_t peer = 0; peer < ranks.size(); ++peer)
      if (peer != slow) lookups += "ip -o route get " + ranks[peer].address + " 2>&1 | head -1; ";
    auto routes = remote.run(*ranks[slow].device, ssh::CredentialRole::read, lookups,
                             Duration{10'000}, "probe");
    std::vector<std::string> hops;
    if (routes.ok()) {
      for (const auto& line : split_lines(routes->stdout_text)) {
        // `ip -o` folds its continuation lines into " \ ": the route is what comes before.
        const std::string before = std::string(line).substr(0, line.find('\\'));
        if (!trim(before).empty()) hops.emplace_back(trim(before));
      }
    }
    outcome.detail["slow_rank_routes"] = hops;
    if (!hops.empty()) outcome.reason += "; its route: " + hops.front();
  }
  if (!judgement.average_reason.empty()) outcome.reason += "; " + judgement.average_reason;
}

// What start_detached and stop_responder may take, as their SSH limits say.
constexpr Duration kStartBound = kReadyWait + kStopWait + kTransportMargin;
constexpr Duration kStopBound{10'000};
// A collective rank's collection beyond the probe's timeout: at least 1 s of waiting, 3 s for
// TERM to take, the transport margin (run_collective).
constexpr Duration kRankCollectBound = Duration{1'000} + Duration{3'000} + kTransportMargin;
// The gates between the last acceptance probe and the disruption gate.
constexpr Duration kWatchMargin{120'000};

}  // namespace

Duration probe_bound(const intent::Probe& probe) {
  if (probe.kind == "flows" || probe.kind == "rdma")
    return kStartBound + probe.timeout + kTransportMargin + kStopBound;
  if (probe.kind == "collective") {
    const auto ranks = static_cast<Duration::rep>(probe.hosts.size());
    return probe.timeout + ranks * (kStartBound + kRankCollectBound) + kStopBound;
  }
  return probe.timeout + kTransportMargin;
}

Duration watch_must_outlast(const intent::Change& change) {
  Duration total = change.bounds.deadline + change.acceptance.settle + kWatchMargin;
  for (const auto& probe : change.acceptance.probes) total += probe_bound(probe);
  return total;
}

const intent::Device* owner_of(const intent::Inventory& inventory, const std::string& target) {
  if (const auto* device = inventory.find(target)) return device;
  for (const auto& device : inventory.devices)
    for (const auto& address : device.data_addresses)
      if (address == target || address.substr(0, address.find('/')) == target) return &device;
  return nullptr;
}

nlohmann::json to_json(const ProbeOutcome& outcome) {
  return {{"name", outcome.name},
          {"layer", outcome.layer},
          {"host", outcome.host},
          {"kind", outcome.kind},
          {"phase", outcome.phase},
          {"verdict", std::string(to_string(outcome.verdict))},
          {"reason", outcome.reason},
          {"exit_status", outcome.exit_status},
          {"started_at", format_utc(outcome.started)},
          {"duration_ms", outcome.duration.count()},
          {"output", outcome.output},
          {"detail", outcome.detail},
          {"waived_by", outcome.waived_by}};
}

namespace {

ProbeOutcome run_probe(Remote& remote, const ProbeContext& context, const intent::Probe& probe,
                       const std::string& phase) {
  ProbeOutcome outcome;
  outcome.name = probe.name;
  outcome.layer = probe.layer;
  outcome.host = probe.host;
  outcome.kind = probe.kind;
  outcome.phase = phase;
  outcome.started = now_utc();
  const intent::Device* host = context.inventory.find(probe.host);
  if (!host) {
    outcome.reason = "host '" + probe.host + "' is not in the inventory";
  } else if (probe.kind == "flows") {
    run_flows(remote, context, probe, *host, outcome);
  } else if (probe.kind == "rdma") {
    run_rdma(remote, context, probe, *host, outcome);
  } else if (probe.kind == "collective") {
    run_collective(remote, context, probe, outcome);
  } else {
    auto result = remote.run(*host, ssh::CredentialRole::read, probe.run, probe.timeout, "probe");
    if (!result.ok()) {
      outcome.reason = describe_failure(*host, probe.run, result.error());
    } else {
      outcome.output = result->stdout_text + result->stderr_text;
      judge_command(result.value(), outcome);
    }
  }
  outcome.duration = std::chrono::duration_cast<Duration>(now_utc() - outcome.started);
  return outcome;
}

// A probe that produced nothing to judge: no evidence, with why.
ProbeOutcome without_evidence(const intent::Probe& probe, const std::string& phase,
                              std::string reason) {
  ProbeOutcome outcome;
  outcome.name = probe.name;
  outcome.layer = probe.layer;
  outcome.host = probe.host;
  outcome.kind = probe.kind;
  outcome.phase = phase;
  outcome.started = now_utc();
  outcome.verdict = Verdict::no_evidence;
  outcome.reason = std::move(reason);
  return outcome;
}

// A probe whose run threw: no evidence, the cause named (never an empty pass).
ProbeOutcome probe_failed_internally(const intent::Probe& probe, const std::string& phase,
                                     const std::string& what) {
  return without_evidence(probe, phase, "internal error while running the probe: " + what);
}

// A probe left out because an earlier one already failed the phase: not observed, so no
// evidence, with the probe that stopped the phase named.
ProbeOutcome probe_not_run(const intent::Probe& probe, const std::string& phase,
                           const ProbeOutcome& stopped_by) {
  return without_evidence(probe, phase,
                          "not run: " + phase + " stopped at its first failed probe, '" +
                              stopped_by.name + "' on " + stopped_by.host);
}

// The devices a flows probe runs on: its host and the owner of its target (the responder).
// Empty when either is unknown (the probe then runs alone and says why).
std::vector<std::string> flows_devices(const ProbeContext& context, const intent::Probe& probe) {
  if (probe.kind != "flows" || !context.inventory.find(probe.host)) return {};
  const intent::Device* responder =
      owner_of(context.inventory, target_address(context.inventory, probe.target));
  if (!responder) return {};
  return {probe.host, responder->name};
}

}  // namespace

std::vector<ProbeOutcome> run_probes(Remote& remote, const ProbeContext& context,
                                     const std::vector<intent::Probe>& probes,
                                     const std::string& phase, ProgressSink* progress) {
  std::vector<ProbeOutcome> outcomes;
  ProgressCounter probes_done(progress, probes.size(), "probes");
  std::size_t next = 0;
  while (next < probes.size()) {
    // A batch: this probe, and with concurrent_flows the flows probes after it that share no
    // device with the batch (each responder listens on the same port of its own device).
    std::size_t end = next + 1;
    if (auto first = flows_devices(context, probes[next]);
        context.concurrent_flows && !first.empty()) {
      std::set<std::string> busy(first.begin(), first.end());
      for (; end < probes.size(); ++end) {
        auto devices = flows_devices(context, probes[end]);
        if (devices.empty() || busy.contains(devices[0]) || busy.contains(devices[1])) break;
        busy.insert(devices.begin(), devices.end());
      }
    }
    if (end - next == 1) {
      ProbeOutcome outcome;
      if (auto what =
              what_escaped([&] { outcome = run_probe(remote, context, probes[next], phase); }))
        outcome = probe_failed_internally(probes[next], phase, *what);
      outcomes.push_back(std::move(outcome));
      probes_done.one_done();
    } else {
      std::vector<std::future<ProbeOutcome>> running;
      for (std::size_t i = next; i < end; ++i)
        running.push_back(std::async(std::launch::async, [&, i] {
          // This thread's entry: a probe that throws is that probe without evidence; the
          // probes beside it keep their outcomes.
          ProbeOutcome outcome;
          if (auto what =
                  what_escaped([&] { outcome = run_probe(remote, context, probes[i], phase); }))
            outcome = probe_failed_internally(probes[i], phase, *what);
          return outcome;
        }));
      for (auto& outcome : running) {
        outcomes.push_back(outcome.get());
        probes_done.one_done();
      }
    }
    const auto batch = outcomes.end() - static_cast<std::ptrdiff_t>(end - next);
    next = end;
    if (!context.stop_after) continue;
    auto stopper = std::find_if(batch, outcomes.end(), [&](const ProbeOutcome& outcome) {
      return context.stop_after(outcome);
    });
    if (stopper == outcomes.end()) continue;
    const ProbeOutcome stopped_by = *stopper;
    for (; next < probes.size(); ++next) {
      outcomes.push_back(probe_not_run(probes[next], phase, stopped_by));
      probes_done.one_done();
    }
  }
  return outcomes;
}

// ---- WatchSession ---------------------------------------------------------------------------

WatchSession::~WatchSession() {
  if (running_) (void)stop();
}

std::optional<ProbeOutcome> WatchSession::start(Duration max_duration) {
  ProbeOutcome failed;
  failed.name = "during-change";
  failed.layer = "forwarding";
  failed.host = watch_.host;
  failed.kind = "watch";
  failed.phase = "during";
  failed.started = now_utc();
  host_ = context_.inventory.find(watch_.host);
  if (!host_) {
    failed.reason = "host '" + watch_.host + "' is not in the inventory";
    return failed;
  }
  std::string address = target_address(context_.inventory, watch_.target);
  auto responder = start_responder(remote_, context_, address, watch_port(context_),
                                   max_duration + Duration{60'000});
  if (!responder.failure.empty()) {
    failed.reason = responder.failure;
    return failed;
  }
  responder_device_ = responder.device;
  responder_pid_ = responder.pid;
  std::string command = shell_quote(context_.settings.binary) + " watch --to " +
                        shell_quote(address) + " --port " + std::to_string(watch_port(context_)) +
                        " --count " + std::to_string(watch_.flows) + " --interval " +
                        std::to_string(watch_.interval.count()) + "ms --max-duration " +
                        seconds_arg(max_duration) + " --max-interruption " +
                        std::to_string(watch_.max_disruption.count()) + "ms";
  // Ready means every flow has had an echo: a watch that is not sampling by now would only be
  // found out at the disruption gate, after the change ran.
  auto watch = start_detached(remote_, *host_, "watch", command, kWatchReady, KeepOutput::yes);
  if (!watch.failure.empty()) {
    stop_responder(remote_, {responder_device_, responder_pid_, ""});
    failed.reason = watch.failure;
    return failed;
  }
  watch_pid_ = watch.pid;
  watch_output_file_ = watch.output_file;
  started_ = now_utc();
  running_ = true;
  return std::nullopt;
}

ProbeOutcome WatchSession::stop() {
  ProbeOutcome outcome;
  outcome.name = "during-change";
  outcome.layer = "forwarding";
  outcome.host = watch_.host;
  outcome.kind = "watch";
  outcome.phase = "during";
  outcome.started = started_;
  running_ = false;
  const auto until_stop = std::chrono::duration_cast<Duration>(now_utc() - started_);
  std::string collect =
      "kill -TERM " + watch_pid_ + " 2>/dev/null; i=0; while kill -0 " + watch_pid_ +
      " 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; " + "cat " +
      shell_quote(watch_output_file_) + "; rm -f " + shell_quote(watch_output_file_);
  auto result = remote_.run(*host_, ssh::CredentialRole::read, collect, Duration{15'000}, "probe");
  stop_responder(remote_, {responder_device_, responder_pid_, ""});
  if (!result.ok()) {
    outcome.reason = describe_failure(*host_, "fabgate-probe watch (collect)", result.error());
  } else {
    outcome.output = result->stdout_text;
    judge_builtin(result.value(), outcome);
    // A parsed report is judged again here from its typed figures: the resolution goes with
    // the figure (0 ms at 100 ms resolution says far less than 0 ms at 10 ms), and the
    // watch's own stalls are no evidence for their spans, never an outage (watch_verdict.h).
    if (!outcome.detail.is_null()) {
      auto judgement = judge_watch(read_watch_report(outcome.detail),
                                   WatchRequest{watch_.max_disruption, until_stop});
      outcome.verdict = judgement.verdict;
      outcome.reason = judgement.reason;
    }
  }
  outcome.duration = std::chrono::duration_cast<Duration>(now_utc() - started_);
  return outcome;
}

nlohmann::json to_json(const intent::Probe& probe) {
  // size, source and proto only when set: a plan without them keeps the digest it always had.
  nlohmann::json document = {{"name", probe.name},   {"layer", probe.layer},
                             {"host", probe.host},   {"kind", probe.kind},
                             {"run", probe.run},     {"target", probe.target},
                             {"flows", probe.flows}, {"timeout_ms", probe.timeout.count()}};
  // Only collective probes carry these, so the digests of other plans stay what they were.
  if (probe.kind == "collective") {
    document["hosts"] = probe.hosts;
    document["pattern"] = probe.pattern;
    document["size"] = probe.collective_size;
    document["iterations"] = probe.iterations;
    document["transport"] = probe.transport;
    document["max_tail_ratio"] = probe.max_tail_ratio;
    document["max_p99_ms"] = probe.max_p99 ? nlohmann::json(probe.max_p99->count()) : nullptr;
    document["tail_floor_ms"] = probe.tail_floor.count();
  }
  if (probe.size > 0) document["size"] = probe.size;
  if (!probe.source.empty()) document["source"] = probe.source;
  if (probe.protocol != "udp") document["proto"] = probe.protocol;
  return document;
}

}  // namespace fabgate::pipeline
