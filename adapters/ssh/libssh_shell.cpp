#include "adapters/ssh/libssh_shell.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "adapters/core/text.h"
#include "adapters/ssh/batch_frames.h"
#include "adapters/ssh/host_key_check.h"
#include "adapters/ssh/key_file.h"
#include "adapters/ssh/known_hosts_filter.h"

namespace fabgate::ssh {

namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_text(Duration duration) {
  auto ms = duration.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  if (ms >= 1000) {
    return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
  }
  return std::to_string(ms) + " ms";
}

Duration elapsed_since(Clock::time_point start) {
  return std::chrono::duration_cast<Duration>(Clock::now() - start);
}

// Applies host, SSH config and inventory overrides in the order OpenSSH users expect: the
// config fills in what the inventory leaves open (like options on the ssh command line, an
// explicit port or user in the inventory wins).
Expected<Ok, SshFailure> configure(ssh_session session, const SshDevice& device,
                                   const SshLogin& login, const SshOptions& options) {
  auto fail = [&](const std::string& what) -> Expected<Ok, SshFailure> {
    return SshFailure{SshFailure::Kind::unreachable,
                      "cannot set " + what + ": " + ssh_get_error(session)};
  };
  if (ssh_options_set(session, SSH_OPTIONS_HOST, device.host.c_str()) != SSH_OK)
    return fail("host");
  // "none" reads no SSH config at all: what the inventory and fabgate.yaml say is everything,
  // whatever the invoking account's ~/.ssh/config holds (labs, CI, tests).
  const char* config = options.config_file.empty() ? nullptr : options.config_file.c_str();
  if (options.config_file != "none" && ssh_options_parse_config(session, config) != SSH_OK) {
    return fail("SSH config " +
                (options.config_file.empty() ? std::string("~/.ssh/config") : options.config_file));
  }
  if (device.port > 0) {
    unsigned int port = static_cast<unsigned int>(device.port);
    if (ssh_options_set(session, SSH_OPTIONS_PORT, &port) != SSH_OK) return fail("port");
  }
  if (!login.user.empty() &&
      ssh_options_set(session, SSH_OPTIONS_USER, login.user.c_str()) != SSH_OK) {
    return fail("user");
  }
  if (!options.known_hosts_file.empty()) {
    // A known_hosts named in fabgate.yaml is the only authority: the global file is not mixed in.
    const std::string known_hosts = expand_home(options.known_hosts_file);
    const char* file = known_hosts.c_str();
    if (ssh_options_set(session, SSH_OPTIONS_KNOWNHOSTS, file) != SSH_OK ||
        ssh_options_set(session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, file) != SSH_OK) {
      return fail("known_hosts file");
    }
  }
  long timeout_seconds = static_cast<long>(options.connect_timeout.count() / 1000);
  long timeout_micros = static_cast<long>(options.connect_timeout.count() % 1000) * 1000;
  if (ssh_options_set(session, SSH_OPTIONS_TIMEOUT, &timeout_seconds) != SSH_OK ||
      ssh_options_set(session, SSH_OPTIONS_TIMEOUT_USEC, &timeout_micros) != SSH_OK) {
    return fail("timeout");
  }
  return Ok{};
}

bool agent_available() {
  const char* socket = std::getenv("SSH_AUTH_SOCK");
  return socket != nullptr && *socket != '\0';
}

Expected<Ok, SshFailure> authenticate(ssh_session session, const SshLogin& login, Duration limit) {
  const auto start = Clock::now();
  std::vector<std::string> tried;
  if (login.use_agent && agent_available()) {
    if (ssh_userauth_agent(session, nullptr) == SSH_AUTH_SUCCESS) return Ok{};
    tried.push_back("ssh-agent");
  }
  if (!login.identity_file.empty()) {
    ssh_key raw_key = nullptr;
    if (ssh_pki_import_privkey_file(login.identity_file.c_str(), nullptr, nullptr, nullptr,
                                    &raw_key) != SSH_OK) {
      return SshFailure{SshFailure::Kind::auth,
                        "cannot load key file " + login.identity_file +
                            " (a passphrase-protected key must be loaded into ssh-agent)"};
    }
    SshKey key{raw_key};
    if (ssh_userauth_publickey(session, nullptr, key.get()) == SSH_AUTH_SUCCESS) return Ok{};
    tried.push_back("key file " + login.identity_file);
  } else if (login.use_agent) {
    // The config's IdentityFile entries and the default keys (libssh also retries the agent).
    if (ssh_userauth_publickey_auto(session, nullptr, nullptr) == SSH_AUTH_SUCCESS) return Ok{};
    tried.push_back("identities from the SSH config");
  }
  std::string user = session_option(session, SSH_OPTIONS_USER);
  if (tried.empty()) {
    return SshFailure{SshFailure::Kind::auth,
                      "no usable credential for user '" + user +
                          "': the inventory names no key file and the agent is "
                          "disabled or not running"};
  }
  // libssh gives up on a blocking call after the session timeout: say that the server was slow
  // to answer authentication rather than that it refused the key.
  if (elapsed_since(start) >= limit) {
    return SshFailure{SshFailure::Kind::timeout,
                      "authentication: the server did not answer within " + seconds_text(limit) +
                          " (" + ssh_get_error(session) + ")"};
  }
  if (!ssh_is_connected(session)) {
    return SshFailure{
        SshFailure::Kind::unreachable,
        std::string("connection lost during authentication: ") + ssh_get_error(session)};
  }
  return SshFailure{SshFailure::Kind::auth,
                    "server refused user '" + user + "' with " + join(tried, ", then ")};
}

// Waits until the session's socket has data or `wait` passes.
void wait_readable(ssh_session session, Duration wait) {
  pollfd descriptor{ssh_get_fd(session), POLLIN, 0};
  ::poll(&descriptor, 1, static_cast<int>(wait.count()));
}

}  // namespace

LibsshShell::LibsshShell(SshSession session, const SshOptions& options,
                         std::optional<AcceptedHostKey> accepted)
    : session_(std::move(session)),
      output_cap_(options.output_cap),
      output_limit_(options.output_limit),
      accepted_host_key_(std::move(accepted)),
      slow_shell_startup_(options.slow_shell_startup),
      session_timeout_(options.connect_timeout) {}

Expected<std::unique_ptr<LibsshShell>, SshFailure> LibsshShell::connect(const SshDevice& device,
                                                                        CredentialRole role,
                                                                        const SshOptions& options) {
  // No command of the caller's is sent before a session exists: whatever fails here (the
  // shell start-up check included, which runs only `true`) is proven not sent.
  auto opened = open(device, role, options);
  if (!opened) return before_sending(opened.error());
  return opened;
}

Expected<std::unique_ptr<LibsshShell>, SshFailure> LibsshShell::open(const SshDevice& device,
                                                                     CredentialRole role,
                                                                     const SshOptions& options) {
  SshLogin login = device.login(role);
  login.identity_file = expand_home(login.identity_file);
  // A bad key file is refused before the network is touched.
  if (!login.identity_file.empty()) {
    auto checked = check_key_file(login.identity_file);
    if (!checked) return checked.error();
  }
  ensure_libssh_initialised();
  SshSession session{ssh_new()};
  if (!session) return SshFailure{SshFailure::Kind::unreachable, "cannot allocate an SSH session"};
  if (auto configured = configure(session.get(), device, login, options); !configured) {
    return configured.error();
  }
  // A known_hosts named in fabgate.yaml is usually the fleet's, a line per device: libssh gets
  // only this device's lines (KnownHostsFilter), not the whole file three times per session.
  const std::string known_hosts =
      options.known_hosts_file.empty() ? "" : expand_home(options.known_hosts_file);
  std::optional<KnownHostsFilter::Filtered> extract;
  if (!known_hosts.empty()) {
    const std::string name = known_hosts_name(session.get());
    auto made = KnownHostsFilter::shared().for_host(known_hosts, name);
    if (!made) {
      return SshFailure{SshFailure::Kind::host_key, "cannot check the host key of " + name +
                                                        " against " + known_hosts + ": " +
                                                        made.error() + "; nothing was sent"};
    }
    extract.emplace(std::move(made.value()));
    const std::string file = extract->path();
    if (ssh_options_set(session.get(), SSH_OPTIONS_KNOWNHOSTS, file.c_str()) != SSH_OK ||
        ssh_options_set(session.get(), SSH_OPTIONS_GLOBAL_KNOWNHOSTS, file.c_str()) != SSH_OK) {
      return SshFailure{SshFailure::Kind::unreachable,
                        std::string("cannot set known_hosts file: ") + ssh_get_error(session.get())};
    }
  }
  if (ssh_connect(session.get()) != SSH_OK) {
    unsigned int port = 22;
    ssh_options_get_port(session.get(), &port);
    return SshFailure{
        SshFailure::Kind::unreachable,
        "connect: cannot connect to " + session_option(session.get(), SSH_OPTIONS_HOST) + ":" +
            std::to_string(port) + " (TCP and SSH handshake) within " +
            seconds_text(options.connect_timeout) + ": " + ssh_get_error(session.get())};
  }
  // Host key first: nothing, not even a user name, is sent to a server we cannot vouch for.
  auto verified =
      verify_host_key(session.get(), device.name, options.unknown_host_keys, known_hosts);
  extract.reset();
  if (!verified) return verified.error();
  if (auto authenticated = authenticate(session.get(), login, options.connect_timeout);
      !authenticated) {
    return authenticated.error();
  }
  std::unique_ptr<LibsshShell> shell(
      new LibsshShell(std::move(session), options, std::move(verified.value())));
  shell->device_ = device.name;
  if (options.shell_startup_timeout > Duration{0} &&
      options.shell_startup_check == ShellStartupCheck::on_first_use) {
    shell->startup_pending_ = options.shell_startup_timeout;
  } else if (options.shell_startup_timeout > Duration{0}) {
    std::lock_guard lock(shell->mutex_);
    auto measured = shell->measure_shell_startup(device.name, options.shell_startup_timeout);
    if (!measured) return measured.error();
  }
  return shell;
}

Expected<Ok, SshFailure> LibsshShell::measure_shell_startup(const std::string& device,
                                                            Duration limit) {
  auto ran = std::move(run_each_locked({Request{"true", limit}}).front());
  if (!ran) {
    // Only `true` was sent: the command the caller asked for was not.
    SshFailure failure = before_sending(ran.error());
    if (failure.kind == SshFailure::Kind::timeout) {
      failure = shell_startup_timeout(device, limit);
    } else {
      failure.message = "while timing the remote shell start-up: " + failure.message;
    }
    return failure;
  }
  startup_measured(ran->duration);
  return Ok{};
}

SshFailure LibsshShell::shell_startup_timeout(const std::string& device, Duration limit) {
  return SshFailure{SshFailure::Kind::timeout,
                    "remote shell start-up on " + device + " took more than " +
                        seconds_text(limit) +
                        " (the trivial command `true` did not finish); check the login shell's "
                        "start-up files (~/.bashrc, ~/.profile, /etc/profile.d)"};
}

void LibsshShell::startup_measured(Duration took) {
  shell_startup_ = took;
  startup_pending_.reset();
  if (startup_observer_) startup_observer_(took);
}

std::string LibsshShell::slow_shell_hint() const {
  if (!shell_startup_ || *shell_startup_ < slow_shell_startup_) return "";
  return "; the remote shell's start-up alone took " + seconds_text(*shell_startup_) +
         " on this session (check the login shell's start-up files)";
}

SshFailure LibsshShell::lost(const std::string& while_doing, Clock::time_point since,
                             SshFailure::Delivery delivery) {
  const bool sent = delivery == SshFailure::Delivery::sent;
  // Said of every failure once the exec request went out, so the operator reads why the step
  // counts as applied.
  const std::string fate = sent ? " (after the command was sent: its outcome is unknown)" : "";
  if (elapsed_since(since) >= session_timeout_) {
    return SshFailure{SshFailure::Kind::timeout,
                      while_doing + ": the server did not answer within " +
                          seconds_text(session_timeout_) + fate + slow_shell_hint(),
                      delivery};
  }
  if (!ssh_is_connected(session_.get())) {
    broken_ = true;
    return SshFailure{
        SshFailure::Kind::unreachable,
        "connection lost while " + while_doing + fate + ": " + ssh_get_error(session_.get()),
        delivery};
  }
  return SshFailure{SshFailure::Kind::rejected,
                    "server refused " + while_doing + fate + ": " + ssh_get_error(session_.get()),
                    delivery};
}

Expected<CommandResult, SshFailure> LibsshShell::run(const std::string& command,
                                                     Duration deadline) {
  return std::move(run_each({Request{command, deadline}}).front());
}

Expected<CommandResult, SshFailure> LibsshShell::run_via_stdin(const std::string& command,
                                                               Duration deadline) {
  return std::move(
      run_each({Request{kStdinScriptCommand, deadline, stdin_script(command)}}).front());
}

// One command on its own channel of the session, from its exec request until its outcome.
struct LibsshShell::RunningCommand {
  std::size_t index = 0;  // into the caller's requests and results
  SshChannel channel;
  CommandResult result;
  Clock::time_point start;
  Clock::time_point end;
  std::size_t seen[2] = {0, 0};
};

std::vector<Expected<CommandResult, SshFailure>> LibsshShell::run_each(
    const std::vector<Request>& commands) {
  // libssh sessions are not thread-safe: one call at a time, whichever thread makes it.
  std::lock_guard lock(mutex_);
  if (startup_pending_) {
    // The first use is not a batch: time the start-up the at_connect way, before anything else.
    if (auto measured = measure_shell_startup(device_, *startup_pending_); !measured) {
      return std::vector<Expected<CommandResult, SshFailure>>(commands.size(), measured.error());
    }
  }
  return run_each_locked(commands);
}

std::vector<Expected<CommandResult, SshFailure>> LibsshShell::run_each_locked(
    const std::vector<Request>& commands) {
  std::vector<std::optional<Expected<CommandResult, SshFailure>>> outcomes(commands.size());
  std::vector<RunningCommand> running;
  std::size_t next = 0;
  // Lowered when the server refuses another channel while some are open (its MaxSessions).
  std::size_t channel_limit = kMaxConcurrentChannels;
  // Since when the server has been refusing channels while none of ours is open. sshd frees a
  // closed channel's slot only once it has processed the close, so it may refuse then: the open
  // is retried until session_timeout_ has passed since the first such refusal.
  std::optional<Clock::time_point> refused_since;

  // Opens a channel for commands[next] and starts it; false when the server refused another
  // channel while others are still running (the command is retried once one finishes).
  auto start_next = [&]() -> bool {
    const auto& request = commands[next];
    if (broken_) {
      outcomes[next] = SshFailure{SshFailure::Kind::unreachable,
                                  "not sent: the connection was lost earlier in this run",
                                  SshFailure::Delivery::not_sent};
      ++next;
      return true;
    }
    RunningCommand command;
    command.index = next;
    command.result.started_at = now_utc();
    command.start = Clock::now();
    command.end = command.start + request.deadline;
    command.channel.reset(ssh_channel_new(session_.get()));
    if (!command.channel || ssh_channel_open_session(command.channel.get()) != SSH_OK) {
      // While some of ours run, one of them will free a slot (each has its own deadline).
      if (!running.empty())
        refused_since.reset();
      else if (!refused_since)
        refused_since = command.start;
      if (ssh_is_connected(session_.get()) &&
          (!refused_since || elapsed_since(*refused_since) < session_timeout_)) {
        channel_limit = std::max<std::size_t>(1, running.size());
        return false;
      }
      outcomes[next++] = lost("channel open", command.start, SshFailure::Delivery::not_sent);
      refused_since.reset();
      return true;
    }
    refused_since.reset();
    const auto exec_start = Clock::now();
    if (ssh_channel_request_exec(command.channel.get(), request.command.c_str()) != SSH_OK) {
      outcomes[next++] =
          lost("command start (exec request)", exec_start, SshFailure::Delivery::sent);
      return true;
    }
    if (!request.input.empty()) {
      // Small (a command's text): it fits the channel's window, so the write does not wait on
      // the remote side reading it.
      std::size_t written = 0;
      while (written < request.input.size()) {
        int n = ssh_channel_write(command.channel.get(), request.input.data() + written,
                                  static_cast<uint32_t>(request.input.size() - written));
        if (n == SSH_ERROR) break;
        written += static_cast<std::size_t>(n);
      }
      if (written < request.input.size() || ssh_channel_send_eof(command.channel.get()) != SSH_OK) {
        outcomes[next++] =
            lost("writing the command to standard input", exec_start, SshFailure::Delivery::sent);
        return true;
      }
    }
    ++next;
    running.push_back(std::move(command));
    return true;
  };

  // Stops the remote process and closes the channel. sshd delivers the signal to the
  // session's process (the login shell, which execs a simple command), see docs/ssh.md.
  auto stop_remote = [](RunningCommand& command) {
    ssh_channel_request_send_signal(command.channel.get(), "KILL");
    ssh_channel_close(command.channel.get());
  };

  std::array<char, 32 * 1024> buffer{};
  for (;;) {
    while (next < commands.size() && running.size() < channel_limit) {
      if (!start_next()) break;
    }
    if (running.empty()) {
      if (next >= commands.size()) break;
      // Refused with none of ours open: sshd has not freed the closed channels' slots yet.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    bool any_progress = false;
    for (std::size_t i = 0; i < running.size();) {
      RunningCommand& command = running[i];
      const auto& request = commands[command.index];
      std::optional<Expected<CommandResult, SshFailure>> outcome;
      bool progressed = false;
      std::string* sinks[2] = {&command.result.stdout_text, &command.result.stderr_text};
      bool* truncated[2] = {&command.result.stdout_truncated, &command.result.stderr_truncated};
      for (int stream = 0; stream < 2 && !outcome; ++stream) {
        int count = ssh_channel_read_nonblocking(command.channel.get(), buffer.data(),
                                                 static_cast<uint32_t>(buffer.size()), stream);
        if (count == SSH_ERROR) {
          outcome = lost("reading output", Clock::now(), SshFailure::Delivery::sent);
          break;
        }
        if (count <= 0) continue;
        progressed = true;
        std::size_t bytes = static_cast<std::size_t>(count);
        command.seen[stream] += bytes;
        std::string& sink = *sinks[stream];
        const std::size_t cap = stream == 0 ? stdout_cap(request) : output_cap_;
        const std::size_t limit = stream == 0 ? stdout_limit(request) : output_limit_;
        if (sink.size() < cap) sink.append(buffer.data(), std::min(bytes, cap - sink.size()));
        if (command.seen[stream] > cap) *truncated[stream] = true;
        if (command.seen[stream] > limit) {
          stop_remote(command);
          outcome = SshFailure{SshFailure::Kind::output_too_large,
                               "stopped after " + std::to_string(command.seen[stream]) +
                                   " bytes on " + (stream == 0 ? "stdout" : "stderr") + " (limit " +
                                   std::to_string(limit) + ")"};
        }
      }
      if (!outcome && !progressed) {
        if (ssh_channel_is_eof(command.channel.get()) ||
            ssh_channel_is_closed(command.channel.get())) {
          command.result.exit_status = ssh_channel_get_exit_status(command.channel.get());
          if (command.result.exit_status < 0 && !ssh_is_connected(session_.get())) {
            // The transport went away under the command (it killed its own session, the
            // management plane bounced) before any exit status: that is no result.
            outcome = lost("waiting for the command's exit status", Clock::now(),
                           SshFailure::Delivery::sent);
          } else {
            ssh_channel_close(command.channel.get());
            command.result.duration =
                std::chrono::duration_cast<Duration>(Clock::now() - command.start);
            outcome = std::move(command.result);
          }
        } else if (Clock::now() >= command.end) {
          stop_remote(command);
          outcome = SshFailure{SshFailure::Kind::timeout,
                               "timed out after " + seconds_text(request.deadline) +
                                   " while the command was running; the remote process was sent "
                                   "KILL and the channel closed" +
                                   slow_shell_hint()};
        }
      }
      any_progress = any_progress || progressed;
      if (outcome) {
        outcomes[command.index] = std::move(*outcome);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        any_progress = true;  // a channel freed: start the next command before waiting
      } else {
        ++i;
      }
    }
    if (any_progress || running.empty()) continue;
    auto wait = Duration{200};
    const auto now = Clock::now();
    for (const auto& command : running) {
      wait = std::min(wait, std::chrono::duration_cast<Duration>(command.end - now) + Duration{1});
    }
    wait_readable(session_.get(), std::max(wait, Duration{0}));
  }
  std::vector<Expected<CommandResult, SshFailure>> results;
  results.reserve(outcomes.size());
  for (auto& outcome : outcomes) results.push_back(std::move(*outcome));
  return results;
}

std::vector<Expected<CommandResult, SshFailure>> LibsshShell::run_batch(
    const std::vector<Request>& commands) {
  std::lock_guard lock(mutex_);
  using Results = std::vector<Expected<CommandResult, SshFailure>>;
  if (commands.empty()) return {};
  if (broken_) {
    return Results(commands.size(),
                   SshFailure{SshFailure::Kind::unreachable,
                              "not sent: the connection was lost earlier in this run",
                              SshFailure::Delivery::not_sent});
  }
  const std::string nonce = batch_nonce();
  std::vector<std::string> texts;
  texts.reserve(commands.size());
  for (const auto& request : commands) texts.push_back(request.command);
  const std::string script = batch_script(texts, nonce);

  // Measured from the exec request: with on_first_use, the wait for the first frame is the
  // login shell's start-up (its start-up files run before `exec /bin/sh -s`).
  const auto opened_at = Clock::now();
  SshChannel channel{ssh_channel_new(session_.get())};
  if (!channel || ssh_channel_open_session(channel.get()) != SSH_OK) {
    return Results(commands.size(),
                   lost("channel open", opened_at, SshFailure::Delivery::not_sent));
  }
  const auto exec_at = Clock::now();
  if (ssh_channel_request_exec(channel.get(), kBatchCommand) != SSH_OK) {
    return Results(commands.size(),
                   lost("command start (exec request)", exec_at, SshFailure::Delivery::sent));
  }
  // The script may exceed the channel's window: sh reads it as it comes, so a blocking write
  // only waits on the network, bounded by the session timeout.
  std::size_t written = 0;
  while (written < script.size()) {
    int n = ssh_channel_write(channel.get(), script.data() + written,
                              static_cast<uint32_t>(script.size() - written));
    if (n == SSH_ERROR || n == 0) break;
    written += static_cast<std::size_t>(n);
  }
  if (written < script.size() || ssh_channel_send_eof(channel.get()) != SSH_OK) {
    return Results(commands.size(), lost("writing the batch script to standard input", exec_at,
                                         SshFailure::Delivery::sent));
  }

  FrameReader out(nonce, commands.size(), FrameReader::Stream::stdout_stream, output_cap_);
  FrameReader err(nonce, commands.size(), FrameReader::Stream::stderr_stream, output_cap_);
  for (std::size_t i = 0; i < commands.size(); ++i) out.set_cap(i, stdout_cap(commands[i]));
  std::vector<TimePoint> started_at(commands.size());
  std::vector<Clock::time_point> began(commands.size()), ended(commands.size());
  // Outcomes decided before the frames completed (timeout, output limit): the command that
  // caused the stop; every later command is incomplete.
  std::optional<std::pair<std::size_t, SshFailure>> stopped;
  const std::optional<Duration> startup_limit = startup_pending_;
  // When the current command's clock started: the previous command's end, or the exec.
  Clock::time_point clock_from = exec_at;
  bool shell_ended = false;

  auto done = [&] { return std::min(out.ended(), err.ended()); };
  auto stop_remote = [&] {
    ssh_channel_request_send_signal(channel.get(), "KILL");
    ssh_channel_close(channel.get());
  };

  std::array<char, 32 * 1024> buffer{};
  while (!stopped && done() < commands.size()) {
    bool progressed = false;
    for (FrameReader* reader : {&out, &err}) {
      const int stream = reader == &out ? 0 : 1;
      int count = ssh_channel_read_nonblocking(channel.get(), buffer.data(),
                                               static_cast<uint32_t>(buffer.size()), stream);
      if (count == SSH_ERROR) {
        shell_ended = true;
        lost("reading output", Clock::now(),
             SshFailure::Delivery::sent);  // marks a broken transport
        break;
      }
      if (count <= 0) continue;
      progressed = true;
      const auto now = Clock::now();
      for (const auto& event : reader->feed({buffer.data(), static_cast<std::size_t>(count)})) {
        if (reader != &out) continue;  // timing comes from stdout's frames
        if (event.begin) {
          began[event.index] = now;
          started_at[event.index] = now_utc();
          if (event.index == 0 && startup_pending_) startup_measured(elapsed_since(exec_at));
        } else {
          ended[event.index] = now;
        }
      }
    }
    if (shell_ended) break;
    const std::size_t current = done();
    if (current >= commands.size()) break;
    if (current > 0 && ended[current - 1] > clock_from) clock_from = ended[current - 1];
    // A command writing past the hard limit is stopped, as on its own channel.
    for (FrameReader* reader : {&out, &err}) {
      if (stopped || current >= reader->output_count()) continue;
      const auto& output = reader->output(current);
      const std::size_t limit = reader == &out ? stdout_limit(commands[current]) : output_limit_;
      if (output.seen > limit) {
        stop_remote();
        stopped.emplace(current,
                        SshFailure{SshFailure::Kind::output_too_large,
                                   "stopped after " + std::to_string(output.seen) + " bytes on " +
                                       (reader == &out ? "stdout" : "stderr") + " (limit " +
                                       std::to_string(limit) + ")"});
      }
    }
    if (stopped) break;
    if (out.malformed() || err.malformed()) {
      stop_remote();
      break;
    }
    if (progressed) continue;
    if (ssh_channel_is_eof(channel.get()) || ssh_channel_is_closed(channel.get())) {
      shell_ended = true;
      break;
    }
    // Before the first frame only the shell's start-up runs: with on_first_use it has its own
    // limit, reported as such; then each command has its own deadline.
    const bool starting = current == 0 && !out.output(0).begun;
    Clock::time_point deadline_at = clock_from + commands[current].deadline;
    if (starting && startup_limit) deadline_at = exec_at + *startup_limit;
    if (Clock::now() >= deadline_at) {
      stop_remote();
      if (starting && startup_limit) {
        startup_pending_.reset();
        SshFailure failure = shell_startup_timeout(device_, *startup_limit);
        failure.message += "; the batch's first frame did not arrive";
        stopped.emplace(current, failure);
      } else {
        stopped.emplace(current,
                        SshFailure{SshFailure::Kind::timeout,
                                   "timed out after " + seconds_text(commands[current].deadline) +
                                       " while the command was running (one exec per device: "
                                       "the batch's shell was sent KILL and the channel closed)" +
                                       slow_shell_hint()});
      }
      break;
    }
    const auto wait =
        std::chrono::duration_cast<Duration>(deadline_at - Clock::now()) + Duration{1};
    wait_readable(session_.get(), std::clamp(wait, Duration{0}, Duration{200}));
  }
  if (done() >= commands.size()) ssh_channel_close(channel.get());
  const int shell_status = shell_ended ? ssh_channel_get_exit_status(channel.get()) : -1;

  Results results;
  results.reserve(commands.size());
  const std::size_t complete = done();
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (i < complete) {
      CommandResult result;
      result.exit_status = out.output(i).exit_status.value_or(-1);
      result.stdout_text = std::move(out.output(i).text);
      result.stderr_text = std::move(err.output(i).text);
      result.stdout_truncated = out.output(i).truncated;
      result.stderr_truncated = err.output(i).truncated;
      result.started_at = started_at[i];
      result.duration = std::chrono::duration_cast<Duration>(ended[i] - began[i]);
      results.push_back(std::move(result));
      continue;
    }
    if (stopped && stopped->first == i) {
      results.push_back(stopped->second);
      continue;
    }
    std::string why;
    if (stopped) {
      why = "not run: the batch was stopped at an earlier command (" +
            commands[stopped->first].command + ": " + std::string(to_string(stopped->second.kind)) +
            ")";
    } else if (out.malformed() || err.malformed()) {
      why = "the batch's output could not be read (" +
            (out.malformed() ? out.problem() : err.problem()) + "); not evidence";
    } else if (i == complete) {
      const bool began_i = out.output(i).begun;
      why = std::string(began_i ? "the batch's shell ended while this command was running"
                                : "the batch's shell ended before this command started") +
            " (shell exit status " + std::to_string(shell_status) +
            (shell_status < 0 ? ", none sent: killed by a signal?" : "") + ")";
    } else {
      why = "not run: the batch's shell ended at an earlier command (" +
            commands[complete].command + ")";
    }
    results.push_back(
        SshFailure{broken_ ? SshFailure::Kind::unreachable : SshFailure::Kind::incomplete, why});
  }
  return results;
}

}  // namespace fabgate::ssh
