#pragma once

// Test harness for fabgate-gnmid: temp directories, the target as a real child process,
// network namespaces and TLS certificates, each cleaned up by RAII even when a test fails.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace fabgate::gnmi::testing {

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write(const std::string& name, const std::string& text, bool executable = false) const;

 private:
  std::string path_;
};

// fabgate-gnmid (or any argv) as a child process. start() waits for the first stdout line
// (the bound port or socket path); the destructor stops the process with SIGTERM, then SIGKILL.
class TargetProcess {
 public:
  TargetProcess() = default;
  ~TargetProcess();
  TargetProcess(const TargetProcess&) = delete;
  TargetProcess& operator=(const TargetProcess&) = delete;

  // Returns the first line, or nullopt (with stderr in `failure`) when it exits or is silent
  // for 10 s.
  std::optional<std::string> start(const std::vector<std::string>& argv,
                                   const std::string& stderr_file,
                                   const std::vector<std::string>& extra_env = {});
  std::string failure;

  // Sends SIGTERM and waits up to `wait` for the exit; returns the waitpid status, or nullopt
  // when it had to be killed (or was not running).
  std::optional<int> terminate(std::chrono::milliseconds wait = std::chrono::milliseconds(5000));

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
};

// A network namespace with a unique name, deleted on destruction (which also deletes every
// interface in it).
class NetnsGuard {
 public:
  NetnsGuard();
  ~NetnsGuard();
  NetnsGuard(const NetnsGuard&) = delete;
  NetnsGuard& operator=(const NetnsGuard&) = delete;
  bool created() const { return created_; }
  const std::string& name() const { return name_; }
  // Runs `ip -n NAME ARGS...`; true on exit 0.
  bool ip(const std::vector<std::string>& args) const;
  // Reads /sys/class/net/<interface>/<file> as seen inside the namespace.
  std::string sysfs(const std::string& interface, const std::string& file) const;

 private:
  std::string name_;
  bool created_ = false;
};

// A CA and a server certificate for `server_names` (a subjectAltName list; by default
// DNS:localhost and IP:127.0.0.1), made with the openssl CLI.
struct TestCertificates {
  std::string ca;
  std::string cert;
  std::string key;
  std::string other_ca;     // a CA that did not sign the server certificate
  std::string client_cert;  // a client certificate the CA signed, and its key
  std::string client_key;
};
std::optional<TestCertificates> make_certificates(
    const TempDir& dir, std::string& failure,
    const std::string& server_names = "DNS:localhost,IP:127.0.0.1");

bool running_as_root();
bool program_available(const std::string& name);
std::string gnmid_path();

}  // namespace fabgate::gnmi::testing
