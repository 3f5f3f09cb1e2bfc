#pragma once

// Real etcd members for the etcd adapter's tests and bench: single members and clusters on
// 127.0.0.1 free ports (or, for tests that cut a controller off from its store, in a network
// namespace behind a veth link the test can take down), data and logs in a temp folder; every
// member gets SIGTERM then SIGKILL when the Cluster dies (and SIGKILL when the test process dies:
// tests/support/process.h).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adapters/core/text.h"
#include "adapters/etcd/etcd_client.h"
#include "tests/support/netns_link.h"
#include "tests/support/process.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_port.h"

namespace fabgate::etcd::testing {

using namespace std::chrono_literals;

inline constexpr const char* kEtcd = "/usr/bin/etcd";

inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 30s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return done();
}

// A loopback listening socket on a free port (kept open, so the port stays ours), or a port
// number only (the socket closed) for a child to bind.
struct Listener {
  int fd = -1;
  int port = -1;
  explicit Listener(bool keep) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0)
      port = ntohs(address.sin_port);
    if (keep) {
      ::listen(fd, 16);
    } else {
      ::close(fd);
      fd = -1;
    }
  }
  ~Listener() {
    if (fd >= 0) ::close(fd);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// A port for an etcd member to bind (tests/support/test_port.h).
inline int free_port() { return fabgate::testing::reserve_test_port(); }

// One etcd member, its data and log in `dir`; SIGTERM then SIGKILL when it dies.
struct Member {
  std::string name;
  int client_port = free_port();
  int peer_port = free_port();
  std::string options;  // more etcd options; with --cert-file the client URLs are https
  std::string host = "127.0.0.1";  // the address it listens on
  std::string netns;               // the network namespace it runs in; empty: this one
  fabgate::testing::ChildProcess process;
  std::string client_url() const {
    bool tls = options.find("--cert-file") != std::string::npos;
    return (tls ? "https" : "http") + std::string("://") + host + ":" +
           std::to_string(client_port);
  }
  std::string peer_url() const { return "http://" + host + ":" + std::to_string(peer_port); }
  void start(const std::string& dir, const std::string& initial_cluster) {
    // `ip netns exec` execs etcd itself, so the process stopped and frozen is the member.
    std::string command =
        std::string("exec ") + (netns.empty() ? "" : "ip netns exec " + netns + " ") + kEtcd +
        " --name " + name + " --data-dir " + dir + "/" + name +
        " --listen-client-urls " + client_url() + " --advertise-client-urls " + client_url() +
        " --listen-peer-urls " + peer_url() + " --initial-advertise-peer-urls " + peer_url() +
        " --initial-cluster " + initial_cluster + " --initial-cluster-state new " + options + " >>" +
        dir + "/" + name + ".log 2>&1";
    process = fabgate::testing::ChildProcess({"/bin/sh", "-c", command});
  }
};

// Where a cluster's members listen.
enum class Network {
  loopback,     // 127.0.0.1 of the test's own namespace
  behind_link,  // the far address of a NetnsLink the cluster creates: Cluster::link() cuts it
};

class Cluster {
 public:
  // `prepare` returns more options for every member (TLS on the client URLs: --cert-file ...),
  // given the cluster's folder, where it may write files, before any member starts. Behind a
  // link that could not be made (NetnsLink::unavailable() says when it cannot), no member
  // starts and ready() is false; link()->failure() says why.
  explicit Cluster(int size, const std::function<std::string(const std::string&)>& prepare = {},
                   Network network = Network::loopback) {
    if (network == Network::behind_link) {
      link_ = std::make_unique<fabgate::testing::NetnsLink>("fgetcd");
      if (!link_->failure().empty()) return;
    }
    std::string options = prepare ? prepare(dir_.path()) : "";
    for (int i = 1; i <= size; ++i) {
      members_.push_back(Member{"n" + std::to_string(i)});
      members_.back().options = options;
      if (link_) {
        members_.back().host = link_->far_address();
        members_.back().netns = link_->name();
      }
    }
    for (const auto& m : members_)
      initial_cluster_ += (initial_cluster_.empty() ? "" : ",") + m.name + "=" + m.peer_url();
    for (auto& m : members_) m.start(dir_.path(), initial_cluster_);
  }
  std::vector<std::string> endpoints() const {
    std::vector<std::string> out;
    for (const auto& m : members_) out.push_back(m.client_url());
    return out;
  }
  Member& member(int i) { return members_[i]; }
  // True once a put through every member's own endpoint succeeds (with `settings`' TLS files).
  bool ready(EtcdSettings settings = {}) {
    if (members_.empty()) return false;
    settings.timeout = 2s;
    for (const auto& m : members_) {
      settings.endpoints = {m.client_url()};
      auto client = EtcdClient::open(settings);
      if (!client) return false;
      if (!eventually([&] { return client->put("fabgate-ready", "1").ok(); })) return false;
    }
    return true;
  }
  std::string log(int i) {
    if (link_ && !link_->failure().empty()) return link_->failure();
    return fabgate::testing::read_file(dir_.path() + "/" + members_[i].name + ".log");
  }
  // The link in front of the members (Network::behind_link), or null.
  const fabgate::testing::NetnsLink* link() const { return link_.get(); }

  // The index of the member that leads, as etcdctl's status of every endpoint names it (the
  // member whose own id is the leader it reports), or -1 when none answers so.
  int leader() const {
    auto status = fabgate::testing::run_shell(
        "ETCDCTL_API=3 /usr/bin/etcdctl --command-timeout=5s --endpoints=" + join(endpoints(), ",") +
        " endpoint status -w json 2>/dev/null");
    auto answers = nlohmann::json::parse(status.output, nullptr, false);
    if (!answers.is_array()) return -1;
    for (const auto& answer : answers) {
      const auto& state = answer.value("Status", nlohmann::json::object());
      if (!state.contains("header") || !state.contains("leader") ||
          state["header"].value("member_id", nlohmann::json()) != state["leader"])
        continue;
      for (std::size_t m = 0; m < members_.size(); ++m)
        if (members_[m].client_url() == answer.value("Endpoint", "")) return static_cast<int>(m);
    }
    return -1;
  }
  // Kills member `i` at once (SIGKILL, as a crash would) and reaps it.
  void kill(int i) {
    auto& process = members_[i].process;
    if (process.pid() > 0) ::kill(process.pid(), SIGKILL);
    process.stop();
  }
  // Starts member `i` again on its own data (a member killed with kill()); it rejoins the cluster.
  void restart(int i) { members_[i].start(dir_.path(), initial_cluster_); }

 private:
  fabgate::testing::TempDir dir_{"fabgate-etcd"};
  // Before the members: they stop before their namespace is deleted.
  std::unique_ptr<fabgate::testing::NetnsLink> link_;
  std::vector<Member> members_;
  std::string initial_cluster_;
};

inline EtcdClient open_client(std::vector<std::string> endpoints, Duration timeout = 5s) {
  EtcdSettings settings;
  settings.endpoints = std::move(endpoints);
  settings.timeout = timeout;
  auto client = EtcdClient::open(settings);
  if (!client) throw std::runtime_error(client.error().message);
  return std::move(client).value();
}

}  // namespace fabgate::etcd::testing
