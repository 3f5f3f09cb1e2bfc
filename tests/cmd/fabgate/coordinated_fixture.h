#pragma once

// The end-to-end fixture of tests that coordinate through a real etcd (the Debian etcd 3.4,
// one member on a reserved 127.0.0.1 port, data in a temp folder): budgets, device locks and the
// fleet view. Skips, naming what installs it, where etcd-server is missing.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/cmd/fabgate/e2e_fixture.h"
#include "tests/support/shell.h"

namespace fabgate::testing {

// This controller's name, as fabgate writes it into claims.
inline std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

class CoordinatedEndToEnd : public FabgateEndToEnd {
 protected:
  void SetUp() override {
    FabgateEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!std::filesystem::exists(etcd::testing::kEtcd))
      GTEST_SKIP() << etcd::testing::kEtcd
                   << " is missing: scripts/bootstrap --tests installs etcd-server";
    etcd_ = std::make_unique<etcd::testing::Cluster>(etcd_members());
    ASSERT_TRUE(etcd_->ready()) << "etcd did not start: " << etcd_->log(0);
  }

  // How many etcd members SetUp starts (a cluster of three where a test kills its leader).
  virtual int etcd_members() const { return 1; }

  etcd::EtcdClient store() { return etcd::testing::open_client(etcd_->endpoints()); }

  // SIGKILLs a fabgate started in the background, then waits until its lease lapsed
  // (no_run_alive). False if either did not happen.
  bool kill_and_outlive_its_lease(ChildProcess& run, const std::string& prefix) {
    if (::kill(run.pid(), SIGKILL) != 0 || wait_for(run, std::chrono::seconds(30)) != 128 + SIGKILL)
      return false;
    return no_run_alive(prefix);
  }
  // Waits (30 s at most) until no run is alive under `prefix`: every run's lease lapsed, so
  // other controllers see them dead. False if not.
  bool no_run_alive(const std::string& prefix) {
    return eventually(
        [&] {
          auto client = store();
          auto alive = client.get_prefix(prefix + "/runs/");
          return alive && alive->kvs.empty();
        },
        std::chrono::seconds(30));
  }

  // The run id of a bundle folder `<utc-time>-<run>`.
  static std::string run_id_of(const std::filesystem::path& bundle) {
    const std::string folder = bundle.filename().string();
    return folder.substr(folder.rfind('-') + 1);
  }

  // A second controller: a `git clone` of the intent repository into `folder`, with its own
  // evidence folder (`evidence-out` inside the clone); the clone's path, or empty when the
  // clone failed.
  std::string second_controller(const std::string& folder) {
    const std::string clone = folder + "/intent";
    auto cloned =
        run_shell("git clone -q " + shell_quoted(repo_.path()) + " " + shell_quoted(clone));
    return cloned.exit_code == 0 ? clone : "";
  }
  // `fabgate ARGS` run in `clone` (a second controller's intent folder).
  static CommandOutput fabgate_in(const std::string& clone, const std::string& arguments) {
    return run_shell("cd " + shell_quoted(clone) + " && " + shell_quoted(kFabgate) + " " +
                     arguments + " 2>&1");
  }

  std::unique_ptr<etcd::testing::Cluster> etcd_;
};

// The state of process `pid` as /proc/<pid>/stat gives it ('T': stopped), or '?'.
inline char process_state(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto after_name = stat.rfind(')');
  return after_name == std::string::npos || after_name + 2 >= stat.size() ? '?'
                                                                          : stat[after_name + 2];
}

}  // namespace fabgate::testing
