#include "gates/pipeline/families/remote.h"

#include <nlohmann/json.hpp>

#include "adapters/core/text.h"
#include "gates/pipeline/reporting/evidence.h"

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

RemoteResult SshRemote::run(const intent::Device& device, ssh::CredentialRole role,
                            const std::string& command, Duration deadline, std::string_view) {
  auto shell = connections_.shell(to_ssh_device(device), role);
  if (!shell.ok()) return shell.error();
  return shell.value()->run(command, deadline);
}

RemoteResult SshRemote::run_via_stdin(const intent::Device& device, ssh::CredentialRole role,
                                      const std::string& command, Duration deadline,
                                      std::string_view) {
  auto shell = connections_.shell(to_ssh_device(device), role);
  if (!shell.ok()) return shell.error();
  return shell.value()->run_via_stdin(command, deadline);
}

namespace {
ssh::SshFailure fenced(const intent::Device& device, const std::string& why) {
  return {ssh::SshFailure::Kind::rejected,
          "not sent to " + device.name + ": " + why +
              "; a run that may have lost its lease sends nothing more to any device"};
}
}  // namespace

RemoteResult FencedRemote::run(const intent::Device& device, ssh::CredentialRole role,
                               const std::string& command, Duration deadline,
                               std::string_view purpose) {
  if (auto why = fence_.closed()) return fenced(device, *why);
  return inner_.run(device, role, command, deadline, purpose);
}

RemoteResult FencedRemote::run_via_stdin(const intent::Device& device, ssh::CredentialRole role,
                                         const std::string& command, Duration deadline,
                                         std::string_view purpose) {
  if (auto why = fence_.closed()) return fenced(device, *why);
  return inner_.run_via_stdin(device, role, command, deadline, purpose);
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
