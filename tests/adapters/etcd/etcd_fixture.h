#pragma once

// The fixture of tests against one real etcd member (etcd_cluster.h): skips, naming what installs
// it, where etcd-server is missing; fails when the member does not start.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "tests/adapters/etcd/etcd_cluster.h"

namespace fabgate::etcd::testing {

class OneEtcdMember : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kEtcd))
      GTEST_SKIP() << kEtcd << " is missing: scripts/bootstrap --tests installs etcd-server";
    cluster_ = std::make_unique<Cluster>(1);
    ASSERT_TRUE(cluster_->ready()) << "etcd did not start: " << cluster_->log(0);
  }
  EtcdClient client(Duration timeout = std::chrono::seconds(5)) {
    return open_client(cluster_->endpoints(), timeout);
  }

  std::unique_ptr<Cluster> cluster_;
};

}  // namespace fabgate::etcd::testing
