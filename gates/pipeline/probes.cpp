#include "gates/pipeline/probes.h"

#include "adapters/core/text.h"

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
  auto document = nlohmann::json::parse(result.stdout_text, nullptr, false);
  if (document.is_discarded() || !document.is_object() || !document.contains("verdict")) {
    outcome.verdict = Verdict::no_evidence;
    outcome.reason = result.exit_status == 127
                         ? "fabgate-probe is not installed on " + outcome.host
                         : "unparsable probe output (exit " + std::to_string(result.exit_status) +
                               "): " + last_line(result.stderr_text + result.stdout_text);
    return;
  }
  outcome.detail = document;
  std::string verdict = document.value("verdict", "");
  outcome.verdict = verdict == "pass"   ? Verdict::pass
                    : verdict == "fail" ? Verdict::fail
                                        : Verdict::no_evidence;
  outcome.reason = document.value("reason", verdict);
}

// Starts a long-running fabgate-probe process on `device`, detached from the SSH session, and
// waits until its stderr shows `ready` (or it dies). Prints "PID" on success.
std::string detached_start(const std::string& command, const std::string& ready) {
  return "f=$(mktemp /tmp/fabgate-probe.XXXXXX) || exit 1; setsid " + command +
         " </dev/null >\"$f.out\" 2>\"$f\" & pid=$!; i=0; while [ $i -lt 50 ]; do grep -q " +
         shell_quote(ready) + " \"$f\" && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; " +
         "i=$((i+1)); done; if grep -q " + shell_quote(ready) +
         " \"$f\"; then echo $pid; rm -f \"$f\" \"$f.out\"; else cat \"$f\" \"$f.out\" >&2; "
         "kill $pid 2>/dev/null; rm -f \"$f\" \"$f.out\"; exit 1; fi";
}

std::string stop_command(const std::string& pid) {
  return "kill -TERM " + pid + " 2>/dev/null; true";
}

struct Responder {
  const intent::Device* device = nullptr;
  std::string pid;
  std::string failure;  // why it could not start
};

Responder start_responder(Remote& remote, const ProbeContext& context, const std::string& address,
                          Duration lifetime) {
  Responder responder;
  responder.device = owner_of(context.inventory, address);
  if (!responder.device) {
    responder.failure =
        "no device in the inventory owns " + address + ", so no responder can be started there";
    return responder;
  }
  std::string command = shell_quote(context.settings.binary) + " flows --respond --listen " +
                        shell_quote(address) + " --port " + std::to_string(context.settings.port) +
                        " --duration " + seconds_arg(lifetime);
  auto result = remote.run(*responder.device, ssh::CredentialRole::read,
                           detached_start(command, "listening"), Duration{10'000}, "probe");
  if (!result.ok()) {
    responder.failure =
        "responder on " + responder.device->name + ": " +
        describe_failure(*responder.device, "fabgate-probe flows --respond", result.error());
  } else if (result->exit_status != 0) {
    responder.failure = "responder on " + responder.device->name +
                        " did not start: " + last_line(result->stderr_text);
  } else {
    responder.pid = std::string(trim(result->stdout_text));
  }
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

void run_flows(Remote& remote, const ProbeContext& context, const intent::Probe& probe,
               const intent::Device& host, ProbeOutcome& outcome) {
  std::string address = target_address(context.inventory, probe.target);
  auto responder = start_responder(remote, context, address, probe.timeout + Duration{30'000});
  if (!responder.failure.empty()) {
    outcome.reason = responder.failure;
    return;
  }
  Duration budget = std::max(Duration{1'000}, probe.timeout - Duration{1'000});
  std::string command = shell_quote(context.settings.binary) + " flows --to " +
                        shell_quote(address) + " --port " + std::to_string(context.settings.port) +
                        " --count " + std::to_string(probe.flows) + " --proto udp --timeout " +
                        seconds_arg(budget);
  auto result = remote.run(host, ssh::CredentialRole::read, command,
                           probe.timeout + kTransportMargin, "probe");
  stop_responder(remote, responder);
  if (!result.ok()) {
    outcome.reason = describe_failure(host, command, result.error());
    return;
  }
  outcome.output = result->stdout_text + result->stderr_text;
  judge_builtin(result.value(), outcome);
  if (outcome.detail.contains("summary")) {
    const auto& summary = outcome.detail["summary"];
    outcome.reason += " (" + std::to_string(summary.value("completed", 0)) + "/" +
                      std::to_string(summary.value("flows", 0)) + " flows completed)";
  }
}

void run_rdma(Remote& remote, const ProbeContext& context, const intent::Probe& probe,
              const intent::Device& host, ProbeOutcome& outcome) {
  std::string address = target_address(context.inventory, probe.target);
  const intent::Device* listener = owner_of(context.inventory, address);
  if (!listener) {
    outcome.reason = "no device in the inventory owns " + address + " to run the RDMA listener";
    return;
  }
  // The listener serves one client and exits by itself within its listen timeout.
  std::string listen = shell_quote(context.settings.binary) + " rdma-write --listen --bind " +
                       shell_quote(address) + " --listen-timeout " + seconds_arg(probe.timeout);
  auto started = remote.run(*listener, ssh::CredentialRole::read,
                            "setsid " + listen + " </dev/null >/dev/null 2>&1 & echo $!",
                            Duration{10'000}, "probe");
  std::string pid = started.ok() ? std::string(trim(started->stdout_text)) : "";
  std::string connect = shell_quote(context.settings.binary) + " rdma-write --connect " +
                        shell_quote(address) + " --duration " +
                        seconds_arg(std::max(Duration{1'000}, probe.timeout / 3));
  auto result = remote.run(host, ssh::CredentialRole::read, "sleep 0.5; " + connect,
                           probe.timeout + kTransportMargin, "probe");
  if (!pid.empty())
    (void)remote.run(*listener, ssh::CredentialRole::read, stop_command(pid), Duration{10'000},
                     "probe");
  if (!result.ok()) {
    outcome.reason = describe_failure(host, connect, result.error());
    return;
  }
  outcome.output = result->stdout_text + result->stderr_text;
  judge_builtin(result.value(), outcome);
}

}  // namespace

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

std::vector<ProbeOutcome> run_probes(Remote& remote, const ProbeContext& context,
                                     const std::vector<intent::Probe>& probes,
                                     const std::string& phase) {
  std::vector<ProbeOutcome> outcomes;
  for (const auto& probe : probes) {
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
    outcomes.push_back(std::move(outcome));
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
  auto responder = start_responder(remote_, context_, address, max_duration + Duration{60'000});
  if (!responder.failure.empty()) {
    failed.reason = responder.failure;
    return failed;
  }
  responder_device_ = responder.device;
  responder_pid_ = responder.pid;
  std::string command =
      shell_quote(context_.settings.binary) + " watch --to " + shell_quote(address) + " --port " +
      std::to_string(context_.settings.port) + " --count " + std::to_string(watch_.flows) +
      " --interval 100ms --max-duration " + seconds_arg(max_duration) + " --max-interruption " +
      std::to_string(watch_.max_disruption.count()) + "ms";
  auto result = remote_.run(*host_, ssh::CredentialRole::read,
                            "f=$(mktemp /tmp/fabgate-watch.XXXXXX) || exit 1; setsid " + command +
                                " </dev/null >\"$f\" 2>/dev/null & echo \"$! $f\"",
                            Duration{10'000}, "probe");
  if (!result.ok() || result->exit_status != 0) {
    stop_responder(remote_, {responder_device_, responder_pid_, ""});
    failed.reason = result.ok() ? "watch did not start: " + last_line(result->stderr_text)
                                : describe_failure(*host_, command, result.error());
    return failed;
  }
  auto fields = split_lines(result->stdout_text);
  std::string line = fields.empty() ? "" : fields.front();
  watch_pid_ = line.substr(0, line.find(' '));
  watch_output_file_ = line.find(' ') == std::string::npos ? "" : line.substr(line.find(' ') + 1);
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
    if (outcome.detail.contains("longest_interruption_ms")) {
      outcome.reason = "longest interruption " +
                       std::to_string(outcome.detail.value("longest_interruption_ms", 0)) +
                       " ms (allowed " + std::to_string(watch_.max_disruption.count()) +
                       " ms): " + outcome.reason;
    }
  }
  outcome.duration = std::chrono::duration_cast<Duration>(now_utc() - started_);
  return outcome;
}

nlohmann::json to_json(const intent::Probe& probe) {
  return {{"name", probe.name},   {"layer", probe.layer},
          {"host", probe.host},   {"kind", probe.kind},
          {"run", probe.run},     {"target", probe.target},
          {"flows", probe.flows}, {"timeout_ms", probe.timeout.count()}};
}

}  // namespace fabgate::pipeline
