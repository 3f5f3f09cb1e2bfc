#include "gates/pipeline/families/remote.h"

#include <signal.h>

#include <atomic>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "adapters/core/text.h"
#include "gates/pipeline/reporting/evidence.h"
#include "gates/pipeline/safety/device_lock.h"

namespace fabgate::pipeline {
namespace {

// Commands in evidence keep their full text; outputs are capped so one chatty command cannot
// bloat the bundle (the cap is recorded).
constexpr std::size_t kEvidenceOutputCap = 64 * 1024;

nlohmann::json capped(const std::string& text, bool truncated_by_ssh) {
  nlohmann::json out;
  if (text.size() > kEvidenceOutputCap) {
    out["text"] = text.substr(0, kEvidenceOutputCap);
    out["truncated"] = true;
  } else {
    out["text"] = text;
    out["truncated"] = truncated_by_ssh;
  }
  return out;
}

}  // namespace

ssh::SshDevice to_ssh_device(const intent::Device& device) {
  ssh::SshDevice out;
  out.name = device.name;
  out.host = device.ssh.host;
  out.port = device.ssh.port;
  out.read = ssh::SshLogin{device.read.user, expand_home(device.read.identity_file),
                           device.read.use_agent};
  out.change = ssh::SshLogin{device.change.user, expand_home(device.change.identity_file),
                             device.change.use_agent};
  return out;
}

namespace {
// Probes (flows, responders, watches, custom probe commands) get a session of their own on each
// device, so a probe running beside a snapshot of the same host waits for neither
// (ssh::SessionLane).
ssh::SessionLane lane_for(std::string_view purpose) {
  return purpose == "probe" ? ssh::SessionLane::probes : ssh::SessionLane::commands;
}
}  // namespace

RemoteResult SshRemote::run(const intent::Device& device, ssh::CredentialRole role,
                            const std::string& command, Duration deadline,
                            std::string_view purpose) {
  auto shell = connections_.shell(to_ssh_device(device), role, lane_for(purpose));
  if (!shell.ok()) return shell.error();
  return shell.value()->run(command, deadline);
}

RemoteResult SshRemote::run_via_stdin(const intent::Device& device, ssh::CredentialRole role,
                                      const std::string& command, Duration deadline,
                                      std::string_view purpose) {
  auto shell = connections_.shell(to_ssh_device(device), role, lane_for(purpose));
  if (!shell.ok()) return shell.error();
  return shell.value()->run_via_stdin(command, deadline);
}

namespace {
ssh::SshFailure fenced(const intent::Device& device, const std::string& why) {
  return {ssh::SshFailure::Kind::rejected,
          "not sent to " + device.name + ": " + why +
              "; a run that may have lost its lease sends nothing more to any device"};
}

// The test-only fault hook of the lease fence: when FABGATE_FAULT_STOP_BEFORE_STEP=N is set in
// the environment (read once per process), the process stops itself (SIGSTOP) just before its
// Nth step command (purpose "step", counted across devices) goes on towards the device, after
// FencedRemote let it pass. It freezes a run exactly where the lease fence cannot stop it, so a
// test can prove that the device-side token does (tests/cmd/fabgate/locks_e2e_test.cpp,
// docs/reliability.md). Inert when the variable is unset.
void stop_if_faulted(std::string_view purpose) {
  static const unsigned long long stop_at = [] {
    const char* text = std::getenv("FABGATE_FAULT_STOP_BEFORE_STEP");
    return text ? std::strtoull(text, nullptr, 10) : 0ULL;
  }();
  static std::atomic<unsigned long long> steps{0};
  if (stop_at != 0 && purpose == "step" && ++steps == stop_at) ::raise(SIGSTOP);
}
}  // namespace

RemoteResult FencedRemote::run(const intent::Device& device, ssh::CredentialRole role,
                               const std::string& command, Duration deadline,
                               std::string_view purpose) {
  if (auto why = fence_.closed()) return fenced(device, *why);
  stop_if_faulted(purpose);
  return inner_.run(device, role, command, deadline, purpose);
}

RemoteResult FencedRemote::run_via_stdin(const intent::Device& device, ssh::CredentialRole role,
                                         const std::string& command, Duration deadline,
                                         std::string_view purpose) {
  if (auto why = fence_.closed()) return fenced(device, *why);
  stop_if_faulted(purpose);
  return inner_.run_via_stdin(device, role, command, deadline, purpose);
}

std::string device_fence_file(const std::string& lock_dir, const std::string& device) {
  return lock_dir + "/" + device + ".lock/fence";
}

namespace {
// The start of the guard's one line on stderr (fenced_command, device_lock.h), which judged()
// recognises with the exit status.
constexpr std::string_view kGuardMark = "fabgate-fence: ";
}  // namespace

std::optional<std::int64_t> TokenFencedRemote::token_for(const intent::Device& device,
                                                         std::string_view purpose) const {
  if (purpose == "device-lock" || !token_of_) return std::nullopt;
  auto token = token_of_(device.name);
  if (!token || *token <= 0) return std::nullopt;
  return token;
}

std::string TokenFencedRemote::guarded(const intent::Device& device, std::int64_t token,
                                       const std::string& command) const {
  // The generation this process acquired the device's lock with, when it did so with this
  // token: the guard then also refuses a later holder's equal token.
  auto mark = fence_mark(lock_dir_, device.name);
  const long generation = mark && mark->token == token ? mark->generation : 0;
  return fenced_command(lock_dir_, device.name, token, generation, command);
}

RemoteResult TokenFencedRemote::judged(const intent::Device& device, std::int64_t token,
                                       RemoteResult result) const {
  if (!result.ok() || result->exit_status != kRefusedStatus) return result;
  auto mark = result->stderr_text.find(kGuardMark);
  if (mark == std::string::npos) return result;  // the command's own exit status 86
  std::string line = result->stderr_text.substr(mark + kGuardMark.size());
  line = std::string(trim(line.substr(0, line.find('\n'))));
  if (!line.starts_with("stale "))
    return ssh::SshFailure{ssh::SshFailure::Kind::rejected,
                           "refused by " + device.name + " before it ran: " + line};
  return ssh::SshFailure{ssh::SshFailure::Kind::rejected,
                         "refused by " + device.name + " before it ran: " + line +
                             "; a newer run locked this device after this run's token " +
                             std::to_string(token) +
                             " was issued, so this run may not write "
                             "to it any more"};
}

RemoteResult TokenFencedRemote::run(const intent::Device& device, ssh::CredentialRole role,
                                    const std::string& command, Duration deadline,
                                    std::string_view purpose) {
  auto token = token_for(device, purpose);
  if (!token) return inner_.run(device, role, command, deadline, purpose);
  return judged(device, *token,
                inner_.run(device, role, guarded(device, *token, command), deadline, purpose));
}

RemoteResult TokenFencedRemote::run_via_stdin(const intent::Device& device,
                                              ssh::CredentialRole role, const std::string& command,
                                              Duration deadline, std::string_view purpose) {
  auto token = token_for(device, purpose);
  if (!token) return inner_.run_via_stdin(device, role, command, deadline, purpose);
  return judged(
      device, *token,
      inner_.run_via_stdin(device, role, guarded(device, *token, command), deadline, purpose));
}

RemoteResult RecordingRemote::run(const intent::Device& device, ssh::CredentialRole role,
                                  const std::string& command, Duration deadline,
                                  std::string_view purpose) {
  TimePoint started = now_utc();
  auto result = inner_.run(device, role, command, deadline, purpose);
  nlohmann::json record = {{"device", device.name},
                           {"role", std::string(ssh::to_string(role))},
                           {"purpose", std::string(purpose)},
                           {"command", command},
                           {"started_at", format_utc(started)},
                           {"deadline_ms", deadline.count()}};
  if (result.ok()) {
    record["exit_status"] = result->exit_status;
    record["duration_ms"] = result->duration.count();
    record["stdout"] = capped(result->stdout_text, result->stdout_truncated);
    record["stderr"] = capped(result->stderr_text, result->stderr_truncated);
  } else {
    record["failure"] = std::string(ssh::to_string(result.error().kind));
    record["message"] = result.error().message;
    record["duration_ms"] =
        std::chrono::duration_cast<std::chrono::milliseconds>(now_utc() - started).count();
  }
  evidence_.append_command(record);
  return result;
}

std::string describe_failure(const intent::Device& device, const std::string& command,
                             const ssh::SshFailure& failure) {
  std::string text =
      device.name + ": " + command + ": " + std::string(ssh::to_string(failure.kind));
  if (!failure.message.empty()) text += ": " + failure.message;
  return text;
}

}  // namespace fabgate::pipeline
