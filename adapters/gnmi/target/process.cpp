#include "adapters/gnmi/target/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "adapters/core/text.h"

extern char** environ;

namespace fabgate::gnmi::target {

namespace {

// Move-only file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

bool make_pipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  pipe.read = Fd(fds[0]);
  pipe.write = Fd(fds[1]);
  return true;
}

// posix_spawn file actions and their destroy call, held by RAII.
struct FileActions {
  posix_spawn_file_actions_t actions;
  FileActions() { posix_spawn_file_actions_init(&actions); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
};

// posix_spawn attributes and their destroy call, held by RAII. The child starts clean whatever
// fabgate-gnmid's threads did to their own signal state (SIGINT and SIGTERM blocked for sigwait,
// SIGPIPE ignored): an empty signal mask and every signal at its default action. It leads a
// process group of its own, so a timeout kills whatever it started too.
struct SpawnAttributes {
  posix_spawnattr_t attributes;
  SpawnAttributes() {
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
};

}  // namespace

namespace {
thread_local std::optional<std::chrono::steady_clock::time_point> caller_deadline;
}  // namespace

CallerDeadline::CallerDeadline(std::chrono::steady_clock::time_point deadline)
    : previous_(caller_deadline) {
  caller_deadline = deadline;
}

CallerDeadline::~CallerDeadline() { caller_deadline = previous_; }

Duration CallerDeadline::limit_for(Duration own) {
  if (!caller_deadline) return own;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  *caller_deadline - std::chrono::steady_clock::now()) -
              kReplyMargin;
  return std::clamp(left, Duration{1}, kLongestCallerLimit);
}

std::string CommandOutcome::describe_failure(Duration fallback) const {
  if (!started) return error;
  if (timed_out) return "timed out after " + format_duration(limit.count() > 0 ? limit : fallback);
  std::string detail(trim(err.empty() ? out : err));
  if (exit_status == 127 && detail.empty()) detail = "command not found";
  return "exit " + std::to_string(exit_status) + (detail.empty() ? "" : ": " + detail);
}

CommandOutcome run_command(const std::vector<std::string>& argv, Duration own_limit) {
  CommandOutcome outcome;
  const Duration limit = CallerDeadline::limit_for(own_limit);
  outcome.limit = limit;
  if (argv.empty()) {
    outcome.error = "empty command";
    return outcome;
  }
  Pipe out_pipe;
  Pipe err_pipe;
  if (!make_pipe(out_pipe) || !make_pipe(err_pipe)) {
    outcome.error = std::string("pipe: ") + std::strerror(errno);
    return outcome;
  }
  FileActions actions;
  posix_spawn_file_actions_addopen(&actions.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions.actions, out_pipe.write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions.actions, err_pipe.write.get(), 2);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  SpawnAttributes attributes;
  int spawn_error =
      posix_spawnp(&pid, args[0], &actions.actions, &attributes.attributes, args.data(), environ);
  out_pipe.write.reset();
  err_pipe.write.reset();
  if (spawn_error != 0) {
    outcome.error = argv[0] + ": " + std::strerror(spawn_error);
    return outcome;
  }
  outcome.started = true;

  auto deadline = std::chrono::steady_clock::now() + limit;
  Fd* fds[2] = {&out_pipe.read, &err_pipe.read};
  std::string* sinks[2] = {&outcome.out, &outcome.err};
  bool open[2] = {true, true};
  while (open[0] || open[1]) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome.timed_out = true;
      ::kill(-pid, SIGKILL);  // its process group: the program and everything it started
      break;
    }
    pollfd polls[2];
    nfds_t count = 0;
    int which[2];
    for (int i = 0; i < 2; ++i) {
      if (!open[i]) continue;
      polls[count] = {fds[i]->get(), POLLIN, 0};
      which[count++] = i;
    }
    int ready = ::poll(polls, count, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (nfds_t p = 0; p < count; ++p) {
      if (polls[p].revents == 0) continue;
      char buffer[4096];
      ssize_t n = ::read(polls[p].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[which[p]]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        open[which[p]] = false;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!outcome.timed_out) {
    outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return outcome;
}

}  // namespace fabgate::gnmi::target
