#include "tests/adapters/gnmi/gnmid_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "adapters/core/text.h"
#include "adapters/gnmi/target/process.h"

extern char** environ;

namespace fabgate::gnmi::testing {

namespace {

using target::run_command;

bool run_ok(const std::vector<std::string>& argv) {
  return run_command(argv, Duration(20'000)).succeeded();
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TempDir::TempDir() {
  char pattern[] = "/tmp/fgt-gnmi-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  path_ = made != nullptr ? made : "";
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void TempDir::write(const std::string& name, const std::string& text, bool executable) const {
  std::ofstream(file(name)) << text;
  if (executable) {
    std::filesystem::permissions(file(name), std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add);
  }
}

std::optional<std::string> TargetProcess::start(const std::vector<std::string>& argv,
                                                const std::string& stderr_file,
                                                const std::vector<std::string>& extra_env) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    failure = "pipe failed";
    return std::nullopt;
  }
  // Everything the child needs is prepared before fork: the test process runs gRPC threads,
  // so the child may only make async-signal-safe calls before exec.
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> environment(extra_env);
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  std::vector<char*> env;
  for (auto& assignment : environment) env.push_back(assignment.data());
  env.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(fds[1], 1);
    int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err >= 0) ::dup2(err, 2);
    ::execvpe(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  stdout_fd_ = fds[0];
  if (pid_ < 0) {
    failure = "fork failed";
    return std::nullopt;
  }
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd wait{stdout_fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&wait, 1, static_cast<int>(left.count())) <= 0) break;
    char c = 0;
    if (::read(stdout_fd_, &c, 1) != 1) break;
    if (c == '\n') return line;
    line.push_back(c);
  }
  failure = "target did not print its address; stderr: " + read_all(stderr_file);
  return std::nullopt;
}

std::optional<int> TargetProcess::terminate(std::chrono::milliseconds wait) {
  if (pid_ <= 0) return std::nullopt;
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + wait;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return status;
    }
    ::usleep(20'000);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return std::nullopt;
}

TargetProcess::~TargetProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    bool reaped = false;
    for (int i = 0; i < 50 && !reaped; ++i) {
      reaped = ::waitpid(pid_, &status, WNOHANG) == pid_;
      if (!reaped) ::usleep(100'000);
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

NetnsGuard::NetnsGuard() {
  static std::atomic<int> counter{0};
  // "fgg-" is no lab's prefix: a lab test running beside this one counts and removes the
  // namespaces under its own prefix (fgt-, fgs-, ...) and must never see these.
  name_ = "fgg-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  created_ = run_ok({"ip", "netns", "add", name_});
}

NetnsGuard::~NetnsGuard() {
  if (created_) (void)run_ok({"ip", "netns", "del", name_});
}

bool NetnsGuard::ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"ip", "-n", name_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_ok(argv);
}

std::string NetnsGuard::sysfs(const std::string& interface, const std::string& file) const {
  auto outcome =
      run_command({"ip", "netns", "exec", name_, "cat", "/sys/class/net/" + interface + "/" + file},
                  Duration(10'000));
  return std::string(trim(outcome.out));
}

std::optional<TestCertificates> make_certificates(const TempDir& dir, std::string& failure,
                                                  const std::string& server_names) {
  auto openssl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "openssl");
    auto outcome = run_command(args, Duration(30'000));
    if (!outcome.succeeded()) failure = join(args, " ") + ": " + outcome.err;
    return outcome.succeeded();
  };
  const std::vector<std::string> ec_key = {"-newkey", "ec", "-pkeyopt",
                                           "ec_paramgen_curve:prime256v1", "-nodes"};
  auto self_signed = [&](const std::string& name) {
    std::vector<std::string> args = {"req", "-x509"};
    args.insert(args.end(), ec_key.begin(), ec_key.end());
    args.insert(args.end(), {"-keyout", dir.file(name + ".key"), "-out", dir.file(name + ".pem"),
                             "-days", "2", "-subj", "/CN=fabgate test " + name});
    return openssl(args);
  };
  dir.write("server.ext", "subjectAltName=" + server_names + "\n");
  std::vector<std::string> request = {"req"};
  request.insert(request.end(), ec_key.begin(), ec_key.end());
  request.insert(request.end(), {"-keyout", dir.file("server.key"), "-out", dir.file("server.csr"),
                                 "-subj", "/CN=localhost"});
  std::vector<std::string> client_request = {"req"};
  client_request.insert(client_request.end(), ec_key.begin(), ec_key.end());
  client_request.insert(client_request.end(), {"-keyout", dir.file("client.key"), "-out",
                                               dir.file("client.csr"), "-subj", "/CN=fabgate"});
  auto sign = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"x509",
                                     "-req",
                                     "-in",
                                     dir.file(name + ".csr"),
                                     "-CA",
                                     dir.file("ca.pem"),
                                     "-CAkey",
                                     dir.file("ca.key"),
                                     "-CAcreateserial",
                                     "-out",
                                     dir.file(name + ".pem"),
                                     "-days",
                                     "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return openssl(args);
  };
  bool ok = self_signed("ca") && self_signed("other-ca") && openssl(request) &&
            sign("server", {"-extfile", dir.file("server.ext")}) && openssl(client_request) &&
            sign("client", {});
  if (!ok) return std::nullopt;
  return TestCertificates{dir.file("ca.pem"),       dir.file("server.pem"), dir.file("server.key"),
                          dir.file("other-ca.pem"), dir.file("client.pem"), dir.file("client.key")};
}

bool running_as_root() {
  return ::geteuid() == 0;
}

bool program_available(const std::string& name) {
  return run_command({"sh", "-c", "command -v " + shell_quote(name)}, Duration(5'000)).succeeded();
}

std::string gnmid_path() {
  return std::string(FABGATE_BINARY_DIR) + "/cmd/fabgate-gnmid/fabgate-gnmid";
}

}  // namespace fabgate::gnmi::testing
