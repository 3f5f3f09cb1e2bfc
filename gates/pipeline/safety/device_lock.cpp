#include "gates/pipeline/safety/device_lock.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "adapters/core/text.h"
#include "gates/pipeline/safety/confirm_timer.h"

namespace fabgate::pipeline {
namespace {

constexpr std::string_view kPurpose = "device-lock";

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(trim(line));
}

std::string this_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string boot_id() {
  return read_first_line("/proc/sys/kernel/random/boot_id");
}

// The pid namespace: pids are only comparable inside one (CI runners in containers often share
// a host name and a boot id).
std::string pid_namespace() {
  char target[128] = {};
  ssize_t length = ::readlink("/proc/self/ns/pid", target, sizeof target - 1);
  if (length <= 0) return "";
  return std::string(target, static_cast<std::size_t>(length));
}

struct ProcessStat {
  char state = '?';
  std::string start_ticks;
};

// Fields 3 (state) and 22 (start time) of /proc/<pid>/stat; the command name (field 2) may
// contain spaces and parentheses, so parsing starts after its last ')'.
std::optional<ProcessStat> process_stat(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  ProcessStat stat;
  std::string field;
  fields >> stat.state;
  for (int index = 4; index <= 22 && fields >> field; ++index)
    if (index == 22) stat.start_ticks = field;
  if (stat.start_ticks.empty()) return std::nullopt;
  return stat;
}

// "2026-11-30T01:02:03Z": lock messages are read by people, milliseconds are noise.
std::string to_seconds_text(TimePoint when) {
  return format_utc(std::chrono::floor<std::chrono::seconds>(when)).erase(19, 4);
}

std::optional<long> to_long(std::string_view text) {
  long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

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

// The holder record: one line of JSON, so the device-side scripts can pass it as one line.
std::string to_record(const LockHolder& holder) {
  nlohmann::json record = {{"run", holder.run},
                           {"change", holder.change},
                           {"operator", holder.operator_name},
                           {"controller_host", holder.controller_host},
                           {"controller_pid", holder.controller_pid},
                           {"controller_boot_id", holder.controller_boot_id},
                           {"controller_pid_namespace", holder.controller_pid_namespace},
                           {"controller_start", holder.controller_start},
                           {"started", format_utc(holder.started)},
                           {"expires", format_utc(holder.expires)}};
  if (holder.fence_token != 0) record["fence_token"] = holder.fence_token;
  return record.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

Expected<LockHolder, std::string> from_record(const std::string& text) {
  auto record = nlohmann::json::parse(text, nullptr, false);
  if (record.is_discarded() || !record.is_object()) return std::string("not JSON");
  try {
    LockHolder holder;
    holder.run = record.at("run").get<std::string>();
    holder.change = record.value("change", "");
    holder.operator_name = record.value("operator", "");
    holder.controller_host = record.value("controller_host", "");
    holder.controller_pid = record.value("controller_pid", 0L);
    holder.controller_boot_id = record.value("controller_boot_id", "");
    holder.controller_pid_namespace = record.value("controller_pid_namespace", "");
    holder.controller_start = record.value("controller_start", "");
    holder.fence_token = record.value("fence_token", std::int64_t{0});
    auto started = parse_iso8601(record.at("started").get<std::string>());
    auto expires = parse_iso8601(record.at("expires").get<std::string>());
    if (!started || !expires) return std::string("bad 'started' or 'expires' time");
    holder.started = *started;
    holder.expires = *expires;
    return holder;
  } catch (const nlohmann::json::exception& error) {
    return std::string(error.what());
  }
}

// Prints the current generation, whether it is released, and its holder record.
std::string read_script(const std::string& dir) {
  return "dir=" + shell_quote(dir) + "\n" + R"SH(
max=0
if [ -d "$dir" ]; then
  for f in "$dir"/gen-*; do
    [ -e "$f" ] || continue
    n=${f##*/gen-}
    case $n in ''|*[!0-9]*) continue ;; esac
    if [ "$n" -gt "$max" ]; then max=$n; fi
  done
fi
echo gen=$max
if [ "$max" -gt 0 ]; then
  if [ -e "$dir/gen-$max.released" ]; then echo released=1; else echo released=0; fi
  echo "holder=$(head -n 1 "$dir/gen-$max")"
fi
)SH";
}

// Whether two holder records were written by the same controller process.
bool same_process(const LockHolder& a, const LockHolder& b) {
  return a.controller_host == b.controller_host && a.controller_boot_id == b.controller_boot_id &&
         a.controller_pid_namespace == b.controller_pid_namespace &&
         a.controller_pid == b.controller_pid && a.controller_start == b.controller_start;
}

struct FenceMarks {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, FenceMark> marks;
};
FenceMarks& fence_marks() {
  static FenceMarks marks;
  return marks;
}

// How long a device-side command waits for the lock folder's flock: an acquire holds it
// exclusively for a few file operations; a command holds it shared while it runs.
constexpr int kFlockWaitSeconds = 10;

}  // namespace

void remember_fence_mark(const std::string& lock_dir, const std::string& device, FenceMark mark) {
  auto& registry = fence_marks();
  std::lock_guard lock(registry.mutex);
  registry.marks[{lock_dir, device}] = mark;
}

std::optional<FenceMark> fence_mark(const std::string& lock_dir, const std::string& device) {
  auto& registry = fence_marks();
  std::lock_guard lock(registry.mutex);
  auto found = registry.marks.find({lock_dir, device});
  if (found == registry.marks.end()) return std::nullopt;
  return found->second;
}

std::string fenced_command(const std::string& lock_dir, const std::string& device,
                           std::int64_t token, long generation, const std::string& command) {
  // Variables prefixed fabgate_ so the command's own names are not disturbed. The shared flock
  // is taken on fd 9 and kept by this shell until it exits; the command itself runs with fd 9
  // closed, so a daemon it starts does not hold the lock (the shell keeps its saved copy, which
  // is closed on exec).
  std::string guard = "fabgate_fence=" + shell_quote(device_fence_file(lock_dir, device)) +
                      "; fabgate_token=" + std::to_string(token) +
                      "; fabgate_gen=" + std::to_string(generation) +
                      "; fabgate_wait=" + std::to_string(kFlockWaitSeconds) + "\n";
  guard += R"SH(fabgate_dir=${fabgate_fence%/fence}
if [ -d "$fabgate_dir" ] && command -v flock >/dev/null 2>&1; then
  exec 9<"$fabgate_dir" && flock -s -w "$fabgate_wait" 9 || { echo "fabgate-fence: busy: the lock folder $fabgate_dir stayed locked by a take-over for $fabgate_wait s" >&2; exit 86; }
fi
fabgate_seen=0; fabgate_seen_run=; fabgate_seen_gen=
if [ -r "$fabgate_fence" ]; then read -r fabgate_seen fabgate_seen_run fabgate_seen_gen < "$fabgate_fence" || :; fi
case $fabgate_seen in ''|*[!0-9]*) fabgate_seen=0 ;; esac
if [ "$fabgate_seen" != "$fabgate_token" ]; then echo "fabgate-fence: stale fencing token $fabgate_token: this device saw $fabgate_seen (run $fabgate_seen_run)" >&2; exit 86; fi
if [ "$fabgate_gen" != 0 ] && [ -n "$fabgate_seen_gen" ] && [ "$fabgate_seen_gen" != "$fabgate_gen" ]; then echo "fabgate-fence: stale fencing token $fabgate_token: this device's lock was taken over since (generation $fabgate_seen_gen of run $fabgate_seen_run holds it; this run's is $fabgate_gen)" >&2; exit 86; fi
{
)SH";
  return guard + command + "\n} 9<&-";
}

LockHolder LockHolder::for_this_controller(std::string run, std::string change,
                                           std::string operator_name, Duration lease,
                                           TimePoint now) {
  LockHolder holder;
  holder.run = std::move(run);
  holder.change = std::move(change);
  holder.operator_name = std::move(operator_name);
  holder.controller_host = this_host_name();
  holder.controller_pid = static_cast<long>(::getpid());
  holder.controller_boot_id = boot_id();
  holder.controller_pid_namespace = pid_namespace();
  if (auto stat = process_stat(holder.controller_pid)) holder.controller_start = stat->start_ticks;
  holder.started = now;
  holder.expires = now + lease;
  return holder;
}

std::string describe(const LockHolder& holder) {
  std::string text = "locked by run " + holder.run + " (";
  text += holder.operator_name.empty() ? "unknown operator" : holder.operator_name;
  if (!holder.change.empty()) text += ", change " + holder.change;
  text += ", since " + to_seconds_text(holder.started);
  text +=
      ", controller " + (holder.controller_host.empty() ? "unknown host" : holder.controller_host);
  text += " pid " + std::to_string(holder.controller_pid) + ")";
  return text;
}

std::optional<std::string> why_dead(const LockHolder& holder, TimePoint now) {
  // Process state is only evidence inside the same host, boot and pid namespace: elsewhere the
  // same pid number is a different process, so only the lease can tell.
  bool same_process_space =
      !holder.controller_host.empty() && holder.controller_host == this_host_name() &&
      !holder.controller_boot_id.empty() && holder.controller_boot_id == boot_id() &&
      holder.controller_pid_namespace == pid_namespace();
  if (same_process_space && holder.controller_pid > 0) {
    std::string who = "its controller process (pid " + std::to_string(holder.controller_pid) +
                      " on " + holder.controller_host + ")";
    bool gone = ::kill(static_cast<pid_t>(holder.controller_pid), 0) != 0 && errno == ESRCH;
    if (gone) return who + " has exited";
    auto stat = process_stat(holder.controller_pid);
    if (stat && (stat->state == 'Z' || stat->state == 'X')) return who + " has exited";
    if (stat && !holder.controller_start.empty() && stat->start_ticks != holder.controller_start)
      return who + " has exited; the pid now belongs to another process";
  }
  if (holder.expires <= now) return "its lease expired at " + to_seconds_text(holder.expires);
  return std::nullopt;
}

std::string AcquireOutcome::message() const {
  switch (kind) {
    case Kind::acquired:
      if (taken_over_from) {
        return device + ": lock taken over by run " + holder.run + " from dead run " +
               taken_over_from->run + " (" + describe(*taken_over_from) + "; " + dead_because + ")";
      }
      return device + ": lock acquired by run " + holder.run;
    case Kind::held:
      return device + ": " + describe(holder);
    case Kind::held_by_dead:
      return device + ": " + describe(holder) + "; its holder is dead: " + dead_because +
             "; taking the lock over needs an explicit take-over";
    case Kind::stale_token:
      return device + ": stale fencing token " + std::to_string(holder.fence_token) + " of run " +
             holder.run + ": this device saw " + std::to_string(newer_token) + " (run " +
             (newer_run.empty() ? "unknown" : newer_run) + "), so a newer run has locked it since";
  }
  return device;
}

std::string_view to_string(AcquireOutcome::Kind kind) {
  switch (kind) {
    case AcquireOutcome::Kind::acquired:
      return "acquired";
    case AcquireOutcome::Kind::held:
      return "held";
    case AcquireOutcome::Kind::held_by_dead:
      return "held-by-dead";
    case AcquireOutcome::Kind::stale_token:
      return "stale-token";
  }
  return "held";
}

std::string_view to_string(ReleaseOutcome::Kind kind) {
  switch (kind) {
    case ReleaseOutcome::Kind::released:
      return "released";
    case ReleaseOutcome::Kind::not_locked:
      return "not-locked";
    case ReleaseOutcome::Kind::held_by_other:
      return "held-by-other";
  }
  return "not-locked";
}

std::string_view to_string(LockFailure::Kind kind) {
  switch (kind) {
    case LockFailure::Kind::invalid_name:
      return "invalid-name";
    case LockFailure::Kind::ssh:
      return "ssh";
    case LockFailure::Kind::device:
      return "device";
    case LockFailure::Kind::contention:
      return "contention";
  }
  return "device";
}

std::string DeviceLock::directory(const std::string& device) const {
  return options_.base_dir + "/" + device + ".lock";
}

LockResult<ssh::CommandResult> DeviceLock::send(const intent::Device& device,
                                                const std::string& what,
                                                const std::string& command) {
  auto result = remote_.run(device, ssh::CredentialRole::change, command, options_.command_deadline,
                            kPurpose);
  if (!result.ok()) {
    std::string message = describe_failure(device, what, result.error());
    return LockFailure{LockFailure::Kind::ssh, message};
  }
  if (result->exit_status != 0) {
    std::string message =
        device.name + ": " + what + ": exit status " + std::to_string(result->exit_status);
    std::string detail(trim(result->stderr_text));
    if (!detail.empty()) message += ": " + detail;
    return LockFailure{LockFailure::Kind::device, message};
  }
  return std::move(result).value();
}

LockResult<DeviceLock::Current> DeviceLock::read(const intent::Device& device,
                                                 const std::string& what) {
  auto sent = send(device, what, read_script(directory(device.name)));
  if (!sent.ok()) return sent.error();
  auto lines = parse_lines(sent->stdout_text);
  auto generation = to_long(first(lines, "gen"));
  if (!generation) {
    return LockFailure{
        LockFailure::Kind::device,
        device.name + ": " + what + ": unexpected answer: " + std::string(trim(sent->stdout_text))};
  }
  Current current;
  current.generation = *generation;
  if (current.generation == 0) return current;
  current.released = first(lines, "released") == "1";
  auto holder = from_record(first(lines, "holder"));
  if (holder.ok()) {
    current.holder = std::move(holder).value();
  } else {
    current.unreadable = directory(device.name) + "/gen-" + std::to_string(current.generation) +
                         " is unreadable (" + holder.error() + ")";
  }
  return current;
}

LockResult<AcquireOutcome> DeviceLock::acquire(const intent::Device& device,
                                               const LockHolder& holder, TakeOver take_over) {
  std::string what = "acquire lock (run " + holder.run + ")";
  if (!is_safe_path_component(device.name) || !is_safe_path_component(holder.run)) {
    return LockFailure{LockFailure::Kind::invalid_name,
                       device.name + ": " + what + ": unusable device name or run id"};
  }
  bool busy = false;  // the last attempt found the lock folder's flock held
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    busy = false;
    auto current = read(device, what);
    if (!current.ok()) return current.error();

    AcquireOutcome outcome;
    outcome.device = device.name;
    outcome.generation = current->generation;
    bool free = current->generation == 0 || current->released;
    if (!free) {
      const bool same_run = current->holder && current->holder->run == holder.run;
      if (same_run && same_process(*current->holder, holder)) {
        outcome.kind = AcquireOutcome::Kind::acquired;
        outcome.holder = *current->holder;
        if (holder.fence_token > 0)
          remember_fence_mark(options_.base_dir, device.name,
                              {current->holder->fence_token, current->generation});
        return outcome;
      }
      std::optional<std::string> dead;
      if (same_run && holder.fence_token > 0 && current->holder->fence_token > 0 &&
          current->holder->fence_token < holder.fence_token) {
        // The run this recover continues, taken over in the coordination store, which only
        // does that once the run's lease lapsed: superseded, even if its process still exists
        // (frozen, or cut off from the store).
        dead = "its fencing token " + std::to_string(current->holder->fence_token) +
               " was superseded by " + std::to_string(holder.fence_token) +
               " when the run was taken over in the coordination store";
        outcome.holder = *current->holder;
      } else if (current->holder) {
        dead = why_dead(*current->holder);
        outcome.holder = *current->holder;
      } else {
        // A record this code did not write (it links complete files only): someone tampered.
        // It cannot be judged alive, so it needs the same explicit decision as a dead one.
        dead = current->unreadable;
        outcome.holder.run = "(unknown)";
      }
      if (!dead) {
        outcome.kind = AcquireOutcome::Kind::held;
        return outcome;
      }
      outcome.dead_because = *dead;
      // The same run id in another, dead process: the run being recovered, whose lock is this
      // recover's to take without --take-over-locks.
      if (take_over == TakeOver::no && !same_run) {
        outcome.kind = AcquireOutcome::Kind::held_by_dead;
        return outcome;
      }
      outcome.taken_over_from = outcome.holder;
    }

    long next = current->generation + 1;
    std::string command =
        "dir=" + shell_quote(directory(device.name)) + "\nbase=" + shell_quote(options_.base_dir) +
        "\nnext=" + std::to_string(next) + "\nprevious=" + std::to_string(current->generation) +
        "\nrecord=" + shell_quote(to_record(holder)) +
        "\ntoken=" + std::to_string(holder.fence_token) + "\nrun=" + shell_quote(holder.run) +
        "\nwait=" + std::to_string(kFlockWaitSeconds) + "\n";
    // Base and lock folders are sticky and world-writable like /tmp: controllers of different
    // people may log in as different users and must still exclude each other.
    command += R"SH(
[ -d "$base" ] || mkdir -m 1777 "$base" 2>/dev/null || [ -d "$base" ] || { echo "cannot create $base" >&2; exit 1; }
[ -d "$dir" ] || mkdir -m 1777 "$dir" 2>/dev/null || [ -d "$dir" ] || { echo "cannot create $dir" >&2; exit 1; }
umask 022
# Exclusive flock of the lock folder while the fence is checked, the generation created and the
# fence written: guarded commands hold it shared while they run (fenced_command), so a take-over
# waits for a command of the old holder still running here, and none starts after the new token
# is written. Without flock(1) on the device, unlocked.
if command -v flock >/dev/null 2>&1; then
  exec 9<"$dir" || { echo "cannot open $dir" >&2; exit 1; }
  flock -x -w "$wait" 9 || { echo outcome=busy; exit 0; }
fi
# The fence: a token older than the current one is refused, before any lock is written. Two
# runs with etcd locks on it cannot both be here (etcd gave the device to one of them at a
# time), so what races is only a run that lost its etcd lock and woke late, and it must lose;
# the newer run writes its token and generation below.
fence="$dir/fence"
seen=0; seen_run=
if [ "$token" -gt 0 ] && [ -r "$fence" ]; then read -r seen seen_run seen_gen < "$fence" || :; fi
case $seen in ''|*[!0-9]*) seen=0 ;; esac
if [ "$token" -gt 0 ] && [ "$seen" -gt "$token" ]; then
  echo outcome=stale; echo "seen=$seen"; echo "seen_run=$seen_run"; exit 0
fi
# The fence is one file every change login can rewrite. The folder is sticky (no login may
# rename over or remove another's file), so the first writer creates it mode 0666 and a later
# login whose file it is not rewrites it in place (dd without creating, which the mode allows);
# its own, it replaces whole by a rename. Either way under the exclusive flock taken above, so
# no guarded command reads it half written, and only a token at least as new as the one read
# is ever written: a newer token is never lost. A fence of another login that this one cannot
# write (left mode 0644 by an older fabgate) refuses the acquire before anything is created.
if [ "$token" -gt 0 ] && [ -e "$fence" ] && [ ! -O "$fence" ] && [ ! -w "$fence" ]; then
  echo "cannot write $fence: it belongs to another login and is not writable by this one (made by an older fabgate): its owner or root must make it mode 0666" >&2; exit 1
fi
write_fence() {
  if [ ! -e "$fence" ] || [ -O "$fence" ]; then
    printf '%s %s %s\n' "$token" "$run" "$next" > "$fence.tmp-$$" && chmod 666 "$fence.tmp-$$" &&
      mv -f "$fence.tmp-$$" "$fence" && return 0
    rm -f "$fence.tmp-$$"; return 1
  fi
  printf '%s %s %s\n' "$token" "$run" "$next" | dd of="$fence" conv=nocreat status=none 2>/dev/null
}
tmp="$dir/.tmp-$next-$$"
printf '%s\n' "$record" > "$tmp" || { rm -f "$tmp"; echo "cannot write $tmp" >&2; exit 1; }
if ln "$tmp" "$dir/gen-$next" 2>/dev/null; then
  rm -f "$tmp"
  if [ "$token" -gt 0 ] && ! write_fence; then
    # Not a lock this run holds without its token on the device: take the generation back.
    rm -f "$dir/gen-$next"; echo "cannot write $fence" >&2; exit 1
  fi
  echo outcome=acquired
  for f in "$dir"/gen-*; do
    n=${f##*/gen-}; n=${n%.released}
    case $n in ''|*[!0-9]*) continue ;; esac
    if [ "$n" -lt "$previous" ]; then rm -f "$f" 2>/dev/null; fi
  done
elif [ -e "$dir/gen-$next" ]; then
  rm -f "$tmp"; echo outcome=lost
else
  rm -f "$tmp"; echo "cannot create $dir/gen-$next" >&2; exit 1
fi
)SH";
    auto sent = send(device, what, command);
    if (!sent.ok()) return sent.error();
    auto lines = parse_lines(sent->stdout_text);
    std::string answer = first(lines, "outcome");
    if (answer == "lost") continue;  // someone else created gen-<next>: read again
    if (answer == "busy") {
      // A command of another holder still runs under the lock folder's shared flock (a step of
      // a run being taken over, still running on the device): wait for it, then read again.
      busy = true;
      continue;
    }
    if (answer == "stale") {
      outcome.kind = AcquireOutcome::Kind::stale_token;
      outcome.holder = holder;
      outcome.newer_token = to_long(first(lines, "seen")).value_or(0);
      outcome.newer_run = first(lines, "seen_run");
      outcome.taken_over_from.reset();
      return outcome;
    }
    if (answer != "acquired") {
      return LockFailure{LockFailure::Kind::device,
                         device.name + ": " + what +
                             ": unexpected answer: " + std::string(trim(sent->stdout_text))};
    }
    outcome.kind = AcquireOutcome::Kind::acquired;
    outcome.holder = holder;
    outcome.generation = next;
    if (holder.fence_token > 0)
      remember_fence_mark(options_.base_dir, device.name, {holder.fence_token, next});
    return outcome;
  }
  if (busy)
    return LockFailure{LockFailure::Kind::contention,
                       device.name + ": " + what +
                           ": a command of another holder kept running on the device under its "
                           "lock folder " +
                           directory(device.name) + " (" +
                           std::to_string(options_.max_attempts * kFlockWaitSeconds) +
                           " s); the lock was not taken, run again once it ended"};
  return LockFailure{LockFailure::Kind::contention,
                     device.name + ": " + what + ": lost the race to other acquirers " +
                         std::to_string(options_.max_attempts) + " times"};
}

LockResult<ReleaseOutcome> DeviceLock::release(const intent::Device& device,
                                               const std::string& run) {
  std::string what = "release lock (run " + run + ")";
  if (!is_safe_path_component(device.name) || !is_safe_path_component(run)) {
    return LockFailure{LockFailure::Kind::invalid_name,
                       device.name + ": " + what + ": unusable device name or run id"};
  }
  auto current = read(device, what);
  if (!current.ok()) return current.error();
  ReleaseOutcome outcome;
  if (current->generation == 0 || current->released) {
    outcome.kind = ReleaseOutcome::Kind::not_locked;
    return outcome;
  }
  if (!current->holder || current->holder->run != run) {
    outcome.kind = ReleaseOutcome::Kind::held_by_other;
    outcome.holder = current->holder;
    return outcome;
  }
  // Only this generation is marked: if someone took it over meanwhile, their newer generation
  // is untouched.
  std::string command = "dir=" + shell_quote(directory(device.name)) +
                        "\ngen=" + std::to_string(current->generation) + "\n" + R"SH(
if [ -e "$dir/gen-$gen" ]; then
  : > "$dir/gen-$gen.released" || { echo "cannot write $dir/gen-$gen.released" >&2; exit 1; }
  echo outcome=released
else
  echo outcome=gone
fi
)SH";
  auto sent = send(device, what, command);
  if (!sent.ok()) return sent.error();
  auto answer = first(parse_lines(sent->stdout_text), "outcome");
  if (answer == "released") {
    outcome.kind = ReleaseOutcome::Kind::released;
    return outcome;
  }
  // The generation vanished between the two commands: a newer one superseded it.
  auto after = read(device, what);
  if (!after.ok()) return after.error();
  outcome.kind = ReleaseOutcome::Kind::held_by_other;
  outcome.holder = after->holder;
  if (after->generation == 0 || after->released) outcome.kind = ReleaseOutcome::Kind::not_locked;
  return outcome;
}

LockResult<std::optional<LockHolder>> DeviceLock::holder(const intent::Device& device) {
  if (!is_safe_path_component(device.name)) {
    return LockFailure{LockFailure::Kind::invalid_name,
                       device.name + ": read lock: unusable device name"};
  }
  auto current = read(device, "read lock");
  if (!current.ok()) return current.error();
  if (current->generation == 0 || current->released) return std::optional<LockHolder>();
  if (!current->holder) {
    return LockFailure{LockFailure::Kind::device,
                       device.name + ": read lock: " + current->unreadable};
  }
  return std::optional<LockHolder>(*current->holder);
}

}  // namespace fabgate::pipeline
