#pragma once

// A network namespace joined to the test's own by a veth pair, for a service a test must be able
// to cut off from the process under test (an etcd member a controller loses): the far end in
// the namespace, the near end here, on a private /30 of 10.0.0.0/8 derived from this process's
// pid (so test processes running at once never share one) and skipped when a route of this
// namespace already covers it. No route is added: nothing reaches the far end but this host.
// Tests whose "devices" are this host enter a PrivateNetwork first: a link added to the host's
// own namespace shows in the routes every other test running at once snapshots.

#include <optional>
#include <string>

namespace fabgate::testing {

// Moves the calling thread, and every child it starts from then on, into a new network
// namespace with only its loopback up, and back when it dies. Links and servers the test adds
// there never show in the host's namespace; what the test started there (sshd on 127.0.0.1,
// etcd) must be stopped by the test as usual, and the namespace goes with its last process.
class PrivateNetwork {
 public:
  PrivateNetwork();
  ~PrivateNetwork();
  PrivateNetwork(const PrivateNetwork&) = delete;
  PrivateNetwork& operator=(const PrivateNetwork&) = delete;
  const std::string& failure() const { return failure_; }

 private:
  int original_ = -1;  // the namespace to go back to
  std::string failure_;
};

class NetnsLink {
 public:
  // Why links cannot be made here (not root, no `ip`), or nullopt.
  static std::optional<std::string> unavailable();

  // Creates namespace `<tag>-<pid>-<n>`, first removing the namespaces of this tag left by test
  // processes that are gone (killed by a timeout before their destructor ran). On failure
  // failure() says why and nothing of it is left. `tag`: at most 7 of [a-z].
  explicit NetnsLink(const std::string& tag);
  // Deletes the namespace, and with it both ends of the pair. Stop the processes it holds
  // first: a namespace outlives its name while a process is still inside.
  ~NetnsLink();
  NetnsLink(const NetnsLink&) = delete;
  NetnsLink& operator=(const NetnsLink&) = delete;

  const std::string& failure() const { return failure_; }
  const std::string& name() const { return name_; }
  const std::string& near_address() const { return near_address_; }  // here
  const std::string& far_address() const { return far_address_; }    // in the namespace

  // Takes the link down, or up again, from the namespace's side. The near end then has no
  // carrier but stays up with its connected route (flagged linkdown), so packets for the far
  // address are dropped here: they never take this namespace's default route out of the host.
  // Returns what `ip` said when it failed, or an empty string.
  std::string set_down() const;
  std::string set_up() const;

 private:
  std::string name_;
  std::string near_device_;
  std::string far_device_;
  std::string near_address_;
  std::string far_address_;
  std::string failure_;
};

}  // namespace fabgate::testing
