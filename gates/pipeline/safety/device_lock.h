#pragma once

// A per-device lock held ON THE DEVICE, so that two runs touching one device exclude each
// other even when they come from two laptops or two CI runners.
//
// Device-side layout (devices of the lab share one filesystem, so the device name is in the
// path):
//   <base>/<device>.lock/gen-<N>            holder record of generation N (one JSON line)
//   <base>/<device>.lock/gen-<N>.released   marker: generation N was released by its holder
//   <base>/<device>.lock/fence              "<token> <run> <N>": the fencing token of the current
//                                           holder, which wrote it with generation N (with
//                                           coordination: only; see below)
//
// The current generation is the highest N. The lock is free when there is none or the current
// one is released; otherwise gen-N's holder holds it (alive or dead). Acquiring, and taking over
// a dead holder, both create gen-<N+1> with link(2) from a complete temporary file: link fails
// if the name exists, so of two concurrent acquirers exactly one wins, and readers never see a
// half-written record. A decision to supersede generation N (released, or its holder dead) can
// never become wrong later (a release is permanent, a dead process stays dead, an expired lease
// stays expired), so there is no check-then-act race: a run that judged gen-N free either
// creates gen-<N+1> or finds that someone else did and reads again.
//
// Fencing tokens (with `coordination:`, docs/coordination.md "Fencing tokens"): a run that
// locked the device in the fabric's etcd carries that lock's revision as its token (a take-over
// in etcd gives a strictly newer one). The device keeps the current holder's token and
// generation in `fence`; acquiring with an older token is refused (`stale_token`), and every
// command the run sends is guarded on the device (TokenFencedRemote, remote.h, through
// fenced_command below): it runs only while `fence` still holds exactly this run's token and
// generation, so an older holder's command is refused once a newer one was written, even one
// carrying an equal token. Check and command hold the lock folder's flock (shared), and the
// acquire that writes `fence` holds it exclusively: a take-over waits for a command of the old
// holder still running there, and no old command starts after the new token was written.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/remote.h"

namespace fabgate::pipeline {

// Who holds a lock, as written on the device.
struct LockHolder {
  std::string run;
  std::string change;
  std::string operator_name;
  std::string controller_host;  // gethostname() of the controller
  long controller_pid = 0;
  std::string controller_boot_id;  // /proc/sys/kernel/random/boot_id: a reboot kills every pid
  std::string controller_pid_namespace;  // /proc/self/ns/pid: pids compare only inside one
  std::string controller_start;          // the pid's start time in clock ticks since boot (/proc)
  TimePoint started;
  TimePoint expires;  // lease end: started + the duration the caller passes
  // The run's fencing token for this device (its etcd lock's create_revision); 0: none (no
  // coordination store), and then the device's fence is neither read nor written.
  std::int64_t fence_token = 0;

  // A holder for this controller process: host, pid, boot id and start time filled in.
  static LockHolder for_this_controller(std::string run, std::string change,
                                        std::string operator_name, Duration lease,
                                        TimePoint now = now_utc());
};

// "locked by run a1b2c3d4 (alice, change drain-spine1, since 2026-11-30T01:02:03Z, controller
// host1 pid 1234)"
std::string describe(const LockHolder& holder);

// Why a holder is dead, judged from this controller; nullopt while it may be alive. Dead: its
// controller process on this host is gone (pid exited, reused, or the host rebooted since), or
// its lease expired. A holder on another host with a running lease is always alive.
std::optional<std::string> why_dead(const LockHolder& holder, TimePoint now = now_utc());

enum class TakeOver { no, yes };

// The device-side acquisition this controller process made on a device with a token: the guard
// of its commands (fenced_command) names the generation, so a later holder that wrote an equal
// token still supersedes it. Process-wide, because one process runs one run and the lock
// (Safeguards) and the guard (TokenFencedRemote, below the recorder) are built apart.
struct FenceMark {
  std::int64_t token = 0;
  long generation = 0;
};
void remember_fence_mark(const std::string& lock_dir, const std::string& device, FenceMark mark);
std::optional<FenceMark> fence_mark(const std::string& lock_dir, const std::string& device);

// `command` preceded, on the device, by the token guard: under a shared flock of the device's
// lock folder (held while the command runs), the command runs only when `fence` holds `token`
// and, with generation > 0, that generation; otherwise one line `fabgate-fence: stale ...` on
// stderr and exit 86 (TokenFencedRemote::kRefusedStatus). Without flock(1) on the device the
// check runs unlocked.
std::string fenced_command(const std::string& lock_dir, const std::string& device,
                           std::int64_t token, long generation, const std::string& command);

struct AcquireOutcome {
  enum class Kind {
    acquired,      // this run holds the lock (`holder` is ours)
    held,          // a live holder has it (`holder` is theirs); never taken over
    held_by_dead,  // a dead holder has it (`holder`, `dead_because`); TakeOver::yes takes it
    stale_token,   // the device saw a newer fencing token (`newer_token`, `newer_run`): a run
                   // that locked it in etcd after this one; never taken
  };
  Kind kind = Kind::held;
  std::string device;
  LockHolder holder;
  std::string dead_because;
  // Set when this run acquired the lock by taking over a dead holder: the caller journals it.
  std::optional<LockHolder> taken_over_from;
  long generation = 0;           // the device-side generation read or created
  std::int64_t newer_token = 0;  // stale_token: the newest token the device saw, and whose
  std::string newer_run;

  // "leaf1: locked by run ... (...)", "leaf1: locked by run ... whose controller is gone (...)",
  // "leaf1: lock acquired by run ..." / "... taken over from run ... (why)".
  std::string message() const;
};

std::string_view to_string(AcquireOutcome::Kind kind);

struct ReleaseOutcome {
  enum class Kind {
    released,      // this run held it and released it
    not_locked,    // nobody holds it (never locked, or released already)
    held_by_other  // another run holds it; nothing was changed
  };
  Kind kind = Kind::not_locked;
  std::optional<LockHolder> holder;  // held_by_other: who
};

std::string_view to_string(ReleaseOutcome::Kind kind);

// Why the lock could not be read or written. `message` names device and operation.
struct LockFailure {
  enum class Kind {
    invalid_name,  // device name or run id unusable in a path
    ssh,           // the command could not be run (unreachable, auth, timeout, ...)
    device,        // it ran but failed (permissions, disk) or answered something unexpected
    contention,    // every bounded attempt lost a race to another acquirer
  };
  Kind kind = Kind::device;
  std::string message;
};

std::string_view to_string(LockFailure::Kind kind);

template <class T>
using LockResult = Expected<T, LockFailure>;

struct DeviceLockOptions {
  // Production default; tests point this at a temporary directory.
  std::string base_dir = "/var/tmp/fabgate-locks";
  Duration command_deadline{15'000};
  int max_attempts = 5;  // lost races before giving up with `contention`
};

class DeviceLock {
 public:
  explicit DeviceLock(Remote& remote, DeviceLockOptions options = {})
      : remote_(remote), options_(std::move(options)) {}

  // Takes the device's lock for `holder` (acquired), or says who holds it. A dead holder's
  // lock is taken over only with TakeOver::yes; a live holder's never. Acquiring again from
  // the controller process that already holds it answers acquired without a new generation, so
  // after an `ssh` failure (the lock may or may not have been created) acquiring again is safe.
  // The same run id held by ANOTHER process is the run `fabgate recover` recovers: taken over
  // (a new generation, whatever `take_over` says) when its token is older than `holder`'s (etcd
  // took it over) or it is dead, and `held` while it may be alive.
  LockResult<AcquireOutcome> acquire(const intent::Device& device, const LockHolder& holder,
                                     TakeOver take_over);

  // Releases the lock only if `run` holds it.
  LockResult<ReleaseOutcome> release(const intent::Device& device, const std::string& run);

  // Who holds the device's lock now (nullopt: free), without changing anything.
  LockResult<std::optional<LockHolder>> holder(const intent::Device& device);

  std::string directory(const std::string& device) const;
  // Where the device keeps the newest fencing token it saw.
  std::string fence_file(const std::string& device) const {
    return device_fence_file(options_.base_dir, device);
  }

 private:
  struct Current {
    long generation = 0;
    bool released = false;
    std::optional<LockHolder> holder;  // nullopt with generation > 0: unreadable record
    std::string unreadable;            // why the record could not be read
  };
  LockResult<Current> read(const intent::Device& device, const std::string& what);
  LockResult<ssh::CommandResult> send(const intent::Device& device, const std::string& what,
                                      const std::string& command);

  Remote& remote_;
  DeviceLockOptions options_;
};

}  // namespace fabgate::pipeline
