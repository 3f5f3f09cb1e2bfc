#include "gates/pipeline/safety/confirm_timer.h"

#include <charconv>
#include <chrono>
#include <map>

#include "adapters/core/text.h"

namespace fabgate::pipeline {
namespace {

using Kind = ConfirmTimerFailure::Kind;

constexpr std::string_view kPurpose = "confirm-timer";

// The device's clock has whole seconds in `date +%s`; a timeout is never shortened.
long whole_seconds_up(Duration duration) {
  long seconds = static_cast<long>((duration.count() + 999) / 1000);
  return seconds < 1 ? 1 : seconds;
}

std::optional<long> to_long(std::string_view text) {
  long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

TimePoint from_epoch_seconds(long seconds) {
  return TimePoint(std::chrono::seconds(seconds));
}

// The answers of the device-side scripts are `key=value` lines; repeated keys (log, result)
// keep every value in order.
std::multimap<std::string, std::string> parse_lines(const std::string& text) {
  std::multimap<std::string, std::string> out;
  for (const auto& line : split_lines(text)) {
    auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    out.emplace(line.substr(0, equals), line.substr(equals + 1));
  }
  return out;
}

std::string first(const std::multimap<std::string, std::string>& lines, const std::string& key) {
  auto found = lines.find(key);
  return found == lines.end() ? std::string() : found->second;
}

std::vector<std::string> all(const std::multimap<std::string, std::string>& lines,
                             const std::string& key) {
  std::vector<std::string> out;
  auto [begin, end] = lines.equal_range(key);
  for (auto it = begin; it != end; ++it) out.push_back(it->second);
  return out;
}

// Shell that prints the timer's state as key=value lines; `d` holds the timer directory.
// The claim is checked armed -> fired -> disarmed: renames only ever leave claim.armed, so a
// reader that misses claim.armed because it was just renamed finds its new name next.
constexpr std::string_view kReportState = R"SH(
if [ ! -d "$d" ]; then echo claim=none
elif [ -e "$d/claim.armed" ]; then echo claim=armed
elif [ -e "$d/claim.fired" ]; then echo claim=fired
elif [ -e "$d/claim.disarmed" ]; then echo claim=disarmed
else echo claim=none; fi
echo now=$(date +%s)
if [ -d "$d" ]; then
  pid=$(cat "$d/pid" 2>/dev/null)
  echo pid=$pid
  echo deadline=$(cat "$d/deadline" 2>/dev/null)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
     { [ ! -r "/proc/$pid/cmdline" ] || tr '\000' ' ' < "/proc/$pid/cmdline" | grep -qF "$d/job.sh"; }
  then echo alive=1; else echo alive=0; fi
  if [ -e "$d/result" ]; then sed 's/^/result=/' "$d/result"; fi
  if [ -e "$d/log" ]; then sed 's/^/log=/' "$d/log"; fi
fi
)SH";

// The job: records its pid, sleeps until the deadline, claims the timer by renaming
// claim.armed (exit quietly if disarm renamed it first), then runs the commands in order.
std::string job_script(const std::string& dir, const std::string& device, const std::string& run,
                       long seconds, const std::vector<std::pair<std::string, long>>& commands) {
  std::string script;
  script += "# fabgate confirm timer for device " + device + ", run " + run + ".\n";
  script += "# Runs the rollback at the deadline unless disarmed first.\n";
  script += "d=" + shell_quote(dir) + "\n";
  script += R"SH(cd "$HOME" 2>/dev/null || cd /
echo $$ > "$d/pid.tmp" && mv "$d/pid.tmp" "$d/pid"
)SH";
  // A full `sleep` from the job's own start: it starts after the arm command did, so it never
  // fires before `timeout` has passed since arming, whatever the second boundaries.
  script += "sleep " + std::to_string(seconds) + "\n";
  script += R"SH(mv "$d/claim.armed" "$d/claim.fired" 2>/dev/null || exit 0
stamp() { date -u +%Y-%m-%dT%H:%M:%SZ; }
shell=${SHELL:-/bin/sh}
# GNU timeout only (busybox's takes other options): probe it rather than trust its presence.
bounded=0
if timeout -k 5 5 true > /dev/null 2>&1; then bounded=1; fi
)SH";
  script += "echo \"$(stamp) fired: running " + std::to_string(commands.size()) +
            " rollback command(s)\" >> \"$d/log\"\n";
  script += R"SH(rollback_command() {
  echo "$(stamp) command $1 started" >> "$d/log"
  if [ "$bounded" = 1 ]; then
    timeout -k 5 "$2" "$shell" -c "$3" < /dev/null >> "$d/output" 2>&1
  else
    "$shell" -c "$3" < /dev/null >> "$d/output" 2>&1
  fi
  rc=$?
  echo "$(stamp) command $1 exit $rc" >> "$d/log"
  if [ "$rc" -ne 0 ]; then
    { echo failed; echo "$1"; echo "$rc"; printf '%s\n' "$3"; } > "$d/result.tmp"
    mv "$d/result.tmp" "$d/result"
    echo "$(stamp) rollback stopped at command $1" >> "$d/log"
    exit 1
  fi
}
)SH";
  for (std::size_t i = 0; i < commands.size(); ++i)
    script += "rollback_command " + std::to_string(i + 1) + " " +
              std::to_string(commands[i].second) + " " + shell_quote(commands[i].first) + "\n";
  script += R"SH(echo restored > "$d/result.tmp" && mv "$d/result.tmp" "$d/result"
echo "$(stamp) rollback complete" >> "$d/log"
)SH";
  return script;
}

TimerStatus parse_status(const std::multimap<std::string, std::string>& lines) {
  TimerStatus status;
  std::string claim = first(lines, "claim");
  bool alive = first(lines, "alive") == "1";
  if (auto pid = to_long(first(lines, "pid"))) status.pid = *pid;
  if (auto deadline = to_long(first(lines, "deadline")))
    status.deadline = from_epoch_seconds(*deadline);
  if (auto now = to_long(first(lines, "now"))) status.device_now = from_epoch_seconds(*now);
  status.log = all(lines, "log");
  auto result = all(lines, "result");
  if (claim == "armed") {
    status.state = alive ? TimerState::armed : TimerState::orphaned;
  } else if (claim == "disarmed") {
    status.state = TimerState::disarmed;
  } else if (claim == "fired") {
    if (!result.empty() && result[0] == "restored") {
      status.state = TimerState::fired_restored;
    } else if (!result.empty() && result[0] == "failed") {
      status.state = TimerState::fired_failed;
      FailedRollbackCommand failed;
      if (result.size() > 1) failed.index = static_cast<int>(to_long(result[1]).value_or(0));
      if (result.size() > 2) failed.exit_status = static_cast<int>(to_long(result[2]).value_or(-1));
      std::vector<std::string> command(result.begin() + std::min<std::size_t>(3, result.size()),
                                       result.end());
      failed.command = join(command, "\n");
      status.failed = failed;
    } else {
      status.state = alive ? TimerState::firing : TimerState::fired_interrupted;
    }
  } else {
    status.state = TimerState::absent;
  }
  return status;
}

}  // namespace

std::string_view to_string(ConfirmTimerFailure::Kind kind) {
  switch (kind) {
    case Kind::unsupported:
      return "unsupported";
    case Kind::no_rollback:
      return "no-rollback";
    case Kind::invalid_name:
      return "invalid-name";
    case Kind::already_armed:
      return "already-armed";
    case Kind::ssh:
      return "ssh";
    case Kind::device:
      return "device";
  }
  return "device";
}

std::string_view to_string(TimerState state) {
  switch (state) {
    case TimerState::absent:
      return "absent";
    case TimerState::armed:
      return "armed";
    case TimerState::orphaned:
      return "orphaned";
    case TimerState::firing:
      return "firing";
    case TimerState::fired_restored:
      return "fired-restored";
    case TimerState::fired_failed:
      return "fired-failed";
    case TimerState::fired_interrupted:
      return "fired-interrupted";
    case TimerState::disarmed:
      return "disarmed";
  }
  return "absent";
}

std::string_view to_string(DisarmOutcome::Kind kind) {
  switch (kind) {
    case DisarmOutcome::Kind::disarmed:
      return "disarmed";
    case DisarmOutcome::Kind::already_fired:
      return "already-fired";
    case DisarmOutcome::Kind::already_disarmed:
      return "already-disarmed";
    case DisarmOutcome::Kind::not_armed:
      return "not-armed";
  }
  return "not-armed";
}

bool is_safe_path_component(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (char c : name) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-';
    if (!allowed) return false;
  }
  return true;
}

std::string ConfirmTimer::directory(const std::string& device, const std::string& run_id) const {
  return options_.base_dir + "/" + device + "/" + run_id;
}

TimerResult<std::vector<std::string>> ConfirmTimer::device_rollback_commands(
    const intent::Device& device, const std::string& run_id,
    const std::vector<intent::Step>& rollback) {
  std::vector<std::string> commands;
  int index = 0;
  for (const auto& step : rollback) {
    if (step.device != device.name) continue;
    ++index;
    if (!step.gnmi_set.empty() || step.run.empty()) {
      return ConfirmTimerFailure{
          Kind::unsupported,
          device.name + ": arm confirm timer (run " + run_id + "): rollback step " +
              std::to_string(index) +
              " is a gNMI set; a device-side timer can only run SSH commands, so this device "
              "has no confirm timer"};
    }
    commands.push_back(step.run);
  }
  if (commands.empty()) {
    return ConfirmTimerFailure{Kind::no_rollback, device.name + ": arm confirm timer (run " +
                                                      run_id +
                                                      "): the change has no rollback step for "
                                                      "this device"};
  }
  return commands;
}

TimerResult<ssh::CommandResult> ConfirmTimer::send(const intent::Device& device,
                                                   const std::string& what,
                                                   const std::string& command) {
  auto result = remote_.run(device, ssh::CredentialRole::change, command, options_.command_deadline,
                            kPurpose);
  if (!result.ok()) {
    std::string message = describe_failure(device, what, result.error());
    return ConfirmTimerFailure{Kind::ssh, message};
  }
  return std::move(result).value();
}

namespace {

ConfirmTimerFailure device_failure(const std::string& device, const std::string& what,
                                   const ssh::CommandResult& result) {
  std::string message =
      device + ": " + what + ": exit status " + std::to_string(result.exit_status);
  std::string detail(trim(result.stderr_text));
  if (detail.empty()) detail = std::string(trim(result.stdout_text));
  if (!detail.empty()) message += ": " + detail;
  return ConfirmTimerFailure{Kind::device, message};
}

}  // namespace

TimerResult<ArmedTimer> ConfirmTimer::arm(const intent::Device& device, const std::string& run_id,
                                          Duration timeout,
                                          const std::vector<intent::Step>& rollback) {
  std::string what = "arm confirm timer (run " + run_id + ")";
  if (!is_safe_path_component(device.name) || !is_safe_path_component(run_id)) {
    return ConfirmTimerFailure{Kind::invalid_name,
                               device.name + ": " + what +
                                   ": device name and run id must be letters, digits, '.', '_' "
                                   "or '-'"};
  }
  auto commands = device_rollback_commands(device, run_id, rollback);
  if (!commands.ok()) return commands.error();
  std::vector<std::pair<std::string, long>> timed;
  for (const auto& step : rollback) {
    if (step.device != device.name) continue;
    timed.emplace_back(step.run,
                       whole_seconds_up(step.timeout.value_or(options_.rollback_step_timeout)));
  }

  std::string dir = directory(device.name, run_id);
  std::string device_dir = options_.base_dir + "/" + device.name;
  // The base and per-device folders are shared by every change login (sticky, like /tmp);
  // the run's folder is private to the login that armed it.
  std::string command =
      "d=" + shell_quote(dir) + "\nbase=" + shell_quote(options_.base_dir) +
      "\ndevice_dir=" + shell_quote(device_dir) +
      "\nseconds=" + std::to_string(whole_seconds_up(timeout)) + "\njob=" +
      shell_quote(job_script(dir, device.name, run_id, whole_seconds_up(timeout), timed)) + "\n";
  command += R"SH(
[ -d "$base" ] || mkdir -m 1777 "$base" 2>/dev/null || [ -d "$base" ] || { echo "cannot create $base" >&2; exit 1; }
[ -d "$device_dir" ] || mkdir -m 1777 "$device_dir" 2>/dev/null || [ -d "$device_dir" ] || { echo "cannot create $device_dir" >&2; exit 1; }
if [ -e "$d" ]; then echo outcome=already-armed; exit 0; fi
mkdir -m 700 "$d" || exit 1
umask 077
printf '%s' "$job" > "$d/job.sh" || exit 1
now=$(date +%s)
echo $((now + seconds)) > "$d/deadline" || exit 1
: > "$d/claim.armed" || exit 1
if command -v setsid >/dev/null 2>&1; then
  setsid sh "$d/job.sh" < /dev/null > /dev/null 2>&1 &
else
  nohup sh "$d/job.sh" < /dev/null > /dev/null 2>&1 &
fi
tries=0
while [ ! -s "$d/pid" ] && [ "$tries" -lt 50 ]; do sleep 0.1; tries=$((tries + 1)); done
if [ ! -s "$d/pid" ]; then
  mv "$d/claim.armed" "$d/claim.disarmed" 2>/dev/null
  echo "the timer job did not start within 5s" >&2
  exit 1
fi
echo outcome=armed
echo now=$now
echo deadline=$(cat "$d/deadline")
echo pid=$(cat "$d/pid")
)SH";

  auto sent = send(device, what, command);
  if (!sent.ok()) return sent.error();
  const auto& result = sent.value();
  if (result.exit_status != 0) return device_failure(device.name, what, result);
  auto lines = parse_lines(result.stdout_text);
  std::string outcome = first(lines, "outcome");
  if (outcome == "already-armed") {
    return ConfirmTimerFailure{Kind::already_armed,
                               device.name + ": " + what + ": " + dir + " exists already"};
  }
  auto pid = to_long(first(lines, "pid"));
  auto now = to_long(first(lines, "now"));
  auto deadline = to_long(first(lines, "deadline"));
  if (outcome != "armed" || !pid || !now || !deadline) {
    return ConfirmTimerFailure{Kind::device, device.name + ": " + what + ": unexpected answer: " +
                                                 std::string(trim(result.stdout_text))};
  }
  ArmedTimer armed;
  armed.device = device.name;
  armed.run_id = run_id;
  armed.directory = dir;
  armed.pid = *pid;
  armed.armed_at = from_epoch_seconds(*now);
  armed.deadline = from_epoch_seconds(*deadline);
  armed.rollback_commands = timed.size();
  return armed;
}

TimerResult<DisarmOutcome> ConfirmTimer::disarm(const intent::Device& device,
                                                const std::string& run_id) {
  std::string what = "disarm confirm timer (run " + run_id + ")";
  if (!is_safe_path_component(device.name) || !is_safe_path_component(run_id)) {
    return ConfirmTimerFailure{Kind::invalid_name,
                               device.name + ": " + what + ": unusable device name or run id"};
  }
  // The rename of claim.armed is the decision: the job renames the same file before it runs
  // anything, so exactly one of the two succeeds. Stopping the sleeping job afterwards is
  // tidiness only: had it survived, its own rename would fail and it would exit.
  std::string command = "d=" + shell_quote(directory(device.name, run_id)) + "\n";
  command += R"SH(
if [ ! -d "$d" ]; then echo outcome=not-armed
elif mv "$d/claim.armed" "$d/claim.disarmed" 2>/dev/null; then
  echo outcome=disarmed
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) disarmed" >> "$d/log"
  pid=$(cat "$d/pid" 2>/dev/null)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
     { [ ! -r "/proc/$pid/cmdline" ] || tr '\000' ' ' < "/proc/$pid/cmdline" | grep -qF "$d/job.sh"; }
  then kill -TERM -"$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; fi
elif [ -e "$d/claim.fired" ]; then echo outcome=already-fired
elif [ -e "$d/claim.disarmed" ]; then echo outcome=already-disarmed
elif [ -e "$d/claim.armed" ]; then echo "cannot rename $d/claim.armed" >&2; exit 1
else echo outcome=not-armed; fi
)SH";
  command += kReportState;

  auto sent = send(device, what, command);
  if (!sent.ok()) return sent.error();
  const auto& result = sent.value();
  if (result.exit_status != 0) return device_failure(device.name, what, result);
  auto lines = parse_lines(result.stdout_text);
  std::string outcome = first(lines, "outcome");
  DisarmOutcome out;
  if (outcome == "disarmed") {
    out.kind = DisarmOutcome::Kind::disarmed;
  } else if (outcome == "already-fired") {
    out.kind = DisarmOutcome::Kind::already_fired;
  } else if (outcome == "already-disarmed") {
    out.kind = DisarmOutcome::Kind::already_disarmed;
  } else if (outcome == "not-armed") {
    out.kind = DisarmOutcome::Kind::not_armed;
  } else {
    return ConfirmTimerFailure{Kind::device, device.name + ": " + what + ": unexpected answer: " +
                                                 std::string(trim(result.stdout_text))};
  }
  out.status = parse_status(lines);
  return out;
}

TimerResult<TimerStatus> ConfirmTimer::status(const intent::Device& device,
                                              const std::string& run_id) {
  std::string what = "read confirm timer (run " + run_id + ")";
  if (!is_safe_path_component(device.name) || !is_safe_path_component(run_id)) {
    return ConfirmTimerFailure{Kind::invalid_name,
                               device.name + ": " + what + ": unusable device name or run id"};
  }
  std::string command = "d=" + shell_quote(directory(device.name, run_id)) + "\n";
  command += kReportState;
  auto sent = send(device, what, command);
  if (!sent.ok()) return sent.error();
  const auto& result = sent.value();
  if (result.exit_status != 0) return device_failure(device.name, what, result);
  auto lines = parse_lines(result.stdout_text);
  if (first(lines, "claim").empty()) {
    return ConfirmTimerFailure{Kind::device, device.name + ": " + what + ": unexpected answer: " +
                                                 std::string(trim(result.stdout_text))};
  }
  return parse_status(lines);
}

}  // namespace fabgate::pipeline
