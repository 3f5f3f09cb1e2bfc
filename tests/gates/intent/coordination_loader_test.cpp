// The `coordination:` block of fabgate.yaml (docs/coordination.md "Settings").

#include <gtest/gtest.h>

#include "gates/intent/loader.h"
#include "tests/gates/intent/load_helpers.h"
#include "tests/support/memory_tree.h"

namespace fabgate::intent {
namespace {

using testing::MemoryTree;

LoadOutcome load_with(const std::string& coordination) {
  MemoryTree tree;
  tree.files["fabgate.yaml"] = "version: 1\n" + coordination;
  tree.files["inventory.yaml"] =
      "credentials:\n"
      "  read:   {user: ro, identity_file: ~/.ssh/ro}\n"
      "  change: {user: rw, identity_file: ~/.ssh/rw}\n"
      "devices:\n"
      "  leaf1: {platform: frr, role: leaf, ssh: {host: 192.0.2.11}}\n";
  return testing_helpers::load(tree);
}

using testing_helpers::all_lines;

TEST(CoordinationSettings, EveryFieldLoads) {
  // Given a coordination block with TLS files, a user and both durations, then every field is
  // read; without the block there is no coordination at all.
  auto outcome = load_with(
      "coordination:\n"
      "  endpoints: [https://10.0.0.1:2379, https://10.0.0.2:2379]\n"
      "  prefix: /fabgate/pod-a\n"
      "  ca_file: etcd-ca.pem\n"
      "  cert_file: client.pem\n"
      "  key_file: client.key\n"
      "  username: fabgate\n"
      "  password_env: ETCD_PASSWORD\n"
      "  timeout: 1500ms\n"
      "  lease_ttl: 20s\n");
  ASSERT_TRUE(outcome.repository) << all_lines(outcome);
  const auto& coordination = outcome.repository->settings.coordination;
  ASSERT_TRUE(coordination);
  EXPECT_EQ(coordination->endpoints.size(), 2u);
  EXPECT_EQ(coordination->prefix, "/fabgate/pod-a");
  EXPECT_EQ(coordination->ca_file, "etcd-ca.pem");
  EXPECT_EQ(coordination->cert_file, "client.pem");
  EXPECT_EQ(coordination->username, "fabgate");
  EXPECT_EQ(coordination->password_env, "ETCD_PASSWORD");
  EXPECT_EQ(coordination->timeout, Duration{1500});
  EXPECT_EQ(coordination->lease_ttl, Duration{20'000});
  EXPECT_EQ(coordination->where.line, 3);

  auto without = load_with("");
  ASSERT_TRUE(without.repository) << all_lines(without);
  EXPECT_FALSE(without.repository->settings.coordination);
}

TEST(CoordinationSettings, MistakesAreNamedAtTheirPlaceAndAPasswordInAUrlIsNotEchoed) {
  // Given a block with a password in a URL, a prefix with a trailing '/', a certificate
  // without its key, a user over plain http, a lease too short and a misspelt key, then each is
  // reported at its line and column and the URL's password appears nowhere.
  auto outcome = load_with(
      "coordination:\n"
      "  endpoints: ['http://admin:s3cret@10.0.0.1:2379', 'etcd:2379']\n"
      "  prefix: /fabgate/pod-a/\n"
      "  cert_file: client.pem\n"
      "  username: fabgate\n"
      "  password_env: ETCD_PASSWORD\n"
      "  lease_ttl: 1s\n"
      "  lease_tll: 10s\n");
  EXPECT_FALSE(outcome.repository);
  std::string lines = all_lines(outcome);
  EXPECT_NE(lines.find("fabgate.yaml:3:15: error: a coordination endpoint carries a user name or "
                       "password"),
            std::string::npos)
      << lines;
  EXPECT_EQ(lines.find("s3cret"), std::string::npos) << lines;
  EXPECT_NE(lines.find("fabgate.yaml:3:52: error: coordination endpoint 'etcd:2379' is not an "
                       "http:// or https:// URL"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("fabgate.yaml:4:11: error: coordination prefix '/fabgate/pod-a/' is not "
                       "a key prefix"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("coordination needs both cert_file and key_file, or neither"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("fabgate.yaml:6:13: error: coordination sends a username and password "
                       "over plain http"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("fabgate.yaml:8:14: error: coordination lease_ttl must be between 3s and "
                       "5m"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("fabgate.yaml:9:3"), std::string::npos) << "the misspelt key\n" << lines;
}

TEST(CoordinationSettings, PlainHttpWithoutAUserIsAcceptedForTheLab) {
  // Given plain http endpoints and no user (the lab's own management network), then it loads.
  auto outcome = load_with(
      "coordination:\n  endpoints: [http://10.255.0.1:2379]\n  prefix: /fabgate/lab\n");
  ASSERT_TRUE(outcome.repository) << all_lines(outcome);
  EXPECT_EQ(outcome.repository->settings.coordination->timeout, Duration{2'000});
  EXPECT_EQ(outcome.repository->settings.coordination->lease_ttl, Duration{15'000});
}

}  // namespace
}  // namespace fabgate::intent
