#include "adapters/core/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

extern char** environ;

namespace fabgate {
namespace {

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
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
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
  Fd read, write;
};

bool make_pipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  pipe.read = Fd(fds[0]);
  pipe.write = Fd(fds[1]);
  return true;
}

class SpawnFileActions {
 public:
  SpawnFileActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~SpawnFileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

class SpawnAttributes {
 public:
  SpawnAttributes() { ::posix_spawnattr_init(&attributes_); }
  ~SpawnAttributes() { ::posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawnattr_t* get() { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

// Writes to the child's stdin with SIGPIPE blocked on this thread: a child that exits without
// reading its input (a broken or hostile ssh-keygen) must give EPIPE, a value, not a signal
// that kills fabgate. A SIGPIPE the write raised is consumed; one already pending is left.
ssize_t write_without_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_only, previous, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ssize_t n = ::write(fd, data, size);
  const int write_errno = errno;
  if (n < 0 && write_errno == EPIPE && !was_pending) {
    const timespec no_wait{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = write_errno;
  return n;
}

}  // namespace

Result<ChildResult> run_child(const ChildRequest& request) {
  const std::string program = request.argv.empty() ? std::string() : request.argv.front();
  auto failed = [&](const std::string& what) {
    return Error::internal("run " + program + ": " + what + ": " + std::strerror(errno));
  };
  if (request.argv.empty()) return Error::internal("run: no program given");
  const bool detached = request.terminal == Terminal::detached;

  Pipe in, out, err;
  if ((detached && !make_pipe(in)) || !make_pipe(out) || !make_pipe(err)) return failed("pipe");
  SpawnFileActions actions;
  if (detached) ::posix_spawn_file_actions_adddup2(actions.get(), in.read.get(), 0);
  ::posix_spawn_file_actions_adddup2(actions.get(), out.write.get(), 1);
  ::posix_spawn_file_actions_adddup2(actions.get(), err.write.get(), 2);
  // Nothing else this process holds (SSH and etcd sockets, other children's pipes) goes with
  // the child: a daemon it starts (a twin's FRR) would keep them open for as long as it runs.
  ::posix_spawn_file_actions_addclosefrom_np(actions.get(), 3);

  SpawnAttributes attributes;
  sigset_t no_signals, default_signals;
  sigemptyset(&no_signals);
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  sigaddset(&default_signals, SIGINT);
  sigaddset(&default_signals, SIGTERM);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  // A new session has no controlling terminal: nothing the child runs can open /dev/tty and
  // wait for a passphrase nobody will type.
  if (detached) flags |= POSIX_SPAWN_SETSID;
  ::posix_spawnattr_setflags(attributes.get(), flags);
  ::posix_spawnattr_setsigmask(attributes.get(), &no_signals);
  ::posix_spawnattr_setsigdefault(attributes.get(), &default_signals);

  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry; ++entry) env_strings.emplace_back(*entry);
  for (const auto& extra : request.extra_env) {
    std::string name = extra.substr(0, extra.find('=') + 1);
    std::erase_if(env_strings, [&](const std::string& e) { return e.rfind(name, 0) == 0; });
    env_strings.push_back(extra);
  }
  std::vector<char*> envp, argv;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = request.argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  int spawned = ::posix_spawnp(&pid, program.c_str(), actions.get(), attributes.get(), argv.data(),
                               envp.data());
  if (spawned != 0) {
    errno = spawned;
    return failed("start");
  }
  in.read.reset();
  out.write.reset();
  err.write.reset();
  if (detached && request.input.empty()) in.write.reset();
  if (in.write.get() >= 0) ::fcntl(in.write.get(), F_SETFL, O_NONBLOCK);

  ChildResult result;
  std::size_t written = 0;
  const auto deadline = std::chrono::steady_clock::now() + request.deadline;
  while ((out.read.get() >= 0 || err.read.get() >= 0) && !result.output_too_large) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3];
    nfds_t count = 0;
    for (Fd* fd : {&out.read, &err.read})
      if (fd->get() >= 0) fds[count++] = {fd->get(), POLLIN, 0};
    if (in.write.get() >= 0) fds[count++] = {in.write.get(), POLLOUT, 0};
    int ready = ::poll(fds, count, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in.write.get()) {
        ssize_t n = write_without_sigpipe(in.write.get(), request.input.data() + written,
                                          request.input.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        if (n < 0 && errno != EAGAIN && errno != EINTR) in.write.reset();
        if (written == request.input.size()) in.write.reset();
        continue;
      }
      char buffer[4096];
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      bool is_out = fds[i].fd == out.read.get();
      if (n > 0) {
        std::string& sink = is_out ? result.out : result.err;
        sink.append(buffer, static_cast<std::size_t>(n));
        if (request.max_output > 0 && sink.size() > request.max_output) {
          sink.resize(request.max_output);
          result.output_too_large = true;
          break;
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        (is_out ? out.read : err.read).reset();
      }
    }
  }
  in.write.reset();
  // The child may close its output and still run: wait for it within the same deadline.
  int status = 0;
  pid_t reaped = 0;
  while (!result.timed_out && !result.output_too_large &&
         (reaped = ::waitpid(pid, &status, WNOHANG)) == 0) {
    if (std::chrono::steady_clock::now() >= deadline)
      result.timed_out = true;
    else
      ::usleep(10'000);
  }
  if (result.timed_out || result.output_too_large) {
    ::kill(detached ? -pid : pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return result;
  }
  if (reaped < 0) return failed("wait");
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  return result;
}

}  // namespace fabgate
