#include "tests/support/sshd_fixture.h"

#include "tests/support/test_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace fabgate::testing {

namespace {

constexpr const char* kSshd = "/usr/sbin/sshd";
constexpr const char* kKeygen = "/usr/bin/ssh-keygen";

std::string& error_text() {
  static thread_local std::string text;
  return text;
}

bool accepts_connections(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

bool generate_key(const std::string& path, std::string& error) {
  std::string output;
  if (run_process({kKeygen, "-q", "-t", "ed25519", "-N", "", "-C", "fabgate-test", "-f", path},
                  &output) != 0) {
    error = "ssh-keygen failed for " + path + ": " + output;
    return false;
  }
  return true;
}

// "ssh-ed25519 AAAA... comment\n" -> "ssh-ed25519 AAAA..."
std::string public_key(const std::string& private_key_path) {
  std::string text = read_file(private_key_path + ".pub");
  auto first_space = text.find(' ');
  auto second_space = text.find(' ', first_space + 1);
  return text.substr(0, second_space);
}

std::string current_user() {
  if (const passwd* entry = ::getpwuid(::geteuid())) return entry->pw_name;
  return "root";
}

// /etc/passwd with `account`'s home and shell replaced (and, when `extra` is set, one more
// line): the copy sshd sees in its private mount namespace.
std::string hermetic_passwd(const std::string& account, const std::string& home,
                            const std::string& shell, const std::string& extra) {
  std::string out;
  std::string passwd = read_file("/etc/passwd");
  std::size_t begin = 0;
  while (begin < passwd.size()) {
    std::size_t end = passwd.find('\n', begin);
    if (end == std::string::npos) end = passwd.size();
    std::string line = passwd.substr(begin, end - begin);
    begin = end + 1;
    if (line.rfind(account + ":", 0) == 0) {
      // name:password:uid:gid:gecos:home:shell
      std::vector<std::string> fields;
      std::size_t at = 0;
      for (int i = 0; i < 6; ++i) {
        std::size_t colon = line.find(':', at);
        if (colon == std::string::npos) break;
        fields.push_back(line.substr(at, colon - at));
        at = colon + 1;
      }
      if (fields.size() == 6) {
        line.clear();
        for (int i = 0; i < 5; ++i) line += fields[static_cast<std::size_t>(i)] + ":";
        line += home + ":" + shell;
      }
    }
    if (!line.empty()) out += line + "\n";
  }
  return out + extra;
}

}  // namespace

std::optional<std::string> SshdFixture::unavailable() {
  if (!hermetic_logins()) {
    return std::string(
        "needs root: only as root can the fixture give its logins a clean home and /bin/sh (sshd "
        "in a private mount namespace); as another user sshd would log in as this account and run "
        "its shell start-up files with its PATH");
  }
  if (::access(kSshd, X_OK) != 0) {
    return std::string(kSshd) + " is not installed (Debian package openssh-server)";
  }
  if (::access(kKeygen, X_OK) != 0) {
    return std::string(kKeygen) + " is not installed (Debian package openssh-client)";
  }
  return std::nullopt;
}

const std::string& SshdFixture::last_error() {
  return error_text();
}

std::unique_ptr<SshdFixture> SshdFixture::start(Options options) {
  error_text().clear();
  if (auto why = unavailable()) {
    error_text() = *why;
    return nullptr;
  }
  std::unique_ptr<SshdFixture> fixture(new SshdFixture());
  std::string error;
  try {
    if (!fixture->launch(options, error)) {
      error_text() = error + "\n" + fixture->log();
      return nullptr;
    }
  } catch (const std::exception& e) {
    error_text() = e.what();
    return nullptr;
  }
  return fixture;
}

bool SshdFixture::launch(const Options& options, std::string& error) {
  user_ = current_user();
  ::mkdir(home().c_str(), 0755);
  // start() refused already without root (unavailable()): sshd always runs in a private mount
  // namespace over a passwd copy that gives the login a clean home and /bin/sh.
  std::string shell = "/bin/sh";
  if (options.slow_shell_seconds > 0) {
    shell = dir_.file("slow-login-shell");
    write_file(shell,
               "#!/bin/sh\n# imitates slow shell start-up files\nsleep " +
                   std::to_string(options.slow_shell_seconds) + "\nexec /bin/sh \"$@\"\n",
               0755);
  }
  std::string extra;
  if (options.unprivileged_login) {
    user_ = kUnprivilegedUser;
    const std::string uid = std::to_string(kUnprivilegedUid);
    extra = user_ + ":x:" + uid + ":" + uid + "::" + home() + ":" + shell + "\n";
    // The user must reach its home and authorized_keys through the temp dir.
    ::chmod(dir_.path().c_str(), 0755);
    if (::chown(home().c_str(), kUnprivilegedUid, kUnprivilegedUid) != 0) {
      error = "cannot hand " + home() + " to the test user";
      return false;
    }
  }
  write_file(dir_.file("passwd"), hermetic_passwd(current_user(), home(), shell, extra), 0644);
  const std::vector<std::string> launcher = {"/usr/bin/unshare",
                                             "--mount",
                                             "--propagation",
                                             "private",
                                             "/bin/sh",
                                             "-c",
                                             "mount --bind \"$0\" /etc/passwd && exec \"$@\"",
                                             dir_.file("passwd")};
  for (const char* key :
       {"host_ed25519", "other_host_ed25519", "user_ed25519", "stranger_ed25519"}) {
    if (!generate_key(dir_.file(key), error)) return false;
  }
  write_file(dir_.file("authorized_keys"), public_key(user_key()) + "\n", 0644);
  write_file(empty_known_hosts(), "", 0600);
  // sshd refuses to start without its privilege separation directory.
  ::mkdir("/run/sshd", 0755);

  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = reserve_test_port();
    if (port_ == 0) {
      error = "no free port on 127.0.0.1";
      return false;
    }
    const std::string config =
        "ListenAddress 127.0.0.1\n"
        "Port " +
        std::to_string(port_) +
        "\n"
        "HostKey " +
        dir_.file("host_ed25519") +
        "\n"
        "PidFile " +
        dir_.file("sshd.pid") +
        "\n"
        "AuthorizedKeysFile " +
        dir_.file("authorized_keys") +
        "\n"
        "StrictModes no\n"
        "UsePAM no\n"
        "PermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\n"
        "MaxStartups " +
        std::to_string(options.max_startups) +
        "\n"
        "MaxSessions " +
        std::to_string(options.max_sessions) +
        "\n"
        "LogLevel VERBOSE\n";
    write_file(dir_.file("sshd_config"), config, 0600);
    const std::string host_name = "[127.0.0.1]:" + std::to_string(port_);
    write_file(known_hosts(), host_name + " " + public_key(dir_.file("host_ed25519")) + "\n", 0600);
    write_file(changed_known_hosts(),
               host_name + " " + public_key(dir_.file("other_host_ed25519")) + "\n", 0600);
    write_file(ssh_config(),
               "Host " + alias() +
                   "\n"
                   "  HostName 127.0.0.1\n"
                   "  Port " +
                   std::to_string(port_) +
                   "\n"
                   "  User " +
                   user_ +
                   "\n"
                   "  IdentityFile " +
                   user_key() + "\n",
               0600);

    std::vector<std::string> command = launcher;
    for (const std::string& arg :
         {std::string(kSshd), std::string("-D"), std::string("-f"), dir_.file("sshd_config"),
          std::string("-E"), dir_.file("sshd.log")}) {
      command.push_back(arg);
    }
    server_ = ChildProcess(command);
    for (int wait = 0; wait < 250; ++wait) {  // up to 5 s
      if (!server_.running()) break;          // e.g. the port was taken meanwhile: retry
      if (accepts_connections(port_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    server_.stop();
  }
  error = "sshd did not start listening on 127.0.0.1 after 5 attempts";
  return false;
}

ssh::SshDevice SshdFixture::device(const std::string& name) const {
  ssh::SshLogin login{user_, user_key(), false};
  return ssh::SshDevice{name, "127.0.0.1", port_, login, login};
}

ssh::SshOptions SshdFixture::options() const {
  ssh::SshOptions options;
  options.config_file = ssh_config();
  options.known_hosts_file = known_hosts();
  return options;
}

std::string SshdFixture::log() const {
  try {
    return read_file(dir_.file("sshd.log"));
  } catch (const std::exception&) {
    return "(no sshd log)";
  }
}

}  // namespace fabgate::testing
