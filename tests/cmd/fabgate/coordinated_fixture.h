#pragma once

// The end-to-end fixture of tests that coordinate through a real etcd (the Debian etcd 3.4,
// one member on a reserved 127.0.0.1 port, data in a temp folder): budgets and the fleet view.
// Skips, naming what installs it, where etcd-server is missing.

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/cmd/fabgate/e2e_fixture.h"

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
    etcd_ = std::make_unique<etcd::testing::Cluster>(1);
    ASSERT_TRUE(etcd_->ready()) << "etcd did not start: " << etcd_->log(0);
  }

  etcd::EtcdClient store() { return etcd::testing::open_client(etcd_->endpoints()); }

  std::unique_ptr<etcd::testing::Cluster> etcd_;
};

}  // namespace fabgate::testing
