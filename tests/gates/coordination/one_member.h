#pragma once

// The fixture of the coordination tests that need one real etcd member (the Debian etcd 3.4 on
// a reserved 127.0.0.1 port, data in a temp folder); skips, naming what installs it, where
// etcd-server is missing.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "tests/adapters/etcd/etcd_cluster.h"

namespace fabgate::coordination {

class OneEtcdMember : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(etcd::testing::kEtcd))
      GTEST_SKIP() << etcd::testing::kEtcd
                   << " is missing: scripts/bootstrap --tests installs etcd-server";
    cluster_ = std::make_unique<etcd::testing::Cluster>(1);
    ASSERT_TRUE(cluster_->ready()) << "etcd did not start: " << cluster_->log(0);
  }
  etcd::EtcdClient client() { return etcd::testing::open_client(cluster_->endpoints()); }
  std::unique_ptr<etcd::testing::Cluster> cluster_;
};

}  // namespace fabgate::coordination
