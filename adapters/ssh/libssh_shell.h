#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "adapters/ssh/accepted_host_key.h"
#include "adapters/ssh/libssh_handles.h"
#include "adapters/ssh/remote_shell.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::ssh {

// The real RemoteShell: one authenticated libssh session; every command gets its own channel,
// except that run_batch() sends a device's commands as one framed script on one channel.
class LibsshShell final : public RemoteShell {
 public:
  // Channels run_each() keeps open at once: OpenSSH's default MaxSessions. A server that allows
  // fewer refuses a channel; the command then waits for one of the running ones to finish.
  static constexpr std::size_t kMaxConcurrentChannels = 10;

  // Connects within options.connect_timeout, honouring the SSH config (Host, HostName, Port,
  // User, IdentityFile, UserKnownHostsFile), checks the host key before anything else, then
  // authenticates with the `role` login of `device`: ssh-agent first, then the inventory key
  // file (or, without one, the config's identities). Passwords are never tried.
  static Expected<std::unique_ptr<LibsshShell>, SshFailure> connect(const SshDevice& device,
                                                                    CredentialRole role,
                                                                    const SshOptions& options);

  Expected<CommandResult, SshFailure> run(const std::string& command, Duration deadline) override;
  Expected<CommandResult, SshFailure> run_via_stdin(const std::string& command,
                                                    Duration deadline) override;
  std::vector<Expected<CommandResult, SshFailure>> run_each(
      const std::vector<Request>& commands) override;
  std::vector<Expected<CommandResult, SshFailure>> run_batch(
      const std::vector<Request>& commands) override;

  bool connection_lost() const override { return broken_; }

  // The exec request of run_batch(): a POSIX sh that reads the framed script from standard
  // input, whatever the login shell is (it only has to run this line).
  static constexpr const char* kBatchCommand = "exec /bin/sh -s";

  // Set when the host was unknown and the run allowed accepting its key.
  const std::optional<AcceptedHostKey>& accepted_host_key() const { return accepted_host_key_; }
  // How long the trivial command run right after login took (nullopt: not measured).
  const std::optional<Duration>& shell_startup() const { return shell_startup_; }
  // Called once when the start-up is measured after connect() returned
  // (ShellStartupCheck::on_first_use); the connector records it there.
  void on_shell_startup_measured(std::function<void(Duration)> observer) {
    startup_observer_ = std::move(observer);
  }

 private:
  LibsshShell(SshSession session, const SshOptions& options,
              std::optional<AcceptedHostKey> accepted);

  // connect() without marking its failures as before sending.
  static Expected<std::unique_ptr<LibsshShell>, SshFailure> open(const SshDevice& device,
                                                                 CredentialRole role,
                                                                 const SshOptions& options);
  // The failure of a libssh call on the session while `while_doing`: a timeout, a lost
  // connection (marks the session broken) or a refusal. `delivery` says whether the command's
  // exec request had been issued by then.
  SshFailure lost(const std::string& while_doing, std::chrono::steady_clock::time_point since,
                  SshFailure::Delivery delivery);
  // Runs `true` to time the login shell's start-up, with mutex_ held; a shell that does not
  // finish in time fails the connection with that cause (see SshOptions::shell_startup_timeout).
  Expected<Ok, SshFailure> measure_shell_startup(const std::string& device, Duration limit);
  // The timeout failure of a shell that did not start within `limit`.
  static SshFailure shell_startup_timeout(const std::string& device, Duration limit);
  void startup_measured(Duration took);
  // Appended to a command's timeout when this session's shell start-up was slow.
  std::string slow_shell_hint() const;

  struct RunningCommand;
  // run_each() with mutex_ held.
  std::vector<Expected<CommandResult, SshFailure>> run_each_locked(
      const std::vector<Request>& commands);

  std::mutex mutex_;  // one run()/run_each() at a time on the session
  SshSession session_;
  std::size_t output_cap_;
  std::size_t output_limit_;
  // A request's own standard-output cap and limit (Request::output_cap), or the session's.
  std::size_t stdout_cap(const Request& request) const {
    return request.output_cap > 0 ? request.output_cap : output_cap_;
  }
  std::size_t stdout_limit(const Request& request) const {
    return request.output_cap > output_limit_ ? request.output_cap : output_limit_;
  }
  std::optional<AcceptedHostKey> accepted_host_key_;
  std::optional<Duration> shell_startup_;
  Duration slow_shell_startup_;
  Duration session_timeout_;  // libssh's limit on each blocking call (channel open, exec)
  // The transport failed; later commands fail fast. Read by connection_lost() from any thread.
  std::atomic<bool> broken_{false};
  std::string device_;  // the inventory name, for messages
  // Set while ShellStartupCheck::on_first_use has not measured the start-up yet (limit > 0).
  std::optional<Duration> startup_pending_;
  std::function<void(Duration)> startup_observer_;
};

}  // namespace fabgate::ssh
