#include "tests/support/netns_link.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <regex>
#include <sstream>

#include "tests/support/shell.h"

namespace fabgate::testing {

namespace {

// "10.a.b.c" for the /30 number `index` of 10.0.0.0/8 (2^22 of them, as many as Linux pids)
// plus `host` (1 or 2).
std::string address_in(unsigned index, unsigned host) {
  index &= (1u << 22) - 1;
  return "10." + std::to_string(index >> 14) + "." + std::to_string((index >> 6) & 255) + "." +
         std::to_string(((index & 63) << 2) + host);
}

// True when a route of this namespace other than the default one covers `address`: another
// link (another test's, or the machine's own) uses that range.
bool routed(const std::string& address) {
  auto routes = run_shell("ip -4 -o route show match " + address);
  std::istringstream lines(routes.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line.rfind("default", 0) != 0) return true;
  return routes.exit_code != 0;
}

// Removes the namespaces `<tag>-<pid>-<n>` whose process no longer exists.
void sweep_dead(const std::string& tag) {
  const std::regex ours("^" + tag + "-([0-9]+)-[0-9]+$");
  std::istringstream lines(run_shell("ip netns list").output);
  for (std::string line; std::getline(lines, line);) {
    const std::string name = line.substr(0, line.find(' '));
    std::smatch match;
    if (!std::regex_match(name, match, ours)) continue;
    const pid_t owner = static_cast<pid_t>(std::stol(match[1].str()));
    if (::kill(owner, 0) != 0 && errno == ESRCH) (void)run_shell("ip netns del " + name);
  }
}

}  // namespace

PrivateNetwork::PrivateNetwork() {
  // The thread's own namespace (/proc/self is the process's first thread, maybe another one).
  original_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original_ < 0) {
    failure_ = std::string("open /proc/thread-self/ns/net: ") + std::strerror(errno);
    return;
  }
  if (::unshare(CLONE_NEWNET) != 0) {
    failure_ = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
    ::close(original_);
    original_ = -1;
    return;
  }
  auto lo = run_shell("ip link set lo up");
  if (lo.exit_code != 0) failure_ = "ip link set lo up: " + lo.output;
}

PrivateNetwork::~PrivateNetwork() {
  if (original_ < 0) return;
  (void)::setns(original_, CLONE_NEWNET);
  ::close(original_);
}

std::optional<std::string> NetnsLink::unavailable() {
  if (::geteuid() != 0)
    return "not root: a network namespace and a veth pair need CAP_NET_ADMIN";
  if (run_shell("command -v ip").exit_code != 0)
    return "`ip` (iproute2) is missing: scripts/bootstrap --tests installs it";
  return std::nullopt;
}

NetnsLink::NetnsLink(const std::string& tag) {
  static std::atomic<int> made{0};
  const int n = made++;
  const auto pid = static_cast<unsigned>(::getpid());
  name_ = tag + "-" + std::to_string(pid) + "-" + std::to_string(n);
  near_device_ = "nl" + std::to_string(pid) + "x" + std::to_string(n);
  far_device_ = "link0";
  sweep_dead(tag);
  (void)run_shell("ip netns del " + name_ + " 2>/dev/null");  // a dead process of our pid's

  // A /30 no route here covers: the pid's own first, then a few others (bounded).
  for (unsigned attempt = 0; attempt < 8 && far_address_.empty(); ++attempt) {
    const unsigned index = pid + attempt * 524309u + static_cast<unsigned>(n) * 7919u;
    if (routed(address_in(index, 2))) continue;
    near_address_ = address_in(index, 1);
    far_address_ = address_in(index, 2);
  }
  if (far_address_.empty()) {
    failure_ = "every candidate /30 of 10.0.0.0/8 for pid " + std::to_string(pid) +
               " is already routed here";
    return;
  }
  auto made_link = run_shell(
      "set -e; ip netns add " + name_ + "; ip link add " + near_device_ + " type veth peer name " +
      far_device_ + " netns " + name_ + "; ip addr add " + near_address_ + "/30 dev " +
      near_device_ + "; ip -n " + name_ + " addr add " + far_address_ + "/30 dev " + far_device_ +
      "; ip -n " + name_ + " link set lo up; ip -n " + name_ + " link set " + far_device_ +
      " up; ip link set " + near_device_ + " up");
  if (made_link.exit_code != 0) {
    failure_ = "creating namespace " + name_ + ": " + made_link.output;
    (void)run_shell("ip netns del " + name_ + " 2>/dev/null; ip link del " + near_device_ +
                    " 2>/dev/null");
  }
}

NetnsLink::~NetnsLink() {
  if (!name_.empty()) (void)run_shell("ip netns del " + name_ + " 2>/dev/null");
}

std::string NetnsLink::set_down() const {
  auto out = run_shell("ip -n " + name_ + " link set " + far_device_ + " down");
  return out.exit_code == 0 ? "" : out.output;
}

std::string NetnsLink::set_up() const {
  auto out = run_shell("ip -n " + name_ + " link set " + far_device_ + " up");
  return out.exit_code == 0 ? "" : out.output;
}

}  // namespace fabgate::testing
