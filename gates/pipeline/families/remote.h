#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/core/result.h"
#include "adapters/ssh/command_result.h"
#include "adapters/ssh/connection_cache.h"
#include "adapters/ssh/ssh_failure.h"
#include "adapters/ssh/ssh_target.h"
#include "gates/intent/model.h"
#include "gates/pipeline/safety/lease_fence.h"

namespace fabgate::pipeline {

class EvidenceBundle;

using RemoteResult = Expected<ssh::CommandResult, ssh::SshFailure>;

// Runs one command on one device with one credential role. The seam exists so the pipeline's
// logic can be unit-tested with a scripted fake; the real implementation is SshRemote (libssh
// sessions from one ConnectionCache per run). `purpose` ("step", "rollback", "probe",
// "snapshot") goes into commands.jsonl.
class Remote {
 public:
  virtual ~Remote() = default;
  virtual RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                           const std::string& command, Duration deadline,
                           std::string_view purpose) = 0;
  // As run(), with the command's text on the SSH channel's standard input instead of in the
  // exec request (ssh::RemoteShell::run_via_stdin): for commands holding secrets. Remotes that
  // cannot do it refuse.
  virtual RemoteResult run_via_stdin(const intent::Device& device, ssh::CredentialRole role,
                                     const std::string& command, Duration deadline,
                                     std::string_view purpose) {
    (void)device, (void)role, (void)command, (void)deadline, (void)purpose;
    return ssh::SshFailure{ssh::SshFailure::Kind::rejected,
                           "this remote cannot send a command on stdin"};
  }
};

ssh::SshDevice to_ssh_device(const intent::Device& device);

// The real Remote: one session per device and role, reused for every command of the run.
class SshRemote final : public Remote {
 public:
  explicit SshRemote(ssh::ConnectionCache& connections) : connections_(connections) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                   const std::string& command, Duration deadline,
                   std::string_view purpose) override;
  RemoteResult run_via_stdin(const intent::Device& device, ssh::CredentialRole role,
                             const std::string& command, Duration deadline,
                             std::string_view purpose) override;

 private:
  ssh::ConnectionCache& connections_;
};

// Writes every command sent (device, role, purpose, command, start, duration, exit status,
// redacted output or the failure) to the evidence's commands.jsonl, then returns the result.
class RecordingRemote final : public Remote {
 public:
  RecordingRemote(Remote& inner, EvidenceBundle& evidence) : inner_(inner), evidence_(evidence) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                   const std::string& command, Duration deadline,
                   std::string_view purpose) override;

 private:
  Remote& inner_;
  EvidenceBundle& evidence_;
};

// Sends nothing once the run's lease fence has closed (lease_fence.h): every command, write or
// read, fails as `rejected` naming why, so what was not sent is in commands.jsonl too.
class FencedRemote final : public Remote {
 public:
  FencedRemote(Remote& inner, const LeaseFence& fence) : inner_(inner), fence_(fence) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                   const std::string& command, Duration deadline,
                   std::string_view purpose) override;
  RemoteResult run_via_stdin(const intent::Device& device, ssh::CredentialRole role,
                             const std::string& command, Duration deadline,
                             std::string_view purpose) override;

 private:
  Remote& inner_;
  const LeaseFence& fence_;
};

// Where a device keeps the current holder's fencing token: "<token> <run> <generation>" in the
// folder of its device-side lock (device_lock.h).
std::string device_fence_file(const std::string& lock_dir, const std::string& device);

// With `coordination:`, every command this run sends to a device it locked with a fencing token
// (its etcd lock's mod_revision) is wrapped, ON THE DEVICE, in a short POSIX-sh guard
// (fenced_command, device_lock.h): under a shared flock of the device's lock folder, held until
// the command ends, the command runs only when the device's fence file holds exactly this run's
// token and the generation this process acquired the device-side lock with; otherwise the guard
// prints one line on stderr and exits kRefusedStatus before the command runs, which comes back
// as `rejected` naming device, token and the one the device holds. The acquire that writes a
// new token holds the same flock exclusively, so check and command are atomic against a
// take-over: no command of an older holder starts after a newer token was written, and a newer
// token is written only once the older holder's commands running there ended. (A device
// without flock(1) runs the check unlocked: check then act.) The lease fence (FencedRemote,
// above it) stops a run first; this stops what the lease fence cannot: a run paused or
// partitioned past its lease (SIGSTOP, a VM freeze) whose command was already past its fence
// check, or that wakes before noticing. Commands of the device lock itself (purpose
// "device-lock") check the token in their own script and pass unguarded. Sits below the
// recorder, which records the command as written.
class TokenFencedRemote final : public Remote {
 public:
  static constexpr int kRefusedStatus = 86;
  using TokenOf = std::function<std::optional<std::int64_t>(const std::string& device)>;
  TokenFencedRemote(Remote& inner, TokenOf token_of, std::string lock_dir)
      : inner_(inner), token_of_(std::move(token_of)), lock_dir_(std::move(lock_dir)) {}
  RemoteResult run(const intent::Device& device, ssh::CredentialRole role,
                   const std::string& command, Duration deadline,
                   std::string_view purpose) override;
  RemoteResult run_via_stdin(const intent::Device& device, ssh::CredentialRole role,
                             const std::string& command, Duration deadline,
                             std::string_view purpose) override;

 private:
  // The command with the guard in front, or the command as it is when it needs none.
  std::optional<std::int64_t> token_for(const intent::Device& device,
                                        std::string_view purpose) const;
  std::string guarded(const intent::Device& device, std::int64_t token,
                      const std::string& command) const;
  RemoteResult judged(const intent::Device& device, std::int64_t token, RemoteResult result) const;

  Remote& inner_;
  TokenOf token_of_;
  std::string lock_dir_;
};

// "leaf2: vtysh -c 'show bgp summary json': timed out after 10s"
std::string describe_failure(const intent::Device& device, const std::string& command,
                             const ssh::SshFailure& failure);

}  // namespace fabgate::pipeline
