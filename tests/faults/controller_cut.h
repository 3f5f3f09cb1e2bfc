#pragma once

// Cuts one controller process off from etcd while everything else (the other controller, the
// devices' sshd, etcd's own members) goes on: the process is moved into a cgroup of its own,
// and an nftables rule drops what sockets of that cgroup send to the members' client ports, so
// its etcd calls time out as behind a broken link, and its SSH sessions to the devices stay up.
// Moving it back to the root cgroup heals the cut (each etcd call opens a new connection). The
// cgroup and the table are named after this process (`fgfault-<pid>`), removed when the object
// dies, and swept by the next test process when a killed one left them.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace fabgate::faults {

class ControllerCut {
 public:
  // Why a cut cannot be made here (not root, no nft, no cgroup v2 hierarchy), or nullopt.
  static std::optional<std::string> unavailable();

  // Prepares the cgroup and the rule for these etcd client ports; failure() says why not.
  explicit ControllerCut(const std::vector<int>& etcd_client_ports);
  ~ControllerCut();
  ControllerCut(const ControllerCut&) = delete;
  ControllerCut& operator=(const ControllerCut&) = delete;

  const std::string& failure() const { return failure_; }
  // Cuts process `pid` (all its threads) off, or lets it reach etcd again; what went wrong, or
  // an empty string.
  std::string cut(pid_t pid) const;
  std::string heal(pid_t pid) const;

 private:
  std::string hierarchy_;  // where cgroup v2 is mounted
  std::string group_;      // our cgroup's folder
  std::string table_;      // our nftables table
  std::string failure_;
};

}  // namespace fabgate::faults
