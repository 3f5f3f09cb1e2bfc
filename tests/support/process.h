#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace fabgate::testing {

// Runs argv[0] (an absolute path or a name found on PATH) to completion with stdout and stderr
// captured into `output`; returns the exit status, or -1 when it could not run.
int run_process(const std::vector<std::string>& argv, std::string* output = nullptr);

// A background child process, sent SIGTERM (then SIGKILL) and reaped when the object dies.
class ChildProcess {
 public:
  ChildProcess() = default;
  explicit ChildProcess(const std::vector<std::string>& argv);
  ~ChildProcess() { stop(); }
  ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();  // false once it has exited (it is then reaped)
  // Reaps the child if it has exited: its exit status (128 + the signal when a signal ended it),
  // or nullopt while it runs (or when there is no child). Once reaped the object holds none.
  std::optional<int> reap();
  void stop();

 private:
  pid_t pid_ = -1;
};

// True while a process with this pid exists and is not a zombie.
bool process_alive(pid_t pid);

}  // namespace fabgate::testing
